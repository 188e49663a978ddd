package org.dpdl4j.secagg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.apache.commons.math3.stat.inference.ChiSquareTest;
import org.junit.jupiter.api.Test;

/** The sampler against the exact pmf exp(−x²/2σ²)/Σ_y exp(−y²/2σ²). */
class DiscreteGaussianTest {
    @Test
    void matchesTheExactPmf() {
        for (double variance : new double[] {0.3, 2.25, 40.0}) {
            DiscreteGaussian g = new DiscreteGaussian(variance, new Random(11));
            int n = 100_000;
            int half = (int) Math.ceil(4 * Math.sqrt(variance));
            long[] counts = new long[2 * half + 3]; // one bin for each x in [−half, half], plus the two tails
            double sum = 0;
            double sumSq = 0;
            for (int i = 0; i < n; i++) {
                long x = g.sample();
                sum += x;
                sumSq += (double) x * x;
                counts[x < -half ? 0 : x > half ? counts.length - 1 : (int) x + half + 1]++;
            }
            double norm = 0;
            for (int x = -200; x <= 200; x++) {
                norm += Math.exp(-x * x / (2 * variance));
            }
            double[] expected = new double[counts.length];
            double var = 0;
            for (int x = -200; x <= 200; x++) {
                double p = Math.exp(-x * x / (2 * variance)) / norm;
                var += x * x * p;
                expected[x < -half ? 0 : x > half ? counts.length - 1 : x + half + 1] += p * n;
            }
            // merge tail bins with too little expected mass into their neighbours' test by dropping to the central range
            double[] e = java.util.Arrays.copyOfRange(expected, 1, expected.length - 1);
            long[] c = java.util.Arrays.copyOfRange(counts, 1, counts.length - 1);
            double scale = java.util.Arrays.stream(c).sum() / java.util.Arrays.stream(e).sum();
            for (int i = 0; i < e.length; i++) {
                e[i] *= scale;
            }
            assertTrue(new ChiSquareTest().chiSquareTest(e, c) > 1e-4, "sigma^2 = " + variance);
            assertEquals(0, sum / n, 5 * Math.sqrt(var / n), "mean, sigma^2 = " + variance);
            assertEquals(var, sumSq / n, 0.03 * var, "variance, sigma^2 = " + variance);
        }
    }

    @Test
    void samplesAreReproducibleFromTheSeed() {
        assertEquals(java.util.Arrays.toString(new DiscreteGaussian(5, new Random(3)).sample(50)),
                java.util.Arrays.toString(new DiscreteGaussian(5, new Random(3)).sample(50)));
    }

    @Test
    void badVarianceIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new DiscreteGaussian(0, new Random()));
        assertTrue(e.getMessage().contains("variance"));
        assertThrows(IllegalArgumentException.class, () -> new DiscreteGaussian(Double.NaN, new Random()));
    }
}
