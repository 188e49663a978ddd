package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.math3.special.Erf;
import org.apache.commons.math3.util.CombinatoricsUtils;
import org.junit.jupiter.api.Test;

/**
 * The PLD accountant against Google's dp_accounting 0.6.0 (its PLDAccountant at Δ = 10⁻⁴,
 * src/test/resources/reference/dp_accounting/make_pld_ref.py) and against exact computations made here, independently
 * of the accountant: the analytic Gaussian mechanism (Balle &amp; Wang, Improving the Gaussian Mechanism for Differential
 * Privacy, ICML 2018, arXiv:1805.06530, Theorem 8), the Laplace mechanism's closed-form δ(ε), and the brute-force
 * composition of randomized response.
 */
@org.junit.jupiter.api.parallel.Execution(org.junit.jupiter.api.parallel.ExecutionMode.CONCURRENT) // independent, single-threaded
class PldAccountantTest {
    private static final PldAccountant PLD = PldAccountant.standard();

    record Row(double q, double sigma, long steps, double delta, double epsilon) {
        PrivacyEvent event() {
            PrivacyEvent e = new GaussianEvent(sigma);
            return new SelfComposedEvent(q < 1 ? new PoissonSampledEvent(e, q) : e, steps);
        }
    }

    private static List<Row> rows() throws Exception {
        List<Row> rows = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                PldAccountantTest.class.getResourceAsStream("/reference/dp_accounting/pld_eps.csv"), StandardCharsets.UTF_8))) {
            r.readLine();
            for (String line; (line = r.readLine()) != null; ) {
                String[] f = line.split(",");
                rows.add(new Row(Double.parseDouble(f[0]), Double.parseDouble(f[1]), Long.parseLong(f[2]), Double.parseDouble(f[3]),
                        Double.parseDouble(f[4])));
            }
        }
        return rows;
    }

    /**
     * Within 10⁻³ relative of dp_accounting on every row it computed (q 0.001–1, σ 0.5–5, T 1–10⁴, δ 10⁻⁵ and 10⁻⁶;
     * dp_accounting did not finish q = 1, T = 10⁴ with σ = 0.5 or 1 in 120 s, so those two events have no row), and
     * within 2·10⁻³ where ε &gt; 100: there dp_accounting is the looser one (for q = 1 it lies about 1 above the exact
     * analytic Gaussian, which ours meets to 10⁻⁶; for q = 0.1, σ = 0.5, T = 10⁴ ours converges as Δ shrinks, 806.79 at
     * Δ = 4·10⁻⁴ and 806.48 at 2·10⁻⁴, against dp_accounting's 807.59). ε is formed as {@link PldAccountant#guarantee}
     * forms it.
     */
    @Test
    void matchesDpAccountingOnTheGrid() throws Exception {
        List<Row> rows = rows();
        assertTrue(rows.size() >= 100, "fixture rows: " + rows.size());
        double worst = 0;
        double below = 0;
        int belowCount = 0;
        // both δ of an event share its PLD; the distinct events are built in parallel (the accountant is thread-safe)
        java.util.Map<PrivacyEvent, PrivacyLossDistribution[]> built = rows.stream().map(Row::event).distinct().parallel()
                .collect(java.util.stream.Collectors.toConcurrentMap(e -> e, PLD::pld));
        for (Row row : rows) {
            PrivacyLossDistribution[] pair = built.get(row.event());
            double ours = Math.max(pair[0].epsilon(row.delta()), pair[1].epsilon(row.delta())) * (1 + PldAccountant.ROUNDING_MARGIN);
            double rel = Math.abs(ours - row.epsilon()) / Math.max(row.epsilon(), 1e-3);
            double tolerance = row.epsilon() <= 100 ? 1e-3 : 2e-3;
            assertTrue(rel <= tolerance, () -> row + ": ours " + ours + ", dp_accounting " + row.epsilon() + ", relative " + rel);
            if (row.epsilon() <= 100) {
                worst = Math.max(worst, rel);
            }
            if (row.epsilon() <= 100) {
                below = Math.max(below, (row.epsilon() - ours) / row.epsilon());
                belowCount += ours < row.epsilon() * (1 - 1e-6) ? 1 : 0;
            }
        }
        System.out.printf("PLD vs dp_accounting over %d rows: largest relative difference %.3g where epsilon <= 100; there, "
                + "%d rows more than 1e-6 below it, the largest relative amount below %.3g%n", rows.size(), worst, belowCount, below);
    }

    /** The headline MNIST run: PLD about 2.38 where RDP gives 2.597. */
    @Test
    void theStandardMnistRunIsTighterThanRdp() {
        PrivacyEvent e = NoiseCalibration.dpSgd(256.0 / 60000, 1.1, 14063);
        double pld = PLD.epsilon(e, 1e-5);
        assertEquals(2.3817788079120428, pld, 2.4e-3, "dp_accounting's PLD");
        assertTrue(pld < RdpAccountant.standard().epsilon(e, 1e-5) - 0.2);
    }

    /**
     * δ(ε) of the Gaussian mechanism with μ = 1/σ, exactly: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle &amp; Wang,
     * Theorem 8), written as Q(z₁) − φ(z₁)·R(z₂) with z₁,₂ = ε/μ ∓ μ/2, Q the normal upper tail and R = Q/φ the Mills
     * ratio (e^ε φ(z₂) = φ(z₁)), so that it stays finite at ε in the thousands: R by its continued fraction beyond 30.
     */
    static double analyticGaussianDelta(double mu, double eps) {
        double z1 = eps / mu - mu / 2;
        double z2 = eps / mu + mu / 2;
        double density = Math.exp(-z1 * z1 / 2) / Math.sqrt(2 * Math.PI);
        return upperTail(z1) - density * millsRatio(z2);
    }

    private static double upperTail(double z) {
        return 0.5 * Erf.erfc(z / Math.sqrt(2));
    }

    private static double millsRatio(double z) {
        if (z < 30) {
            return upperTail(z) / (Math.exp(-z * z / 2) / Math.sqrt(2 * Math.PI));
        }
        double f = z; // R(z) = 1/(z + 1/(z + 2/(z + 3/(z + …))))
        for (int k = 200; k >= 1; k--) {
            f = z + k / f;
        }
        return 1 / f;
    }

    static double analyticGaussianEpsilon(double mu, double delta) {
        double lo = 0;
        double hi = 1;
        while (analyticGaussianDelta(mu, hi) > delta) {
            hi *= 2;
        }
        for (int i = 0; i < 200; i++) {
            double mid = (lo + hi) / 2;
            if (analyticGaussianDelta(mu, mid) > delta) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return hi;
    }

    /**
     * q = 1 (T Poisson-sampled Gaussians that sample everyone, as {@code account dpsgd --sampling-rate 1} builds them):
     * never below the exact analytic Gaussian with μ = √T/σ, and within 10⁻³ relative above it, for σ ∈ {0.5, 1, 4},
     * T ∈ {1, 100, 10⁴}, δ ∈ {10⁻⁵, 10⁻⁶, 10⁻⁹, 10⁻¹⁰}. Before the FFT fix, σ = 0.5, T = 100, δ = 10⁻⁶ gave 294.171255
     * against the exact 294.171786.
     */
    @Test
    void fullBatchEventsAreNeverBelowTheAnalyticGaussian() {
        java.util.Map<PrivacyEvent, PrivacyLossDistribution[]> built = java.util.stream.Stream.of(0.5, 1.0, 4.0)
                .flatMap(sigma -> java.util.stream.Stream.of(1L, 100L, 10_000L).map(steps -> NoiseCalibration.dpSgd(1, sigma, steps)))
                .parallel().collect(java.util.stream.Collectors.toConcurrentMap(e -> e, PLD::pld));
        for (double sigma : new double[]{0.5, 1, 4}) {
            for (long steps : new long[]{1, 100, 10_000}) {
                PrivacyEvent event = NoiseCalibration.dpSgd(1, sigma, steps);
                PrivacyLossDistribution[] pair = built.get(event);
                for (double delta : new double[]{1e-5, 1e-6, 1e-9, 1e-10}) {
                    double exact = analyticGaussianEpsilon(Math.sqrt(steps) / sigma, delta);
                    double ours = Math.max(pair[0].epsilon(delta), pair[1].epsilon(delta)) * (1 + PldAccountant.ROUNDING_MARGIN);
                    String what = "sigma " + sigma + ", T " + steps + ", delta " + delta + ": ours " + ours + ", exact " + exact;
                    System.out.printf("q=1 sigma %s T %d delta %.0e: ours %.6f exact %.6f relative %+.2e%n", sigma, steps, delta,
                            ours, exact, (ours - exact) / exact);
                    assertTrue(ours >= exact, what);
                    assertTrue(ours <= exact * (1 + 1e-3), what);
                }
            }
        }
    }

    /**
     * The same q = 1 events through the FFT path (the one-step PLD, self-composed by {@link PrivacyLossDistribution#selfCompose}),
     * which the accountant no longer takes for them: never below exact, within 10⁻³. These are the issue's
     * reproductions that Commons Math's FFT took below the exact value (σ = 4, T = 10⁴: 430.340 against 430.420).
     */
    @Test
    void selfCompositionByFftIsNeverBelowTheAnalyticGaussian() {
        double[][] cases = {{0.5, 100, 1e-6}, {4, 10_000, 1e-6}, {4, 100, 1e-10}, {1, 1000, 1e-9}};
        java.util.Arrays.stream(cases).parallel().forEach(c -> {
            long steps = (long) c[1];
            double worst = 0;
            for (PrivacyLossDistribution direction : PLD.pld(new GaussianEvent(c[0]))) {
                worst = Math.max(worst, direction.selfCompose(steps).epsilon(c[2])); // coarsens the grid where it must
            }
            double ours = worst * (1 + PldAccountant.ROUNDING_MARGIN);
            double exact = analyticGaussianEpsilon(Math.sqrt(steps) / c[0], c[2]);
            String what = "sigma " + c[0] + ", T " + steps + ", delta " + c[2] + ": ours " + ours + ", exact " + exact;
            assertTrue(ours >= exact && ours <= exact * (1 + 1e-3), what);
        });
    }

    /**
     * The small-q reproductions against lower bounds on the true ε: the reviewer's, which hold in exact
     * arithmetic (losses rounded down on a grid of 2·10⁻⁶, the remaining FFT error subtracted: 2.96787 at δ = 10⁻⁹,
     * 2.52601 at 10⁻⁸; Commons Math's FFT gave 2.96065 and 2.52569), and our own made the same way on a grid of
     * 10⁻⁵ ({@link #lowerBoundEpsilon}); and at most T·Δ above ours (rounding up and down differ by at most Δ a step).
     */
    @Test
    void smallSamplingRatesAreNeverBelowALowerBound() {
        PrivacyEvent event = NoiseCalibration.dpSgd(0.004, 0.8, 1000);
        double at9 = PLD.epsilon(event, 1e-9);
        double at8 = PLD.epsilon(event, 1e-8);
        assertTrue(at9 >= 2.96787, "delta 1e-9: " + at9);
        assertTrue(at8 >= 2.52601, "delta 1e-8: " + at8);
        double lower = lowerBoundEpsilon(0.004, 0.8, 1000, 1e-9, 1e-5);
        System.out.printf("q 0.004, sigma 0.8, T 1000, delta 1e-9: ours %.6f, lower bound (grid 1e-5) %.6f%n", at9, lower);
        assertTrue(at9 >= lower && at9 <= lower + 1000 * 1e-5, at9 + " vs lower bound " + lower);
    }

    /**
     * A lower bound on the ε of T-fold Poisson-sampled Gaussians (remove direction): every loss rounded down to the grid
     * kΔ (which only lowers δ(ε) = E_P[(1 − e^{ε−L})₊], and stays a lower bound under composition, since the sum of
     * rounded losses is below the true sum), the upper tail beyond a normal quantile dropped, the T-fold law by
     * {@link PrivacyLossDistribution#selfCompose}, whose charged p∞ (tails, wrap-around and the FFT's error bound) is
     * subtracted instead of added.
     */
    static double lowerBoundEpsilon(double q, double sigma, long steps, double delta, double interval) {
        double s2 = sigma * sigma;
        double low = Math.log1p(-q);
        double high = Math.log1p(q * Math.expm1((2 * (1 + 9 * sigma) - 1) / (2 * s2)));
        long first = (long) Math.floor(low / interval);
        long last = (long) Math.floor(high / interval);
        double[] pmf = new double[(int) (last - first + 1)];
        // P(L ≥ l) = P(X ≥ x(l)) for the mixture X ~ (1 − q)N(0, σ²) + qN(1, σ²), x(l) = σ² log((e^l − 1 + q)/q) + 1/2
        java.util.function.DoubleUnaryOperator survival = l -> {
            if (l <= low) {
                return 1;
            }
            double x = s2 * Math.log1p(Math.expm1(l) / q) + 0.5;
            return (1 - q) * upperTail(x / sigma) + q * upperTail((x - 1) / sigma);
        };
        double above = survival.applyAsDouble((first + 1) * interval);
        pmf[0] = 1 - above;
        for (int i = 1; i < pmf.length; i++) {
            double next = survival.applyAsDouble((first + i + 1) * interval);
            pmf[i] = Math.max(0, above - next); // the mass of [lᵢ, lᵢ₊₁) sits at lᵢ
            above = next;
        }
        PrivacyLossDistribution composed = new PrivacyLossDistribution(interval, first, pmf, 0).selfCompose(steps);
        double charged = composed.infinityMass;
        double lo = 0;
        double hi = 64;
        for (int i = 0; i < 60; i++) {
            double mid = (lo + hi) / 2;
            if (composed.hockeyStick(mid) - 2 * charged > delta) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * The FFT path against composition without FFT: the T-fold law of a small discretised PLD by repeated direct
     * convolution (sums of non-negative products, relative error below 10⁻¹²), and δ(ε) from it, against
     * {@link PrivacyLossDistribution#selfCompose}: never below, and above by no more than the tails and the charged bound.
     */
    @Test
    void selfCompositionByFftMatchesDirectConvolution() {
        PldAccountant coarse = new PldAccountant(0.01);
        PrivacyLossDistribution base = coarse.pld(new PoissonSampledEvent(new GaussianEvent(1), 0.2))[0];
        int steps = 24;
        double[] direct = {1};
        for (int t = 0; t < steps; t++) {
            double[] next = new double[direct.length + base.pmf.length - 1];
            for (int i = 0; i < direct.length; i++) {
                for (int j = 0; j < base.pmf.length; j++) {
                    next[i + j] += direct[i] * base.pmf[j];
                }
            }
            direct = next;
        }
        PrivacyLossDistribution exact = new PrivacyLossDistribution(base.interval, steps * base.offset, direct,
                1 - Math.pow(1 - base.infinityMass, steps));
        PrivacyLossDistribution viaFft = base.selfCompose(steps);
        double charged = viaFft.infinityMass - exact.infinityMass;
        assertTrue(charged > 0 && charged < 1e-12, "charged " + charged);
        for (double eps : new double[]{0, 0.5, 1, 2, 4, 8}) {
            double d = exact.hockeyStick(eps);
            double f = viaFft.hockeyStick(eps);
            assertTrue(f >= d * (1 - 1e-12) && f <= d + 2 * charged + 1e-15, "eps " + eps + ": FFT " + f + ", direct " + d);
        }
    }

    /**
     * The composed masses sum to (Σ one-step masses)^T within the charged bound and the cut tails (Commons Math's FFT
     * gave 1.0002139 for q = 0.004, σ = 0.5, T = 10⁴, where 1 was due), and the charged amount is far below any δ in
     * use. Sums in double words.
     */
    @Test
    void composedMassesSumAsTheyShouldWithinTheChargedBound() {
        long steps = 10_000;
        for (PrivacyLossDistribution one : PLD.pld(new PoissonSampledEvent(new GaussianEvent(0.5), 0.004))) {
            PrivacyLossDistribution composed = one.selfCompose(steps);
            double[] base = sum(one.pmf);
            double expected = Math.exp(steps * Math.log1p((base[0] - 1) + base[1]));
            double[] total = sum(composed.pmf);
            double charged = composed.infinityMass - (1 - Math.pow(1 - one.infinityMass, steps));
            assertTrue(charged < 1e-11, "charged " + charged);
            double gap = Math.abs((total[0] - expected) + total[1]);
            assertTrue(gap <= charged + 3 * PrivacyLossDistribution.TAIL_MASS, "sum " + total[0] + ", expected " + expected
                    + ", charged " + charged);
        }
    }

    private static double[] sum(double[] x) {
        double[] s = {0, 0};
        for (double v : x) {
            DoubleWord.add(s[0], s[1], v, 0, s);
        }
        return s;
    }

    /**
     * The issue's {@code train --dry-run --delta 1e-9 --batch-size 240 --epochs 4 --target-epsilon 3} calibration: the
     * true ε of σ = 0.79669 is at least 3.0067, so a correct calibration must choose more noise.
     */
    @Test
    void calibrationAtSmallDeltaMeetsItsTarget() {
        double q = 240.0 / 60000;
        long steps = 4 * 250;
        double sigma = NoiseCalibration.noiseMultiplier(q, steps, 3, 1e-9, PLD, 1e-4);
        assertTrue(sigma > 0.79669, "sigma " + sigma);
        assertTrue(PLD.epsilon(NoiseCalibration.dpSgd(q, sigma, steps), 1e-9) <= 3);
        assertTrue(lowerBoundEpsilon(q, 0.79669, steps, 1e-9, 1e-5) > 3 - steps * 1e-5, "the lower bound at the old sigma");
    }

    /**
     * The one-step δ(ε) of Poisson-sampled Gaussians at grid points, as the accountant reports it, against 50-digit
     * values computed here in BigDecimal: never below (before the fix, cancellation between the terms made the raw
     * formula 1.5·10⁻⁷ relative below the exact value at q = 0.004, σ = 0.8, ε = 2.5), and close above.
     */
    @Test
    void oneStepDeltaAtGridPointsIsNeverBelowFiftyDigitValues() {
        java.math.MathContext mc = new java.math.MathContext(90);
        double worst = 0;
        for (double[] qs : new double[][]{{0.004, 0.8}, {0.01, 1.1}, {0.2, 0.7}, {1, 2}}) {
            double q = qs[0];
            double sigma = qs[1];
            PrivacyEvent event = q < 1 ? new PoissonSampledEvent(new GaussianEvent(sigma), q) : new GaussianEvent(sigma);
            for (int k : new int[]{1, 100, 2500, 10_000, 25_000, 40_000}) {
                double eps = k * PldAccountant.DEFAULT_INTERVAL;
                double exact = exactRemoveDelta(q, sigma, eps, mc).doubleValue();
                if (!(exact > 1e-300)) {
                    continue;
                }
                double ours = PLD.delta(event, eps);
                assertTrue(ours >= exact && ours <= exact * (1 + 1e-4) + 2 * PrivacyLossDistribution.TAIL_MASS,
                        "q " + q + ", sigma " + sigma + ", eps " + eps + ": ours " + ours + ", exact " + exact);
                if (exact > 1e-12) {
                    worst = Math.max(worst, (ours - exact) / exact);
                }
            }
        }
        System.out.printf("one-step delta at grid points vs 50-digit values (delta > 1e-12): at most %.3g relative above%n", worst);
    }

    /**
     * The accuracy that {@link PldAccountant#TAIL_ACCURACY} assumes of Commons Math's erfc, measured against erfc in
     * BigDecimal (Taylor series below 3, continued fraction above, 60 digits) from −6 to 21.3, where the accountant uses it
     * (z = t√2 &lt; 30): at least ten times better.
     */
    @Test
    void erfcIsAsAccurateAsTheAccountantAssumes() {
        java.math.MathContext mc = new java.math.MathContext(60);
        double worst = 0;
        for (double t = -6; t <= 21.3; t += 0.0731) { // z = t√2 < 30: beyond, the asymptotic series is used
            double ours = Erf.erfc(t);
            double exact = bigErfc(new java.math.BigDecimal(t), mc).doubleValue();
            worst = Math.max(worst, Math.abs(ours - exact) / exact);
        }
        System.out.printf("Commons Math erfc on [-6, 21.3] against 60 digits: largest relative error %.3g%n", worst);
        assertTrue(worst < PldAccountant.TAIL_ACCURACY / 10, "erfc relative error " + worst);
    }

    private static java.math.BigDecimal bigErfc(java.math.BigDecimal t, java.math.MathContext mc) {
        java.math.BigDecimal sqrtPi = new java.math.BigDecimal("3.14159265358979323846264338327950288419716939937510582097494459").sqrt(mc);
        if (t.doubleValue() < 3) {
            java.math.MathContext wide = new java.math.MathContext(mc.getPrecision() + 20);
            java.math.BigDecimal t2 = t.multiply(t, wide);
            java.math.BigDecimal term = t; // (−1)^n t^{2n+1}/n!
            java.math.BigDecimal sum = java.math.BigDecimal.ZERO;
            for (int n = 0; n < 400; n++) {
                sum = sum.add(term.divide(java.math.BigDecimal.valueOf(2L * n + 1), wide), wide);
                term = term.multiply(t2, wide).divide(java.math.BigDecimal.valueOf(n + 1), wide).negate();
            }
            return java.math.BigDecimal.ONE.subtract(sum.multiply(java.math.BigDecimal.valueOf(2), wide).divide(sqrtPi, wide), mc);
        }
        // erfc(t) = e^{−t²}/√π · 1/(t + (1/2)/(t + 1/(t + (3/2)/(t + …)))), evaluated from the bottom
        java.math.BigDecimal f = t;
        for (int k = 600; k >= 1; k--) {
            f = t.add(java.math.BigDecimal.valueOf(k).divide(java.math.BigDecimal.valueOf(2), mc).divide(f, mc), mc);
        }
        java.math.BigDecimal square = t.multiply(t, mc);
        java.math.BigDecimal expNeg = java.math.BigDecimal.ONE.divide(bigExp(square, mc), mc);
        return expNeg.divide(sqrtPi, mc).divide(f, mc);
    }

    /** δ(ε) of the remove direction, P = (1 − q)N(0, σ²) + qN(1, σ²) against N(0, σ²), in BigDecimal. */
    private static java.math.BigDecimal exactRemoveDelta(double q, double sigma, double eps, java.math.MathContext mc) {
        java.math.BigDecimal bq = new java.math.BigDecimal(q);
        java.math.BigDecimal s = new java.math.BigDecimal(sigma);
        java.math.BigDecimal e = new java.math.BigDecimal(eps);
        java.math.BigDecimal expEps = bigExp(e, mc);
        // x = σ² log((e^ε − 1 + q)/q) + 1/2
        java.math.BigDecimal ratio = expEps.subtract(java.math.BigDecimal.ONE).add(bq).divide(bq, mc);
        java.math.BigDecimal x = s.multiply(s, mc).multiply(bigLog(ratio, mc), mc).add(new java.math.BigDecimal("0.5"));
        java.math.BigDecimal qx = bigUpperTail(x.divide(s, mc), mc);
        java.math.BigDecimal qx1 = bigUpperTail(x.subtract(java.math.BigDecimal.ONE).divide(s, mc), mc);
        return java.math.BigDecimal.ONE.subtract(bq).multiply(qx, mc).add(bq.multiply(qx1, mc)).subtract(expEps.multiply(qx, mc), mc);
    }

    /** P(N(0, 1) &gt; z) = erfc(z/√2)/2, erf by its Taylor series (|z| ≤ 12 here; 90 digits absorb the cancellation). */
    private static java.math.BigDecimal bigUpperTail(java.math.BigDecimal z, java.math.MathContext mc) {
        java.math.BigDecimal t = z.divide(java.math.BigDecimal.valueOf(2).sqrt(mc), mc);
        java.math.BigDecimal t2 = t.multiply(t, mc);
        java.math.BigDecimal term = t; // (−1)^n t^{2n+1}/n!
        java.math.BigDecimal sum = java.math.BigDecimal.ZERO;
        for (int n = 0; n < 2000; n++) {
            java.math.BigDecimal add = term.divide(java.math.BigDecimal.valueOf(2L * n + 1), mc);
            sum = sum.add(add, mc);
            if (add.abs().compareTo(new java.math.BigDecimal("1e-85")) < 0 && n > 10) {
                break;
            }
            term = term.multiply(t2, mc).divide(java.math.BigDecimal.valueOf(n + 1), mc).negate();
        }
        java.math.BigDecimal sqrtPi = new java.math.BigDecimal("3.14159265358979323846264338327950288419716939937510582097494459").sqrt(mc);
        java.math.BigDecimal erf = sum.multiply(java.math.BigDecimal.valueOf(2), mc).divide(sqrtPi, mc);
        return java.math.BigDecimal.ONE.subtract(erf).divide(java.math.BigDecimal.valueOf(2), mc);
    }

    /** e^x: Taylor series of e^{x/2¹⁰}, squared ten times. */
    private static java.math.BigDecimal bigExp(java.math.BigDecimal x, java.math.MathContext mc) {
        java.math.MathContext wide = new java.math.MathContext(mc.getPrecision() + 10);
        java.math.BigDecimal y = x.divide(java.math.BigDecimal.valueOf(1024), wide);
        java.math.BigDecimal sum = java.math.BigDecimal.ZERO;
        java.math.BigDecimal term = java.math.BigDecimal.ONE;
        for (int k = 0; k < 120; k++) {
            sum = sum.add(term, wide);
            term = term.multiply(y, wide).divide(java.math.BigDecimal.valueOf(k + 1), wide);
        }
        for (int i = 0; i < 10; i++) {
            sum = sum.multiply(sum, wide);
        }
        return sum.round(mc);
    }

    /** log y by Newton's method on e^x = y from the double logarithm. */
    private static java.math.BigDecimal bigLog(java.math.BigDecimal y, java.math.MathContext mc) {
        java.math.BigDecimal x = new java.math.BigDecimal(Math.log(y.doubleValue()));
        for (int i = 0; i < 8; i++) {
            java.math.BigDecimal ex = bigExp(x, mc);
            x = x.add(y.subtract(ex, mc).divide(ex, mc), mc);
        }
        return x;
    }

    /**
     * A self-composition too long for any grid up to a loss step of 1 (q = 0.5, σ = 1, T = 10⁹: {@code account calibrate}
     * searched for over a minute) is refused at once with a message that names the rdp accountant.
     */
    @Test
    void tooManyStepsAreRefusedNotSearchedForever() {
        var e = assertThrows(IllegalArgumentException.class, () -> org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                java.time.Duration.ofSeconds(120), () -> PLD.epsilon(NoiseCalibration.dpSgd(0.5, 1, 1_000_000_000L), 1e-5)));
        assertTrue(e.getMessage().contains("rdp") && e.getMessage().contains("1000000000"), e.getMessage());
    }

    /**
     * Pairwise composition by FFT, as the ledger books two runs ({@link ComposedEvent}): two full-batch DP-SGD runs of
     * T₁ and T₂ steps are one Gaussian with μ = √(T₁ + T₂)/σ; never below the exact ε, within 10⁻³ of it.
     */
    @Test
    void composedRunsAreNeverBelowTheAnalyticGaussian() {
        java.util.Arrays.stream(new double[][]{{2, 30, 70, 1e-6}, {1, 10, 40, 1e-9}, {5, 500, 1500, 1e-5}}).parallel().forEach(c -> {
            PrivacyEvent both = ComposedEvent.of(NoiseCalibration.dpSgd(1, c[0], (long) c[1]), NoiseCalibration.dpSgd(1, c[0], (long) c[2]));
            double ours = PLD.epsilon(both, c[3]);
            double exact = analyticGaussianEpsilon(Math.sqrt(c[1] + c[2]) / c[0], c[3]);
            assertTrue(ours >= exact && ours <= exact * (1 + 1e-3), "sigma " + c[0] + ": ours " + ours + ", exact " + exact);
        });
    }

    /** Self-composition by FFT agrees with composing the same PLD pairwise, and with the exact law for Gaussians. */
    @Test
    void selfCompositionByFftAgreesWithTheGaussianLaw() {
        PrivacyLossDistribution[] one = PLD.pld(new GaussianEvent(4));
        double exact = analyticGaussianEpsilon(Math.sqrt(50) / 4, 1e-5);
        double viaFft = Math.max(one[0].selfCompose(50).epsilon(1e-5), one[1].selfCompose(50).epsilon(1e-5));
        // in exact arithmetic viaFft ≥ exact; rounding may take it below by far less than the accountant's margin
        assertTrue(viaFft >= exact * (1 - 1e-7) && viaFft * (1 + PldAccountant.ROUNDING_MARGIN) >= exact
                && viaFft <= exact * (1 + 2e-3), viaFft + " vs exact " + exact);
        PrivacyLossDistribution twice = one[0].compose(one[0]);
        assertEquals(one[0].selfCompose(2).epsilon(1e-5), twice.epsilon(1e-5), 1e-9);
    }

    /** Lap(b): δ(ε) = 1 − e^{(ε − 1/b)/2}, so ε(δ) = 1/b + 2 log(1 − δ); never below it, within 10⁻³. */
    @Test
    void laplaceMatchesItsClosedForm() {
        for (double b : new double[]{0.5, 1, 4}) {
            for (double delta : new double[]{1e-5, 1e-3, 0.1}) {
                double exact = Math.max(0, 1 / b + 2 * Math.log1p(-delta));
                double ours = PLD.epsilon(new LaplaceEvent(b), delta);
                assertTrue(ours >= exact - 1e-12 && ours <= exact + 2e-4, "b " + b + " delta " + delta + ": " + ours + " vs " + exact);
            }
        }
    }

    /** δ(ε) of k-fold randomized response with ε₀, brute force over the binomial law of its loss (k − 2i)·ε₀. */
    private static double randomizedResponseDelta(double e0, int k, double eps) {
        double p = 1 / (1 + Math.exp(-e0));
        double delta = 0;
        for (int i = 0; i <= k; i++) {
            double loss = (k - 2 * i) * e0;
            double mass = CombinatoricsUtils.binomialCoefficientDouble(k, i) * Math.pow(p, k - i) * Math.pow(1 - p, i);
            if (loss > eps) {
                delta += mass * -Math.expm1(eps - loss);
            }
        }
        return delta;
    }

    /**
     * k-fold pure ε₀-DP (randomized response, its dominating pair): at least the exact δ, and at most the exact δ with
     * every loss raised by Δ (each of the k losses is rounded up to the grid at most once).
     */
    @Test
    void composedPureDpMatchesBruteForce() {
        double e0 = 0.3;
        int k = 40;
        for (double eps : new double[]{0.5, 2, 5}) {
            double ours = PLD.delta(new SelfComposedEvent(new PureDpEvent(e0), k), eps);
            double exact = randomizedResponseDelta(e0, k, eps);
            double raised = randomizedResponseDelta(e0, k, eps - k * PldAccountant.DEFAULT_INTERVAL);
            assertTrue(ours >= exact && ours <= raised * (1 + 1e-6), "eps " + eps + ": " + ours + " vs exact " + exact
                    + " and " + raised);
        }
    }

    @Test
    void limitingCasesAndRefusals() {
        assertEquals(0, PLD.epsilon(new NoOpEvent(), 1e-5), 0);
        assertEquals(0, PLD.epsilon(new SelfComposedEvent(new PoissonSampledEvent(new GaussianEvent(1), 0), 100), 1e-5), 0);
        assertTrue(Double.isInfinite(PLD.epsilon(new NonPrivateEvent(), 1e-5)));
        assertTrue(Double.isInfinite(PLD.epsilon(new GaussianEvent(0), 1e-5)));
        // more noise, fewer steps, less sampling: never more epsilon
        double base = PLD.epsilon(NoiseCalibration.dpSgd(0.01, 1, 1000), 1e-5);
        assertTrue(PLD.epsilon(NoiseCalibration.dpSgd(0.01, 1.2, 1000), 1e-5) < base);
        assertTrue(PLD.epsilon(NoiseCalibration.dpSgd(0.01, 1, 500), 1e-5) < base);
        assertTrue(PLD.epsilon(NoiseCalibration.dpSgd(0.005, 1, 1000), 1e-5) < base);
        // a composition costs more than either part; δ at the reported ε is the requested δ
        PrivacyEvent withScore = ComposedEvent.of(NoiseCalibration.dpSgd(0.01, 1, 1000), new GaussianEvent(20));
        double both = PLD.epsilon(withScore, 1e-5);
        assertTrue(both > base, both + " vs " + base);
        assertEquals(1e-5, PLD.delta(withScore, both), 1e-8);
        var e = assertThrows(IllegalArgumentException.class,
                () -> PLD.epsilon(new RepeatAndSelectEvent(new GaussianEvent(1), RepetitionDistribution.poisson(3)), 1e-5));
        assertTrue(e.getMessage().contains("rdp"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new PldAccountant(0));
        assertThrows(IllegalArgumentException.class, () -> PLD.epsilon(new GaussianEvent(1), 1.5));
    }

    /**
     * Small σ and q near 1: a large ε whose T-fold window needs more than 2²² points at Δ = 10⁻⁴, so the grid is
     * coarsened (memory stays bounded); the result stays below the full-batch exact value and close to it.
     */
    @Test
    void largeEpsilonIsComputedOnABoundedGrid() {
        double sigma = 0.5;
        long steps = 200;
        PrivacyLossDistribution[] one = PLD.pld(new PoissonSampledEvent(new GaussianEvent(sigma), 0.999));
        PrivacyLossDistribution composed = one[0].selfCompose(steps);
        assertTrue(composed.interval > PldAccountant.DEFAULT_INTERVAL && composed.pmf.length <= PrivacyLossDistribution.MAX_POINTS,
                "interval " + composed.interval + ", points " + composed.pmf.length);
        double ours = PLD.epsilon(new SelfComposedEvent(new PoissonSampledEvent(new GaussianEvent(sigma), 0.999), steps), 1e-5);
        double fullBatch = analyticGaussianEpsilon(Math.sqrt(steps) / sigma, 1e-5); // q = 1 costs more than q = 0.999
        assertTrue(ours > 0.95 * fullBatch && ours < fullBatch, ours + " vs " + fullBatch);
    }
}
