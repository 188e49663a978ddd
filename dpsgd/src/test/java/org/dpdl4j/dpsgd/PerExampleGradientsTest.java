package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.BatchNormalization;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.PoolingType;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.dpdl4j.models.TemperedSigmoid;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Sgd;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * Per-example gradients, norms and clipped sums against DL4J's own backpropagation run one example
 * at a time (an independent implementation), in float64, for every model and supported layer type.
 */
class PerExampleGradientsTest {
    private static final double TOL = 1e-10;

    static Stream<Arguments> networks() {
        ModelOptions mnist = ModelOptions.mnist().withDataType(DataType.DOUBLE).withSeed(7);
        ModelOptions cifar = ModelOptions.cifar10().withDataType(DataType.DOUBLE).withSeed(7);
        return Stream.of(
                Arguments.of("standard-cnn relu", Models.standardCnn(mnist.withActivation(Activation.RELU.getActivationFunction()))),
                Arguments.of("standard-cnn tanh", Models.standardCnn(mnist.withActivation(Activation.TANH.getActivationFunction()))),
                Arguments.of("standard-cnn tempered sigmoid", Models.standardCnn(mnist.withActivation(new TemperedSigmoid(2, 2, 1)))),
                Arguments.of("all-conv", Models.allConvNet(mnist.withActivation(Activation.TANH.getActivationFunction()))),
                Arguments.of("cifar-cnn", Models.cifarCnn(cifar)),
                Arguments.of("mlp", Models.mlp(mnist.withActivation(new TemperedSigmoid(1.5, 3, 0.5)))),
                Arguments.of("avg-pool, dilation, no bias, sigmoid", oddLayers(DataType.DOUBLE)),
                Arguments.of("scatternet-linear", Models.scatterNetLinear(mnist)),
                Arguments.of("scatternet-linear, fixed feature statistics", Models.scatterNetLinear(mnist.withFeatures(someStatistics()))),
                Arguments.of("scatternet-cnn", Models.scatterNetCnn(mnist.withActivation(Activation.TANH.getActivationFunction()))));
    }

    /** Arbitrary per-channel statistics for the 81 channels of a ScatterNet on MNIST. */
    static org.dpdl4j.models.FeatureStatistics someStatistics() {
        double[] mean = new double[81];
        double[] variance = new double[81];
        for (int c = 0; c < 81; c++) {
            mean[c] = 0.01 * (c % 7);
            variance[c] = c % 5 == 0 ? 0 : 1e-3 * (c % 11);
        }
        return new org.dpdl4j.models.FeatureStatistics(mean, variance);
    }

    /** Average pooling with padding, a dilated convolution, a bias-free layer and sigmoid. */
    static MultiLayerNetwork oddLayers(DataType type) {
        var conf = new NeuralNetConfiguration.Builder().seed(3).dataType(type).updater(new Sgd(0.1))
                .weightInit(WeightInit.XAVIER).convolutionMode(ConvolutionMode.Truncate).list()
                .layer(new ConvolutionLayer.Builder(3, 3).stride(1, 1).padding(2, 2).dilation(2, 2).nOut(4)
                        .activation(Activation.SIGMOID).build())
                .layer(new SubsamplingLayer.Builder(PoolingType.AVG).kernelSize(3, 3).stride(2, 2).padding(1, 1).build())
                .layer(new ConvolutionLayer.Builder(2, 2).stride(1, 1).nOut(3).hasBias(false).activation(Activation.TANH).build())
                .layer(new DenseLayer.Builder().nOut(7).hasBias(false).activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.NEGATIVELOGLIKELIHOOD).nOut(5)
                        .activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(11, 9, 2)).build();
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("networks")
    void matchesDl4jBatchOfOneLoop(String name, MultiLayerNetwork net) {
        int b = 5;
        INDArray[] xy = randomBatch(net, DataType.DOUBLE, b, 11);
        INDArray x = xy[0];
        INDArray y = xy[1];
        PerExampleGradients pg = new PerExampleGradients(net);

        // forward pass equals DL4J's inference
        assertClose(net.output(x), pg.output(x), name + " output");

        pg.compute(x, y);
        INDArray norms = org.nd4j.linalg.ops.transforms.Transforms.sqrt(pg.squaredNorms(), true);
        INDArray sumOfSingles = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        for (int i = 0; i < b; i++) {
            INDArray reference = dl4jGradient(net, x.getRow(i, true), y.getRow(i, true));
            sumOfSingles.addi(reference);
            INDArray ours = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
            INDArray oneHot = Nd4j.zeros(DataType.DOUBLE, b);
            oneHot.putScalar(i, 1.0);
            pg.addWeightedSum(oneHot, ours);
            assertClose(reference, ours, name + " gradient of example " + i);
            double refNorm = reference.norm2Number().doubleValue();
            assertEquals(refNorm, norms.getDouble(i), TOL * refNorm, name + " norm of example " + i);
        }
        // unclipped sum equals DL4J's batch gradient (a sum over the batch)
        INDArray batch = dl4jGradient(net, x, y);
        assertClose(sumOfSingles, batch, name + " DL4J batch vs sum of singles");
        INDArray ours = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        pg.addWeightedSum(Nd4j.ones(DataType.DOUBLE, b), ours);
        assertClose(batch, ours, name + " unclipped sum");
        // the non-private mode (batch backward pass, no per-example state) gives the same batch gradient
        INDArray nonPrivate = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        pg.addBatchGradient(x, y, new int[]{0, 1, 2, 3, 4}, nonPrivate);
        assertClose(batch, nonPrivate, name + " non-private batch gradient");
        pg.compute(x, y); // addBatchGradient cleared the per-example state

        // clipping: each clipped per-example gradient has norm <= C(1 + 1e-6), and unclipped ones are untouched
        double c = norms.medianNumber().doubleValue();
        INDArray factors = pg.clipFactors(c);
        for (int i = 0; i < b; i++) {
            double clipped = factors.getDouble(i) * norms.getDouble(i);
            assertTrue(clipped <= c * (1 + 1e-6), name + " clipped norm " + clipped + " > C = " + c);
            if (norms.getDouble(i) < c * 0.999) {
                assertEquals(1.0, factors.getDouble(i), 0.0);
            } else {
                assertEquals(Math.min(c, norms.getDouble(i)), clipped, 1e-9 * c);
            }
        }
    }

    /**
     * An example whose gradient is NaN (here: NaN pixels) contributes exactly nothing to the clipped
     * sum, and the step goes on as if it had not been sampled — no data-dependent failure.
     */
    @org.junit.jupiter.api.Test
    void nonFiniteExampleContributesNothing() {
        MultiLayerNetwork net = Models.standardCnn(ModelOptions.mnist().withDataType(DataType.DOUBLE).withSeed(5));
        PerExampleGradients pg = new PerExampleGradients(net);
        Nd4j.getRandom().setSeed(3);
        INDArray x = Nd4j.rand(DataType.DOUBLE, 6, 784);
        x.getRow(2).assign(Double.NaN);
        INDArray y = Nd4j.zeros(DataType.DOUBLE, 6, 10);
        for (int i = 0; i < 6; i++) {
            y.putScalar(i, i, 1.0);
        }
        INDArray withPoison = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        pg.addClippedSum(x, y, new int[]{0, 1, 2, 3, 4, 5}, 0.5, withPoison);
        INDArray without = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        pg.addClippedSum(x, y, new int[]{0, 1, 3, 4, 5}, 0.5, without);
        assertClose(without, withPoison, "clipped sum with a NaN example");
        assertTrue(Double.isFinite(withPoison.sumNumber().doubleValue()), "no NaN or infinity reaches the sum");
    }

    /**
     * DP-SGD's chunk: uncapped for a small network, ⌊256 MiB / m⌋ rows for cifar-cnn with m DL4J's per-example estimate
     * (formed here from the image input type, not the engine's flat one), about half as many in float64; a batch is split
     * by the cap (the non-private mode's is not), and the split gives the clipped sum of one unsplit chunk.
     */
    @org.junit.jupiter.api.Test
    void dpChunkBoundsTheMemoryEstimateAndLeavesTheSumUnchanged() {
        assertEquals(512, ChunkRows.of(Models.standardCnn(ModelOptions.mnist()), 784, DataType.FLOAT, 512));
        assertEquals(512, ChunkRows.of(Models.scatterNetLinear(ModelOptions.mnist()), 784, DataType.FLOAT, 512),
                "no estimate from a flat input for a first layer that needs the image: the physical batch");
        MultiLayerNetwork cifar = Models.cifarCnn(ModelOptions.cifar10().withDataType(DataType.DOUBLE).withSeed(4));
        var report = cifar.getLayerWiseConfigurations().getMemoryReport(InputType.convolutional(32, 32, 3));
        var mode = org.deeplearning4j.nn.conf.memory.MemoryUseMode.TRAINING;
        var cache = org.deeplearning4j.nn.conf.CacheMode.NONE;
        int floatRows = ChunkRows.of(cifar, 3072, DataType.FLOAT, 512);
        int doubleRows = ChunkRows.of(cifar, 3072, DataType.DOUBLE, 512);
        assertTrue(doubleRows <= floatRows / 2 + 1 && doubleRows >= floatRows / 2 - 1, floatRows + " / " + doubleRows);
        assertEquals(10, ChunkRows.of(cifar, 3072, DataType.FLOAT, 10), "a physical batch below the cap");
        var e = assertThrows(IllegalArgumentException.class, () -> ChunkRows.of(cifar, 3072, DataType.FLOAT, 0));
        assertTrue(e.getMessage().contains("physicalBatchSize = 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ChunkRows.of(cifar, 0, DataType.FLOAT, 8));
        assertTrue(e.getMessage().contains("inputWidth = 0"), e.getMessage());
        for (DataType type : new DataType[]{DataType.FLOAT, DataType.DOUBLE}) {
            long m = report.getTotalMemoryBytes(2, mode, cache, type) - report.getTotalMemoryBytes(1, mode, cache, type);
            int rows = ChunkRows.of(cifar, 3072, type, 512);
            assertTrue(rows * m <= ChunkRows.DP_CHUNK_BYTES && (rows + 1) * m > ChunkRows.DP_CHUNK_BYTES,
                    type + ": " + rows + " rows of " + m + " bytes");
            assertTrue(rows >= 16 && rows <= 128, type + ": " + rows);
            assertEquals(rows, ChunkRows.of(cifar, 3072, type, rows), "never above the physical batch");
        }
        int rows = ChunkRows.of(cifar, 3072, DataType.DOUBLE, 512);
        int b = rows + 7;
        INDArray[] xy = randomBatch(cifar, DataType.DOUBLE, b, 13);
        int[] all = java.util.stream.IntStream.range(0, b).toArray();
        INDArray split = Nd4j.zeros(DataType.DOUBLE, 1, cifar.numParams());
        PerExampleGradients engine = new PerExampleGradients(cifar);
        double splitLoss = engine.clippedSum(xy[0], xy[1], all, 0.7, 512, split);
        assertEquals(2, engine.lastChunks(), "the clipped sum of " + b + " rows ran in chunks of at most " + rows);
        INDArray nonPrivate = Nd4j.zeros(DataType.DOUBLE, 1, cifar.numParams());
        engine.clippedSum(xy[0], xy[1], all, Double.POSITIVE_INFINITY, 512, nonPrivate);
        assertEquals(1, engine.lastChunks(), "the non-private mode is not capped");
        INDArray whole = Nd4j.zeros(DataType.DOUBLE, 1, cifar.numParams());
        double wholeLoss = new PerExampleGradients(cifar).addClippedSum(xy[0], xy[1], all, 0.7, whole);
        assertClose(whole, split, "clipped sum in chunks of " + rows + " and " + (b - rows) + " against one chunk of " + b);
        assertEquals(wholeLoss, splitLoss, 1e-10 * Math.abs(wholeLoss));
    }

    @org.junit.jupiter.api.Test
    void rejectsBatchNormalizationNamingTheLayer() {
        var conf = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(4).build())
                .layer(new BatchNormalization.Builder().build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(3)).build();
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        var e = assertThrows(IllegalArgumentException.class, () -> new PerExampleGradients(net));
        assertTrue(e.getMessage().contains("layer 1") && e.getMessage().contains("BatchNormalization"), e.getMessage());
    }

    /** {features uniform on [0, 1) [b, inputs], one-hot labels of classes (i·3) mod classes} for net. */
    static INDArray[] randomBatch(MultiLayerNetwork net, DataType type, int b, long seed) {
        Nd4j.getRandom().setSeed(seed);
        INDArray x = Nd4j.rand(type, b, inputSize(net));
        int classes = (int) net.getLayer(net.getnLayers() - 1).getParam("W").size(1);
        INDArray y = Nd4j.zeros(type, b, classes);
        for (int i = 0; i < b; i++) {
            y.putScalar(i, (i * 3) % classes, 1.0);
        }
        return new INDArray[]{x, y};
    }

    private static long inputSize(MultiLayerNetwork net) {
        var pre = net.getLayerWiseConfigurations().getInputPreProcess(0);
        if (pre instanceof org.deeplearning4j.nn.conf.preprocessor.FeedForwardToCnnPreProcessor f) {
            return f.getNumChannels() * f.getInputHeight() * f.getInputWidth();
        }
        if (net.getLayer(0).conf().getLayer() instanceof org.dpdl4j.models.Scattering sc) {
            return sc.getInputChannels() * sc.getInputHeight() * sc.getInputWidth();
        }
        return net.getLayer(0).getParam("W").size(0);
    }

    private static INDArray dl4jGradient(MultiLayerNetwork net, INDArray x, INDArray y) {
        net.setInput(x);
        net.setLabels(y);
        net.computeGradientAndScore();
        return net.gradient().gradient().dup().reshape(1, net.numParams());
    }

    private static void assertClose(INDArray expected, INDArray actual, String what) {
        double scale = Math.max(expected.amaxNumber().doubleValue(), 1e-300);
        double diff = expected.reshape(expected.length()).sub(actual.reshape(actual.length())).amaxNumber().doubleValue();
        assertTrue(diff <= TOL * scale, what + ": max abs difference " + diff + " relative " + diff / scale);
    }
}
