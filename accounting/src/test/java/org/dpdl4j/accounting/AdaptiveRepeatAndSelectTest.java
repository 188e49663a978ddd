package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** DP-HyPO's bounds (Wang et al. 2023, arXiv:2306.05734, Theorems 1 and 2) against closed forms and limiting cases. */
class AdaptiveRepeatAndSelectTest {
    private static final double[] ORDERS = RdpAccountant.defaultOrders();
    private static final PrivacyEvent DP_SGD = NoiseCalibration.dpSgd(256.0 / 60000, 1.1, 2344);

    private static List<RepetitionDistribution> distributions() {
        return List.of(new TruncatedNegativeBinomial(1, 0.01), new TruncatedNegativeBinomial(0, 0.001),
                new TruncatedNegativeBinomial(0.5, 0.02), RepetitionDistribution.poisson(10), RepetitionDistribution.pointMass(5),
                RepetitionDistribution.poisson(10).truncatedAt(25), new TruncatedNegativeBinomial(1, 0.01).truncatedAt(300));
    }

    /** With C = c = 1 nothing adapts: the bound is Papernot–Steinke's (Papernot &amp; Steinke 2022, arXiv:2110.03620), digit for digit. */
    @Test
    void noAdaptivityIsPapernotSteinkeExactly() {
        for (RepetitionDistribution k : distributions()) {
            double[] ps = RdpAccountant.rdp(new RepeatAndSelectEvent(DP_SGD, k), ORDERS);
            double[] hypo = RdpAccountant.rdp(new AdaptiveRepeatAndSelectEvent(DP_SGD, k, 1, 1), ORDERS);
            assertArrayEquals(ps, hypo, 0.0, k.describe());
            assertEquals(RdpAccountant.standard().epsilon(new RepeatAndSelectEvent(DP_SGD, k), 1e-5),
                    RdpAccountant.standard().epsilon(new AdaptiveRepeatAndSelectEvent(DP_SGD, k, 1, 1), 1e-5), 0.0);
        }
    }

    /**
     * Theorem 1 for a ρ-zCDP base (ε(α) = ρα): the minimum over α̂ ≥ 1 of (1 + η)[ρ(α̂ − 1) + log(1/γ)/α̂]
     * is (1 + η)(2√(ρ log(1/γ)) − ρ) at α̂ = √(log(1/γ)/ρ) when that is ≥ 1; the grid minimum is at or
     * just above it, and the adaptivity term is exactly (α/(α − 1) + 1 + η)log(C/c).
     */
    @Test
    void theorem1AgainstItsClosedFormForAZcdpBase() {
        double rho = 0.05;
        for (double[] p : new double[][]{{1, 0.01}, {0.5, 0.001}, {0, 0.02}}) {
            TruncatedNegativeBinomial k = new TruncatedNegativeBinomial(p[0], p[1]);
            double eta = p[0];
            double logInvGamma = Math.log(1 / p[1]);
            double hatMin = (1 + eta) * (2 * Math.sqrt(rho * logInvGamma) - rho);
            double c = 0.75;
            double cc = 2;
            double[] got = RdpAccountant.rdp(new AdaptiveRepeatAndSelectEvent(new ZcdpEvent(rho), k, c, cc), ORDERS);
            for (int i = 0; i < ORDERS.length; i++) {
                double a = ORDERS[i];
                double exact = rho * a + hatMin + (a / (a - 1) + 1 + eta) * Math.log(cc / c) + Math.log(k.mean()) / (a - 1);
                assertTrue(got[i] >= exact - 1e-12, "never below the continuous minimum at alpha " + a);
                assertTrue(got[i] <= exact + 0.01 * (1 + eta), "grid minimum close to the continuous one at alpha " + a);
            }
        }
    }

    @Test
    void epsilonGrowsWithTheDensityRatio() {
        RdpAccountant acc = RdpAccountant.standard();
        for (RepetitionDistribution k : distributions()) {
            double previous = acc.epsilon(new RepeatAndSelectEvent(DP_SGD, k), 1e-5);
            for (double cc : new double[]{1.1, 1.5, 2, 4}) {
                double e = acc.epsilon(new AdaptiveRepeatAndSelectEvent(DP_SGD, k, 0.75, cc), 1e-5);
                if (k instanceof RepetitionDistribution.PointMass) {
                    assertEquals(previous, e, 0.0, "a fixed number of runs composes whatever the densities");
                } else if (k instanceof RepetitionDistribution.Truncated t) { // composing the m runs caps the growth
                    assertTrue(e >= previous, k.describe() + " C = " + cc + ": " + e + " < " + previous);
                    assertTrue(e <= acc.epsilon(new SelfComposedEvent(DP_SGD, t.limit()), 1e-5) + 1e-12, k.describe());
                } else {
                    assertTrue(e > previous, k.describe() + " C = " + cc + ": " + e + " <= " + previous);
                }
                previous = e;
            }
        }
    }

    /** Theorem 2: a pure ε-DP base gives ((2 + η)(ε + log(C/c)), 0)-DP. */
    @Test
    void theorem2ForAPureDpBase() {
        TruncatedNegativeBinomial k = new TruncatedNegativeBinomial(1, 0.01);
        PrivacyGuarantee g = RdpAccountant.standard().guarantee(new AdaptiveRepeatAndSelectEvent(new PureDpEvent(0.1), k, 0.75, 2), 1e-5);
        assertEquals(3 * (0.1 + Math.log(2 / 0.75)), g.epsilon(), 1e-12);
    }

    @Test
    void roundTripsAndRejectsBadBounds() {
        PrivacyEvent e = new AdaptiveRepeatAndSelectEvent(DP_SGD, RepetitionDistribution.poisson(3), 0.75, 2);
        assertEquals(e, PrivacyEvents.fromMap(e.toMap()));
        var bad = assertThrows(IllegalArgumentException.class,
                () -> new AdaptiveRepeatAndSelectEvent(DP_SGD, RepetitionDistribution.poisson(3), 1.2, 2));
        assertTrue(bad.getMessage().contains("c") && bad.getMessage().contains("1.2"), bad.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new AdaptiveRepeatAndSelectEvent(DP_SGD, RepetitionDistribution.poisson(3), 0.5, 0.9));
    }

    /**
     * Lemma 22 on the Poisson bound, which is proved for K | K ≥ 1: the mass term is
     * log((1 − e^{−μ})/(P[K ≤ m] − e^{−μ}))/(α − 1), larger than log(1/P[K ≤ m])/(α − 1).
     */
    @Test
    void truncatedPoissonConditionsTheMassOnAtLeastOneRun() {
        double mu = 1;
        int m = 2;
        RepetitionDistribution.Poisson p = (RepetitionDistribution.Poisson) RepetitionDistribution.poisson(mu);
        double[] untruncated = RdpAccountant.rdp(new RepeatAndSelectEvent(DP_SGD, p), ORDERS);
        double[] truncated = RdpAccountant.rdp(new RepeatAndSelectEvent(DP_SGD, p.truncatedAt(m)), ORDERS);
        double p0 = Math.exp(-mu);
        double kept = p0 * (1 + mu + mu * mu / 2);
        double tail = mu - (p0 * mu + p0 * mu * mu); // E[K 1(K > 2)] = mu - P[K=1] - 2 P[K=2]
        double[] base = RdpAccountant.rdp(DP_SGD, ORDERS);
        int lemmaWins = 0;
        for (int i = 0; i < ORDERS.length; i++) {
            double lemma22 = untruncated[i] + Math.log((1 - p0) / (kept - p0)) / (ORDERS[i] - 1) + Math.log1p(tail / (mu - tail));
            double expected = Math.min(lemma22, m * base[i]); // at most m runs compose
            assertEquals(expected, truncated[i], 1e-9 * (1 + expected));
            lemmaWins += lemma22 < m * base[i] ? 1 : 0;
        }
        assertTrue(lemmaWins > 0, "Lemma 22 is the tighter bound at some order, so it is checked");
    }

    /**
     * Brute force on a toy adaptive search: two candidates, each releasing a Bernoulli score (p on D,
     * p′ on D′); the next candidate is λ = 1 with probability hi after a run that scored 1 on λ = 1
     * and lo otherwise, both within [c, C]·(1/2); K ~ geometric(γ) (η = 1) or Poisson(μ) (K = 0 gives a
     * fixed output). The exact output
     * distribution of the best (score, λ) follows from a Markov chain over (best so far, last outcome);
     * its exact Rényi divergence, both directions, must not exceed Theorem 1 with the base's exact
     * curve.
     */
    @Test
    void bruteForceAdaptiveSearchStaysBelowTheorem1() {
        double c = 0.75;
        double cc = 1.25;
        double lo = 0.5 * c;
        double hi = 0.5 * cc;
        double[] p = {0.02, 0.01};
        double[] pPrime = {0.002, 0.01};
        double gap = checkToy(p, pPrime, lo, hi, new TruncatedNegativeBinomial(1, 0.3), Math.log(cc / c));
        assertTrue(gap > 0, "the toy is not trivial: best-of-K leaks more than one run at some order, gap " + gap);
        checkToy(p, pPrime, lo, hi, RepetitionDistribution.poisson(2), Math.log(cc / c));
        checkToy(p, pPrime, lo, hi, RepetitionDistribution.poisson(12), Math.log(cc / c));
    }

    /** Asserts the bound at every order; returns the largest excess of the exact divergence over one run's. */
    private static double checkToy(double[] p, double[] pPrime, double lo, double hi, RepetitionDistribution k, double logRatio) {
        double[] d = bestOfK(p, lo, hi, k);
        double[] dPrime = bestOfK(pPrime, lo, hi, k);
        double[] base = new double[ORDERS.length];
        for (int i = 0; i < ORDERS.length; i++) {
            for (int l = 0; l < 2; l++) {
                double[] a = {p[l], 1 - p[l]};
                double[] b = {pPrime[l], 1 - pPrime[l]};
                base[i] = Math.max(base[i], Math.max(renyi(a, b, ORDERS[i]), renyi(b, a, ORDERS[i])));
            }
        }
        double[] bound = TuningRdp.adaptiveRepeatAndSelect(base, ORDERS, k, logRatio);
        double worstGap = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < ORDERS.length; i++) {
            double exact = Math.max(renyi(d, dPrime, ORDERS[i]), renyi(dPrime, d, ORDERS[i]));
            assertTrue(exact <= bound[i], k.describe() + " alpha " + ORDERS[i] + ": exact " + exact + " > bound " + bound[i]);
            worstGap = Math.max(worstGap, exact - base[i]);
        }
        return worstGap;
    }

    /** Output distribution over rank = 2·score + (λ − 1) of the best of K runs of the toy adaptive search (4: K = 0). */
    private static double[] bestOfK(double[] p, double lo, double hi, RepetitionDistribution k) {
        int kMax = 600;
        double[][] state = new double[5][5]; // [best + 1][last + 1]
        state[0][0] = 1;
        double[] out = new double[5]; // index 4: K = 0
        out[4] = k.pmf(0);
        for (int j = 1; j <= kMax; j++) {
            double[][] next = new double[5][5];
            for (int b = 0; b < 5; b++) {
                for (int last = 0; last < 5; last++) {
                    double w = state[b][last];
                    if (w == 0) {
                        continue;
                    }
                    double pickFirst = last - 1 == 2 ? hi : lo; // last outcome "score 1 on lambda 1" = rank 2
                    for (int l = 0; l < 2; l++) {
                        double pl = l == 0 ? pickFirst : 1 - pickFirst;
                        for (int score = 0; score < 2; score++) {
                            double ps = score == 1 ? p[l] : 1 - p[l];
                            int rank = 2 * score + l;
                            int best = Math.max(b - 1, rank);
                            next[best + 1][rank + 1] += w * pl * ps;
                        }
                    }
                }
            }
            state = next;
            double pk = k.pmf(j);
            for (int b = 1; b < 5; b++) {
                for (int last = 0; last < 5; last++) {
                    out[b - 1] += pk * state[b][last];
                }
            }
        }
        double total = out[0] + out[1] + out[2] + out[3] + out[4];
        assertEquals(1, total, 1e-9, "K's tail beyond " + kMax + " is negligible");
        return out;
    }

    private static double renyi(double[] a, double[] b, double alpha) {
        double log = Double.NEGATIVE_INFINITY; // log-sum-exp: the terms under- and overflow at high orders
        for (int i = 0; i < a.length; i++) {
            if (a[i] == 0 && b[i] == 0) {
                continue;
            }
            log = LogMath.logAdd(log, alpha * Math.log(a[i]) + (1 - alpha) * Math.log(b[i]));
        }
        return log / (alpha - 1);
    }
}
