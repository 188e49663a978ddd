package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.datasets.ImageAugmentation;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Augmentation multiplicity: each example's gradient is the mean of its k copies' gradients, clipped to C as a whole.
 * Checked against the mean formed from the engine's per-row gradients and clipped by hand, for networks whose layers
 * all have grouped norms (dense and output layers from Gram matrices; GroupNorm and convolutions, materialised or
 * streamed, from summed per-example gradients) and for one that has not (a PReLU: one example at a time); one example's contribution has norm at most C (and C when clipped) for every k.
 */
class AugmentationMultiplicityTest {
    private static final int N = 5;

    private static INDArray[] data(int n, int k, int inputs, int classes, DataType type, double scale) {
        Nd4j.getRandom().setSeed(17);
        INDArray x = Nd4j.rand(DataType.DOUBLE, (long) n * k, inputs).muli(scale).castTo(type);
        INDArray y = Nd4j.zeros(type, n, classes);
        for (int i = 0; i < n; i++) {
            y.putScalar(i, (i * 7) % classes, 1.0);
        }
        return new INDArray[]{x, y};
    }

    /** (1/k) Σ_j g_ij of example i, from the engine's per-row gradients summed with unit weights. */
    private static INDArray meanOfCopies(Model net, INDArray x, INDArray y, int i, int k) {
        PerExampleGradients g = PerExampleGradients.of(net);
        int[] rows = new int[k];
        int[] labelRows = new int[k];
        for (int j = 0; j < k; j++) {
            rows[j] = i * k + j;
            labelRows[j] = i;
        }
        g.compute(Nd4j.pullRows(x, 1, rows), Nd4j.pullRows(y, 1, labelRows));
        INDArray sum = Nd4j.zeros(net.params().dataType(), 1, net.numParams());
        g.addWeightedSum(Nd4j.ones(DataType.DOUBLE, k), sum);
        g.clear();
        return sum.divi(k);
    }

    /** clippedSum with k copies vs Σ_i min(1, C/‖ḡ_i‖)·ḡ_i with C at the median ‖ḡ_i‖ (some clipped, some not). */
    private static void assertClippedMeans(Model net, INDArray x, INDArray y, int k, double tolerance, String what) {
        assertClippedMeans(PerExampleGradients.of(net), x, y, k, tolerance, what);
    }

    /** The same, with the clipped sum from {@code engine} (e.g. one whose convolutions stream their gradients). */
    private static void assertClippedMeans(PerExampleGradients engine, INDArray x, INDArray y, int k, double tolerance, String what) {
        Model net = engine.network();
        INDArray[] means = new INDArray[N];
        double[] norms = new double[N];
        for (int i = 0; i < N; i++) {
            means[i] = meanOfCopies(net, x, y, i, k);
            norms[i] = means[i].castTo(DataType.DOUBLE).norm2Number().doubleValue();
        }
        double c = java.util.Arrays.stream(norms).sorted().toArray()[N / 2];
        INDArray expected = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        for (int i = 0; i < N; i++) {
            expected.addi(means[i].castTo(DataType.DOUBLE).muli(Math.min(1, c / norms[i])));
        }
        INDArray actual = Nd4j.zeros(net.params().dataType(), 1, net.numParams());
        engine.clippedSum(x, y, new int[]{3, 0, 4, 1, 2}, c, 2, actual, k);
        double error = actual.castTo(DataType.DOUBLE).sub(expected).norm2Number().doubleValue();
        assertTrue(error <= tolerance * expected.norm2Number().doubleValue(), what + ", k = " + k + ": error " + error
                + " against " + expected.norm2Number());
    }

    @Test
    void theMeanOfCopiesIsClippedAsAWhole() {
        ModelOptions o = ModelOptions.mnist().withDataType(DataType.DOUBLE).withSeed(3);
        for (int k : new int[]{2, 3}) {
            INDArray[] images = data(N, k, 784, 10, DataType.DOUBLE, 1);
            assertClippedMeans(Models.scatterNetLinear(o), images[0], images[1], k, 1e-9, "scatternet-linear (GroupNorm, dense)");
            assertClippedMeans(Models.mlp(o), images[0], images[1], k, 1e-9, "mlp (dense)");
            assertClippedMeans(Models.standardCnn(o), images[0], images[1], k, 1e-9, "standard-cnn (convolutions, dense)");
            INDArray[] small = data(N, k, 72, 3, DataType.DOUBLE, 1);
            assertClippedMeans(GraphExactnessTest.graph(DataType.DOUBLE, null), small[0], small[1], k, 1e-9,
                    "residual graph with a PReLU (the fallback: one example at a time)");
            PerExampleGradients streamed = PerExampleGradients.of(Models.standardCnn(ModelOptions.mnist().withSeed(3)));
            streamed.kernels(ConvKernel.class).forEach(c -> c.streamAbove = 0);
            INDArray[] images32 = data(N, k, 784, 10, DataType.FLOAT, 1);
            assertClippedMeans(streamed, images32[0], images32[1], k, 1e-4, "standard-cnn in float32, convolutions streamed");
            PerExampleGradients ghost = PerExampleGradients.of(Models.standardCnn(ModelOptions.mnist().withSeed(3)));
            ghost.kernels(ConvKernel.class).forEach(c -> c.alwaysGhost = true);
            assertClippedMeans(ghost, images32[0], images32[1], k, 1e-4, "standard-cnn in float32, convolutions on ghost norms");
        }
    }

    @Test
    void oneCopyIsTheUsualClippedSum() {
        MultiLayerNetwork net = Models.mlp(ModelOptions.mnist().withSeed(4));
        INDArray[] xy = data(N, 1, 784, 10, DataType.FLOAT, 1);
        INDArray usual = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        INDArray one = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        PerExampleGradients.of(net).clippedSum(xy[0], xy[1], new int[]{1, 3}, 0.5, 4, usual);
        PerExampleGradients.of(net).clippedSum(xy[0], xy[1], new int[]{1, 3}, 0.5, 4, one, 1);
        assertEquals(usual, one);
    }

    /** One example, its copies pushed far apart: its contribution is C (clipped) in float32, never above, for each k. */
    @Test
    void oneExamplesContributionIsAtMostC() {
        double c = 0.05;
        for (Model net : new Model[]{Models.scatterNetLinear(ModelOptions.mnist().withSeed(6)), Models.mlp(ModelOptions.mnist().withSeed(6))}) {
            for (int k : new int[]{1, 2, 4, 8}) {
                INDArray[] xy = data(N, k, 784, 10, DataType.FLOAT, 30);
                for (int i = 0; i < N; i++) {
                    INDArray sum = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
                    PerExampleGradients.of(net).clippedSum(xy[0], xy[1], new int[]{i}, c, 3, sum, k);
                    double norm = sum.castTo(DataType.DOUBLE).norm2Number().doubleValue();
                    assertTrue(norm <= c, "k = " + k + ", example " + i + ": norm " + norm + " > C");
                    assertTrue(norm >= c * (1 - 1e-4), "k = " + k + ", example " + i + ": clipped to " + norm + ", not C");
                }
            }
        }
    }

    /** A run's session with stored copies (two workers, through the scattering prefix) sums what the engine sums on them. */
    @Test
    void aSessionStoresTheCopiesOfEachExample() {
        MultiLayerNetwork net = Models.scatterNetLinear(ModelOptions.mnist().withSeed(5));
        INDArray[] xy = data(11, 1, 784, 10, DataType.FLOAT, 1);
        LabeledData train = new LabeledData(xy[0], xy[1], 1, 28, 28);
        DpSgdConfig config = DpSgdConfig.builder().samplingRate(0.5).noiseMultiplier(1).clipNorm(0.3).steps(2).workers(2)
                .physicalBatchSize(4).seed(1).build();
        PoissonBatchSampler sampler = new PoissonBatchSampler(11, 0.5, 8);
        ImageAugmentation augmentation = ImageAugmentation.forDataset("fashion-mnist");
        INDArray fromSession = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        try (ClippedSums.Session session = ClippedSums.augmented(augmentation, 3).open(net, train, config, sampler)) {
            assertTrue(((LocalClippedSums.LocalSession) session).readsFixedPrefix(), "the copies' prefix output is stored");
            session.step(0, fromSession);
        }
        INDArray copies = augmentation.copies(xy[0], 3, DpSgdTrainer.derivedSeed("augmentation", 1, 0));
        INDArray expected = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        PerExampleGradients.of(net).clippedSum(copies, xy[1], sampler.batch(0), 0.3, 4, expected, 3);
        assertTrue(sampler.batch(0).length > 2, "the batch spans both workers");
        assertTrue(expected.sub(fromSession).amaxNumber().doubleValue() <= 1e-5 * expected.amaxNumber().doubleValue(),
                "session step vs the engine on the copies");
        INDArray plain = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        PerExampleGradients.of(net).clippedSum(xy[0], xy[1], sampler.batch(0), 0.3, 4, plain);
        assertTrue(plain.sub(fromSession).amaxNumber().doubleValue() > 1e-3 * plain.amaxNumber().doubleValue(),
                "the copies are augmented, not the examples themselves");
    }

    @Test
    void badSettingsAreRefusedByName() {
        MultiLayerNetwork net = Models.mlp(ModelOptions.mnist());
        INDArray[] xy = data(N, 2, 784, 10, DataType.FLOAT, 1);
        INDArray target = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        PerExampleGradients g = PerExampleGradients.of(net);
        var zero = assertThrows(IllegalArgumentException.class, () -> g.clippedSum(xy[0], xy[1], new int[]{0}, 1, 4, target, 0));
        assertTrue(zero.getMessage().contains("copies k") && zero.getMessage().contains("0"), zero.getMessage());
        var rows = assertThrows(IllegalArgumentException.class, () -> g.clippedSum(xy[0], xy[1], new int[]{0}, 1, 4, target, 3));
        assertTrue(rows.getMessage().contains("k = 3") && rows.getMessage().contains("10 rows"), rows.getMessage());
        var infinite = assertThrows(IllegalArgumentException.class,
                () -> g.clippedSum(xy[0], xy[1], new int[]{0}, Double.POSITIVE_INFINITY, 4, target, 2));
        assertTrue(infinite.getMessage().contains("clip norm"), infinite.getMessage());
        var k = assertThrows(IllegalArgumentException.class, () -> ClippedSums.augmented(ImageAugmentation.forDataset("mnist"), 65));
        assertTrue(k.getMessage().contains("[1, 64]") && k.getMessage().contains("65"), k.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ClippedSums.augmented(null, 2));
    }
}
