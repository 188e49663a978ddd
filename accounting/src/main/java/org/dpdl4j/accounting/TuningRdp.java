package org.dpdl4j.accounting;

/**
 * The RDP bounds of the tuning theorems, apart from {@link RdpAccountant}'s mechanisms: best of K runs (Papernot &amp;
 * Steinke, "Hyperparameter Tuning with Renyi Differential Privacy", ICLR 2022, arXiv:2110.03620), its adaptive form
 * (Wang et al., "DP-HyPO", NeurIPS 2023, arXiv:2306.05734) and subsampled tuning (Koskela &amp; Kulkarni, "Practical
 * Differentially Private Hyperparameter Tuning with Subsampling", NeurIPS 2023, arXiv:2301.11989). Each takes a base
 * curve on a grid of orders and gives the procedure's curve on the same grid; {@link RdpAccountant#rdp} dispatches to
 * them by event.
 */
final class TuningRdp {
    private TuningRdp() {
    }

    /**
     * Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Theorem 6 (variant 1) or Theorem 4 plus composition (variant 2). For variant 1, with
     * E_t(j) = (j − 1)ε_tune(j) and E_b(j) = (j − 1)ε_base(j) (both 0 at j = 1), at integer a = ⌈α⌉ ≥ 2:
     * (a − 1)ε₁ = log[q^a e^{E_t(a)} + (1 − q)^a e^{E_b(a)} + Σ_{j=1}^{a−1} C(a, j) q^{a−j}(1 − q)^j
     * e^{E_t(a−j)} e^{E_b(j)}] (eq. 3.6) and (a − 1)ε₂ = log[(1 − q)^{a−1} e^{E_b(a)} + Σ_{j=1}^{a−1}
     * C(a−1, j) q^j (1 − q)^{a−1−j} e^{E_t(j+1)} e^{E_b(a−j)}] (eq. 3.7). q = 0 and q = 1 give the final
     * run's and the tuning's curve exactly (Remark 7). Each order is also capped by
     * max{ε_tune(α), ε_base(α)} at α itself: in the proof's mixture (C.3) the record joins either the
     * tuning or the final run, and Rényi divergence is jointly quasi-convex (van Erven &amp; Harremoës
     * 2014, Thm. 13), so neither direction exceeds the larger of the two parts' divergences.
     */
    static double[] subsampledTuning(SubsampledTuningEvent s, double[] alphas) {
        double q = s.tuneFraction();
        if (s.variant() == SubsampledTuningEvent.Variant.FULL) {
            return RdpAccountant.rdp(ComposedEvent.of(new PoissonSampledEvent(s.tuning(), q), s.finalRun()), alphas);
        }
        if (q == 0) {
            return RdpAccountant.rdp(s.finalRun(), alphas);
        }
        if (q == 1) {
            return RdpAccountant.rdp(s.tuning(), alphas);
        }
        double[] ints = RdpAccountant.integerOrdersUpTo(alphas);
        double[] tune = RdpAccountant.rdp(s.tuning(), ints);
        double[] base = RdpAccountant.rdp(s.finalRun(), ints);
        double[] tuneHere = RdpAccountant.rdp(s.tuning(), alphas);
        double[] baseHere = RdpAccountant.rdp(s.finalRun(), alphas);
        int n = ints.length + 2;
        double[] logTune = new double[n]; // logTune[j] = (j − 1)ε_tune(j); index 0 unused
        double[] logBase = new double[n];
        for (int j = 2; j < n; j++) {
            logTune[j] = (j - 1) * tune[j - 2];
            logBase[j] = (j - 1) * base[j - 2];
        }
        double logQ = Math.log(q);
        double log1mQ = Math.log1p(-q);
        double[] cap = new double[alphas.length];
        for (int i = 0; i < alphas.length; i++) {
            cap[i] = Math.max(tuneHere[i], baseHere[i]);
        }
        return RdpAccountant.atIntegerOrders(alphas, cap, a -> {
            double e1 = LogMath.logAdd(a * logQ + logTune[a], a * log1mQ + logBase[a]);
            for (int j = 1; j < a; j++) {
                e1 = LogMath.logAdd(e1, LogMath.logBinomial(a, j) + (a - j) * logQ + j * log1mQ + logTune[a - j] + logBase[j]);
            }
            double e2 = (a - 1) * log1mQ + logBase[a];
            for (int j = 1; j < a; j++) {
                e2 = LogMath.logAdd(e2, LogMath.logBinomial(a - 1, j) + j * logQ + (a - 1 - j) * log1mQ + logTune[j + 1]
                        + logBase[a - j]);
            }
            return Math.max(e1, e2) / (a - 1);
        });
    }

    /** Dp_accounting's (mean, shape) form of {@link #repeatAndSelect(double[], double[], RepetitionDistribution)}. */
    static double[] repeatAndSelect(double[] base, double[] alphas, double mean, double shape) {
        return repeatAndSelect(base, alphas, RepetitionDistribution.fromMeanAndShape(mean, shape));
    }

    /** the event form in {@link RdpAccountant} for a base given by its curve on {@code alphas}. */
    static double[] repeatAndSelect(double[] base, double[] alphas, RepetitionDistribution k) {
        double[] out = new double[alphas.length];
        if (k instanceof RepetitionDistribution.Poisson p) {
            RdpCurve curve = new RdpCurve(alphas, base);
            double mu = p.mu();
            for (int i = 0; i < alphas.length; i++) {
                double epsHat = Math.log1p(1 / (alphas[i] - 1));
                double deltaHat = RdpConversion.delta(curve, epsHat);
                out[i] = base[i] + mu * deltaHat + (Math.log(mu) - Math.log(-Math.expm1(-mu))) / (alphas[i] - 1);
            }
        } else if (k instanceof TruncatedNegativeBinomial d) {
            double eta = d.eta();
            double logInvGamma = -Math.log(d.gamma());
            double best = (1 + eta) * logInvGamma; // lambda-hat = 1: the epsilon-hat term vanishes
            for (int j = 0; j < alphas.length; j++) {
                best = Math.min(best, (1 + eta) * (1 - 1 / alphas[j]) * base[j] + (1 + eta) * logInvGamma / alphas[j]);
            }
            double logMean = Math.log(d.mean());
            for (int i = 0; i < alphas.length; i++) {
                out[i] = base[i] + best + logMean / (alphas[i] - 1);
            }
        } else if (k instanceof RepetitionDistribution.PointMass p) {
            for (int i = 0; i < alphas.length; i++) {
                out[i] = p.k() * base[i];
            }
        } else if (k instanceof RepetitionDistribution.Truncated t) {
            return capByComposition(lemma22(repeatAndSelect(base, alphas, t.distribution()), alphas, t), base, t.limit());
        } else {
            throw new IllegalArgumentException("no repeat-and-select bound for " + k);
        }
        return out;
    }

    /**
     * DP-HyPO (Wang et al. 2023, arXiv:2306.05734), with L = log(C/c):
     * <ul>
     *   <li>L = 0: exactly {@link #repeatAndSelect(double[], double[], RepetitionDistribution)} (random search).</li>
     *   <li>D_{η,γ}: Theorem 1, ε'(α) = ε(α) + min over α̂ ∈ {1} ∪ orders of [(1 + η)(1 − 1/α̂)ε(α̂)
     *       + (1 + η)log(1/γ)/α̂] + (α/(α − 1) + 1 + η)L + log(E[K])/(α − 1).</li>
     *   <li>Point mass k: k·ε(α). Each run draws its candidate from a density fixed before it runs, a
     *       data-independent mixture no worse than its worst candidate (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Lemma 9), and the k
     *       runs compose adaptively; the release of the best is post-processing.</li>
     *   <li>Poisson(μ): the paper gives no formula (it says the proof carries over through the PGF,
     *       Sec. 3.2). Our bound, from its Lemma A.5 (PS Lemma 7 applied to the extremal mixtures P⁺, P′⁻
     *       with D_α(P⁺‖P′⁻) ≤ ε(α) + α/(α − 1)·L, Lemma A.4) and the PGF of K | K ≥ 1 as for random search:
     *       ε'(α) = ε(α) + α/(α − 1)·L + log(μ/(1 − e^{−μ}))/(α − 1) + min over ε̂ of μ(1 − (1 − δ̂)e^{−ε̂}),
     *       where δ̂ is the δ at ε̂ of the curve ε(α̂) + α̂/(α̂ − 1)·L (so q ≤ e^{ε̂}q′ + δ̂), and μ(αq −
     *       (α − 1)q′ − 1) ≤ (α − 1)μ(1 − (1 − δ̂)e^{−ε̂}) for q, q′ ∈ [0, 1]. It uses one direction of the
     *       (ε̂, δ̂) relation only, so it is looser than Theorem 6 of Papernot &amp; Steinke 2022, arXiv:2110.03620 (by about μ/α); ε̂ runs over
     *       log(1 + 1/(a − 1)) for the orders a of the grid. P⁺ need not be normalised, so δ̂ comes from
     *       Canonne et al.'s Proposition 12 alone (no total-variation shortcut); like the paper's own
     *       proof of Theorem 1, it takes q, q′ ∈ [0, 1].</li>
     *   <li>Truncated at m: the untruncated bound plus Lemma 22's two terms (Papernot &amp; Steinke 2022, arXiv:2110.03620, eq. 9), which bound
     *       the truncated PGF's f′ by the untruncated one whatever the base.</li>
     * </ul>
     */
    static double[] adaptiveRepeatAndSelect(double[] base, double[] alphas, RepetitionDistribution k, double logRatio) {
        if (logRatio == 0) {
            return repeatAndSelect(base, alphas, k);
        }
        double[] out = new double[alphas.length];
        if (k instanceof TruncatedNegativeBinomial d) {
            double[] ps = repeatAndSelect(base, alphas, d);
            for (int i = 0; i < alphas.length; i++) {
                out[i] = ps[i] + (alphas[i] / (alphas[i] - 1) + 1 + d.eta()) * logRatio;
            }
        } else if (k instanceof RepetitionDistribution.PointMass p) {
            return repeatAndSelect(base, alphas, p);
        } else if (k instanceof RepetitionDistribution.Poisson p) {
            double mu = p.mu();
            double[] adjusted = new double[alphas.length];
            for (int j = 0; j < alphas.length; j++) {
                adjusted[j] = base[j] + alphas[j] / (alphas[j] - 1) * logRatio;
            }
            RdpCurve curve = new RdpCurve(alphas, adjusted);
            double best = mu; // epsilon-hat = infinity: the term is at most mu
            for (double a : alphas) {
                double epsHat = Math.log1p(1 / (a - 1));
                double deltaHat = Math.min(1, RdpConversion.deltaWithoutTotalVariation(curve, epsHat));
                best = Math.min(best, mu * (1 - (1 - deltaHat) * Math.exp(-epsHat)));
            }
            double logMean = Math.log(mu) - Math.log(-Math.expm1(-mu));
            for (int i = 0; i < alphas.length; i++) {
                out[i] = adjusted[i] + logMean / (alphas[i] - 1) + best;
            }
        } else if (k instanceof RepetitionDistribution.Truncated t) {
            return capByComposition(lemma22(adaptiveRepeatAndSelect(base, alphas, t.distribution(), logRatio), alphas, t), base,
                    t.limit());
        } else {
            throw new IllegalArgumentException("no adaptive repeat-and-select bound for " + k);
        }
        return out;
    }

    /**
     * K ≤ m runs always compose: at every order the release of the best of at most m runs (chosen adaptively or
     * not) is bounded by m·ε(α), whatever K's law (adaptive composition; selecting the best is
     * post-processing). Each order's bound is valid on its own, so the smaller of the two is too.
     */
    private static double[] capByComposition(double[] bound, double[] base, long limit) {
        double[] out = bound.clone();
        for (int i = 0; i < out.length; i++) {
            out[i] = Math.min(out[i], limit * base[i]);
        }
        return out;
    }

    /**
     * Papernot &amp; Steinke 2022, arXiv:2110.03620, Lemma 22 (eq. 9): the untruncated curve plus the two truncation terms. The Poisson bound
     * is proved for K | K ≥ 1 (see {@link #repeatAndSelect(double[], double[], RepetitionDistribution)}),
     * so its mass term is log(1/P[1 ≤ K ≤ m | K ≥ 1]) = log((1 − e^{−μ})/(P[K ≤ m] − e^{−μ})); the ratio
     * term is the same for K and K | K ≥ 1 (the factor 1/(1 − e^{−μ}) cancels).
     */
    private static double[] lemma22(double[] untruncated, double[] alphas, RepetitionDistribution.Truncated t) {
        if (t.distribution() instanceof RepetitionDistribution.PointMass) {
            return untruncated; // P[K <= m] > 0 means k <= m: nothing is cut
        }
        double mean = t.distribution().mean();
        double tail = t.tailMean();
        double logMass = Math.log(t.massKept());
        if (t.distribution() instanceof RepetitionDistribution.Poisson p) {
            double p0 = Math.exp(-p.mu());
            logMass = Math.log(t.massKept() - p0) - Math.log1p(-p0);
        }
        double ratioTerm = tail < mean ? Math.log1p(tail / (mean - tail)) : Double.POSITIVE_INFINITY;
        double[] out = new double[alphas.length];
        for (int i = 0; i < alphas.length; i++) {
            out[i] = untruncated[i] - logMass / (alphas[i] - 1) + ratioTerm;
        }
        return out;
    }
}
