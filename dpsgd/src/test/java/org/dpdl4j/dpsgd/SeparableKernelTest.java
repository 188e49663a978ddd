package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.DepthwiseConvolution2D;
import org.deeplearning4j.nn.conf.layers.Layer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.SeparableConvolution2D;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
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
 * {@link DepthwiseKernel} and {@link SeparableKernel} (DL4J's {@code DepthwiseConvolution2D} and
 * {@code SeparableConvolution2D}) against DL4J's gradient of each example alone ({@link KernelChecks}, which also bounds
 * every clipped norm by C(1 + 10⁻⁶)): float64 within 10⁻¹⁰; float32 within 10⁻⁵ of DL4J in float64 on a copy of the
 * network (also with every convolution streaming its per-example gradients) and within 10⁻⁴ of DL4J's own float32
 * layers; the non-private mode's batch gradient against DL4J's. DL4J 1.0.0-M2.1's float32 depthwise_conv2d fails in
 * Same mode with dilation (libnd4j's oneDNN helper: "could not create a descriptor for a dilated convolution forward
 * propagation primitive"), which the engine runs, so that case is compared in float64 only. Settings: Truncate with
 * padding, Strict, Same (odd sizes, stride 2, even kernels: DL4J's asymmetric padding), strides 1 and 2, dilation,
 * depth multipliers 1 to 3, with and without bias, several activations; each layer on its kernel, not on the fallback.
 * The POM runs this class on the libnd4j ops alone too.
 */
class SeparableKernelTest {
    private static final int B = 5;

    /** A network on c × h × w images. */
    record Case(int channels, int height, int width, Layer... layers) {
        MultiLayerNetwork network(DataType type) {
            NeuralNetConfiguration.ListBuilder list = new NeuralNetConfiguration.Builder().seed(5).dataType(type)
                    .updater(new Sgd(0.1)).weightInit(WeightInit.XAVIER).list();
            for (Layer l : layers) {
                list.layer(l.clone());
            }
            list.layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build());
            MultiLayerNetwork net = new MultiLayerNetwork(list.setInputType(InputType.convolutional(height, width, channels)).build());
            net.init();
            // DL4J starts biases at 0: random ones, so that the bias paths are checked on nonzero values
            Nd4j.getRandom().setSeed(23);
            for (var layer : net.getLayers()) {
                if (layer.paramTable().containsKey("b")) {
                    INDArray b = layer.getParam("b");
                    b.assign(Nd4j.rand(DataType.DOUBLE, b.shape()).subi(0.5).castTo(type));
                }
            }
            return net;
        }

        /** Random images [B, c, h, w] in [-1, 1) and one-hot labels of 3 classes. */
        INDArray[] batch(DataType type, long seed) {
            Nd4j.getRandom().setSeed(seed);
            INDArray x = Nd4j.rand(DataType.DOUBLE, B, channels, height, width).muli(2).subi(1).castTo(type);
            INDArray y = Nd4j.zeros(type, B, 3);
            for (int i = 0; i < B; i++) {
                y.putScalar(i, (i * 2) % 3, 1.0);
            }
            return new INDArray[]{x, y};
        }
    }

    /** Name, network, and whether DL4J's own float32 layer runs it (not in Same mode with dilation, see the class comment). */
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("depthwise 3x3 m=2, bias, tanh", new Case(3, 9, 8,
                        new DepthwiseConvolution2D.Builder(3, 3).depthMultiplier(2).activation(Activation.TANH).build()), true),
                Arguments.of("depthwise Same 4x2, stride 2, 7x9 (asymmetric padding), m=1, no bias, relu", new Case(4, 7, 9,
                        new DepthwiseConvolution2D.Builder(4, 2).stride(2, 2).depthMultiplier(1).hasBias(false)
                                .convolutionMode(ConvolutionMode.Same).activation(Activation.RELU).build()), true),
                Arguments.of("depthwise 2x3, padding (1,2), stride (1,2), dilation 2, m=3, sigmoid", new Case(2, 8, 11,
                        new DepthwiseConvolution2D.Builder(2, 3).padding(1, 2).stride(1, 2).dilation(2, 2).depthMultiplier(3)
                                .activation(Activation.SIGMOID).build()), true),
                Arguments.of("depthwise 10 channels, Same with dilation 2; 4x4 stride 2 m=2", new Case(10, 9, 9,
                        new DepthwiseConvolution2D.Builder(3, 3).dilation(2, 2).convolutionMode(ConvolutionMode.Same)
                                .activation(Activation.TANH).build(),
                        new DepthwiseConvolution2D.Builder(4, 4).stride(2, 2).depthMultiplier(2).activation(Activation.TANH).build()),
                        false),
                Arguments.of("separable 3x3 m=2, bias, tanh", new Case(3, 9, 8,
                        new SeparableConvolution2D.Builder(3, 3).depthMultiplier(2).nOut(4).activation(Activation.TANH).build()), true),
                Arguments.of("separable Same 2x4, stride 2, 7x9 (asymmetric padding), m=1, no bias, relu; Same 2x2 m=2", new Case(5, 7, 9,
                        new SeparableConvolution2D.Builder(2, 4).stride(2, 2).nOut(12).hasBias(false)
                                .convolutionMode(ConvolutionMode.Same).activation(Activation.RELU).build(),
                        new SeparableConvolution2D.Builder(2, 2).nOut(6).depthMultiplier(2)
                                .convolutionMode(ConvolutionMode.Same).activation(Activation.TANH).build()), true),
                Arguments.of("separable padding (1,0), stride (2,1), dilation (1,2), m=3, Strict, softsign", new Case(3, 9, 10,
                        new SeparableConvolution2D.Builder(3, 2).padding(1, 0).stride(2, 1).dilation(1, 2).depthMultiplier(3)
                                .nOut(9).convolutionMode(ConvolutionMode.Strict).activation(Activation.SOFTSIGN).build()), true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void float64EqualsDl4jPerExample(String name, Case c, boolean dl4jFloat32) {
        MultiLayerNetwork net = c.network(DataType.DOUBLE);
        INDArray[] xy = c.batch(DataType.DOUBLE, 3);
        assertOnKernels(net, name);
        KernelChecks.Result r = KernelChecks.assertExact(net, xy[0], xy[1], 1e-10);
        System.out.printf("SEPARABLE float64 %s: gradient %.1e, norm %.1e, sum %.1e%n", name, r.gradientError(), r.normError(),
                r.sumError());
        assertNonPrivateSum(net, net, xy, 1e-10, name);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void float32EqualsDl4jPerExample(String name, Case c, boolean dl4jFloat32) {
        float32(name, c, false);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void float32StreamedEqualsDl4jPerExample(String name, Case c, boolean dl4jFloat32) {
        float32(name, c, true);
    }

    /** Float32 against DL4J's own float32 layers (each example alone, and the batch gradient) within 10⁻⁴ relative. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void float32AgreesWithDl4jFloat32(String name, Case c, boolean dl4jFloat32) {
        assumeTrue(dl4jFloat32, "DL4J's float32 depthwise_conv2d fails on this network");
        MultiLayerNetwork net = c.network(DataType.FLOAT);
        INDArray[] xy = c.batch(DataType.FLOAT, 6);
        KernelChecks.Result r = KernelChecks.assertExact(net, xy[0], xy[1], 1e-4);
        System.out.printf("SEPARABLE float32 vs DL4J float32 %s: gradient %.1e, norm %.1e, sum %.1e%n", name, r.gradientError(),
                r.normError(), r.sumError());
        assertNonPrivateSum(net, net, xy, 1e-4, name);
    }

    private static void float32(String name, Case c, boolean streamed) {
        MultiLayerNetwork net = c.network(DataType.FLOAT);
        INDArray[] xy = c.batch(DataType.FLOAT, 4);
        assertOnKernels(net, name);
        PerExampleGradients engine = new PerExampleGradients(net);
        if (streamed) {
            convolutions(engine).forEach(k -> k.streamAbove = 0);
        }
        MultiLayerNetwork oracle = net.convertDataType(DataType.DOUBLE);
        KernelChecks.Result r = KernelChecks.assertExact(oracle, xy[0], xy[1], 1e-5, engine);
        System.out.printf("SEPARABLE float32%s %s: gradient %.1e, norm %.1e, sum %.1e%n", streamed ? " streamed" : "", name,
                r.gradientError(), r.normError(), r.sumError());
        assertNonPrivateSum(net, oracle, xy, 1e-5, name);
    }

    /** Every {@link ConvKernel} of the engine, inside depthwise, separable, Same-mode and 1-D kernels too. */
    static List<ConvKernel> convolutions(PerExampleGradients engine) {
        return engine.kernels(LayerKernel.class).stream().flatMap(SeparableKernelTest::convolutions).toList();
    }

    private static Stream<ConvKernel> convolutions(LayerKernel k) {
        if (k instanceof ConvKernel c) {
            return Stream.of(c);
        }
        if (k instanceof DerivedWeightsConvKernel d) {
            return Stream.of(d.convolution());
        }
        if (k instanceof SamePaddingKernel s) {
            return convolutions(s.inner());
        }
        if (k instanceof Conv1dKernel c) {
            return convolutions(c.convolution());
        }
        if (k instanceof SeparableKernel s) {
            return Stream.concat(convolutions(s.depthwise()), convolutions(s.pointwise()));
        }
        return Stream.empty();
    }

    /** The layers run on their kernels, not on the fallback. */
    private static void assertOnKernels(MultiLayerNetwork net, String name) {
        assertTrue(Kernels.hasKernel(DepthwiseConvolution2D.class) && Kernels.hasKernel(SeparableConvolution2D.class));
        PerExampleGradients engine = new PerExampleGradients(net);
        assertTrue(engine.kernels(FallbackKernel.class).isEmpty(), name + " has a layer on the fallback");
        assertTrue(!convolutions(engine).isEmpty(), name + " has no convolution kernel");
    }

    /** The non-private mode (a batch backward pass) against DL4J's gradient of the batch (on {@code oracle}, a copy). */
    private static void assertNonPrivateSum(MultiLayerNetwork net, MultiLayerNetwork oracle, INDArray[] xy, double tolerance,
                                            String name) {
        DataType type = oracle.params().dataType();
        oracle.setInput(xy[0].castTo(type));
        oracle.setLabels(xy[1].castTo(type));
        oracle.computeGradientAndScore();
        INDArray expected = oracle.gradient().gradient().dup().reshape(net.numParams()).castTo(DataType.DOUBLE);
        INDArray batch = Nd4j.zeros(net.params().dataType(), 1, net.numParams());
        new PerExampleGradients(net).addBatchGradient(xy[0], xy[1], IntStream.range(0, B).toArray(), batch);
        double scale = expected.amaxNumber().doubleValue();
        double diff = expected.sub(batch.castTo(DataType.DOUBLE).reshape(net.numParams())).amaxNumber().doubleValue();
        assertTrue(diff <= tolerance * scale, name + ": non-private batch gradient differs from DL4J's by " + diff / scale + " (relative)");
    }
}
