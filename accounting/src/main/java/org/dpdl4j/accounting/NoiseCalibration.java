package org.dpdl4j.accounting;

import java.util.function.DoubleFunction;
import java.util.function.LongFunction;

/**
 * Noise and step-count calibration against a target (ε, δ), using any {@link PrivacyAccountant} (the caller passes
 * it: {@link RdpAccountant}, {@link PldAccountant} or one from {@link Accountants}).
 * Results are always on the safe side: the returned σ meets the target, the returned T meets it.
 */
public final class NoiseCalibration {
    /** Default absolute tolerance on σ. */
    public static final double DEFAULT_TOLERANCE = 1e-6;
    private static final double MAX_SIGMA = 1e6;

    private NoiseCalibration() {
    }

    /**
     * The smallest noise multiplier σ (to within {@code tolerance}, rounded up) such that DP-SGD —
     * T self-composed Poisson-sampled Gaussians with rate q — is (ε, δ)-DP.
     *
     * @param samplingRate  q ∈ (0, 1]
     * @param steps         T, the number of DP-SGD steps: ≥ 1
     * @param targetEpsilon ε &gt; 0, finite
     * @param delta         δ ∈ (0, 1)
     * @param accountant    the accountant that defines ε(σ)
     * @param tolerance     absolute tolerance on σ, &gt; 0
     * @return σ with ε(σ) ≤ target and ε(σ − tolerance) &gt; target
     * @throws IllegalArgumentException on invalid arguments, if no σ ≤ 10⁶ meets the target, or if the accountant
     *                                  refuses an event it is asked about
     */
    public static double noiseMultiplier(double samplingRate, long steps, double targetEpsilon, double delta,
                                         PrivacyAccountant accountant, double tolerance) {
        if (!(samplingRate > 0 && samplingRate <= 1)) {
            throw new IllegalArgumentException("sampling rate q must be in (0, 1], got " + samplingRate);
        }
        if (steps < 1) {
            throw new IllegalArgumentException("steps must be >= 1, got " + steps);
        }
        return smallestNoise(sigma -> dpSgd(samplingRate, sigma, steps), targetEpsilon, delta, accountant, tolerance);
    }

    /**
     * The smallest σ (to within {@code tolerance}, rounded up) such that the event built from σ is
     * (ε, δ)-DP. The event's ε must be non-increasing in σ (true for every Gaussian-based event). The search doubles
     * σ from 1 until the target is met, then narrows the bracket [σ that misses, σ that meets] by the Illinois variant
     * of regula falsi (Dowell &amp; Jarratt, "A modified regula falsi method for computing the root of an equation",
     * BIT 11, 1971) on log ε against log σ, where ε is close to a power of σ, with a bisection whenever a step fails to
     * halve the bracket twice in a row; every guess stays at least tolerance/2 inside the bracket. The result meets the
     * target by an evaluation of it, as bisection's did, in fewer evaluations (at tolerance 10⁻⁴, for DP-SGD from one
     * step to 10⁵: 6 to 11, the doubling included, where bisection took 15 to 24).
     *
     * @param eventOfSigma  the event for a given σ; called with σ in (0, 10⁶]
     * @param targetEpsilon ε, the target privacy loss: finite and &gt; 0
     * @param delta         δ ∈ (0, 1)
     * @param accountant    the accountant that defines ε(σ); it must support every event built
     * @param tolerance     absolute tolerance on σ: finite and &gt; 0
     * @return σ with ε(σ) ≤ target, at most {@code tolerance} above the last σ found to miss the target
     * @throws IllegalArgumentException on invalid arguments, if no σ ≤ 10⁶ meets the target, or if the accountant
     *                                  refuses a built event
     */
    public static double smallestNoise(DoubleFunction<PrivacyEvent> eventOfSigma, double targetEpsilon, double delta,
                                       PrivacyAccountant accountant, double tolerance) {
        Checks.finitePositive("target epsilon", targetEpsilon);
        Checks.delta(delta);
        Checks.finitePositive("tolerance", tolerance);
        double lo = 0;
        double hi = 1;
        double epsilonLo = Double.POSITIVE_INFINITY;
        double epsilonHi = accountant.epsilon(eventOfSigma.apply(hi), delta);
        while (!(epsilonHi <= targetEpsilon)) { // NaN misses: only an ε that is evaluated and at most the target meets it
            lo = hi;
            epsilonLo = epsilonHi;
            hi *= 2;
            if (hi > MAX_SIGMA) {
                throw new IllegalArgumentException("target epsilon " + targetEpsilon + " at delta " + delta
                        + " cannot be met with a noise multiplier <= " + MAX_SIGMA);
            }
            epsilonHi = accountant.epsilon(eventOfSigma.apply(hi), delta);
        }
        // invariant: ε(lo) > target (or lo = 0) and ε(hi) <= target, both evaluated; g = log(ε/target) at the ends
        double gLo = Math.log(epsilonLo / targetEpsilon);
        double gHi = Math.log(epsilonHi / targetEpsilon);
        int lastMoved = 0; // -1: lo, +1: hi
        int stalls = 0;
        while (hi - lo > tolerance) {
            double width = hi - lo;
            double x;
            if (lo > 0 && stalls < 2 && Double.isFinite(gLo) && Double.isFinite(gHi) && gLo > gHi) {
                double a = Math.log(lo);
                x = Math.exp(a + (Math.log(hi) - a) * gLo / (gLo - gHi));
            } else {
                x = 0.5 * (lo + hi);
                stalls = 0;
            }
            x = Math.min(Math.max(x, lo + tolerance / 2), hi - tolerance / 2);
            double epsilon = accountant.epsilon(eventOfSigma.apply(x), delta);
            double g = Math.log(epsilon / targetEpsilon);
            if (!(epsilon <= targetEpsilon)) {
                lo = x;
                gLo = g;
                if (lastMoved == -1) {
                    gHi /= 2; // Illinois: the end kept twice counts half, so that the next guess crosses the root
                }
                lastMoved = -1;
            } else {
                hi = x;
                gHi = g;
                if (lastMoved == 1) {
                    gLo /= 2;
                }
                lastMoved = 1;
            }
            stalls = hi - lo > 0.5 * width ? stalls + 1 : 0;
        }
        return hi;
    }

    /**
     * The largest number of DP-SGD steps T such that T Poisson-sampled Gaussians (q, σ) are
     * (ε, δ)-DP; 0 if even one step exceeds the target.
     *
     * @param samplingRate    q ∈ [0, 1]
     * @param noiseMultiplier σ, finite and ≥ 0
     * @param targetEpsilon   ε &gt; 0, finite
     * @param delta           δ ∈ (0, 1)
     * @param accountant      the accountant that defines ε(T)
     * @return T ≥ 0 steps, at most 2⁵³ (the cap is returned when no smaller limit is found, e.g. for q = 0)
     * @throws IllegalArgumentException on invalid arguments, or if the accountant refuses a step count it is asked
     *                                  about (for example {@link PldAccountant} for too many steps)
     */
    public static long maxSteps(double samplingRate, double noiseMultiplier, double targetEpsilon, double delta,
                                PrivacyAccountant accountant) {
        Checks.probability("sampling rate q", samplingRate);
        Checks.finiteNonNegative("noise multiplier sigma", noiseMultiplier);
        return largestCount(t -> dpSgd(samplingRate, noiseMultiplier, t), targetEpsilon, delta, accountant);
    }

    /**
     * The largest count k ≤ 2⁵³ such that the event built from k is (ε, δ)-DP (ε must be non-decreasing in
     * k); 0 if k = 1 already exceeds the target. The search doubles k from 1, then bisects.
     *
     * @param eventOfCount  the event for a given count; called with counts in [1, 2⁵³]
     * @param targetEpsilon ε, the target privacy loss: finite and &gt; 0
     * @param delta         δ ∈ (0, 1)
     * @param accountant    the accountant that defines ε(k)
     * @return k ≥ 0, at most 2⁵³
     * @throws IllegalArgumentException on invalid arguments, or if the accountant refuses a built event
     */
    public static long largestCount(LongFunction<PrivacyEvent> eventOfCount, double targetEpsilon, double delta,
                                    PrivacyAccountant accountant) {
        Checks.finitePositive("target epsilon", targetEpsilon);
        Checks.delta(delta);
        if (accountant.epsilon(eventOfCount.apply(1), delta) > targetEpsilon) {
            return 0;
        }
        long lo = 1;
        long hi = 2;
        while (accountant.epsilon(eventOfCount.apply(hi), delta) <= targetEpsilon) {
            lo = hi;
            hi *= 2;
            if (hi > (1L << 53)) {
                return lo;
            }
        }
        while (hi - lo > 1) {
            long mid = lo + (hi - lo) / 2;
            if (accountant.epsilon(eventOfCount.apply(mid), delta) <= targetEpsilon) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * The DP-SGD event: T self-composed Poisson-sampled Gaussians.
     *
     * @param samplingRate    q ∈ [0, 1]
     * @param noiseMultiplier σ, finite and ≥ 0
     * @param steps           T ≥ 0
     * @return {@code SelfComposedEvent(PoissonSampledEvent(GaussianEvent(σ), q), T)}
     * @throws IllegalArgumentException if a parameter is out of range
     */
    public static PrivacyEvent dpSgd(double samplingRate, double noiseMultiplier, long steps) {
        return new SelfComposedEvent(new PoissonSampledEvent(new GaussianEvent(noiseMultiplier), samplingRate), steps);
    }
}
