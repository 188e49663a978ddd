package org.dpdl4j.accounting;

import java.util.Arrays;

/**
 * Turns any {@link PrivacyEvent} into an RDP curve on a fixed order grid, and into (ε, δ).
 * Immutable and thread-safe. Which bound each event uses:
 * <ul>
 *   <li>{@link GaussianEvent}(σ): α/(2σ²) (Mironov, "Rényi Differential Privacy", IEEE CSF 2017, arXiv:1702.07476,
 *       Proposition 7).</li>
 *   <li>{@link PoissonSampledEvent} of a Gaussian: exact sampled-Gaussian RDP of Mironov, Talwar &amp;
 *       Zhang, "Rényi Differential Privacy of the Sampled Gaussian Mechanism", 2019, arXiv:1908.10530
 *       ({@link SubsampledGaussianRdp}); q = 1 gives α/(2σ²) exactly.</li>
 *   <li>{@link PoissonSampledEvent} of a Poisson-sampled event: the rates multiply (sampling twice
 *       independently is sampling once with the product rate).</li>
 *   <li>{@link PoissonSampledEvent} of any other event: Zhu &amp; Wang 2019 as printed in Koskela &amp; Kulkarni,
 *       "Practical Differentially Private Hyperparameter Tuning with Subsampling", NeurIPS 2023, arXiv:2301.11989,
 *       Theorem 4, at integer α ≥ 2, from the inner event's ε at the
 *       integer orders 2..α (a fractional α uses the next integer up, as RDP is non-decreasing in
 *       α; α &lt; 2 uses α = 2; above order {@value #MAX_ZHU_WANG_ORDER} the bound is not evaluated),
 *       capped by the inner event's own ε(α): by joint quasi-convexity of Rényi divergence, a
 *       subsampled mechanism is never worse than the mechanism on the whole data (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, App. D.2).</li>
 *   <li>{@link LaplaceEvent}(b): Mironov 2017, Proposition 6.</li>
 *   <li>{@link PureDpEvent}(ε): min(ε, αε²/2) (ε-DP ⇒ ε²/2-zCDP, Bun &amp; Steinke, "Concentrated Differential
 *       Privacy: Simplifications, Extensions, and Lower Bounds", TCC 2016, arXiv:1605.02065, Prop. 3.3).</li>
 *   <li>{@link ZcdpEvent}(ρ): ρα. {@link NonPrivateEvent}: +∞. {@link NoOpEvent}: 0.</li>
 *   <li>{@link SelfComposedEvent}, {@link ComposedEvent}: curves add (Mironov 2017, Proposition 1).</li>
 *   <li>{@link RepeatAndSelectEvent}: Papernot &amp; Steinke, "Hyperparameter Tuning with Rényi Differential
 *       Privacy", ICLR 2022, arXiv:2110.03620, Theorem 6 (Poisson K), Theorem 2 (truncated negative
 *       binomial K, minimised over λ̂ on this grid and λ̂ = 1), composition (point mass), Lemma 22
 *       (truncated K); with a pure ε-DP base and truncated negative binomial K, {@link #guarantee}
 *       also applies Corollary 3, ((2 + η)ε, 0)-DP.</li>
 *   <li>{@link AdaptiveRepeatAndSelectEvent}: as {@link RepeatAndSelectEvent} when c = C; otherwise Wang et al.,
 *       "DP-HyPO: An Adaptive Private Hyperparameter Optimization Framework", NeurIPS 2023, arXiv:2306.05734,
 *       Theorem 1 (truncated negative binomial K),
 *       composition (point mass), a bound derived from its Lemmas A.4 and A.5 (Poisson K) and Lemma 22 of
 *       Papernot &amp; Steinke (truncated K); with a pure ε-DP base and truncated negative binomial K,
 *       {@link #guarantee} also applies Theorem 2, ((2 + η)(ε + log(C/c)), 0)-DP.</li>
 *   <li>{@link DistributedDiscreteGaussianEvent}: Kairouz, Liu &amp; Steinke, "The Distributed Discrete Gaussian
 *       Mechanism for Federated Learning with Secure Aggregation", ICML 2021, Proposition 14 / eq. (17),
 *       the minimum of its three forms (see the event).</li>
 *   <li>{@link PointwiseMaxEvent}: the pointwise maximum of the curves (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Lemma 9).</li>
 *   <li>{@link SubsampledTuningEvent}: variant 1 by Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Theorem 6, ε(α) = max{ε₁(α), ε₂(α)} of
 *       eqs. (3.6)–(3.7) at the integer order ⌈α⌉ ≥ 2, capped by max{ε_tune(α), ε_base(α)} (joint
 *       quasi-convexity, as in the proof's step C.3); variant 2 as the Zhu–Wang-subsampled tuning curve plus the final run's (Section 3.3).</li>
 * </ul>
 * Conversion to (ε, δ) is {@link RdpConversion}.
 */
public final class RdpAccountant implements PrivacyAccountant {
    /** The largest integer order at which the Zhu–Wang bound is evaluated. */
    public static final int MAX_ZHU_WANG_ORDER = 4096;

    private static final double[] DEFAULT_ORDERS = defaultOrders();
    private static final RdpAccountant DEFAULT = new RdpAccountant(DEFAULT_ORDERS);

    private final double[] orders;

    /**
     * An accountant on the given order grid.
     *
     * @param orders RDP orders α, each finite and &gt; 1 (duplicates removed, sorted; the array is not kept); at least
     *               one
     * @throws IllegalArgumentException if an order is invalid or the grid is empty
     */
    public RdpAccountant(double[] orders) {
        if (orders.length == 0) {
            throw new IllegalArgumentException("orders must not be empty");
        }
        for (double a : orders) {
            Checks.order(a);
        }
        this.orders = Arrays.stream(orders).sorted().distinct().toArray();
    }

    /**
     * The accountant on dp_accounting's default grid: 1.1, 1.2, …, 10.9; 11, 12, …, 63; 128, 256,
     * 512, 1024 (156 orders).
     *
     * @return the shared standard instance
     */
    public static RdpAccountant standard() {
        return DEFAULT;
    }

    /**
     * The default grid (a copy): the orders of {@link #standard()}.
     *
     * @return a new array of the 156 default orders, ascending
     */
    public static double[] defaultOrders() {
        double[] o = new double[156];
        int k = 0;
        for (int x = 1; x < 100; x++) {
            o[k++] = 1 + x / 10.0;
        }
        for (int a = 11; a < 64; a++) {
            o[k++] = a;
        }
        for (int a : new int[]{128, 256, 512, 1024}) {
            o[k++] = a;
        }
        return o;
    }

    /**
     * This accountant's order grid (a copy).
     *
     * @return the orders, ascending and distinct
     */
    public double[] orders() {
        return orders.clone();
    }

    /**
     * The event's RDP curve on this accountant's grid.
     *
     * @param event the event, not null
     * @return ε(α) at each order of the grid (+∞ where no finite bound is known)
     * @throws IllegalArgumentException if the event is null
     */
    public RdpCurve rdp(PrivacyEvent event) {
        return new RdpCurve(orders, rdp(event, orders));
    }

    /**
     * (ε, δ) of the event: the RDP curve converted by {@link RdpConversion#epsilon}, or the pure-DP bound of
     * Papernot &amp; Steinke's Corollary 3 ({@link RepeatAndSelectEvent}) or Wang et al.'s Theorem 2
     * ({@link AdaptiveRepeatAndSelectEvent}) for a pure-DP base and truncated negative binomial K when that is smaller
     * (reported with order +∞).
     *
     * @param event the event, not null
     * @param delta δ ∈ (0, 1)
     * @return the guarantee
     * @throws IllegalArgumentException if δ ∉ (0, 1), or the event is null
     */
    @Override
    public PrivacyGuarantee guarantee(PrivacyEvent event, double delta) {
        PrivacyGuarantee g = RdpConversion.epsilon(rdp(event), delta);
        if (event instanceof RepeatAndSelectEvent r && r.event() instanceof PureDpEvent p
                && r.distribution() instanceof TruncatedNegativeBinomial d) {
            double pure = (2 + d.eta()) * p.epsilon(); // Papernot & Steinke 2022, arXiv:2110.03620, Corollary 3
            if (pure < g.epsilon()) {
                return new PrivacyGuarantee(pure, delta, Double.POSITIVE_INFINITY, false, "pure-dp (Papernot & Steinke 2022, arXiv:2110.03620, Corollary 3)");
            }
        }
        if (event instanceof AdaptiveRepeatAndSelectEvent a && a.event() instanceof PureDpEvent p
                && a.distribution() instanceof TruncatedNegativeBinomial d) {
            double pure = (2 + d.eta()) * (p.epsilon() + a.logRatio()); // Wang et al. 2023, arXiv:2306.05734, Theorem 2
            if (pure < g.epsilon()) {
                return new PrivacyGuarantee(pure, delta, Double.POSITIVE_INFINITY, false, "pure-dp (Wang et al. 2023, arXiv:2306.05734, Theorem 2)");
            }
        }
        return g;
    }

    /**
     * "rdp".
     *
     * @return "rdp"
     */
    @Override
    public String name() {
        return "rdp";
    }

    /**
     * Every event: each has an RDP bound (+∞ where none is finite, as for {@link NonPrivateEvent}).
     *
     * @param event the event
     * @return true unless the event is null
     */
    @Override
    public boolean supports(PrivacyEvent event) {
        return event != null;
    }

    /**
     * The smallest δ for which the event is (ε, δ)-DP by {@link RdpConversion#delta}.
     *
     * @param event   the event, not null
     * @param epsilon ε, finite and ≥ 0
     * @return δ in [0, 1]
     * @throws IllegalArgumentException if ε is negative or not finite, or the event is null
     */
    @Override
    public double delta(PrivacyEvent event, double epsilon) {
        return RdpConversion.delta(rdp(event), epsilon);
    }

    /**
     * ε(α) of an event at arbitrary orders (each &gt; 1), by the bounds listed in the class description.
     *
     * @param event  the event, not null
     * @param alphas the orders α, each finite and &gt; 1, in any order
     * @return a new array of ε(α), index-aligned with {@code alphas} (+∞ where no finite bound is known)
     * @throws IllegalArgumentException if an order is not finite and &gt; 1, or the event is null
     */
    public static double[] rdp(PrivacyEvent event, double[] alphas) {
        for (double a : alphas) {
            Checks.order(a);
        }
        double[] out = new double[alphas.length];
        if (event instanceof GaussianEvent g) {
            for (int i = 0; i < out.length; i++) {
                out[i] = SubsampledGaussianRdp.rdp(1, g.noiseMultiplier(), alphas[i]);
            }
        } else if (event instanceof PoissonSampledEvent p) {
            return sampled(p.event(), p.samplingRate(), alphas);
        } else if (event instanceof SelfComposedEvent s) {
            double[] inner = s.count() == 0 ? out : rdp(s.event(), alphas);
            for (int i = 0; i < out.length; i++) {
                out[i] = s.count() == 0 ? 0 : inner[i] * s.count();
            }
        } else if (event instanceof ComposedEvent c) {
            for (PrivacyEvent e : c.events()) {
                double[] inner = rdp(e, alphas);
                for (int i = 0; i < out.length; i++) {
                    out[i] += inner[i];
                }
            }
        } else if (event instanceof LaplaceEvent l) {
            for (int i = 0; i < out.length; i++) {
                out[i] = laplace(l.scale(), alphas[i]);
            }
        } else if (event instanceof PureDpEvent p) {
            for (int i = 0; i < out.length; i++) {
                out[i] = Math.min(p.epsilon(), alphas[i] * p.epsilon() * p.epsilon() / 2);
            }
        } else if (event instanceof ZcdpEvent z) {
            for (int i = 0; i < out.length; i++) {
                out[i] = z.rho() * alphas[i];
            }
        } else if (event instanceof RepeatAndSelectEvent r) {
            return repeatAndSelect(r, alphas);
        } else if (event instanceof PointwiseMaxEvent m) {
            Arrays.fill(out, 0);
            for (PrivacyEvent e : m.events()) {
                double[] inner = rdp(e, alphas);
                for (int i = 0; i < out.length; i++) {
                    out[i] = Math.max(out[i], inner[i]);
                }
            }
        } else if (event instanceof AdaptiveRepeatAndSelectEvent a) {
            return TuningRdp.adaptiveRepeatAndSelect(rdp(a.event(), alphas), alphas, a.distribution(), a.logRatio());
        } else if (event instanceof SubsampledTuningEvent s) {
            return TuningRdp.subsampledTuning(s, alphas);
        } else if (event instanceof DistributedDiscreteGaussianEvent d) {
            for (int i = 0; i < out.length; i++) {
                out[i] = distributedDiscreteGaussian(d, alphas[i]);
            }
        } else if (event instanceof NonPrivateEvent) {
            Arrays.fill(out, Double.POSITIVE_INFINITY);
        } else if (!(event instanceof NoOpEvent)) {
            throw new IllegalArgumentException("no RDP bound for event " + event);
        }
        return out;
    }

    /** Kairouz, Liu &amp; Steinke 2021, Proposition 14 / eq. (17): the least of its three bounds. */
    private static double distributedDiscreteGaussian(DistributedDiscreteGaussianEvent d, double alpha) {
        double scale = Math.sqrt(d.minClients()) * d.localSigma();
        double l2 = d.l2Sensitivity() / scale;
        double l1 = d.l1Sensitivity() / scale;
        double tau = d.tau();
        int dim = d.dimension();
        double first = alpha / 2 * l2 * l2 + tau * dim;
        double second = alpha / 2 * (l2 * l2 + 2 * l1 * tau + tau * tau * dim);
        double third = alpha / 2 * Math.pow(l2 + tau * Math.sqrt(dim), 2);
        return Math.min(first, Math.min(second, third));
    }

    private static double[] sampled(PrivacyEvent inner, double q, double[] alphas) {
        double[] out = new double[alphas.length];
        if (q == 0) {
            return out;
        }
        if (q == 1) {
            return rdp(inner, alphas);
        }
        if (inner instanceof GaussianEvent g) {
            for (int i = 0; i < out.length; i++) {
                out[i] = SubsampledGaussianRdp.rdp(q, g.noiseMultiplier(), alphas[i]);
            }
            return out;
        }
        if (inner instanceof PoissonSampledEvent p) {
            return sampled(p.event(), q * p.samplingRate(), alphas);
        }
        return zhuWang(inner, q, alphas);
    }

    /** The integer orders 2, 3, …, max(2, min(⌈max α⌉, {@value #MAX_ZHU_WANG_ORDER})). */
    static double[] integerOrdersUpTo(double[] alphas) {
        int maxInt = 2;
        for (double a : alphas) {
            maxInt = Math.max(maxInt, (int) Math.min(MAX_ZHU_WANG_ORDER, Math.ceil(a)));
        }
        double[] ints = new double[maxInt - 1];
        for (int j = 2; j <= maxInt; j++) {
            ints[j - 2] = j;
        }
        return ints;
    }

    /** Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Theorem 4 (Zhu &amp; Wang 2019), evaluated at the integer order ⌈α⌉ ≥ 2. */
    private static double[] zhuWang(PrivacyEvent inner, double q, double[] alphas) {
        double[] base = rdp(inner, integerOrdersUpTo(alphas)); // base[j - 2] = ε(j)
        double[] unsampled = rdp(inner, alphas);
        double logQ = Math.log(q);
        double log1mQ = Math.log1p(-q);
        // never worse than the unsampled mechanism (quasi-convexity of Rényi divergence, Koskela &amp; Kulkarni 2023, arXiv:2301.11989, App. D.2)
        return atIntegerOrders(alphas, unsampled, a -> {
            double log = (a - 1) * log1mQ + Math.log(a * q - q + 1);
            log = LogMath.logAdd(log, LogMath.logBinomial(a, 2) + 2 * logQ + (a - 2) * log1mQ + base[0]);
            for (int j = 3; j <= a; j++) {
                log = LogMath.logAdd(log, Math.log(3) + LogMath.logBinomial(a, j) + j * logQ
                        + (a - j) * log1mQ + (j - 1) * base[j - 2]);
            }
            return log / (a - 1);
        });
    }

    /**
     * For each order α: min(bound(⌈α⌉), cap[α]), the bound taken at the integer order max(2, ⌈α⌉)
     * (RDP is non-decreasing in α), NaN read as +∞ and negative values as 0; orders above
     * {@value #MAX_ZHU_WANG_ORDER} get the cap alone.
     */
    static double[] atIntegerOrders(double[] alphas, double[] cap, java.util.function.IntToDoubleFunction bound) {
        double[] out = new double[alphas.length];
        for (int i = 0; i < alphas.length; i++) {
            double ceil = Math.max(2, Math.ceil(alphas[i]));
            if (ceil > MAX_ZHU_WANG_ORDER) {
                out[i] = cap[i];
                continue;
            }
            double b = bound.applyAsDouble((int) ceil);
            out[i] = Math.min(Double.isNaN(b) ? Double.POSITIVE_INFINITY : Math.max(0, b), cap[i]);
        }
        return out;
    }

    /**
     * Best of K runs (Papernot &amp; Steinke 2022, arXiv:2110.03620), by the distribution of K:
     * <ul>
     *   <li>Poisson(μ): Theorem 6 with log(μ) replaced by log(μ/(1 − e^{−μ})) = log E[K | K ≥ 1]:
     *       ε'(λ) = ε(λ) + μ·δ̂ + log(μ/(1 − e^{−μ}))/(λ − 1), δ̂ the base's δ at ε̂ = log(1 + 1/(λ − 1))
     *       from its curve on these orders. Why: Theorem 6 as printed goes below 0 for μ &lt; e^{−(λ−1)ε(λ)}
     *       (with Q = Q′ it claims D_λ(A‖A′) &lt; 0), so Lemma 7 cannot hold with K = 0 in the support
     *       when E[K] &lt; 1. We split A = e^{−μ}·(fixed output) + (1 − e^{−μ})·A₊, where A₊ repeats
     *       K₊ = K | K ≥ 1 times; Rényi divergence is jointly quasi-convex, so D_λ(A‖A′) ≤ D_λ(A₊‖A′₊),
     *       and Lemma 7 for K₊ (PGF (e^{μx} − 1)/(e^μ − 1)) with Theorem 6's own bound on the
     *       exponent gives the expression above. It is never below Theorem 6 as printed, and exceeds it
     *       by log(1/(1 − e^{−μ}))/(λ − 1) (4.5e-5/(λ − 1) at μ = 10).</li>
     *   <li>D_{η,γ}: Theorem 2, ε'(λ) = ε(λ) + min over λ̂ ∈ {1} ∪ orders of
     *       [(1 + η)(1 − 1/λ̂)ε(λ̂) + (1 + η)log(1/γ)/λ̂] + log(E[K])/(λ − 1).</li>
     *   <li>Point mass k: k·ε(λ) (composition; the best of k outputs is a post-processing of all k).
     *       Lemma 7 would give kε(λ) + log(k)/(λ − 1), never smaller.</li>
     *   <li>Truncated at m (Lemma 22, eq. 9): the untruncated bound plus
     *       log(1/P[K ≤ m])/(λ − 1) + log(1 + E[K·1(K &gt; m)]/(E[K] − E[K·1(K &gt; m)])).</li>
     * </ul>
     */
    private static double[] repeatAndSelect(RepeatAndSelectEvent r, double[] alphas) {
        return TuningRdp.repeatAndSelect(rdp(r.event(), alphas), alphas, r.distribution());
    }

    /**
     * The best-of-K curve for a base mechanism given only by its RDP curve (for example a curve
     * read from a paper's data), on the base curve's orders; bounds as for {@link RepeatAndSelectEvent}.
     * Theorem 6's δ̂ is computed from this curve alone.
     *
     * @param base the base mechanism's RDP curve, not null
     * @param k    the distribution of the number of runs K, not null
     * @return the curve of releasing the best of K runs, on {@code base}'s orders
     * @throws IllegalArgumentException if k is null
     */
    public static RdpCurve repeatAndSelect(RdpCurve base, RepetitionDistribution k) {
        return new RdpCurve(base.orders(), TuningRdp.repeatAndSelect(base.epsilons(), base.orders(), k));
    }

    /**
     * Which bound {@link #repeatAndSelect(RdpCurve, RepetitionDistribution)} applies to this distribution of K,
     * in words for reports: the one place that maps K's law to its theorem.
     *
     * @param d the distribution of K, not null
     * @return the bound's name, for example "Papernot &amp; Steinke 2022 (arXiv:2110.03620), Theorem 6 (Poisson K)"
     */
    public static String repeatAndSelectBound(RepetitionDistribution d) {
        String paper = "Papernot & Steinke 2022 (arXiv:2110.03620), ";
        if (d instanceof RepetitionDistribution.Truncated t) {
            return repeatAndSelectBound(t.distribution()) + " with Lemma 22 (truncated at " + t.limit() + "), capped by composing "
                    + t.limit() + " runs";
        }
        if (d instanceof RepetitionDistribution.Poisson) {
            return paper + "Theorem 6 (Poisson K)";
        }
        if (d instanceof RepetitionDistribution.PointMass) {
            return "composition (a fixed number of runs)";
        }
        return paper + "Theorem 2 (truncated negative binomial K)";
    }

    /** Mironov 2017, Proposition 6: Laplace mechanism with scale b, sensitivity 1. */
    private static double laplace(double b, double alpha) {
        double t1 = Math.log(alpha / (2 * alpha - 1)) + (alpha - 1) / b;
        double t2 = Math.log((alpha - 1) / (2 * alpha - 1)) - alpha / b;
        return Math.max(0, LogMath.logAdd(t1, t2) / (alpha - 1));
    }
}
