package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.DoubleUnaryOperator;
import org.apache.commons.math3.distribution.NormalDistribution;
import org.junit.jupiter.api.Test;

/** The accountant against closed forms, limiting cases and numerical integration. */
class IndependentChecksTest {
    private final RdpAccountant acc = RdpAccountant.standard();
    private final double[] orders = RdpAccountant.defaultOrders();

    @Test
    void fullBatchIsTheGaussianCurveExactly() {
        for (double sigma : new double[]{0.3, 1.1, 7}) {
            double[] one = RdpAccountant.rdp(new PoissonSampledEvent(new GaussianEvent(sigma), 1.0), orders);
            double[] t = RdpAccountant.rdp(NoiseCalibration.dpSgd(1.0, sigma, 250), orders);
            for (int i = 0; i < orders.length; i++) {
                assertEquals(orders[i] / (2 * sigma * sigma), one[i], 0.0);
                assertEquals(250 * one[i], t[i], 1e-12 * t[i]);
            }
        }
    }

    @Test
    void compositionAddsAndZcdpIsLinear() {
        PrivacyEvent a = new PoissonSampledEvent(new GaussianEvent(1.3), 0.02);
        PrivacyEvent b = new ZcdpEvent(0.05);
        double[] ra = RdpAccountant.rdp(a, orders);
        double[] rb = RdpAccountant.rdp(b, orders);
        double[] both = RdpAccountant.rdp(ComposedEvent.of(a, b, new SelfComposedEvent(a, 3)), orders);
        for (int i = 0; i < orders.length; i++) {
            assertEquals(0.05 * orders[i], rb[i], 1e-15);
            assertEquals(4 * ra[i] + rb[i], both[i], 1e-12 * both[i]);
        }
    }

    /** Pure ε-DP: D_α ≤ ε always and ≤ αε²/2 (Bun–Steinke); both regimes appear on the grid. */
    @Test
    void pureDpCurve() {
        double[] r = RdpAccountant.rdp(new PureDpEvent(0.5), orders);
        for (int i = 0; i < orders.length; i++) {
            assertEquals(Math.min(0.5, orders[i] * 0.125), r[i], 1e-15);
        }
    }

    /** Laplace RDP closed form against numerical integration of the Rényi divergence. */
    @Test
    void laplaceMatchesNumericalRenyiDivergence() {
        double b = 0.8;
        double[] alphas = {1.5, 2, 3.7, 10};
        double[] r = RdpAccountant.rdp(new LaplaceEvent(b), alphas);
        for (int i = 0; i < alphas.length; i++) {
            double a = alphas[i];
            DoubleUnaryOperator p = x -> Math.exp(-Math.abs(x) / b) / (2 * b);
            DoubleUnaryOperator qd = x -> Math.exp(-Math.abs(x - 1) / b) / (2 * b);
            double integral = simpson(x -> Math.pow(p.applyAsDouble(x), a) * Math.pow(qd.applyAsDouble(x), 1 - a),
                    -60, 60, 400_000);
            double d1 = Math.log(integral) / (a - 1);
            double integral2 = simpson(x -> Math.pow(qd.applyAsDouble(x), a) * Math.pow(p.applyAsDouble(x), 1 - a),
                    -60, 60, 400_000);
            double exact = Math.max(d1, Math.log(integral2) / (a - 1));
            assertEquals(exact, r[i], 1e-7 * exact, "alpha " + a);
        }
    }

    /**
     * The sampled Gaussian against direct numerical integration of
     * A_α = E_{z~N(0,σ²)}[((1−q) + q·exp((2z−1)/(2σ²)))^α] (Mironov–Talwar–Zhang, Sec. 3):
     * equal at integer orders, and never below it at fractional orders (our series is an upper bound).
     */
    @Test
    void sampledGaussianMatchesNumericalIntegration() {
        double[][] cases = {{0.01, 1.1}, {0.1, 0.8}, {0.004266666666666667, 1.1}, {0.5, 2.0}, {0.05, 0.5}};
        double[] alphas = {1.5, 2, 2.5, 3, 4.4, 8, 8.1, 12, 20};
        for (double[] c : cases) {
            double q = c[0];
            double s = c[1];
            for (double a : alphas) {
                DoubleUnaryOperator f = z -> Math.exp(-z * z / (2 * s * s) - 0.5 * Math.log(2 * Math.PI * s * s)
                        + a * Math.log((1 - q) + q * Math.exp((2 * z - 1) / (2 * s * s))));
                double exact = Math.log(simpson(f, -40 * s, a + 40 * s, 400_000)) / (a - 1);
                double ours = SubsampledGaussianRdp.rdp(q, s, a);
                if (a == Math.rint(a)) {
                    assertEquals(exact, ours, 1e-8 * exact + 1e-13, "q=" + q + " sigma=" + s + " alpha=" + a);
                } else {
                    assertTrue(ours >= exact * (1 - 1e-9), "fractional order below the exact value: q=" + q
                            + " sigma=" + s + " alpha=" + a + " ours=" + ours + " exact=" + exact);
                }
            }
        }
    }

    /** The integer-order sum and the fractional series agree where they meet (α = 2, 3, …). */
    @Test
    void integerAndFractionalFormulasAgreeAtIntegers() {
        for (double[] c : new double[][]{{0.01, 1.1}, {0.004266666666666667, 0.9}, {0.2, 3.0}}) {
            for (int a = 2; a <= 40; a++) {
                double viaInt = SubsampledGaussianRdp.logAInteger(c[0], c[1], a);
                double viaFrac = SubsampledGaussianRdp.logAFractional(c[0], c[1], a);
                assertEquals(viaInt, viaFrac, 1e-9 * Math.abs(viaInt) + 1e-11, "q=" + c[0] + " sigma=" + c[1] + " alpha=" + a);
            }
        }
    }

    /**
     * q = 1: the exact (ε, δ) of the Gaussian mechanism (Balle &amp; Wang 2018, Theorem 8) is never
     * above the RDP-derived ε, and the RDP gap stays small.
     */
    @Test
    void gaussianRdpEpsilonIsAboveTheExactGaussianEpsilon() {
        for (double sigma : new double[]{0.7, 1.0, 2.0, 5.0}) {
            for (long steps : new long[]{1, 10, 100}) {
                for (double delta : new double[]{1e-5, 1e-6}) {
                    double effective = sigma / Math.sqrt(steps);
                    double exact = exactGaussianEpsilon(effective, delta);
                    double ours = acc.epsilon(NoiseCalibration.dpSgd(1.0, sigma, steps), delta);
                    assertTrue(ours >= exact, "sigma=" + sigma + " T=" + steps + ": RDP " + ours + " < exact " + exact);
                    assertTrue(ours - exact < 0.25 * exact + 0.1, "sigma=" + sigma + " T=" + steps + ": RDP " + ours
                            + " too far above exact " + exact);
                }
            }
        }
    }

    /** ρ-zCDP: never better than the exact Gaussian with ρ = 1/(2σ²), and below ρ + 2√(ρ log 1/δ). */
    @Test
    void zcdpConversionBrackets() {
        for (double rho : new double[]{0.01, 0.1, 0.5, 2}) {
            double delta = 1e-6;
            double ours = acc.epsilon(new ZcdpEvent(rho), delta);
            double sigma = 1 / Math.sqrt(2 * rho);
            assertTrue(ours >= exactGaussianEpsilon(sigma, delta), "rho=" + rho);
            assertTrue(ours <= rho + 2 * Math.sqrt(rho * Math.log(1 / delta)), "rho=" + rho);
            assertTrue(ours >= 0.8 * (rho + 2 * Math.sqrt(rho * Math.log(1 / delta))) - 0.1, "rho=" + rho);
        }
    }

    @Test
    void epsilonAndDeltaAreInverse() {
        PrivacyEvent e = NoiseCalibration.dpSgd(0.01, 1.0, 1000);
        PrivacyGuarantee g = acc.guarantee(e, 1e-5);
        double d = acc.delta(e, g.epsilon());
        assertTrue(d <= 1e-5 * (1 + 1e-9), "delta at the reported epsilon must not exceed the target: " + d);
        assertTrue(acc.delta(e, g.epsilon() * 0.9) > 1e-5);
    }

    @Test
    void calibrationIsOnTheSafeSide() {
        double q = 256.0 / 60000;
        long steps = 14063;
        double tol = 1e-6;
        double sigma = NoiseCalibration.noiseMultiplier(q, steps, 3.0, 1e-5, acc, tol);
        assertTrue(acc.epsilon(NoiseCalibration.dpSgd(q, sigma, steps), 1e-5) <= 3.0);
        assertTrue(acc.epsilon(NoiseCalibration.dpSgd(q, sigma - tol, steps), 1e-5) > 3.0);
        long t = NoiseCalibration.maxSteps(q, 1.1, 2.0, 1e-5, acc);
        assertTrue(acc.epsilon(NoiseCalibration.dpSgd(q, 1.1, t), 1e-5) <= 2.0);
        assertTrue(acc.epsilon(NoiseCalibration.dpSgd(q, 1.1, t + 1), 1e-5) > 2.0);
    }

    @Test
    void edgeCasesNeverNaNOrNegative() {
        assertEquals(0, acc.epsilon(NoiseCalibration.dpSgd(0.0, 1.0, 100), 1e-5));
        assertEquals(0, acc.epsilon(new NoOpEvent(), 1e-5));
        assertEquals(Double.POSITIVE_INFINITY, acc.epsilon(NoiseCalibration.dpSgd(0.01, 0.0, 100), 1e-5));
        assertEquals(Double.POSITIVE_INFINITY, acc.epsilon(new NonPrivateEvent(), 1e-5));
        PrivacyGuarantee huge = acc.guarantee(NoiseCalibration.dpSgd(0.01, 1000, 1), 1e-5);
        assertTrue(huge.epsilon() >= 0 && !Double.isNaN(huge.epsilon()));
        assertTrue(huge.orderAtGridEdge(), "tiny loss is minimised at the largest order");
        assertTrue(!huge.warning().isEmpty());
    }

    @Test
    void invalidArgumentsNameTheParameter() {
        var e1 = assertThrows(IllegalArgumentException.class, () -> new GaussianEvent(-1));
        assertTrue(e1.getMessage().contains("noise multiplier sigma") && e1.getMessage().contains("-1"));
        var e2 = assertThrows(IllegalArgumentException.class, () -> new PoissonSampledEvent(new GaussianEvent(1), 1.5));
        assertTrue(e2.getMessage().contains("sampling rate q") && e2.getMessage().contains("1.5"));
        var e3 = assertThrows(IllegalArgumentException.class, () -> acc.guarantee(new GaussianEvent(1), 1.0));
        assertTrue(e3.getMessage().contains("delta"));
        var e4 = assertThrows(IllegalArgumentException.class, () -> new RdpAccountant(new double[]{1.0}));
        assertTrue(e4.getMessage().contains("alpha"));
        assertThrows(IllegalArgumentException.class, () -> new GaussianEvent(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> NoiseCalibration.noiseMultiplier(0.01, 0, 1, 1e-5, acc, 1e-6));
    }

    @Test
    void eventsRoundTripThroughTheirMapForm() {
        PrivacyEvent e = ComposedEvent.of(NoiseCalibration.dpSgd(0.01, 1.1, 500), new LaplaceEvent(2),
                new PureDpEvent(0.3), new ZcdpEvent(0.1), new NonPrivateEvent(), new NoOpEvent());
        assertEquals(e, PrivacyEvents.fromMap(e.toMap()));
        assertThrows(IllegalArgumentException.class, () -> PrivacyEvents.fromMap(java.util.Map.of("type", "bogus")));
        var bad = assertThrows(IllegalArgumentException.class, () -> PrivacyEvents.fromMap(java.util.Map.of("type", "self_composed",
                "count", 2.7, "event", new GaussianEvent(1).toMap())));
        assertTrue(bad.getMessage().contains("count"), "a fractional count would silently lower epsilon");
        // the map's keys come in one order in every JVM (type first), so a file holding an event is the same bytes each time
        assertEquals("{type=composed, events=[{type=self_composed, count=500, event={type=poisson_sampled, sampling_rate=0.01, "
                + "event={type=gaussian, noise_multiplier=1.1}}}, {type=laplace, scale=2.0}]}",
                ComposedEvent.of(NoiseCalibration.dpSgd(0.01, 1.1, 500), new LaplaceEvent(2)).toMap().toString());
    }

    /** Zhu–Wang (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Thm 4) on a Gaussian is an upper bound of the exact sampled Gaussian. */
    @Test
    void zhuWangBoundsTheExactSampledGaussian() {
        double[] ints = {2, 3, 5, 8, 16, 32};
        for (double[] c : new double[][]{{0.01, 1.0}, {0.1, 2.0}, {0.3, 0.8}}) {
            // a ZcdpEvent with rho = 1/(2 sigma^2) has the Gaussian's curve but takes the generic path
            double[] generic = RdpAccountant.rdp(new PoissonSampledEvent(new ZcdpEvent(1 / (2 * c[1] * c[1])), c[0]), ints);
            for (int i = 0; i < ints.length; i++) {
                double exact = SubsampledGaussianRdp.rdp(c[0], c[1], ints[i]);
                assertTrue(generic[i] >= exact * (1 - 1e-12), "q=" + c[0] + " sigma=" + c[1] + " alpha=" + ints[i]);
            }
        }
    }

    private static double exactGaussianEpsilon(double sigma, double delta) {
        NormalDistribution n = new NormalDistribution();
        DoubleUnaryOperator deltaOf = eps -> n.cumulativeProbability(1 / (2 * sigma) - eps * sigma)
                - Math.exp(eps) * n.cumulativeProbability(-1 / (2 * sigma) - eps * sigma);
        double lo = 0;
        double hi = 1;
        while (deltaOf.applyAsDouble(hi) > delta) {
            hi *= 2;
        }
        for (int i = 0; i < 200; i++) {
            double mid = 0.5 * (lo + hi);
            if (deltaOf.applyAsDouble(mid) > delta) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return hi;
    }

    private static double simpson(DoubleUnaryOperator f, double a, double b, int n) {
        double h = (b - a) / n;
        double s = f.applyAsDouble(a) + f.applyAsDouble(b);
        for (int i = 1; i < n; i++) {
            s += f.applyAsDouble(a + i * h) * (i % 2 == 1 ? 4 : 2);
        }
        return s * h / 3;
    }
}
