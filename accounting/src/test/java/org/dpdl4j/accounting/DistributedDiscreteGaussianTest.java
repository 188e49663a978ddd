package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The distributed discrete Gaussian bound against the exact Rényi divergence of a sum of discrete Gaussians. */
class DistributedDiscreteGaussianTest {
    private static final double[] ORDERS = {1.5, 2, 3, 5, 8, 16, 32, 64};

    /** log P[Z = z] for z ∈ [−L, L] of the sum of n independent N_Z(0, σ²), by log-space convolution. */
    private static double[] logSumPmf(double sigma, int n, int half) {
        int width = 2 * half + 1;
        double[] one = new double[width];
        double norm = Double.NEGATIVE_INFINITY;
        for (int z = -half; z <= half; z++) {
            one[z + half] = -z * (double) z / (2 * sigma * sigma);
            norm = LogMath.logAdd(norm, one[z + half]);
        }
        for (int i = 0; i < width; i++) {
            one[i] -= norm;
        }
        double[] acc = one.clone();
        for (int c = 1; c < n; c++) {
            double[] next = new double[width];
            java.util.Arrays.fill(next, Double.NEGATIVE_INFINITY);
            for (int z = -half; z <= half; z++) {
                for (int x = -half; x <= half; x++) {
                    int y = z - x;
                    if (y >= -half && y <= half) {
                        next[z + half] = LogMath.logAdd(next[z + half], acc[x + half] + one[y + half]);
                    }
                }
            }
            acc = next;
        }
        return acc;
    }

    /** D_α(Z ‖ Z + shift), summed over the central range where both pmfs are represented exactly. */
    private static double exactDivergence(double[] logP, int half, int shift, double alpha) {
        double s = Double.NEGATIVE_INFINITY;
        int margin = half - 50; // the truncated pmf is exact only away from the window's edges
        for (int z = -margin; z <= margin; z++) {
            s = LogMath.logAdd(s, alpha * logP[z + half] + (1 - alpha) * logP[z - shift + half]);
        }
        return s / (alpha - 1);
    }

    @Test
    void boundsTheExactDivergenceOfASumOfDiscreteGaussians() {
        int half = 300; // the divergence's mass sits near z = −(α−1)·shift, up to −126 here
        for (double sigma : new double[] {0.5, 0.6, 0.8, 1.0, 2.0}) {
            for (int n : new int[] {1, 2, 3, 5}) {
                double[] logP = logSumPmf(sigma, n, half);
                for (int shift : new int[] {1, 2}) {
                    double[] bound = RdpAccountant.rdp(new DistributedDiscreteGaussianEvent(shift, shift, sigma, n, n, 1), ORDERS);
                    for (int i = 0; i < ORDERS.length; i++) {
                        double exact = exactDivergence(logP, half, shift, ORDERS[i]);
                        assertTrue(exact <= bound[i] * (1 + 1e-12),
                                "sigma " + sigma + " n " + n + " shift " + shift + " alpha " + ORDERS[i] + ": exact " + exact + " > bound " + bound[i]);
                        if (sigma >= 1) {
                            // where τ is small the bound is close to the truth (within 20%), so the check has teeth
                            assertTrue(bound[i] <= 1.2 * exact + 1e-9, "bound " + bound[i] + " far above exact " + exact);
                        }
                    }
                }
            }
        }
    }

    @Test
    void aVoteVectorShiftInManyCoordinatesIsBounded() {
        // DP-HYPE's replacement neighbour moves k votes: +1 on k coordinates and −1 on k others, 0 on the rest of d.
        int half = 200;
        int k = 3;
        int d = 20;
        for (double sigma : new double[] {0.5, 0.7, 1.5}) {
            int n = 4;
            double[] logP = logSumPmf(sigma, n, half);
            double[] bound = RdpAccountant.rdp(new DistributedDiscreteGaussianEvent(Math.sqrt(2 * k), 2 * k, sigma, n, n, d), ORDERS);
            for (int i = 0; i < ORDERS.length; i++) {
                // product distribution: the divergence adds over coordinates; ±1 shifts have equal divergence by symmetry
                double exact = 2 * k * exactDivergence(logP, half, 1, ORDERS[i]);
                assertTrue(exact <= bound[i], "sigma " + sigma + " alpha " + ORDERS[i] + ": exact " + exact + " > bound " + bound[i]);
            }
        }
    }

    @Test
    void largeLocalNoiseGivesTheContinuousGaussianCurve() {
        // τ ≈ 10(n−1)e^{−π²σ²} vanishes, leaving α Δ₂²/(2nσ²): a Gaussian with multiplier √n σ/Δ₂
        double sigma = 6;
        int n = 50;
        double l2 = Math.sqrt(10);
        double[] ddg = RdpAccountant.rdp(new DistributedDiscreteGaussianEvent(l2, 10, sigma, n, n, 100), ORDERS);
        double[] gauss = RdpAccountant.rdp(new GaussianEvent(Math.sqrt(n) * sigma / l2), ORDERS);
        for (int i = 0; i < ORDERS.length; i++) {
            assertEquals(gauss[i], ddg[i], 1e-12 * gauss[i]);
            assertEquals(ORDERS[i] * 10 / (2.0 * n * sigma * sigma), ddg[i], 1e-12);
        }
    }

    @Test
    void aClientRangeBoundsEveryCountInIt() {
        DistributedDiscreteGaussianEvent range = new DistributedDiscreteGaussianEvent(2, 4, 0.6, 3, 9, 10);
        double[] r = RdpAccountant.rdp(range, ORDERS);
        for (int n = 3; n <= 9; n++) {
            double[] single = RdpAccountant.rdp(new DistributedDiscreteGaussianEvent(2, 4, 0.6, n, n, 10), ORDERS);
            for (int i = 0; i < ORDERS.length; i++) {
                assertTrue(single[i] <= r[i], "n = " + n);
            }
        }
    }

    @Test
    void tauMatchesItsDefinitionAndTheMapRoundTrips() {
        DistributedDiscreteGaussianEvent e = new DistributedDiscreteGaussianEvent(2, 4, 0.5, 2, 3, 7);
        double expected = 10 * (Math.exp(-2 * Math.PI * Math.PI * 0.25 / 2) + Math.exp(-2 * Math.PI * Math.PI * 0.25 * 2 / 3));
        assertEquals(expected, e.tau(), 1e-15);
        assertEquals(e, PrivacyEvents.fromMap(e.toMap()));
        assertEquals(0, new DistributedDiscreteGaussianEvent(2, 4, 0.5, 1, 1, 7).tau());
    }

    @Test
    void badParametersAreRefusedByName() {
        assertThrows(IllegalArgumentException.class, () -> new DistributedDiscreteGaussianEvent(2, 1, 1, 1, 1, 1), "l1 < l2");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new DistributedDiscreteGaussianEvent(1, 1, 0.4, 1, 1, 1));
        assertTrue(e.getMessage().contains("localSigma"));
        assertThrows(IllegalArgumentException.class, () -> new DistributedDiscreteGaussianEvent(1, 1, 1, 3, 2, 1));
        assertThrows(IllegalArgumentException.class, () -> new DistributedDiscreteGaussianEvent(1, 1, 1, 1, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> PrivacyEvents.fromMap(Map.of("type", "distributed_discrete_gaussian",
                "l2_sensitivity", 1, "l1_sensitivity", 1, "local_sigma", 1, "min_clients", 1.5, "max_clients", 2, "dimension", 1)));
    }
}
