package org.dpdl4j.tuning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.dpdl4j.accounting.RdpAccountant;
import org.junit.jupiter.api.Test;

/** DP-HYPE's σ (seed 002 Theorems IV.1 and II.1) against a continuous minimisation written out here. */
class DpHypeVotingTest {
    /** Theorem II.1 on αk/σ², minimised over α ∈ [1.01, 3000] in steps of 0.01. */
    private static double epsilon(double sigma, int k, double delta) {
        double best = Double.POSITIVE_INFINITY;
        for (double a = 1.01; a <= 3000; a += 0.01) {
            best = Math.min(best, a * k / (sigma * sigma) + Math.log((a - 1) / a) - (Math.log(delta) + Math.log(a)) / (a - 1));
        }
        return best;
    }

    @Test
    void sigmaMeetsTheTargetAndIsNearTheContinuousOptimum() {
        double[] eps = {0.1, 0.25, 0.5, 1, 3};
        double[] paper = {103, 46, 24, 12.5, 4.7};
        for (int i = 0; i < eps.length; i++) {
            double sigma = DpHypeVoting.noiseMultiplier(5, eps[i], 1e-5);
            assertTrue(epsilon(sigma, 5, 1e-5) <= eps[i] + 1e-9, "meets the target at " + eps[i]);
            assertTrue(epsilon(sigma * 0.995, 5, 1e-5) > eps[i], "within 0.5% of the smallest sigma at " + eps[i]);
            assertEquals(paper[i], sigma, 0.05 * paper[i], "the paper's (rounded) column at " + eps[i]);
        }
        // the RDP curve is alpha k / sigma^2 exactly
        double[] orders = {2, 10, 64};
        double[] curve = RdpAccountant.rdp(DpHypeVoting.event(5, 12.0), orders);
        for (int i = 0; i < orders.length; i++) {
            assertEquals(orders[i] * 5 / 144.0, curve[i], 1e-12);
        }
        var e = assertThrows(IllegalArgumentException.class, () -> DpHypeVoting.event(0, 1));
        assertTrue(e.getMessage().contains("k") && e.getMessage().contains("0"));
    }
}
