package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a tuning's bound covers, computed exactly on a three-outcome base mechanism (Papernot &amp; Steinke,
 * Hyperparameter Tuning with Renyi Differential Privacy, ICLR 2022, arXiv:2110.03620, Theorem 6 and its
 * Appendix D toy): the bound covers the best run's outcome with K hidden; the pair (K, best) is not
 * covered, which is why dpdl4j never releases the realised K; and the composition of the realised K runs
 * covers K with every outcome, which is what {@code --reveal-trials} charges. Every divergence here is the
 * exact hockey-stick divergence of finite distributions, independent of the accountant's formulas.
 */
class ReleaseCoverageTest {
    /** Outcome probabilities on two neighbouring datasets, worst outcome first (best = the highest index drawn). */
    private static final double[] P = {0.5, 0.3, 0.2};
    private static final double[] P_NEIGHBOUR = {0.4, 0.3, 0.3};
    private static final double MU = 10;
    private static final double DELTA = 1e-5;
    /** Poisson(10) mass above this is below 1e-150: leaving it out changes no divergence at double precision. */
    private static final int K_LIMIT = 200;

    private final RdpAccountant acc = RdpAccountant.standard();

    /** The base mechanism's exact RDP curve on the accountant's orders: the larger direction at every order. */
    private RdpCurve baseCurve() {
        double[] orders = acc.orders();
        double[] eps = new double[orders.length];
        for (int i = 0; i < orders.length; i++) {
            eps[i] = Math.max(renyi(P, P_NEIGHBOUR, orders[i]), renyi(P_NEIGHBOUR, P, orders[i]));
        }
        return new RdpCurve(orders, eps);
    }

    /** D_λ(p‖q) = log Σ p_i^λ q_i^{1−λ} / (λ − 1). */
    private static double renyi(double[] p, double[] q, double lambda) {
        double s = 0;
        for (int i = 0; i < p.length; i++) {
            s += Math.exp(lambda * Math.log(p[i]) + (1 - lambda) * Math.log(q[i]));
        }
        return Math.log(s) / (lambda - 1);
    }

    @Test
    void theBoundCoversTheBestAloneButNotTheBestWithK() {
        double bound = RdpConversion.epsilon(RdpAccountant.repeatAndSelect(baseCurve(), RepetitionDistribution.poisson(MU)), DELTA)
                .epsilon();
        double bestAlone = exactEpsilon(bestOfK(P), bestOfK(P_NEIGHBOUR));
        double withK = exactEpsilon(kAndBest(P), kAndBest(P_NEIGHBOUR));
        assertTrue(bestAlone <= bound, "best alone " + bestAlone + " must be covered by the bound " + bound);
        assertTrue(withK > bound, "(K, best) " + withK + " should exceed the bound " + bound + ": K must stay hidden");
        assertTrue(withK > 2 * bestAlone, "releasing K changes the privacy loss materially: " + withK + " vs " + bestAlone);
    }

    /**
     * --reveal-trials: K is drawn independently of the data and released, then the K runs' outcomes. Given
     * K = k the release is the k-fold product, and the charge for a realised k is the composition of k runs:
     * its exact δ at the charged ε stays below the target δ for every k.
     */
    @Test
    void compositionOfTheRealisedRunsCoversKAndEveryTrial() {
        RdpCurve base = baseCurve();
        for (int k = 1; k <= 30; k++) {
            double charged = RdpConversion.epsilon(base.times(k), DELTA).epsilon();
            double exact = Math.max(productHockeyStick(P, P_NEIGHBOUR, k, charged),
                    productHockeyStick(P_NEIGHBOUR, P, k, charged));
            assertTrue(exact <= DELTA, "k = " + k + ": exact delta " + exact + " at the charged epsilon " + charged);
        }
    }

    private static double poisson(int k) {
        return Math.exp(-MU + k * Math.log(MU) - logFactorial(k));
    }

    private static double logFactorial(int k) {
        double s = 0;
        for (int i = 2; i <= k; i++) {
            s += Math.log(i);
        }
        return s;
    }

    /** P[best = j | K = k] for j = 0, 1, 2: F(j)^k − F(j − 1)^k with F the cumulative distribution. */
    private static double[] bestGivenK(double[] p, int k) {
        double[] out = new double[p.length];
        double cumulative = 0;
        double previous = 0;
        for (int j = 0; j < p.length; j++) {
            cumulative += p[j];
            double c = j == p.length - 1 ? 1 : Math.pow(cumulative, k);
            out[j] = c - previous;
            previous = c;
        }
        return out;
    }

    /** The law of the released outcome with K hidden: a fixed output ⊥ when K = 0, else the best of K. */
    private static double[] bestOfK(double[] p) {
        double[] d = new double[p.length + 1];
        d[0] = poisson(0);
        for (int k = 1; k < K_LIMIT; k++) {
            double[] b = bestGivenK(p, k);
            for (int j = 0; j < p.length; j++) {
                d[j + 1] += poisson(k) * b[j];
            }
        }
        return d;
    }

    /** The law of (K, best): one atom per (k, outcome). */
    private static double[] kAndBest(double[] p) {
        List<Double> d = new ArrayList<>();
        d.add(poisson(0));
        for (int k = 1; k < K_LIMIT; k++) {
            for (double b : bestGivenK(p, k)) {
                d.add(poisson(k) * b);
            }
        }
        return d.stream().mapToDouble(Double::doubleValue).toArray();
    }

    private static double hockeyStick(double[] a, double[] b, double eps) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += Math.max(0, a[i] - Math.exp(eps) * b[i]);
        }
        return s;
    }

    /** The smallest ε (to 1e-9) with δ(ε) ≤ DELTA in both directions, by bisection. */
    private static double exactEpsilon(double[] a, double[] b) {
        double lo = 0;
        double hi = 30;
        while (hi - lo > 1e-9) {
            double mid = (lo + hi) / 2;
            if (Math.max(hockeyStick(a, b, mid), hockeyStick(b, a, mid)) <= DELTA) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        return hi;
    }

    /** Hockey-stick divergence of the k-fold products, summed over outcome counts (n0, n1, n2) with multinomial weights. */
    private static double productHockeyStick(double[] a, double[] b, int k, double eps) {
        double s = 0;
        for (int n0 = 0; n0 <= k; n0++) {
            for (int n1 = 0; n0 + n1 <= k; n1++) {
                int n2 = k - n0 - n1;
                double logMultinomial = logFactorial(k) - logFactorial(n0) - logFactorial(n1) - logFactorial(n2);
                double la = logMultinomial + n0 * Math.log(a[0]) + n1 * Math.log(a[1]) + n2 * Math.log(a[2]);
                double lb = logMultinomial + n0 * Math.log(b[0]) + n1 * Math.log(b[1]) + n2 * Math.log(b[2]);
                s += Math.max(0, Math.exp(la) - Math.exp(eps + lb));
            }
        }
        return s;
    }
}
