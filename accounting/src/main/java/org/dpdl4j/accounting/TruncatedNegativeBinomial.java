package org.dpdl4j.accounting;

import java.util.Map;
import org.apache.commons.math3.special.Gamma;

/**
 * The truncated negative binomial distribution D_{η,γ} on {1, 2, …} of Papernot &amp; Steinke, "Hyperparameter
 * Tuning with Rényi Differential Privacy", ICLR 2022, arXiv:2110.03620, Definition 1: P[K = k] ∝ (1 − γ)^k Π_{ℓ&lt;k} (ℓ + η)/(ℓ + 1);
 * η = 0 is the logarithmic and η = 1 the geometric distribution. Its mean (Definition 1) is
 * η(1 − γ)/(γ(1 − γ^η)) for η ≠ 0 and (1/γ − 1)/log(1/γ) for η = 0, and its probability generating
 * function (eq. 7) is f(x) = ((1 − (1 − γ)x)^{−η} − 1)/(γ^{−η} − 1), or log(1 − (1 − γ)x)/log γ for η = 0.
 *
 * @param eta   η ∈ (−1, ∞)
 * @param gamma γ ∈ (0, 1)
 */
public record TruncatedNegativeBinomial(double eta, double gamma) implements RepetitionDistribution {
    /**
     * Creates the distribution after checking η and γ.
     *
     * @param eta   η, the shape: finite and &gt; −1
     * @param gamma γ, in (0, 1) (smaller γ means larger E[K])
     * @throws IllegalArgumentException if η ≤ −1 or not finite, or γ ∉ (0, 1)
     */
    public TruncatedNegativeBinomial {
        if (!(eta > -1) || Double.isInfinite(eta)) {
            throw new IllegalArgumentException("eta must be finite and > -1, got " + eta);
        }
        if (!(gamma > 0 && gamma < 1)) {
            throw new IllegalArgumentException("gamma must be in (0, 1), got " + gamma);
        }
    }

    /** E[K] (Definition 1). */
    @Override
    public double mean() {
        if (eta == 0) {
            return (1 / gamma - 1) / Math.log(1 / gamma);
        }
        return eta * (1 - gamma) / (gamma * -Math.expm1(eta * Math.log(gamma)));
    }

    /**
     * P[K = k] = (1 − γ)^k · Γ(k + η)/(Γ(1 + η) k!) · η/(γ^{−η} − 1), the normaliser read as
     * 1/log(1/γ) at η = 0 (its limit), for k ≥ 1; 0 otherwise.
     */
    @Override
    public double pmf(long k) {
        if (k < 1) {
            return 0;
        }
        double logNorm = eta == 0 ? -Math.log(Math.log(1 / gamma))
                : Math.log(eta / Math.expm1(-eta * Math.log(gamma)));
        double logProduct = Gamma.logGamma(k + eta) - Gamma.logGamma(1 + eta) - Gamma.logGamma(k + 1.0);
        return Math.exp(k * Math.log1p(-gamma) + logProduct + logNorm);
    }

    /** The probability generating function f(x) = E[x^K] for x ∈ [0, 1] (eq. 7). */
    @Override
    public double pgf(double x) {
        if (eta == 0) {
            return Math.log1p(-(1 - gamma) * x) / Math.log(gamma);
        }
        return Math.expm1(-eta * Math.log1p(-(1 - gamma) * x)) / Math.expm1(-eta * Math.log(gamma));
    }

    /** f′(x): η(1 − γ)(1 − (1 − γ)x)^{−η−1}/(γ^{−η} − 1), or (1 − γ)/((1 − (1 − γ)x) log(1/γ)) at η = 0. */
    @Override
    public double pgfDerivative(double x) {
        double base = 1 - (1 - gamma) * x;
        if (eta == 0) {
            return (1 - gamma) / (base * Math.log(1 / gamma));
        }
        return eta * (1 - gamma) * Math.exp((-eta - 1) * Math.log(base)) / Math.expm1(-eta * Math.log(gamma));
    }

    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "truncated_negative_binomial", "eta", eta, "gamma", gamma);
    }

    @Override
    public String describe() {
        String name = eta == 0 ? "logarithmic" : eta == 1 ? "geometric" : "tnb(eta=" + eta + ")";
        return String.format("%s(gamma=%.6g, mean=%.6g)", name, gamma, mean());
    }

    /**
     * The distribution with shape η whose mean is at least {@code mean}, with γ found by bisection
     * and rounded towards the smaller γ (larger E[K], larger ε: the safe side).
     *
     * @param eta  η, the shape: finite and &gt; −1 (0 logarithmic, 1 geometric)
     * @param mean the least expected number of runs E[K]: finite and &gt; 1
     * @return D_{η,γ} with E[K] ≥ mean
     * @throws IllegalArgumentException if mean ≤ 1 or not finite, η ≤ −1 or not finite, or mean is too large to
     *                                  reach with γ ≥ 10⁻³⁰⁰
     */
    public static TruncatedNegativeBinomial withMean(double eta, double mean) {
        if (!(mean > 1) || Double.isInfinite(mean)) {
            throw new IllegalArgumentException("mean must be finite and > 1, got " + mean);
        }
        double lo = 1e-300; // E[K] is decreasing in gamma: lo has mean >= target
        double hi = 1 - 1e-15;
        if (new TruncatedNegativeBinomial(eta, lo).mean() < mean) {
            throw new IllegalArgumentException("mean " + mean + " is too large for eta " + eta);
        }
        for (int i = 0; i < 200; i++) {
            double mid = hi / lo > 4 ? Math.sqrt(lo * hi) : 0.5 * (lo + hi);
            if (new TruncatedNegativeBinomial(eta, mid).mean() >= mean) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return new TruncatedNegativeBinomial(eta, lo);
    }
}
