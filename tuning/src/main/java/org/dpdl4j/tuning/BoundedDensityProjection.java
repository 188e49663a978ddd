package org.dpdl4j.tuning;

/**
 * Euclidean projection of a density on a finite grid onto the bounded densities
 * S = {p : c·π⁰ ≤ p ≤ C·π⁰, Σp = 1} (Wang, Gao, Zhang, Su &amp; Shen, DP-HyPO: An Adaptive Private
 * Hyperparameter Optimization Framework, NeurIPS 2023, arXiv:2306.05734, eq. 3.1 and App. C.2; App. D for
 * a non-uniform prior π⁰). The KKT conditions of min ½‖p − π‖² over S give p_i = clip(π_i − ν,
 * c·π⁰_i, C·π⁰_i) for the one threshold ν with Σp = 1 ("water-filling"); ν is found by bisection on a
 * bracket where the sum crosses 1. The paper solves the same problem with a generic QP solver.
 *
 * <p>The result always lies inside the box exactly (every entry is clipped last); its sum is 1 up to
 * floating-point rounding (≲ 1e-15·n), and samplers normalise by the sum.
 */
public final class BoundedDensityProjection {
    private BoundedDensityProjection() {
    }

    /**
     * The projection of {@code target} onto S.
     *
     * @param target π, non-negative and finite (need not sum to 1); at least one entry
     * @param prior  π⁰, the same length as {@code target}, finite positive entries summing to 1 (within 1e-9)
     * @param lower  c ∈ (0, 1]
     * @param upper  C ∈ [1, ∞), finite
     * @return a new array p ∈ S closest to π in Euclidean norm, of the same length
     * @throws IllegalArgumentException if the lengths differ, an entry is invalid, or not c ≤ 1 ≤ C
     */
    public static double[] project(double[] target, double[] prior, double lower, double upper) {
        if (target.length != prior.length || target.length == 0) {
            throw new IllegalArgumentException("target and prior must have the same non-zero length, got " + target.length
                    + " and " + prior.length);
        }
        if (!(lower > 0 && lower <= 1)) {
            throw new IllegalArgumentException("density lower bound c must be in (0, 1], got " + lower);
        }
        if (!(upper >= 1) || Double.isInfinite(upper)) {
            throw new IllegalArgumentException("density upper bound C must be finite and >= 1, got " + upper);
        }
        double priorSum = 0;
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < target.length; i++) {
            if (!(prior[i] > 0) || Double.isInfinite(prior[i])) {
                throw new IllegalArgumentException("prior[" + i + "] must be finite and > 0, got " + prior[i]);
            }
            if (!(target[i] >= 0) || Double.isInfinite(target[i])) {
                throw new IllegalArgumentException("target[" + i + "] must be finite and >= 0, got " + target[i]);
            }
            priorSum += prior[i];
            lo = Math.min(lo, target[i] - upper * prior[i]); // at nu = lo every entry sits at its upper bound
            hi = Math.max(hi, target[i] - lower * prior[i]); // at nu = hi every entry sits at its lower bound
        }
        if (Math.abs(priorSum - 1) > 1e-9) {
            throw new IllegalArgumentException("prior must sum to 1, got " + priorSum);
        }
        for (int iter = 0; iter < 200 && hi - lo > 0; iter++) {
            double mid = 0.5 * (lo + hi);
            if (mid <= lo || mid >= hi) {
                break;
            }
            if (sum(target, prior, lower, upper, mid) > 1) {
                lo = mid; // sum is non-increasing in nu
            } else {
                hi = mid;
            }
        }
        double sLo = sum(target, prior, lower, upper, lo);
        double sHi = sum(target, prior, lower, upper, hi);
        // the sum is linear between the bracket ends once they are this close: interpolate
        double nu = sLo == sHi ? lo : lo + (hi - lo) * (sLo - 1) / (sLo - sHi);
        double[] p = new double[target.length];
        for (int i = 0; i < p.length; i++) {
            p[i] = clip(target[i] - nu, lower * prior[i], upper * prior[i]);
        }
        return p;
    }

    private static double sum(double[] target, double[] prior, double lower, double upper, double nu) {
        double s = 0;
        for (int i = 0; i < target.length; i++) {
            s += clip(target[i] - nu, lower * prior[i], upper * prior[i]);
        }
        return s;
    }

    private static double clip(double x, double lo, double hi) {
        return Math.max(lo, Math.min(hi, x));
    }
}
