package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.function.DoubleUnaryOperator;
import org.junit.jupiter.api.Test;

/** Papernot–Steinke repeat-and-select accounting (Papernot &amp; Steinke 2022, arXiv:2110.03620) against independent computations. */
class RepeatAndSelectTest {
    private final RdpAccountant acc = RdpAccountant.standard();
    private final double[] orders = RdpAccountant.defaultOrders();

    /** dp_accounting 0.6.0's RepeatAndSelectDpEvent on DP-SGD bases (fixtures README says how). */
    @Test
    void matchesDpAccounting() throws Exception {
        List<Map<String, String>> rows = ReferenceCsv.read("/reference/dp_accounting/repeat_select.csv");
        assertEquals(10, rows.size());
        double worst = 0;
        for (Map<String, String> row : rows) {
            PrivacyEvent base = NoiseCalibration.dpSgd(ReferenceCsv.num(row, "q"), ReferenceCsv.num(row, "sigma"),
                    (long) ReferenceCsv.num(row, "steps"));
            PrivacyGuarantee g = acc.guarantee(new RepeatAndSelectEvent(base, ReferenceCsv.num(row, "mean"),
                    ReferenceCsv.num(row, "eta")), ReferenceCsv.num(row, "delta"));
            double expected = ReferenceCsv.num(row, "epsilon");
            double rel = (g.epsilon() - expected) / expected;
            worst = Math.max(worst, Math.abs(rel));
            if (Double.isInfinite(ReferenceCsv.num(row, "eta"))) {
                // Poisson: we use log(mu / (1 - e^-mu)) for Theorem 6's log(mu) (see RdpAccountant): never below
                assertTrue(rel > -1e-9 && rel < 1e-4, () -> row + ": ours " + g);
                continue;
            }
            assertTrue(Math.abs(rel) < 1e-7, () -> row + ": ours " + g);
            assertEquals(ReferenceCsv.num(row, "order"), g.order(), 1e-12, row.toString());
        }
        System.out.printf("dp_accounting RepeatAndSelect: 10 rows, worst relative difference %.2e%n", worst);
    }

    /**
     * Theorem 6 as printed claims a negative divergence for small μ (with Q = Q′ it gives log(μ)/(λ − 1)
     * &lt; 0); our bound must stay ≥ the base and ≥ 0, and equal the exact value 0 in the limit of
     * identical distributions only from above.
     */
    @Test
    void poissonWithSmallMeanStaysAnUpperBound() {
        double[] zero = new double[orders.length];
        for (double mu : new double[]{1e-5, 0.1, 0.5, 1, 3}) {
            double[] r = TuningRdp.repeatAndSelect(zero, orders, RepetitionDistribution.poisson(mu));
            for (int i = 0; i < orders.length; i++) {
                assertTrue(r[i] >= 0, "mu " + mu + " order " + orders[i] + ": " + r[i]);
                double printed = Math.log(mu) / (orders[i] - 1);
                assertTrue(r[i] >= printed);
            }
        }
    }

    /** Definition 1's pmf, summed directly, against the closed-form mean and the PGF of eq. (7). */
    @Test
    void pmfMeanAndPgfAgree() {
        for (double eta : new double[]{-0.5, 0, 0.5, 1, 3}) {
            TruncatedNegativeBinomial d = TruncatedNegativeBinomial.withMean(eta, 10);
            double g = d.gamma();
            double norm = eta == 0 ? Math.log(1 / g) : Math.pow(g, -eta) - 1;
            double mean = 0;
            double total = 0;
            double pgfHalf = 0;
            double prod = 1; // prod_{l<k} (l + eta)/(l + 1)
            for (int k = 1; k < 200_000; k++) {
                double p = eta == 0 ? Math.pow(1 - g, k) / (k * norm) : Math.pow(1 - g, k) * (prod *= (k - 1 + eta) / k) / norm;
                total += p;
                mean += k * p;
                pgfHalf += p * Math.pow(0.5, k);
            }
            assertEquals(1.0, total, 1e-9, "eta " + eta);
            assertEquals(d.mean(), mean, 1e-6 * d.mean(), "eta " + eta);
            assertTrue(d.mean() >= 10 && d.mean() < 10 * (1 + 1e-9), "mean rounded to the safe side");
            assertEquals(pgfHalf, d.pgf(0.5), 1e-12, "eta " + eta);
            assertEquals(1.0, d.pgf(1.0), 1e-12);
        }
        // eta = 1 is the geometric distribution: mean 1/gamma, PGF gamma x / (1 - (1 - gamma) x)
        TruncatedNegativeBinomial geo = TruncatedNegativeBinomial.withMean(1, 20);
        assertEquals(0.05, geo.gamma(), 1e-12);
        assertEquals(0.05 * 0.3 / (1 - 0.95 * 0.3), geo.pgf(0.3), 1e-12);
        var e = assertThrows(IllegalArgumentException.class, () -> TruncatedNegativeBinomial.withMean(0.5, 1.0));
        assertTrue(e.getMessage().contains("mean"));
    }

    /** ε' ≥ ε at every order, and the total ε grows with E[K] for every distribution. */
    @Test
    void neverBelowTheBaseAndMonotoneInTheMean() {
        PrivacyEvent base = NoiseCalibration.dpSgd(0.01, 1.0, 1000);
        double[] b = RdpAccountant.rdp(base, orders);
        for (double shape : new double[]{0, 0.5, 1, Double.POSITIVE_INFINITY}) {
            double previous = 0;
            for (double mean : new double[]{2, 5, 10, 50, 200}) {
                double[] r = RdpAccountant.rdp(new RepeatAndSelectEvent(base, mean, shape), orders);
                for (int i = 0; i < orders.length; i++) {
                    assertTrue(r[i] >= b[i], "shape " + shape + " mean " + mean + " order " + orders[i]);
                }
                double eps = acc.epsilon(new RepeatAndSelectEvent(base, mean, shape), 1e-5);
                assertTrue(eps > previous, "shape " + shape + ": epsilon must grow with the mean");
                previous = eps;
            }
        }
    }

    /** Corollary 3: a pure ε-DP base repeated with D_{η,γ} is ((2 + η)ε, 0)-DP. */
    @Test
    void pureDpBaseGivesTwoPlusEta() {
        for (double eta : new double[]{0, 0.5, 1}) {
            PrivacyGuarantee g = acc.guarantee(new RepeatAndSelectEvent(new PureDpEvent(0.5), 1000, eta), 1e-10);
            assertEquals((2 + eta) * 0.5, g.epsilon(), 1e-12, "eta " + eta);
        }
    }

    /**
     * Brute force on Papernot &amp; Steinke 2022, arXiv:2110.03620, App. D.3's three-outcome toy: the exact best-of-K output distribution
     * is (1 − f(b+c), f(b+c) − f(c), f(c)) through the PGF f; its exact Rényi divergence (both
     * directions) must not exceed the theorems' bound computed from the toy's exact base curve.
     * The toys follow D.3: a rare outcome with a large privacy loss, which repetition amplifies
     * (the check fails if the repetition terms are dropped).
     */
    @Test
    void bruteForceToyNeverExceedsTheBound() {
        double[][] toys = {{0.05, 0.01, 0.08, 0.004}, {0.2, 0.1, 0.3, 0.02}, {0.01, 1e-4, 0.012, 3e-3},
                           {0.3, 1e-3, 0.02, 0.05}};
        for (double[] t : toys) {
            double[] q = {1 - t[0] - t[1], t[0], t[1]};
            double[] qp = {1 - t[2] - t[3], t[2], t[3]};
            double[] exactBase = exactCurve(q, qp);
            for (double shape : new double[]{0, 1, 2, Double.POSITIVE_INFINITY}) {
                double mean = 5;
                DoubleUnaryOperator f;
                double p0;
                if (Double.isInfinite(shape)) {
                    f = x -> Math.exp(mean * (x - 1));
                    p0 = Math.exp(-mean); // K = 0: a fixed output (the first option) for both inputs
                } else {
                    TruncatedNegativeBinomial d = TruncatedNegativeBinomial.withMean(shape, mean);
                    f = d::pgf;
                    p0 = 0;
                }
                double[] a = best(f, p0, q);
                double[] ap = best(f, p0, qp);
                double[] bound = TuningRdp.repeatAndSelect(exactBase, orders, mean, shape);
                for (int i = 0; i < orders.length; i += 3) {
                    double exact = Math.max(renyi(a, ap, orders[i]), renyi(ap, a, orders[i]));
                    assertTrue(exact <= bound[i], "toy " + java.util.Arrays.toString(t) + " shape " + shape + " order "
                            + orders[i] + ": exact " + exact + " > bound " + bound[i]);
                }
            }
        }
    }

    /**
     * The same brute force for the distributions bounded by composition and by Lemma 22: a point
     * mass, and Poisson, logarithmic and η = 0.5 truncated at a limit m near their mean, where the
     * truncation terms matter. The exact output law uses the truncated PGF summed from the pmf.
     * (The point mass is tight at high orders: equal up to floating-point rounding, hence 1e-12.)
     */
    @Test
    void bruteForceToyForPointMassAndTruncation() {
        double[][] toys = {{0.05, 0.01, 0.08, 0.004}, {0.01, 1e-4, 0.012, 3e-3}, {0.3, 1e-3, 0.02, 0.05}};
        List<RepetitionDistribution> ks = List.of(RepetitionDistribution.pointMass(3),
                RepetitionDistribution.poisson(5).truncatedAt(6), RepetitionDistribution.logarithmic(5).truncatedAt(4),
                TruncatedNegativeBinomial.withMean(0.5, 8).truncatedAt(10), RepetitionDistribution.geometric(3).truncatedAt(40));
        for (double[] t : toys) {
            double[] q = {1 - t[0] - t[1], t[0], t[1]};
            double[] qp = {1 - t[2] - t[3], t[2], t[3]};
            double[] exactBase = exactCurve(q, qp);
            for (RepetitionDistribution k : ks) {
                DoubleUnaryOperator f = x -> {
                    double s = 0; // the PGF from the pmf, independent of the closed forms
                    for (int j = 0; j <= 200; j++) {
                        s += k.pmf(j) * Math.pow(x, j);
                    }
                    return s;
                };
                double[] a = best(f, k.pmf(0), q);
                double[] ap = best(f, k.pmf(0), qp);
                double[] bound = TuningRdp.repeatAndSelect(exactBase, orders, k);
                for (int i = 0; i < orders.length; i += 3) {
                    double exact = Math.max(renyi(a, ap, orders[i]), renyi(ap, a, orders[i]));
                    assertTrue(exact <= bound[i] * (1 + 1e-12), "toy " + java.util.Arrays.toString(t) + " " + k.describe() + " order "
                            + orders[i] + ": exact " + exact + " > bound " + bound[i]);
                }
            }
        }
    }

    /** Truncation only adds (Lemma 22's extra terms are ≥ 0) and vanishes as m grows. */
    @Test
    void truncationCostsLittleForLargeLimits() {
        PrivacyEvent base = NoiseCalibration.dpSgd(0.01, 1.0, 1000);
        for (RepetitionDistribution k : List.of(RepetitionDistribution.poisson(10), RepetitionDistribution.logarithmic(10),
                RepetitionDistribution.geometric(10))) {
            double full = acc.epsilon(new RepeatAndSelectEvent(base, k), 1e-5);
            double previous = Double.POSITIVE_INFINITY;
            for (long m : new long[]{12, 30, 100, 1000}) {
                double eps = acc.epsilon(new RepeatAndSelectEvent(base, k.truncatedAt(m)), 1e-5);
                assertTrue(eps >= full, k.describe() + " m " + m);
                assertTrue(eps <= previous + 1e-12, k.describe() + " m " + m + ": larger m must not cost more");
                previous = eps;
            }
            assertEquals(full, previous, 2e-3 * full, k.describe() + " truncated at 1000");
        }
    }

    /**
     * A truncated K never costs more than composing its limit m: at most m runs are made and the best is
     * post-processing. For Poisson(10) truncated at 2 (DP-SGD q = 0.004, σ = 1, T = 1000) Lemma 22 alone gives
     * about 10.09 at δ = 1e-5, the composition of two runs about 1.23; for a large limit Lemma 22 is the smaller.
     */
    @Test
    void truncationIsCappedByTheCompositionOfItsLimit() {
        PrivacyEvent base = NoiseCalibration.dpSgd(0.004, 1.0, 1000);
        double twoRuns = acc.epsilon(new SelfComposedEvent(base, 2), 1e-5);
        assertEquals(twoRuns, acc.epsilon(new RepeatAndSelectEvent(base, RepetitionDistribution.poisson(10).truncatedAt(2)), 1e-5),
                1e-12);
        assertTrue(twoRuns < 1.3, "two runs compose to about 1.23: " + twoRuns);
        assertEquals(twoRuns, acc.epsilon(new AdaptiveRepeatAndSelectEvent(base, RepetitionDistribution.poisson(10).truncatedAt(2),
                0.75, 2), 1e-5), 1e-12, "adaptive runs compose too");
        double lemma22 = acc.epsilon(new RepeatAndSelectEvent(base, RepetitionDistribution.poisson(10).truncatedAt(40)), 1e-5);
        assertTrue(lemma22 < acc.epsilon(new SelfComposedEvent(base, 40), 1e-5), "for m = 40 Lemma 22 is the tighter");
    }

    /** A point mass is K-fold composition, and a pointwise max is the worst of its events. */
    @Test
    void pointMassIsCompositionAndMaxIsWorst() {
        PrivacyEvent base = NoiseCalibration.dpSgd(0.01, 1.0, 1000);
        assertEquals(acc.epsilon(new SelfComposedEvent(base, 7), 1e-5),
                acc.epsilon(new RepeatAndSelectEvent(base, RepetitionDistribution.pointMass(7)), 1e-5), 0);
        PrivacyEvent other = NoiseCalibration.dpSgd(0.02, 1.5, 400);
        double[] a = RdpAccountant.rdp(base, orders);
        double[] b = RdpAccountant.rdp(other, orders);
        double[] m = RdpAccountant.rdp(new PointwiseMaxEvent(List.of(base, other)), orders);
        for (int i = 0; i < orders.length; i++) {
            assertEquals(Math.max(a[i], b[i]), m[i], 0);
        }
    }

    /** The toy base's exact RDP curve: the larger of the two directions at every order. */
    private double[] exactCurve(double[] q, double[] qp) {
        double[] c = new double[orders.length];
        for (int i = 0; i < orders.length; i++) {
            c[i] = Math.max(renyi(q, qp, orders[i]), renyi(qp, q, orders[i]));
        }
        return c;
    }

    private static double[] best(DoubleUnaryOperator f, double p0, double[] q) {
        double third = f.applyAsDouble(q[2]) - p0;
        double secondOrThird = f.applyAsDouble(q[1] + q[2]) - p0;
        return new double[]{1 - secondOrThird, secondOrThird - third, third};
    }

    /** D_λ(p‖q) = log Σ p_i^λ q_i^{1−λ} / (λ − 1), summed in log space. */
    private static double renyi(double[] p, double[] q, double lambda) {
        double[] terms = new double[p.length];
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < p.length; i++) {
            terms[i] = lambda * Math.log(p[i]) + (1 - lambda) * Math.log(q[i]);
            max = Math.max(max, terms[i]);
        }
        double s = 0;
        for (double t : terms) {
            s += Math.exp(t - max);
        }
        return (max + Math.log(s)) / (lambda - 1);
    }

    @Test
    void validationAndRoundTrip() {
        var e = assertThrows(IllegalArgumentException.class, () -> new RepeatAndSelectEvent(new GaussianEvent(1), 1.0, 0.5));
        assertTrue(e.getMessage().contains("mean"));
        e = assertThrows(IllegalArgumentException.class, () -> new RepeatAndSelectEvent(new GaussianEvent(1), 10, -1));
        assertTrue(e.getMessage().contains("shape"));
        PrivacyEvent ev = ComposedEvent.of(new RepeatAndSelectEvent(new GaussianEvent(2), 10, Double.POSITIVE_INFINITY),
                new RepeatAndSelectEvent(new GaussianEvent(2), 10, 0.5),
                new RepeatAndSelectEvent(new GaussianEvent(2), RepetitionDistribution.geometric(4).truncatedAt(9)),
                new PointwiseMaxEvent(List.of(new GaussianEvent(3),
                        new RepeatAndSelectEvent(new GaussianEvent(2), RepetitionDistribution.pointMass(3)))));
        assertEquals(ev, PrivacyEvents.fromMap(ev.toMap()));
    }
}
