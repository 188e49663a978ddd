package org.dpdl4j.accounting;

/**
 * RDP of the Poisson-subsampled Gaussian mechanism (sampling rate q, noise multiplier σ,
 * add/remove neighbours), following Mironov, Talwar &amp; Zhang, "Rényi Differential Privacy of the
 * Sampled Gaussian Mechanism" (arXiv:1908.10530), Sections 3.2 and 3.3 — the same computation as
 * dp_accounting's {@code _compute_rdp_poisson_subsampled_gaussian}, with two deliberate differences
 * that can only make ε larger (never smaller):
 * <ul>
 *   <li>fractional orders: the two-sided series is summed with absolute values of its terms, so the
 *       truncated sum is an upper bound on A_α, and after the loop stops (terms below e^-30) a tail
 *       allowance of 2(i+1)·e^-30 is added, above the polynomial tail ~ i^{-α-2} of both series;</li>
 *   <li>a series that has not met the stopping rule after {@value #MAX_TERMS} terms gives +∞ for
 *       that order (no bound is claimed).</li>
 * </ul>
 * Integer orders use the exact binomial sum A_α = Σ_{i=0}^{α} C(α,i) q^i (1−q)^{α−i}
 * exp((i²−i)/(2σ²)) in log space. q = 1 returns α/(2σ²) exactly; q = 0 returns 0.
 */
final class SubsampledGaussianRdp {
    static final int MAX_TERMS = 200_000;
    private static final double LOG_STOP = -30;

    private SubsampledGaussianRdp() {
    }

    /**
     * ε(α) of one step.
     *
     * @param q     sampling rate in [0, 1]
     * @param sigma noise multiplier σ ≥ 0
     * @param alpha order α &gt; 1
     * @return ε(α) ≥ 0, possibly +∞
     */
    static double rdp(double q, double sigma, double alpha) {
        if (q == 0) {
            return 0;
        }
        if (sigma == 0) {
            return Double.POSITIVE_INFINITY;
        }
        if (q == 1) {
            return alpha / (2 * sigma * sigma);
        }
        double logA = alpha == Math.rint(alpha) ? logAInteger(q, sigma, (int) alpha) : logAFractional(q, sigma, alpha);
        double eps = logA / (alpha - 1);
        return Double.isNaN(eps) ? Double.POSITIVE_INFINITY : Math.max(0, eps);
    }

    /** Section 3.2: exact finite binomial sum for integer α. */
    static double logAInteger(double q, double sigma, int alpha) {
        double logA = Double.NEGATIVE_INFINITY;
        double logQ = Math.log(q);
        double log1mQ = Math.log1p(-q);
        double twoSigma2 = 2 * sigma * sigma;
        for (int i = 0; i <= alpha; i++) {
            double term = LogMath.logBinomial(alpha, i) + i * logQ + (alpha - i) * log1mQ
                    + ((double) i * i - i) / twoSigma2;
            logA = LogMath.logAdd(logA, term);
        }
        return logA;
    }

    /** Section 3.3: the two-sided series for fractional α, summed in absolute value (upper bound). */
    static double logAFractional(double q, double sigma, double alpha) {
        double logA = Double.NEGATIVE_INFINITY;
        double logQ = Math.log(q);
        double log1mQ = Math.log1p(-q);
        double sigma2 = sigma * sigma;
        double z0 = sigma2 * Math.log(1 / q - 1) + 0.5;
        double sqrt2Sigma = Math.sqrt(2) * sigma;
        double logHalf = Math.log(0.5);
        double logAbsCoef = 0; // log|C(alpha, i)|, updated incrementally
        for (int i = 0; i < MAX_TERMS; i++) {
            if (i > 0) {
                logAbsCoef += Math.log(Math.abs((alpha - (i - 1)) / i));
            }
            double j = alpha - i;
            double logT0 = logAbsCoef + i * logQ + j * log1mQ;
            double logT1 = logAbsCoef + j * logQ + i * log1mQ;
            double logE0 = logHalf + LogMath.logErfc((i - z0) / sqrt2Sigma);
            double logE1 = logHalf + LogMath.logErfc((z0 - j) / sqrt2Sigma);
            double logS0 = logT0 + ((double) i * i - i) / (2 * sigma2) + logE0;
            double logS1 = logT1 + (j * j - j) / (2 * sigma2) + logE1;
            logA = LogMath.logAdd(logA, LogMath.logAdd(logS0, logS1));
            if (Double.isNaN(logA)) {
                return Double.POSITIVE_INFINITY;
            }
            if (Math.max(logS0, logS1) < LOG_STOP && i > alpha) {
                // both series decay like i^(-alpha-2) from here: their tails sum to < 2(i+1)/alpha * e^-30
                return LogMath.logAdd(logA, Math.log(2 * (i + 1.0)) + LOG_STOP);
            }
        }
        return Double.POSITIVE_INFINITY;
    }
}
