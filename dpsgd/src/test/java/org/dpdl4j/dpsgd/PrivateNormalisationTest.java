package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.commons.math3.distribution.NormalDistribution;
import org.dpdl4j.accounting.PldAccountant;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.models.FeatureStatistics;
import org.dpdl4j.models.Scattering2D;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Tramèr &amp; Boneh's private data normalisation, each privacy claim checked against an independent computation: the
 * statistics against loops over the transform's output, the sensitivity by adding an extreme example, the noise's
 * standard deviation by Monte Carlo, and the event's ε against the analytic Gaussian mechanism's closed form.
 */
class PrivateNormalisationTest {
    private static final Scattering2D T = new Scattering2D(28, 28, 2, 8);

    private static LabeledData images(int n, long seed, double scale) {
        java.util.Random rng = new java.util.Random(seed);
        float[] pixels = new float[n * 784];
        for (int i = 0; i < pixels.length; i++) {
            pixels[i] = (float) (rng.nextDouble() * scale);
        }
        INDArray x = Nd4j.create(pixels, new long[]{n, 784}, 'c');
        INDArray y = Nd4j.zeros(DataType.FLOAT, n, 10);
        for (int i = 0; i < n; i++) {
            y.putScalar(i, i % 10, 1);
        }
        return new LabeledData(x, y, 1, 28, 28);
    }

    /** Without noise and clipping: μ and E[x²] − μ² over all examples and positions, computed here with plain loops. */
    @Test
    void withoutNoiseTheStatisticsAreTheFeaturesMeanAndVariance() {
        LabeledData d = images(300, 1, 1);
        var r = PrivateNormalisation.release(d, 2, 8, 1e6, 1e6, 0, 0, 3);
        assertEquals(0, r.clipped());
        double[] f = T.transform(d.features().castTo(DataType.DOUBLE).reshape('c', new long[]{300, 1, 28, 28}))
                .reshape('c', new long[]{300L * 81 * 49}).toDoubleVector();
        double[] sum = new double[81];
        double[] sumSq = new double[81];
        for (int i = 0; i < f.length; i++) {
            int c = (i / 49) % 81;
            sum[c] += f[i];
            sumSq[c] += f[i] * f[i];
        }
        double[] mean = r.statistics().mean();
        double[] variance = r.statistics().variance();
        for (int c = 0; c < 81; c++) {
            double m = sum[c] / f.length * 81;
            assertEquals(m, mean[c], 1e-12 * Math.max(1, Math.abs(m)), "mean of channel " + c);
            double v = sumSq[c] / f.length * 81 - m * m;
            assertEquals(v, variance[c], 1e-10 * Math.max(1e-3, v), "variance of channel " + c);
            assertTrue(variance[c] > 0);
        }
        // the chunks' partial sums are added in one order whatever the threads
        assertArrayEquals(PrivateNormalisation.clippedSums(d, T, 0.05, 0.01, 1), PrivateNormalisation.clippedSums(d, T, 0.05, 0.01, 3));
    }

    /**
     * Packed shards, read by index in chunks (never whole), release with the same seed exactly what the same pixels
     * release from memory: means, variances and the clipped count, bit for bit, with clipping and noise on.
     */
    @Test
    void shardsReleaseWhatTheSamePixelsReleaseFromMemory(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) {
        int n = 600;
        java.util.Random rng = new java.util.Random(5);
        byte[] pixels = new byte[n * 784];
        rng.nextBytes(pixels);
        for (int i = 0; i < n; i += 3) {
            java.util.Arrays.fill(pixels, i * 784, (i + 1) * 784, (byte) 0); // a third black: norm 0, never clipped
        }
        int[] labels = rng.ints(n, 0, 10).toArray();
        LabeledData d = LabeledData.fromBytes(pixels, labels, 10, 1, 28, 28);
        org.dpdl4j.datasets.PackedShards.pack(d, tmp.resolve("s"), 250); // chunks of 256 span the shards' bounds
        try (var shards = org.dpdl4j.datasets.PackedShards.open(tmp.resolve("s"))) {
            var fromMemory = PrivateNormalisation.release(d, 2, 8, 0.05, 0.01, 1.0, 7, 2);
            var fromShards = PrivateNormalisation.release(shards, 2, 8, 0.05, 0.01, 1.0, 7, 2);
            assertTrue(fromMemory.clipped() > 0 && fromMemory.clipped() < n, "clipping exercised: " + fromMemory.clipped());
            assertEquals(fromMemory.clipped(), fromShards.clipped());
            assertArrayEquals(fromMemory.statistics().mean(), fromShards.statistics().mean());
            assertArrayEquals(fromMemory.statistics().variance(), fromShards.statistics().variance());
        }
    }

    /**
     * Adding one example, even one whose pixels are 1000 times too large, moves the clipped sums by at most C_μ and C_s
     * (and by them within round-off for that extreme example: it was clipped), the Gaussian mechanisms' sensitivities.
     */
    @Test
    void oneExampleMovesEachSumByAtMostTheClippingNorm() {
        for (double clip : new double[]{0.01, 0.2, 3}) {
            double clipSquares = clip / 2;
            LabeledData d = images(40, 2, 1);
            LabeledData extreme = images(1, 3, 1000);
            LabeledData plus = new LabeledData(Nd4j.concat(0, d.features(), extreme.features()), Nd4j.concat(0, d.labels(), extreme.labels()),
                    1, 28, 28);
            double[] without = PrivateNormalisation.clippedSums(d, T, clip, clipSquares, 2);
            double[] with = PrivateNormalisation.clippedSums(plus, T, clip, clipSquares, 2);
            double da = 0;
            double db = 0;
            for (int c = 0; c < 81; c++) {
                da += Math.pow(with[c] - without[c], 2);
                db += Math.pow(with[81 + c] - without[81 + c], 2);
            }
            assertTrue(Math.sqrt(da) <= clip * (1 + 1e-9), "means moved by " + Math.sqrt(da) + " > C " + clip);
            assertTrue(Math.sqrt(db) <= clipSquares * (1 + 1e-9), "squares moved by " + Math.sqrt(db) + " > C " + clipSquares);
            assertTrue(Math.sqrt(da) > clip * (1 - 1e-6) && Math.sqrt(db) > clipSquares * (1 - 1e-6), "the extreme example is clipped");
            assertEquals(without[162] + 1, with[162], "and counted as clipped");
        }
    }

    /**
     * The noise on each released sum is N(0, (σC)²) with C = C_μ for the means and C_s for the squares: 200 releases ×
     * 81 sums of each, mean and standard deviation.
     */
    @Test
    void theNoiseHasStandardDeviationSigmaTimesTheClippingNorm() {
        LabeledData d = images(6, 4, 1);
        double sigma = 3;
        double[] clip = {0.2, 0.05};
        double[] exact = PrivateNormalisation.clippedSums(d, T, clip[0], clip[1], 1);
        double[] s = new double[2];
        double[] ss = new double[2];
        int count = 200 * 81;
        for (int k = 0; k < 200; k++) {
            double[] noisy = PrivateNormalisation.noisySums(d, T, clip[0], clip[1], sigma, 1000 + k, 1);
            assertEquals(exact[162], noisy[162], "the clipped count gets no noise");
            for (int j = 0; j < 162; j++) {
                double e = noisy[j] - exact[j];
                s[j / 81] += e;
                ss[j / 81] += e * e;
            }
        }
        for (int h = 0; h < 2; h++) {
            double mean = s[h] / count;
            double std = Math.sqrt(ss[h] / count - mean * mean);
            double expected = sigma * clip[h];
            assertEquals(0, mean, 5 * expected / Math.sqrt(count), "noise mean");
            assertEquals(expected, std, 0.03 * expected, "noise standard deviation"); // its standard error here is 0.6 %
        }
    }

    /**
     * Through the whole release: n·μ_c minus the exact clipped sum has standard deviation σC_μ (so the noise is added
     * to the sum before the division by n, with C_μ, not C_s): 60 releases × 81 channels.
     */
    @Test
    void theReleasedMeansCarryNoiseSigmaTimesTheirClippingNorm() {
        LabeledData d = images(6, 6, 1);
        double sigma = 2;
        double[] exact = PrivateNormalisation.clippedSums(d, T, 0.2, 0.01, 1);
        double ss = 0;
        int count = 0;
        for (int k = 0; k < 60; k++) {
            double[] mean = PrivateNormalisation.release(d, 2, 8, 0.2, 0.01, sigma, 50 + k, 1).statistics().mean();
            for (int c = 0; c < 81; c++) {
                ss += Math.pow(mean[c] * 6 - exact[c], 2);
                count++;
            }
        }
        assertEquals(sigma * 0.2, Math.sqrt(ss / count), 0.06 * sigma * 0.2); // standard error here about 1.6 %
    }

    /**
     * Two Gaussian mechanisms with noise multiplier σ each are one with σ/√2 (Dong, Roth &amp; Su 2019, arXiv:1905.02383,
     * Corollary 2.13): the PLD accountant's ε for the event is within 1 % above the analytic Gaussian mechanism's exact
     * ε at σ/√2 (Balle &amp; Wang 2018, arXiv:1805.06530, Theorem 8, solved here by bisection), and the RDP accountant's
     * equals its ε for one Gaussian event at σ/√2.
     */
    @Test
    void theEventIsTwoGaussianMechanisms() {
        for (double sigma : new double[]{2, 8}) {
            double delta = 1e-5;
            double exact = analyticGaussianEpsilon(sigma / Math.sqrt(2), delta);
            double pld = PldAccountant.standard().epsilon(PrivateNormalisation.event(sigma), delta);
            assertTrue(pld >= exact - 1e-9 && pld <= exact * 1.01, "PLD " + pld + " vs exact " + exact);
            RdpAccountant rdp = RdpAccountant.standard();
            assertEquals(rdp.epsilon(new org.dpdl4j.accounting.GaussianEvent(sigma / Math.sqrt(2)), delta),
                    rdp.epsilon(PrivateNormalisation.event(sigma), delta), 1e-9);
        }
    }

    /** ε with δ(ε) = Φ(−εs + 1/(2s)) − e^ε Φ(−εs − 1/(2s)) = δ, s = σ (sensitivity 1). */
    private static double analyticGaussianEpsilon(double s, double delta) {
        NormalDistribution z = new NormalDistribution();
        double lo = 0;
        double hi = 100;
        for (int i = 0; i < 200; i++) {
            double eps = (lo + hi) / 2;
            double d = z.cumulativeProbability(-eps * s + 1 / (2 * s)) - Math.exp(eps) * z.cumulativeProbability(-eps * s - 1 / (2 * s));
            if (d > delta) {
                lo = eps;
            } else {
                hi = eps;
            }
        }
        return hi;
    }

    @Test
    void badInputIsRefusedByName() {
        LabeledData d = images(3, 5, 1);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PrivateNormalisation.release(d, 2, 8, 0, 1, 1, 0, 1))
                .getMessage().contains("clipMean"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PrivateNormalisation.release(d, 2, 8, 1, Double.NaN, 1, 0, 1))
                .getMessage().contains("clipSquares"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PrivateNormalisation.release(d, 2, 8, 1, 1, -1, 0, 1))
                .getMessage().contains("noiseMultiplier"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PrivateNormalisation.release(d, 2, 8, 1, 1, 1, 0, 0))
                .getMessage().contains("threads"));
        FeatureStatistics f = PrivateNormalisation.release(d, 2, 8, 1, 1, 1, 0, 1).statistics();
        assertEquals(81, f.mean().length);
    }

    /**
     * The mechanism on any network's input (a FeatureStandardization layer): without noise and clipping, μ and v per
     * colour channel are the pixels' mean and variance computed here with plain loops (3 channels); adding an extreme
     * example moves each clipped sum by at most C_μ and C_s; a NaN or an infinite pixel makes nothing fail (the issue: it
     * threw after the charge): that example adds nothing and is counted.
     */
    @Test
    void theInputsStatisticsOfAnyNetworkAreReleasedTheSameWay() {
        int n = 50;
        java.util.Random rng = new java.util.Random(8);
        INDArray x = Nd4j.zeros(DataType.FLOAT, n, 3 * 4 * 5);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < 60; j++) {
                x.putScalar(i, j, (j / 20 + 1) * rng.nextDouble()); // channel c in [0, c + 1)
            }
        }
        INDArray y = Nd4j.zeros(DataType.FLOAT, n, 2);
        y.getColumn(0).assign(1);
        LabeledData d = new LabeledData(x, y, 3, 4, 5);
        var exact = PrivateNormalisation.releaseFeatures(d, 3, 1e6, 1e6, 0, 0, 2);
        double[] v = x.castTo(DataType.DOUBLE).data().asDouble();
        for (int c = 0; c < 3; c++) {
            double s1 = 0;
            double s2 = 0;
            for (int i = 0; i < n; i++) {
                for (int p = 0; p < 20; p++) {
                    double val = v[i * 60 + c * 20 + p];
                    s1 += val;
                    s2 += val * val;
                }
            }
            double mean = s1 / (n * 20);
            assertEquals(mean, exact.statistics().mean()[c], 1e-6, "mean of channel " + c);
            assertEquals(s2 / (n * 20) - mean * mean, exact.statistics().variance()[c], 1e-6, "variance of channel " + c);
        }
        assertEquals(0, exact.clipped());

        double clipMean = 0.5;
        double clipSquares = 0.3;
        var base = PrivateNormalisation.releaseFeatures(d, 3, clipMean, clipSquares, 0, 0, 1);
        INDArray big = Nd4j.valueArrayOf(new long[]{1, 60}, 1000f);
        var plus = PrivateNormalisation.releaseFeatures(new LabeledData(Nd4j.concat(0, x, big), Nd4j.concat(0, y, y.getRow(0, true)), 3, 4, 5),
                3, clipMean, clipSquares, 0, 0, 1);
        double da = 0;
        double db = 0;
        for (int c = 0; c < 3; c++) { // the released μ and E[x²] are sums over n: n·Δμ is the sums' move (n + 1 after)
            da += Math.pow((n + 1) * plus.statistics().mean()[c] - n * base.statistics().mean()[c], 2);
            double sqPlus = plus.statistics().variance()[c] + Math.pow(plus.statistics().mean()[c], 2);
            double sqBase = base.statistics().variance()[c] + Math.pow(base.statistics().mean()[c], 2);
            db += Math.pow((n + 1) * sqPlus - n * sqBase, 2);
        }
        assertTrue(Math.sqrt(da) <= clipMean * (1 + 1e-6), "means moved by " + Math.sqrt(da));
        assertTrue(Math.sqrt(db) <= clipSquares * (1 + 1e-6), "squares moved by " + Math.sqrt(db));

        for (float bad : new float[]{Float.NaN, Float.POSITIVE_INFINITY}) {
            INDArray poisoned = x.dup();
            poisoned.putScalar(7, 3, bad);
            var r = PrivateNormalisation.releaseFeatures(new LabeledData(poisoned, y, 3, 4, 5), 3, 1e6, 1e6, 0, 0, 1);
            assertEquals(1, r.clipped(), "the poisoned example is left out and counted (none is clipped at 1e6)");
            for (double m : r.statistics().mean()) {
                assertTrue(Double.isFinite(m), "finite statistics: " + java.util.Arrays.toString(r.statistics().mean()));
            }
        }
    }
}
