package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** DP-HYPE's σ (Liebenow et al. 2025, arXiv:2510.04902, Theorems IV.1 and II.1) against a continuous minimisation written out here. */
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

    /** Theorem V.1's bound never exceeds the simulated success rate (noise-free votes fixed, gap γ = 6). */
    @Test
    void theoremV1BoundsTheSimulatedSuccessRate() {
        double[] v = new double[20];
        v[0] = 40;
        v[1] = 38;
        v[2] = 36; // good
        for (int j = 3; j < 20; j++) {
            v[j] = 30 - j % 4; // bad, at most 30
        }
        java.util.SplittableRandom r = new java.util.SplittableRandom(5);
        for (double sigma : new double[]{1.5, 3, 4}) {
            int n = 40_000;
            int wins = 0;
            for (int t = 0; t < n; t++) {
                double[] noisy = v.clone();
                for (int j = 0; j < noisy.length; j++) {
                    noisy[j] += sigma * r.nextGaussian();
                }
                wins += DpHypeVoting.argmax(noisy) < 3 ? 1 : 0;
            }
            double rate = (double) wins / n;
            double bound = DpHypeVoting.successBound(6, 17, sigma);
            assertTrue(bound <= rate + 3 * Math.sqrt(rate * (1 - rate) / n) + 1e-12, "sigma " + sigma + ": bound " + bound + " > " + rate);
            assertTrue(bound > 0 || sigma > 2, "the bound is informative for small sigma");
        }
        assertEquals(1, DpHypeVoting.successBound(6, 17, 0), 0, "no noise: a good candidate always wins");
        assertEquals(0, DpHypeVoting.successBound(-1, 17, 1), 0, "no margin: no bound");
        for (double[] bad : new double[][]{{Double.NaN, 17, 1}, {6, -1, 1}, {6, 17, -1}, {6, 17, Double.NaN},
                {6, 17, Double.POSITIVE_INFINITY}}) {
            var e = assertThrows(IllegalArgumentException.class, () -> DpHypeVoting.successBound(bad[0], (int) bad[1], bad[2]));
            assertTrue(e.getMessage().startsWith("successBound needs"), e.getMessage());
        }
    }

    /** A client votes for its k smallest losses (ties to the lower index) and adds N(0, σ²/n) per coordinate. */
    /** The server's choice: the largest sum, the lowest index on ties; no candidate or a NaN sum is refused, not read as 0. */
    @Test
    void argmaxTakesTheLowestLargestAndRefusesWhatHasNoChoice() {
        assertEquals(1, DpHypeVoting.argmax(new double[]{1, 3, 3, -2}));
        assertEquals(0, DpHypeVoting.argmax(new double[]{Double.NEGATIVE_INFINITY}));
        assertThrows(IllegalArgumentException.class, () -> DpHypeVoting.argmax(new double[0]));
        var nan = assertThrows(IllegalArgumentException.class, () -> DpHypeVoting.argmax(new double[]{Double.NaN, 5}));
        assertTrue(nan.getMessage().contains("candidate 0"), nan.getMessage());
    }

    @Test
    void clientVoteIsTopKPlusItsShareOfTheNoise() {
        double[] losses = {0.5, 0.1, 0.5, 0.9, 0.1};
        org.junit.jupiter.api.Assertions.assertArrayEquals(new double[]{1, 1, 0, 0, 1}, DpHypeVoting.topK(losses, 3));
        java.util.SplittableRandom r = new java.util.SplittableRandom(1);
        double sum = 0;
        double sumSq = 0;
        int n = 20_000;
        for (int t = 0; t < n; t++) {
            double x = DpHypeVoting.clientVote(losses, 3, 10, 25, r)[3]; // a 0 vote: pure noise, sd 10/sqrt(25) = 2
            sum += x;
            sumSq += x * x;
        }
        double var = sumSq / n - (sum / n) * (sum / n);
        assertEquals(4, var, 0.15);
        assertThrows(IllegalArgumentException.class, () -> DpHypeVoting.clientVote(losses, 6, 1, 1, r));
    }
}
