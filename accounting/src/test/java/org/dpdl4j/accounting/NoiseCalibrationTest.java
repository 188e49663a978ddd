package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.DoubleFunction;
import org.apache.commons.math3.special.Erf;
import org.junit.jupiter.api.Test;

/**
 * {@link NoiseCalibration#smallestNoise}'s search against independent computations: the analytic Gaussian mechanism's
 * smallest σ (Balle &amp; Wang, "Improving the Gaussian Mechanism for Differential Privacy", ICML 2018, arXiv:1805.06530,
 * Theorem 8), and plain bisection on the same accountant, which the search replaced.
 */
class NoiseCalibrationTest {
    private static final double TOLERANCE = 1e-4;

    /** Φ, the standard normal CDF. */
    private static double phi(double z) {
        return 0.5 * Erf.erfc(-z / Math.sqrt(2));
    }

    /** δ(ε) of the Gaussian mechanism with sensitivity 1 and noise σ (Balle &amp; Wang, Theorem 8). */
    private static double gaussianDelta(double sigma, double epsilon) {
        return phi(0.5 / sigma - epsilon * sigma) - Math.exp(epsilon) * phi(-0.5 / sigma - epsilon * sigma);
    }

    /** Bisection as the search was until 2026-11-29: double σ from 1, then halve the bracket. */
    private static double bisection(DoubleFunction<PrivacyEvent> event, double target, double delta, PrivacyAccountant a,
                                    int[] evaluations) {
        double lo = 0;
        double hi = 1;
        while (count(evaluations, a.epsilon(event.apply(hi), delta)) > target) {
            lo = hi;
            hi *= 2;
        }
        while (hi - lo > TOLERANCE) {
            double mid = 0.5 * (lo + hi);
            if (count(evaluations, a.epsilon(event.apply(mid), delta)) > target) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return hi;
    }

    private static double count(int[] evaluations, double epsilon) {
        evaluations[0]++;
        return epsilon;
    }

    /**
     * A Gaussian mechanism, calibrated with the PLD accountant (whose ε bounds the true one from above), needs at least
     * the analytic smallest σ and at most 10⁻³ more; the analytic σ is found here by bisecting Theorem 8's δ(ε) to 10⁻¹².
     */
    @Test
    void theGaussianMechanismIsCalibratedToTheAnalyticNoise() {
        for (double[] c : new double[][]{{1, 1e-5}, {0.5, 1e-6}, {3, 1e-5}, {8, 1e-9}}) {
            double epsilon = c[0];
            double delta = c[1];
            double lo = 1e-3;
            double hi = 1e3;
            while (hi - lo > 1e-12) {
                double mid = 0.5 * (lo + hi);
                if (gaussianDelta(mid, epsilon) > delta) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            double analytic = hi;
            double sigma = NoiseCalibration.smallestNoise(GaussianEvent::new, epsilon, delta, PldAccountant.standard(), TOLERANCE);
            assertTrue(sigma >= analytic && sigma <= analytic + 1e-3,
                    "eps " + epsilon + ", delta " + delta + ": sigma " + sigma + ", analytic " + analytic);
        }
    }

    /**
     * DP-SGD at settings from one step to 10⁵ and from ε = 0.5 to 8 (with RDP, whose ε is exact in σ): σ meets the
     * target, σ − tolerance misses it, σ is within the tolerance of bisection's and never takes more evaluations.
     */
    @Test
    void dpSgdMeetsTheTargetWithinTheToleranceInFewerEvaluationsThanBisection() {
        PrivacyAccountant rdp = RdpAccountant.standard();
        double[][] cases = {{0.004, 11719, 3}, {0.004, 11719, 1}, {0.01, 1000, 8}, {0.1, 10, 3}, {1, 100, 2}, {0.02, 500, 0.5},
                {0.001, 100000, 3}, {1, 1, 1}};
        for (double[] c : cases) {
            DoubleFunction<PrivacyEvent> event = x -> NoiseCalibration.dpSgd(c[0], x, (long) c[1]);
            int[] searched = {0};
            double sigma = NoiseCalibration.smallestNoise(x -> {
                searched[0]++;
                return event.apply(x);
            }, c[2], 1e-5, rdp, TOLERANCE);
            int[] bisected = {0};
            double reference = bisection(event, c[2], 1e-5, rdp, bisected);
            String what = "q " + c[0] + ", T " + (long) c[1] + ", eps " + c[2];
            assertTrue(rdp.epsilon(event.apply(sigma), 1e-5) <= c[2], what + ": meets the target");
            assertTrue(rdp.epsilon(event.apply(sigma - TOLERANCE), 1e-5) > c[2], what + ": the smallest within the tolerance");
            assertEquals(reference, sigma, TOLERANCE, what + ": bisection's sigma");
            assertTrue(searched[0] <= bisected[0], what + ": " + searched[0] + " evaluations, bisection " + bisected[0]);
        }
    }

    /**
     * An ε that is not a number never meets the target: with an accountant that answers NaN below σ = 3 (and RDP's ε
     * above), σ is at least 3, where RDP alone would give about 0.6 for ε = 10.
     */
    @Test
    void anEpsilonThatIsNotANumberNeverMeetsTheTarget() {
        RdpAccountant rdp = RdpAccountant.standard();
        PrivacyAccountant nanBelowThree = new PrivacyAccountant() {
            @Override
            public String name() {
                return "nan below 3";
            }

            @Override
            public boolean supports(PrivacyEvent event) {
                return rdp.supports(event);
            }

            @Override
            public PrivacyGuarantee guarantee(PrivacyEvent event, double delta) {
                return rdp.guarantee(event, delta);
            }

            @Override
            public double delta(PrivacyEvent event, double epsilon) {
                return rdp.delta(event, epsilon);
            }

            @Override
            public double epsilon(PrivacyEvent event, double delta) {
                return ((GaussianEvent) event).noiseMultiplier() < 3 ? Double.NaN : rdp.epsilon(event, delta);
            }
        };
        double sigma = NoiseCalibration.smallestNoise(GaussianEvent::new, 10, 1e-5, nanBelowThree, TOLERANCE);
        assertTrue(sigma >= 3 && sigma <= 3 + TOLERANCE, "sigma " + sigma);
        assertTrue(NoiseCalibration.smallestNoise(GaussianEvent::new, 10, 1e-5, rdp, TOLERANCE) < 1);
    }

    /** A target no σ ≤ 10⁶ meets is refused; bad arguments are named. */
    @Test
    void anUnreachableTargetAndBadArgumentsAreRefused() {
        var floor = assertThrows(IllegalArgumentException.class, () -> NoiseCalibration.smallestNoise(
                x -> ComposedEvent.of(new PureDpEvent(1), new GaussianEvent(x)), 0.5, 1e-5, RdpAccountant.standard(), TOLERANCE));
        assertTrue(floor.getMessage().contains("cannot be met"), floor.getMessage());
        var tolerance = assertThrows(IllegalArgumentException.class, () -> NoiseCalibration.smallestNoise(GaussianEvent::new, 1,
                1e-5, RdpAccountant.standard(), 0));
        assertTrue(tolerance.getMessage().contains("tolerance"), tolerance.getMessage());
    }
}
