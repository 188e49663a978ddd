package org.dpdl4j.models;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Path;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

class ModelsTest {
    @TempDir
    Path tmp;

    @Test
    void standardCnnHasThePublishedParameterCount() {
        assertEquals(26_010, Models.standardCnn(ModelOptions.mnist()).numParams());
    }

    @Test
    void everyModelMapsItsInputToClassProbabilities() {
        for (String name : new String[]{"standard-cnn", "all-conv", "mlp"}) {
            MultiLayerNetwork net = (MultiLayerNetwork) Models.byName(name, ModelOptions.mnist());
            INDArray p = net.output(Nd4j.rand(DataType.FLOAT, 3, 784));
            assertArrayEquals(new long[]{3, 10}, p.shape(), name);
            assertEquals(3.0, p.sumNumber().doubleValue(), 1e-4, name + ": rows are distributions");
        }
        MultiLayerNetwork cifar = Models.cifarCnn(ModelOptions.cifar10());
        assertArrayEquals(new long[]{2, 10}, cifar.output(Nd4j.rand(DataType.FLOAT, 2, 3072)).shape());
        assertEquals(320 + 9_248 + 18_496 + 36_928 + 36_928 + 31_370, Models.allConvNet(ModelOptions.mnist()).numParams());
        var e = assertThrows(IllegalArgumentException.class, () -> Models.byName("resnet", ModelOptions.mnist()));
        assertTrue(e.getMessage().contains("resnet") && e.getMessage().contains("standard-cnn"));
        var d = assertThrows(IllegalArgumentException.class, () -> Models.byName("wrn-15-4", ModelOptions.mnist()));
        assertTrue(d.getMessage().contains("D = 15"), d.getMessage());
    }

    /** The count worked out by hand in the Javadoc's terms (and PyTorch's WRN-16-4 with GroupNorm of the benchmark). */
    @Test
    void wideResNet16x4HasTheExpectedParameterCountAndShape() {
        org.deeplearning4j.nn.graph.ComputationGraph wrn = (org.deeplearning4j.nn.graph.ComputationGraph)
                Models.byName("wrn-16-4", ModelOptions.cifar10());
        long conv0 = 3 * 16 * 9;
        long g1 = (2 * 16 + 16 * 64 * 9 + 2 * 64 + 64 * 64 * 9 + 16 * 64) + (2 * 64 + 64 * 64 * 9 + 2 * 64 + 64 * 64 * 9);
        long g2 = (2 * 64 + 64 * 128 * 9 + 2 * 128 + 128 * 128 * 9 + 64 * 128) + (2 * 128 + 2 * 128 * 128 * 9 + 2 * 128);
        long g3 = (2 * 128 + 128 * 256 * 9 + 2 * 256 + 256 * 256 * 9 + 128 * 256) + (2 * 256 + 2 * 256 * 256 * 9 + 2 * 256);
        assertEquals(conv0 + g1 + g2 + g3 + 2 * 256 + 256 * 10 + 10, wrn.numParams());
        assertEquals(2_748_890, wrn.numParams());
        org.deeplearning4j.nn.graph.ComputationGraph small = (org.deeplearning4j.nn.graph.ComputationGraph)
                Models.byName("small-resnet", ModelOptions.mnist());
        INDArray p = small.outputSingle(Nd4j.rand(DataType.FLOAT, 2, 784));
        assertArrayEquals(new long[]{2, 10}, p.shape());
        assertEquals(2.0, p.sumNumber().doubleValue(), 1e-4);
    }

    /**
     * Tramèr &amp; Boneh's ScatterNet models: parameter counts by hand, output() is the transform followed by the head,
     * the model survives ModelSerializer, and DL4J's own fit() trains it (no gradient flows into the transform).
     */
    @Test
    void scatterNetsAreOrdinaryDl4jModels() throws Exception {
        MultiLayerNetwork linear = Models.scatterNetLinear(ModelOptions.mnist().withSeed(4));
        assertEquals(2 * 81 + 81 * 49 * 10 + 10, linear.numParams());
        MultiLayerNetwork cnn = Models.scatterNetCnn(ModelOptions.mnist().withSeed(4));
        assertEquals(2 * 81 + (81 * 16 * 9 + 16) + (16 * 32 * 9 + 32) + (512 * 32 + 32) + (32 * 10 + 10), cnn.numParams());
        assertEquals(33_066 + 162, cnn.numParams());
        INDArray x = Nd4j.rand(DataType.FLOAT, 3, 784);
        INDArray features = new Scattering2D(28, 28, 2, 8).transform(x.reshape(3, 1, 28, 28));
        INDArray head = linear.feedForwardToLayer(1, x, false).get(2); // the GroupNorm layer's output
        INDArray expectedHead = GroupNormMath.normalise(GroupNormMath.asChannels(features), 27, 1e-5)[0].reshape(3, 81, 7, 7);
        assertTrue(head.sub(expectedHead).amaxNumber().doubleValue() < 1e-4, "scattering then GroupNorm");
        Path file = tmp.resolve("scatternet.zip");
        ModelSerializer.writeModel(cnn, file.toFile(), false);
        MultiLayerNetwork restored = ModelSerializer.restoreMultiLayerNetwork(file.toFile(), false);
        assertEquals(cnn.output(x), restored.output(x), "the restored model computes the same");
        INDArray before = cnn.params().dup();
        INDArray y = Nd4j.zeros(DataType.FLOAT, 3, 10);
        y.putScalar(0, 1, 1).putScalar(1, 4, 1).putScalar(2, 9, 1);
        cnn.fit(x, y);
        assertTrue(!before.equals(cnn.params()), "DL4J's fit updates the head");
    }

    /**
     * With fixed feature statistics the ScatterNet has no GroupNorm, its transform's output is (x − μ_c)/√(v_c + 1e-5)
     * channel by channel, 0 where v_c = 0 (computed here by hand from the transform), and the statistics survive
     * ModelSerializer.
     */
    @Test
    void scatterNetWithFixedFeatureStatistics() throws Exception {
        double[] mean = new double[81];
        double[] variance = new double[81];
        for (int c = 0; c < 81; c++) {
            mean[c] = 0.02 * Math.sin(c);
            variance[c] = c == 3 ? 0 : 1e-3 * (1 + c % 4);
        }
        FeatureStatistics stats = new FeatureStatistics(mean, variance);
        MultiLayerNetwork linear = Models.scatterNetLinear(ModelOptions.mnist().withSeed(4).withFeatures(stats));
        assertEquals(81 * 49 * 10 + 10, linear.numParams());
        assertEquals(2, linear.getnLayers());
        INDArray x = Nd4j.rand(DataType.FLOAT, 3, 784);
        double[] raw = new Scattering2D(28, 28, 2, 8).transform(x.reshape(3, 1, 28, 28).castTo(DataType.DOUBLE))
                .reshape('c', new long[]{3 * 81 * 49}).toDoubleVector();
        double[] got = linear.feedForwardToLayer(0, x, false).get(1).castTo(DataType.DOUBLE).reshape('c', new long[]{3 * 81 * 49})
                .toDoubleVector();
        for (int i = 0; i < raw.length; i++) {
            int c = (i / 49) % 81;
            double expected = c == 3 ? 0 : (raw[i] - mean[c]) / Math.sqrt(variance[c] + 1e-5); // a channel of variance 0 is zeroed
            assertEquals(expected, got[i], 1e-4 * Math.max(1, Math.abs(expected)), "entry " + i);
        }
        Path file = tmp.resolve("scatternet-stats.zip");
        ModelSerializer.writeModel(linear, file.toFile(), false);
        MultiLayerNetwork restored = ModelSerializer.restoreMultiLayerNetwork(file.toFile(), false);
        assertEquals(linear.output(x), restored.output(x), "the restored model normalises the same");
        var e = assertThrows(IllegalArgumentException.class, () -> new FeatureStatistics(new double[]{0}, new double[]{-1}));
        assertTrue(e.getMessage().contains("variance"), e.getMessage());
        var e2 = assertThrows(IllegalArgumentException.class, () -> Models.scatterNetLinear(ModelOptions.mnist().withFeatures(
                new FeatureStatistics(new double[]{0}, new double[]{1}))));
        assertTrue(e2.getMessage().contains("feature statistics for 1 channels") && e2.getMessage().contains("81"), e2.getMessage());
    }

    /** φ(x) = s·σ(Tx) − o; (2, 2, 1) is tanh; the derivative matches a central finite difference. */
    @Test
    void temperedSigmoidValuesAndDerivative() {
        INDArray x = Nd4j.createFromArray(-3.0, -0.5, 0.0, 0.7, 2.5);
        INDArray tanh = new TemperedSigmoid().getActivation(x.dup(), false);
        for (int i = 0; i < 5; i++) {
            assertEquals(Math.tanh(x.getDouble(i)), tanh.getDouble(i), 1e-12);
        }
        TemperedSigmoid t = new TemperedSigmoid(1.5, 3, 0.25);
        INDArray grad = t.backprop(x.dup(), Nd4j.onesLike(x)).getFirst();
        for (int i = 0; i < 5; i++) {
            double h = 1e-6;
            double xp = x.getDouble(i) + h;
            double xm = x.getDouble(i) - h;
            double fd = (1.5 / (1 + Math.exp(-3 * xp)) - 1.5 / (1 + Math.exp(-3 * xm))) / (2 * h);
            assertEquals(fd, grad.getDouble(i), 1e-7);
        }
        var e = assertThrows(IllegalArgumentException.class, () -> new TemperedSigmoid(0, 1, 0));
        assertTrue(e.getMessage().contains("scale"));
    }

    @Test
    void savedModelWithTemperedSigmoidRestoresIdentically() throws Exception {
        MultiLayerNetwork net = Models.standardCnn(ModelOptions.mnist().withActivation(new TemperedSigmoid(2, 1.5, 1)));
        File f = tmp.resolve("m.zip").toFile();
        ModelSerializer.writeModel(net, f, true);
        MultiLayerNetwork back = ModelSerializer.restoreMultiLayerNetwork(f);
        INDArray x = Nd4j.rand(DataType.FLOAT, 4, 784);
        assertEquals(net.output(x), back.output(x));
    }
}
