package org.dpdl4j.accounting;

/**
 * Conversion between an RDP curve and (ε, δ)-DP.
 *
 * <p>ε(δ) = max(0, min_α [ε(α) + log(1 − 1/α) − (log δ + log α)/(α − 1)]): Canonne, Kamath &amp;
 * Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020 (arXiv:2004.00010, Proposition 12); Balle
 * et al., "Hypothesis Testing Interpretations and Renyi Differential Privacy", AISTATS 2020, Theorem 21; Koskela &amp;
 * Kulkarni, "Practical Differentially Private Hyperparameter Tuning with Subsampling", NeurIPS 2023, arXiv:2301.11989,
 * Lemma 3 (eq. 2.2) solved for ε; Liebenow, Peinemann &amp; Mohammadi, "DP-HYPE: Distributed Differentially Private
 * Hyperparameter Search", 2025, arXiv:2510.04902, Theorem II.1. Every order gives a valid bound; the minimum over
 * the grid is reported with its order. An order with √(1 − e^{−ε(α)}) &lt; δ gives ε = 0 (the total
 * variation, bounded through KL ≤ D_α, is below δ), as in dp_accounting's {@code compute_epsilon}.
 *
 * <p>δ(ε) = min over α of min(exp((α − 1)(ε(α) − ε + log(1 − 1/α)) − log α), √(1 − e^{−ε(α)}))
 * (the same Proposition 12, and the total-variation bound through KL ≤ D_α, as in dp_accounting's
 * {@code compute_delta}; the first form is used only for α &gt; 1.01 where it is numerically stable).
 */
public final class RdpConversion {
    private RdpConversion() {
    }

    /**
     * The smallest ε over the curve's orders.
     *
     * @param curve RDP curve, not null
     * @param delta δ ∈ (0, 1)
     * @return the guarantee (accountant "rdp"); ε = +∞ and order NaN if every order is +∞
     * @throws IllegalArgumentException if δ ∉ (0, 1)
     */
    public static PrivacyGuarantee epsilon(RdpCurve curve, double delta) {
        Checks.delta(delta);
        double logDelta = Math.log(delta);
        double best = Double.POSITIVE_INFINITY;
        int bestIndex = -1;
        double minOrder = Double.POSITIVE_INFINITY;
        double maxOrder = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < curve.size(); i++) {
            double a = curve.order(i);
            minOrder = Math.min(minOrder, a);
            maxOrder = Math.max(maxOrder, a);
            double r = curve.epsilon(i);
            if (Double.isInfinite(r)) {
                continue;
            }
            // sqrt(1 - e^-r) < delta bounds the total variation below delta: (0, delta)-DP
            double eps = delta * delta + Math.expm1(-r) > 0 ? 0
                    : r + Math.log1p(-1 / a) - (logDelta + Math.log(a)) / (a - 1);
            if (eps < best) {
                best = eps;
                bestIndex = i;
            }
        }
        if (bestIndex < 0) {
            return new PrivacyGuarantee(Double.POSITIVE_INFINITY, delta, Double.NaN, false, "rdp");
        }
        double order = curve.order(bestIndex);
        boolean edge = curve.size() > 1 && (order == minOrder || order == maxOrder);
        return new PrivacyGuarantee(Math.max(0, best), delta, order, edge, "rdp");
    }

    /**
     * The smallest δ for a given ε over the curve's orders.
     *
     * @param curve   RDP curve, not null
     * @param epsilon ε ≥ 0, finite
     * @return δ ∈ [0, 1]
     * @throws IllegalArgumentException if ε is negative or not finite
     */
    public static double delta(RdpCurve curve, double epsilon) {
        return delta(curve, epsilon, true);
    }

    /**
     * {@link #delta(RdpCurve, double)} without the total-variation branch (Proposition 12 only), for
     * divergences between measures that need not be normalised (DP-HyPO's extremal mixtures).
     */
    static double deltaWithoutTotalVariation(RdpCurve curve, double epsilon) {
        return delta(curve, epsilon, false);
    }

    private static double delta(RdpCurve curve, double epsilon, boolean totalVariation) {
        Checks.finiteNonNegative("epsilon", epsilon);
        double bestLog = 0;
        for (int i = 0; i < curve.size(); i++) {
            double a = curve.order(i);
            double r = curve.epsilon(i);
            if (Double.isInfinite(r)) {
                continue;
            }
            double logDelta = !totalVariation ? 0 : r == 0 ? Double.NEGATIVE_INFINITY : 0.5 * Math.log1p(-Math.exp(-r));
            if (a > 1.01) {
                logDelta = Math.min(logDelta, (a - 1) * (r - epsilon + Math.log1p(-1 / a)) - Math.log(a));
            }
            bestLog = Math.min(bestLog, logDelta);
        }
        return Math.min(1, Math.exp(bestLog));
    }
}
