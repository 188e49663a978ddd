package org.dpdl4j.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.Mnist;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.learning.config.Sgd;

/**
 * One-run audits of real DP-SGD runs (MLP, 2,000 MNIST examples, q = 0.1, T = 60, 1,000 white-box canaries): honest
 * runs never measure more than they claim, and the privacy bugs an audit exists for are caught at a claim of ε = 2,
 * each simulated by an equivalent configuration: no noise; noise σC/(qn) on the sum (σC on the mean instead of the
 * sum); clipping skipped (a canary of norm 100C against noise σC, as clip 100C with σ/100).
 */
class CanaryAuditTest {
    private static final double Q = 0.1;
    private static final long T = 60;
    private static final double DELTA = 1e-5;
    private static final int M = 1000;
    private static LabeledData train;

    @BeforeAll
    static void load() throws Exception {
        TrainTest mnist = Mnist.load(DatasetCache.root().resolve("mnist"));
        train = mnist.train().randomSubset(2000, 3);
    }

    private static double sigmaFor(double epsilon) {
        return NoiseCalibration.noiseMultiplier(Q, T, epsilon, DELTA, RdpAccountant.standard(), 1e-4);
    }

    private static double audit(double sigma, double clip, double canaryNorm, boolean nonPrivate, long seed) {
        MultiLayerNetwork net = Models.mlp(ModelOptions.mnist().withUpdater(new Sgd(0.5)).withSeed(seed));
        DpSgdConfig cfg = DpSgdConfig.builder().samplingRate(Q).noiseMultiplier(sigma).clipNorm(clip).steps(T).nonPrivate(nonPrivate)
                .delta(DELTA).seed(seed).build();
        return CanaryAudit.run(net, train, null, cfg, CanaryAudit.Kind.GRADIENT, M, canaryNorm, 0.95, new SplittableRandom(seed + 1))
                .audit().epsilonLowerBound();
    }

    @Test
    void honestRunsNeverMeasureMoreThanTheyClaim() {
        for (double claim : new double[]{1, 2, 4, 8}) {
            double lb = audit(sigmaFor(claim), 1.0, 1.0, false, (long) claim);
            assertTrue(lb <= claim, "claim " + claim + ": measured lower bound " + lb);
        }
    }

    @Test
    void privacyBugsAreDetectedAtAClaimOfTwo() {
        double claim = 2;
        double sigma = sigmaFor(claim);
        double noNoise = audit(0, 1.0, 1.0, true, 5);
        assertTrue(noNoise > claim, "no noise: lower bound " + noNoise);
        double noiseOnTheMean = audit(sigma / (Q * train.size()), 1.0, 1.0, false, 6);
        assertTrue(noiseOnTheMean > claim, "noise on the mean: lower bound " + noiseOnTheMean);
        double clippingSkipped = audit(sigma / 100, 100.0, 100.0, false, 7);
        assertTrue(clippingSkipped > claim, "clipping skipped: lower bound " + clippingSkipped);
    }

    /**
     * The same audit of a residual GroupNorm network (WRN-10-1, a {@code ComputationGraph}; 500 MNIST examples, q = 0.1,
     * T = 60; its first layer is a convolution, so the canaries sit on uniformly chosen parameters that the data's
     * gradients move too): the honest run at ε = 2 measures at most 2, the same run without noise (still claiming 2)
     * more.
     */
    @Test
    void aResidualGroupNormNetworkIsAuditedToo() {
        double claim = 2;
        double q = Q;
        long steps = T;
        LabeledData small = train.randomSubset(500, 4);
        double sigma = NoiseCalibration.noiseMultiplier(q, steps, claim, DELTA, RdpAccountant.standard(), 1e-4);
        for (boolean noiseFree : new boolean[]{false, true}) {
            org.deeplearning4j.nn.api.Model net = Models.byName("small-resnet", ModelOptions.mnist().withUpdater(new Sgd(0.5)).withSeed(8));
            DpSgdConfig cfg = DpSgdConfig.builder().samplingRate(q).noiseMultiplier(noiseFree ? 0 : sigma).clipNorm(1.0).steps(steps)
                    .nonPrivate(noiseFree).delta(DELTA).seed(noiseFree ? 10 : 11).build();
            double lb = CanaryAudit.run(net, small, null, cfg, CanaryAudit.Kind.GRADIENT, M, 1.0, 0.95,
                    new SplittableRandom(noiseFree ? 12 : 13)).audit().epsilonLowerBound();
            System.out.printf("WRN-10-1 audit, claim %.1f, %s: lower bound %.3f%n", claim, noiseFree ? "no noise" : "sigma " + sigma, lb);
            if (noiseFree) {
                assertTrue(lb > claim, "WRN-10-1 without noise claiming " + claim + ": lower bound " + lb);
            } else {
                assertTrue(lb <= claim, "honest WRN-10-1 at epsilon " + claim + ": lower bound " + lb);
            }
        }
    }

    /**
     * A tuning audited through its release: every trial trains with the same canaries (from the same, known
     * weights), the scores are read from the released best model only, and the claim is the tuning's ε. Honest
     * random search (K = 2 fixed, calibrated to ε = 2 in total) stays below it; the same search whose trials run
     * without noise, still claiming ε = 2, is caught.
     */
    @Test
    void aTuningIsAuditedThroughItsRelease() {
        double claim = 2;
        org.dpdl4j.tuning.HyperparameterSpace space = org.dpdl4j.tuning.HyperparameterSpace.of(
                org.dpdl4j.tuning.HyperparameterSpace.parseAxis("lr=cat:0.3,0.6"));
        for (boolean noiseFree : new boolean[]{false, true}) {
            org.dpdl4j.tuning.DpSgdMechanism.Builder builder = org.dpdl4j.tuning.DpSgdMechanism.builder(train)
                    .model("mlp", ModelOptions.mnist().withSeed(9)).samplingRate(Q).epochs(Q * T).noiseMultiplier(1)
                    .validation(0.1, 4).delta(DELTA).scoring(org.dpdl4j.tuning.DpSgdMechanism.Scoring.PRIVATE_VALIDATION, 0.05);
            MultiLayerNetwork template = Models.mlp(ModelOptions.mnist().withSeed(9));
            CanaryAudit.GradientDesign design = CanaryAudit.gradientDesign(template, train,
                    CanaryAudit.inclusionBits(M, new SplittableRandom(noiseFree ? 21 : 22)), 23);
            org.dpdl4j.tuning.DpSgdMechanism mechanism = builder.gradientCanaries(design.canaries(1.0)).build();
            org.dpdl4j.tuning.RandomSearchTuner tuner = new org.dpdl4j.tuning.RandomSearchTuner(
                    org.dpdl4j.accounting.RepetitionDistribution.pointMass(2), 5, 1, false);
            org.dpdl4j.tuning.DpSgdMechanism unscaled = mechanism;
            double sigma = NoiseCalibration.smallestNoise(x -> tuner.event(space, unscaled.withNoiseMultiplier(x)), claim, DELTA,
                    RdpAccountant.standard(), 1e-3);
            org.dpdl4j.tuning.DpSgdMechanism run = noiseFree ? mechanism.nonPrivateCopy().withNoiseMultiplier(0)
                    : mechanism.withNoiseMultiplier(sigma);
            org.dpdl4j.tuning.Release release = tuner.tune(space, run, null, org.dpdl4j.tuning.TuningListener.NONE).release();
            double[] scores = design.scores(run.network(release.candidate(), 0).params(), release.model().params());
            double lb = OneRunAudit.audit(scores, design.included(), DELTA, 0.95).epsilonLowerBound();
            if (noiseFree) {
                assertTrue(lb > claim, "trials without noise claiming the tuning's epsilon " + claim + ": lower bound " + lb);
            } else {
                assertTrue(lb <= claim, "honest tuning at epsilon " + claim + ": lower bound " + lb);
            }
        }
    }

    /**
     * With augmentation multiplicity the gradient canaries sit on inputs that no copy can light: the quiet set is
     * exactly the inputs that are 0 in every one of 600 drawn copies of each image (brute force: all 25 shifts, or 50
     * with mirrors, are drawn), so it is neither too large (a copy lights a chosen input) nor needlessly small; and so
     * on three-channel 7×11 images lit on their borders, with shifts of 1 and 3 (3,000 copies: up to 98 transforms).
     */
    @Test
    void quietInputsAreZeroInEveryAugmentedCopy() {
        int h = 28, w = 28;
        org.nd4j.linalg.api.ndarray.INDArray x = org.nd4j.linalg.factory.Nd4j.zeros(org.nd4j.linalg.api.buffer.DataType.FLOAT, 3, h * w);
        x.putScalar(0, 14 * w + 14, 1);
        x.putScalar(1, 14 * w + 14, 0.5);
        x.putScalar(2, 3 * w + 20, -1);
        org.nd4j.linalg.api.ndarray.INDArray y = org.nd4j.linalg.factory.Nd4j.zeros(org.nd4j.linalg.api.buffer.DataType.FLOAT, 3, 10);
        y.putScalar(0, 1, 1);
        y.putScalar(1, 2, 1);
        y.putScalar(2, 3, 1);
        LabeledData lit = new LabeledData(x, y, 1, h, w);
        assertEquals(h * w - 2, count(CanaryAudit.quietInputs(lit, null)));
        int[] expected = {h * w - 2 * 25, h * w - 30 - 2 * 25}; // shifts: two 5x5 windows; mirrored too: (14,14) and (14,13) overlap
        int i = 0;
        for (boolean flips : new boolean[]{false, true}) {
            org.dpdl4j.datasets.ImageAugmentation augmentation = new org.dpdl4j.datasets.ImageAugmentation(1, h, w, 2, flips);
            boolean[] quiet = CanaryAudit.quietInputs(lit, augmentation);
            assertEquals(expected[i++], count(quiet), "flips " + flips);
            double[] reached = org.nd4j.linalg.ops.transforms.Transforms.abs(augmentation.copies(x, 600, 7), true).max(0).toDoubleVector();
            for (int j = 0; j < quiet.length; j++) {
                assertEquals(quiet[j], reached[j] == 0, "input " + j + ", flips " + flips);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> CanaryAudit.quietInputs(lit,
                new org.dpdl4j.datasets.ImageAugmentation(3, 32, 32, 4, true)));
        // three channels, a non-square image, lit pixels on the borders: the same brute force
        java.util.Random random = new java.util.Random(11);
        int c = 3, hh = 7, ww = 11;
        org.nd4j.linalg.api.ndarray.INDArray images = org.nd4j.linalg.factory.Nd4j.zeros(org.nd4j.linalg.api.buffer.DataType.FLOAT, 2, c * hh * ww);
        int[][] border = {{0, 0, 0}, {1, hh - 1, ww - 1}, {2, 0, ww - 1}, {0, hh - 1, 3}};
        for (int[] p : border) {
            images.putScalar(0, (p[0] * hh + p[1]) * ww + p[2], 1);
        }
        for (int k = 0; k < 3; k++) {
            images.putScalar(1, random.nextInt(c * hh * ww), 0.5);
        }
        LabeledData edges = new LabeledData(images, y.get(org.nd4j.linalg.indexing.NDArrayIndex.interval(0, 2),
                org.nd4j.linalg.indexing.NDArrayIndex.all()), c, hh, ww);
        for (int shift : new int[]{1, 3}) {
            for (boolean flips : new boolean[]{false, true}) {
                org.dpdl4j.datasets.ImageAugmentation augmentation = new org.dpdl4j.datasets.ImageAugmentation(c, hh, ww, shift, flips);
                boolean[] quiet = CanaryAudit.quietInputs(edges, augmentation);
                double[] reached = org.nd4j.linalg.ops.transforms.Transforms.abs(augmentation.copies(images, 3000, 13), true).max(0)
                        .toDoubleVector();
                int quietCount = 0;
                for (int j = 0; j < quiet.length; j++) {
                    assertEquals(quiet[j], reached[j] == 0, "input " + j + ", shift " + shift + ", flips " + flips);
                    quietCount += quiet[j] ? 1 : 0;
                }
                assertTrue(quietCount > 0 && quietCount < c * hh * ww, "shift " + shift + ", flips " + flips + ": " + quietCount);
            }
        }
    }

    private static int count(boolean[] b) {
        int n = 0;
        for (boolean v : b) {
            n += v ? 1 : 0;
        }
        return n;
    }

    /**
     * An audit of data read by index is the audit of the same data in memory: input canaries appended as the last indices
     * of packed shards and gradient canaries over them give the same scores, bit for bit, as over the in-memory copy.
     */
    @Test
    void shardsAreAuditedAsMemoryIs(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) {
        LabeledData small = train.randomSubset(300, 5);
        org.dpdl4j.datasets.PackedShards.pack(small, tmp.resolve("s"), 128);
        try (var shards = org.dpdl4j.datasets.PackedShards.open(tmp.resolve("s"))) {
            for (CanaryAudit.Kind kind : CanaryAudit.Kind.values()) {
                double[][] scores = new double[2][];
                for (int i = 0; i < 2; i++) {
                    MultiLayerNetwork net = Models.mlp(ModelOptions.mnist().withUpdater(new Sgd(0.5)).withSeed(6));
                    DpSgdConfig cfg = DpSgdConfig.builder().samplingRate(0.2).noiseMultiplier(0.5).clipNorm(1.0).steps(10).delta(DELTA)
                            .seed(7).build();
                    scores[i] = CanaryAudit.run(net, i == 0 ? small : shards, train.randomSubset(100, 9), cfg, kind, 40, 1.0, 0.95,
                            new SplittableRandom(8)).scores();
                }
                org.junit.jupiter.api.Assertions.assertArrayEquals(scores[0], scores[1], kind + " canaries");
            }
        }
    }
}
