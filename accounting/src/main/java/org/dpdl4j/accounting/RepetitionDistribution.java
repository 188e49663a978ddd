package org.dpdl4j.accounting;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.random.RandomGenerator;
import org.apache.commons.math3.special.Gamma;

/**
 * The distribution of the number of runs K of a repeat-and-select tuner (Papernot &amp; Steinke, "Hyperparameter
 * Tuning with Rényi Differential Privacy", ICLR 2022, arXiv:2110.03620, Section 3): Poisson(μ) (Theorem 6), the truncated negative binomial
 * D_{η,γ} (Definition 1; {@link TruncatedNegativeBinomial}), a point mass (naive repetition, for
 * comparison) and any of these truncated at an upper limit m (Appendix E.1, Lemma 22).
 *
 * <p>It lives beside the accountant, not in the tuning package, because the accountant needs its
 * probability generating function (PGF) f(x) = E[x^K] and the dependency direction forbids
 * accounting → tuning. All methods are pure; sampling uses the caller's generator.
 */
public sealed interface RepetitionDistribution
        permits RepetitionDistribution.Poisson, TruncatedNegativeBinomial, RepetitionDistribution.PointMass,
                RepetitionDistribution.Truncated {

    /**
     * P[K = k] for k ≥ 0 (0 for k &lt; 0).
     *
     * @param k the number of runs, any value
     * @return the probability, in [0, 1]
     */
    double pmf(long k);

    /**
     * E[K], the expected number of runs.
     *
     * @return E[K] &gt; 0
     */
    double mean();

    /**
     * The PGF f(x) = E[x^K] for x ∈ [0, 1] (Papernot &amp; Steinke 2022, arXiv:2110.03620, eq. 7 for D_{η,γ}).
     *
     * @param x the argument, in [0, 1]
     * @return f(x), in [0, 1]
     */
    double pgf(double x);

    /**
     * f′(x) = E[K x^{K−1}] for x ∈ [0, 1]; the quantity Lemma 7 of Papernot &amp; Steinke 2022, arXiv:2110.03620 bounds.
     *
     * @param x the argument, in [0, 1]
     * @return f′(x) ≥ 0
     */
    double pgfDerivative(double x);

    /**
     * True when K = 0 has positive probability (the tuner then returns a data-independent default).
     *
     * @return whether P[K = 0] &gt; 0
     */
    default boolean allowsZero() {
        return pmf(0) > 0;
    }

    /**
     * One draw of K by inversion of the cumulative distribution (exact up to floating-point
     * rounding of the running sum).
     *
     * @param random the generator; one {@code nextDouble()} per draw here (overrides may use more or none)
     * @return K ≥ 0
     */
    default long sample(RandomGenerator random) {
        double u = random.nextDouble();
        double mean = mean();
        double cumulative = 0;
        for (long k = 0; ; k++) {
            double before = cumulative;
            cumulative += pmf(k);
            // The second test ends the loop in the far tail once the running sum stops growing in
            // floating point (mass below ~1e-16 left): the draw is then the current k.
            if (u < cumulative || (k > mean && cumulative == before)) {
                return k;
            }
        }
    }

    /**
     * The same distribution conditioned on K ≤ m (Papernot &amp; Steinke 2022, arXiv:2110.03620, Appendix E.1).
     *
     * @param m the largest number of runs kept: ≥ 1, with P[K ≤ m] &gt; 0
     * @return the truncated distribution
     * @throws IllegalArgumentException if m &lt; 1, this distribution is already truncated, or P[K ≤ m] = 0
     */
    default RepetitionDistribution truncatedAt(long m) {
        return new Truncated(this, m);
    }

    /**
     * A JSON-ready map with a {@code "type"} key; read back by {@link #fromMap(Map)}.
     *
     * @return the map: the type and the distribution's parameters
     */
    Map<String, Object> toMap();

    /**
     * A short human-readable name, e.g. {@code poisson(mu=10)}.
     *
     * @return the name
     */
    String describe();

    /**
     * K ~ Poisson(μ) (Papernot &amp; Steinke 2022, arXiv:2110.03620, Theorem 6; K = 0 happens with probability e^{−μ}).
     *
     * @param mu μ = E[K]: finite and &gt; 0
     * @return the distribution
     * @throws IllegalArgumentException if μ is not finite and &gt; 0
     */
    static Poisson poisson(double mu) {
        return new Poisson(mu);
    }

    /**
     * The logarithmic distribution D_{0,γ} with E[K] ≥ {@code mean} (γ rounded to the safe side).
     *
     * @param mean the least expected number of runs: finite and &gt; 1
     * @return the distribution
     * @throws IllegalArgumentException if mean is not finite and &gt; 1, or too large to reach
     */
    static TruncatedNegativeBinomial logarithmic(double mean) {
        return TruncatedNegativeBinomial.withMean(0, mean);
    }

    /**
     * The geometric distribution D_{1,γ} with E[K] ≥ {@code mean} (γ rounded to the safe side).
     *
     * @param mean the least expected number of runs: finite and &gt; 1
     * @return the distribution
     * @throws IllegalArgumentException if mean is not finite and &gt; 1, or too large to reach
     */
    static TruncatedNegativeBinomial geometric(double mean) {
        return TruncatedNegativeBinomial.withMean(1, mean);
    }

    /**
     * K = k always: naive repetition, charged by composition.
     *
     * @param k the number of runs: ≥ 1
     * @return the distribution
     * @throws IllegalArgumentException if k &lt; 1
     */
    static PointMass pointMass(long k) {
        return new PointMass(k);
    }

    /**
     * dp_accounting's parameterisation of {@code RepeatAndSelectDpEvent}: Poisson(mean) when
     * {@code shape} is +∞, otherwise D_{η,γ} with η = shape and E[K] ≥ mean.
     *
     * @param mean  the (least) expected number of runs: finite and &gt; 0 for Poisson, finite and &gt; 1 otherwise
     * @param shape η &gt; −1, or +∞ for Poisson
     * @return the distribution
     * @throws IllegalArgumentException on an invalid mean or shape (shape ≤ −1 or NaN, or a mean out of range or too
     *                                  large to reach with this shape)
     */
    static RepetitionDistribution fromMeanAndShape(double mean, double shape) {
        if (!(shape > -1)) {
            throw new IllegalArgumentException("shape eta must be > -1 (or infinite for Poisson), got " + shape);
        }
        return Double.isInfinite(shape) ? new Poisson(mean) : TruncatedNegativeBinomial.withMean(shape, mean);
    }

    /**
     * Reads {@link #toMap()} output back (numbers may be any {@link Number}, as after a JSON round trip).
     *
     * @param map the distribution's map, not null
     * @return the distribution
     * @throws IllegalArgumentException on an unknown type, a missing or ill-typed field, or a parameter out of range
     */
    static RepetitionDistribution fromMap(Map<?, ?> map) {
        Object type = map.get("type");
        return switch (String.valueOf(type)) {
            case "poisson" -> new Poisson(number(map, "mu"));
            case "truncated_negative_binomial" -> new TruncatedNegativeBinomial(number(map, "eta"), number(map, "gamma"));
            case "point_mass" -> new PointMass(integer(map, "k"));
            case "truncated" -> {
                if (!(map.get("distribution") instanceof Map<?, ?> inner)) {
                    throw new IllegalArgumentException("truncated distribution needs a map 'distribution', got " + map);
                }
                yield new Truncated(fromMap(inner), integer(map, "limit"));
            }
            default -> throw new IllegalArgumentException("unknown repetition distribution type '" + type + "'");
        };
    }

    private static double number(Map<?, ?> map, String key) {
        if (!(map.get(key) instanceof Number n)) {
            throw new IllegalArgumentException("distribution field '" + key + "' must be a number, got " + map.get(key));
        }
        return n.doubleValue();
    }

    private static long integer(Map<?, ?> map, String key) {
        double v = number(map, key);
        if (v != Math.rint(v) || Math.abs(v) > 9.007199254740992E15) {
            throw new IllegalArgumentException("distribution field '" + key + "' must be an integer, got " + v);
        }
        return (long) v;
    }

    /**
     * K ~ Poisson(μ).
     *
     * @param mu μ = E[K]: finite and &gt; 0
     */
    record Poisson(double mu) implements RepetitionDistribution {
        /**
         * Creates the distribution after checking μ.
         *
         * @param mu μ = E[K]: finite and &gt; 0
         * @throws IllegalArgumentException if μ is not finite and &gt; 0
         */
        public Poisson {
            if (!(mu > 0) || Double.isInfinite(mu)) {
                throw new IllegalArgumentException("Poisson mean mu must be finite and > 0, got " + mu);
            }
        }

        @Override
        public double pmf(long k) {
            return k < 0 ? 0 : Math.exp(k * Math.log(mu) - mu - Gamma.logGamma(k + 1.0));
        }

        @Override
        public double mean() {
            return mu;
        }

        @Override
        public double pgf(double x) {
            return Math.exp(mu * (x - 1));
        }

        @Override
        public double pgfDerivative(double x) {
            return mu * Math.exp(mu * (x - 1));
        }

        @Override
        public Map<String, Object> toMap() {
            return PrivacyEvents.ordered("type", "poisson", "mu", mu);
        }

        @Override
        public String describe() {
            return "poisson(mu=" + mu + ")";
        }
    }

    /**
     * K = k with probability 1 (naive repetition).
     *
     * @param k the number of runs: ≥ 1
     */
    record PointMass(long k) implements RepetitionDistribution {
        /**
         * Creates the distribution after checking k.
         *
         * @param k the number of runs: ≥ 1
         * @throws IllegalArgumentException if k &lt; 1
         */
        public PointMass {
            if (k < 1) {
                throw new IllegalArgumentException("point mass K must be >= 1, got " + k);
            }
        }

        @Override
        public double pmf(long j) {
            return j == k ? 1 : 0;
        }

        @Override
        public double mean() {
            return k;
        }

        @Override
        public double pgf(double x) {
            return Math.pow(x, k);
        }

        @Override
        public double pgfDerivative(double x) {
            return k * Math.pow(x, k - 1);
        }

        @Override
        public long sample(RandomGenerator random) {
            return k;
        }

        @Override
        public Map<String, Object> toMap() {
            return PrivacyEvents.ordered("type", "point_mass", "k", k);
        }

        @Override
        public String describe() {
            return "fixed(K=" + k + ")";
        }
    }

    /**
     * K conditioned on K ≤ m (Papernot &amp; Steinke 2022, arXiv:2110.03620, Appendix E.1): P[K̃ = k] = 1[k ≤ m] P[K = k]/P[K ≤ m].
     * P[K ≤ m] and Σ_{k≤m} k P[K = k] are summed once, at construction (O(m)); keep m below a
     * few million.
     */
    final class Truncated implements RepetitionDistribution {
        private final RepetitionDistribution distribution;
        private final long limit;
        private final double mass;
        private final double headMean;

        /**
         * The distribution of K conditioned on K ≤ m; sums P[K ≤ m] and Σ_{k≤m} k P[K = k] in O(m).
         *
         * @param distribution the untruncated K (not itself truncated), not null
         * @param limit        m ≥ 1, with P[K ≤ m] &gt; 0
         * @throws IllegalArgumentException if m &lt; 1, the inner distribution is truncated, or P[K ≤ m] = 0
         * @throws NullPointerException     if distribution is null
         */
        public Truncated(RepetitionDistribution distribution, long limit) {
            this.distribution = java.util.Objects.requireNonNull(distribution, "distribution");
            if (limit < 1) {
                throw new IllegalArgumentException("truncation limit m must be >= 1, got " + limit);
            }
            if (distribution instanceof Truncated) {
                throw new IllegalArgumentException("truncate the untruncated distribution once (use the smaller limit)");
            }
            this.limit = limit;
            double m = 0;
            double h = 0;
            for (long k = 0; k <= limit; k++) {
                double p = distribution.pmf(k);
                m += p;
                h += k * p;
            }
            if (!(m > 0)) {
                throw new IllegalArgumentException("P[K <= " + limit + "] is 0 for " + distribution.describe());
            }
            this.mass = Math.min(1, m);
            this.headMean = h;
        }

        /**
         * The untruncated K.
         *
         * @return the distribution before truncation
         */
        public RepetitionDistribution distribution() {
            return distribution;
        }

        /**
         * The limit m.
         *
         * @return m ≥ 1, the largest number of runs kept
         */
        public long limit() {
            return limit;
        }

        /**
         * P[K ≤ m] of the untruncated K.
         *
         * @return the probability, in (0, 1]
         */
        public double massKept() {
            return mass;
        }

        /**
         * An upper bound on E[K·1[K &gt; m]] of the untruncated K: E[K] − Σ_{k≤m} k P[K = k], plus a
         * rounding allowance of 1e-12·E[K] (the subtraction can lose that much).
         *
         * @return the bound, ≥ 0
         */
        public double tailMean() {
            return Math.max(0, distribution.mean() - headMean) + 1e-12 * distribution.mean();
        }

        @Override
        public double pmf(long k) {
            return k < 0 || k > limit ? 0 : distribution.pmf(k) / mass;
        }

        @Override
        public double mean() {
            return headMean / mass;
        }

        @Override
        public double pgf(double x) {
            double s = 0;
            for (long k = 0; k <= limit; k++) {
                s += distribution.pmf(k) * Math.pow(x, k);
            }
            return s / mass;
        }

        @Override
        public double pgfDerivative(double x) {
            double s = 0;
            for (long k = 1; k <= limit; k++) {
                s += k * distribution.pmf(k) * Math.pow(x, k - 1);
            }
            return s / mass;
        }

        @Override
        public long sample(RandomGenerator random) {
            while (true) { // rejection: exact conditioning on K <= m
                long k = distribution.sample(random);
                if (k <= limit) {
                    return k;
                }
            }
        }

        @Override
        public Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("type", "truncated");
            m.put("limit", limit);
            m.put("distribution", distribution.toMap());
            return m;
        }

        @Override
        public String describe() {
            return distribution.describe() + " truncated at " + limit;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Truncated t && t.limit == limit && t.distribution.equals(distribution);
        }

        @Override
        public int hashCode() {
            return 31 * distribution.hashCode() + Long.hashCode(limit);
        }

        @Override
        public String toString() {
            return "Truncated[" + distribution + ", limit=" + limit + "]";
        }
    }
}
