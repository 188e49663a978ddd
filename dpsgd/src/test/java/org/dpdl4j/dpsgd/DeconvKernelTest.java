package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.Deconvolution2D;
import org.deeplearning4j.nn.conf.layers.GlobalPoolingLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.PoolingType;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Sgd;
import org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * {@link DeconvKernel} against DL4J's own gradient of each example alone ({@link KernelChecks}: 10⁻¹⁰ in float64,
 * clipped norms ≤ C(1 + 10⁻⁶)): kernel sizes, strides, padding and dilation in Truncate and Strict modes, no bias, a
 * convolution before it (its input gradient), a deconvolution feeding another, float32 against DL4J's float32 (float64
 * with dilation, where DL4J's own float32 backward pass fails), grouped
 * norms, the non-private sum, and Same mode; NHWC stays on the fallback.
 */
class DeconvKernelTest {
    private static final int B = 4;
    private static final int C = 2;
    private static final int H = 5;
    private static final int W = 6;

    private static NeuralNetConfiguration.ListBuilder builder(DataType type) {
        return new NeuralNetConfiguration.Builder().seed(23).dataType(type).updater(new Sgd(0.1)).weightInit(WeightInit.XAVIER).list();
    }

    private static MultiLayerNetwork init(MultiLayerConfiguration conf) {
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    private static INDArray features(DataType type, int b) {
        Nd4j.getRandom().setSeed(13);
        return Nd4j.rand(DataType.DOUBLE, b, C, H, W).subi(0.5).muli(2).castTo(type);
    }

    private static Deconvolution2D deconv(ConvolutionMode mode, int k, int s, int p, int d, boolean bias, Activation a) {
        return new Deconvolution2D.Builder(new int[]{k, k + 1}, new int[]{s, s}, new int[]{p, p}).dilation(d, d).convolutionMode(mode)
                .hasBias(bias).nOut(3).activation(a).build();
    }

    /** A convolution, the deconvolution under test, average pooling and the softmax head. */
    static MultiLayerNetwork network(DataType type, ConvolutionMode mode, int k, int s, int p, int d, boolean bias, Activation a) {
        return init(builder(type).layer(new ConvolutionLayer.Builder(2, 2).nOut(3).activation(Activation.TANH).build())
                .layer(deconv(mode, k, s, p, d, bias, a))
                .layer(new GlobalPoolingLayer.Builder(PoolingType.AVG).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutional(H, W, C)).build());
    }

    @ParameterizedTest(name = "{0} k{1} s{2} p{3} d{4} bias {5} {6}")
    @CsvSource({"Truncate, 2, 1, 0, 1, true, TANH", "Truncate, 3, 2, 1, 1, true, RELU", "Truncate, 2, 2, 0, 2, false, SIGMOID",
            "Strict, 3, 1, 1, 1, true, IDENTITY", "Truncate, 3, 3, 2, 1, true, ELU"})
    void exact(ConvolutionMode mode, int k, int s, int p, int d, boolean bias, Activation a) {
        MultiLayerNetwork net = network(DataType.DOUBLE, mode, k, s, p, d, bias, a);
        assertInstanceOf(DeconvKernel.class, EmbeddingKernelTest.kernel(net, 1));
        KernelChecks.Result r = KernelChecks.assertExact(net, features(DataType.DOUBLE, B), EmbeddingKernelTest.oneHot(B, 3), 1e-10);
        System.out.println("DECONV float64 " + mode + " k" + k + " s" + s + " p" + p + " d" + d + " " + a + ": " + r);
    }

    /** Two deconvolutions in a row, the first one's input gradient included, as the first layer of the network. */
    @Test
    void stacked() {
        MultiLayerNetwork net = init(builder(DataType.DOUBLE).layer(deconv(ConvolutionMode.Truncate, 2, 2, 0, 1, true, Activation.TANH))
                .layer(deconv(ConvolutionMode.Truncate, 3, 1, 1, 1, true, Activation.RELU))
                .layer(new GlobalPoolingLayer.Builder(PoolingType.MAX).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutional(H, W, C)).build());
        assertInstanceOf(DeconvKernel.class, EmbeddingKernelTest.kernel(net, 0));
        KernelChecks.assertExact(net, features(DataType.DOUBLE, B), EmbeddingKernelTest.oneHot(B, 3), 1e-10);
    }

    /**
     * float32 against DL4J's float32; with dilation, where DL4J's own float32 backward pass fails (libnd4j's deconv2d_bp),
     * against DL4J's float64 copy of the network.
     */
    @Test
    void float32AgreesWithDl4j() {
        INDArray x = features(DataType.FLOAT, B);
        INDArray y = EmbeddingKernelTest.oneHot(B, 3).castTo(DataType.FLOAT);
        KernelChecks.Result r = KernelChecks.assertExact(network(DataType.FLOAT, ConvolutionMode.Truncate, 3, 2, 1, 1, true,
                Activation.TANH), x, y, 1e-5);
        System.out.println("DECONV float32: " + r);
        r = KernelChecks.assertExact(network(DataType.FLOAT, ConvolutionMode.Same, 2, 2, 0, 1, true, Activation.RELU), x, y, 1e-5);
        System.out.println("DECONV float32 Same: " + r);
        MultiLayerNetwork dilated = network(DataType.FLOAT, ConvolutionMode.Truncate, 3, 2, 1, 2, true, Activation.TANH);
        r = KernelChecks.compare(PerExampleGradients.of(dilated), dilated.convertDataType(DataType.DOUBLE), x, y, null, null);
        System.out.println("DECONV float32 dilation 2 against DL4J's float64: " + r);
        org.junit.jupiter.api.Assertions.assertTrue(r.worst() <= 1e-5 && r.largestClipRatio() <= 1 + 1e-6, r.toString());
    }

    @Test
    void groupedNormsAndTheNonPrivateSum() {
        int n = 4;
        int k = 2;
        MultiLayerNetwork net = network(DataType.DOUBLE, ConvolutionMode.Truncate, 3, 2, 1, 1, true, Activation.TANH);
        EmbeddingKernelTest.assertClippedMeans(net, features(DataType.DOUBLE, n * k), EmbeddingKernelTest.oneHot(n, 3), n, k);
        for (DataType type : new DataType[]{DataType.DOUBLE, DataType.FLOAT}) {
            EmbeddingKernelTest.assertNonPrivateSum(network(type, ConvolutionMode.Truncate, 2, 2, 0, 1, true, Activation.TANH),
                    features(DataType.DOUBLE, B), EmbeddingKernelTest.oneHot(B, 3), null, new int[]{0, 1, 2, 3},
                    type == DataType.DOUBLE ? 1e-12 : 1e-5);
        }
    }

    /**
     * Same mode (output H·s × W·s): kernel sizes and dilations whose padding is even, odd (one more row at the bottom) or
     * none, strides 1 to 3.
     */
    @ParameterizedTest(name = "Same k{0} s{1} d{2}")
    @CsvSource({"3, 2, 1", "2, 2, 1", "3, 1, 1", "1, 3, 1", "2, 3, 2", "4, 2, 1"})
    void sameMode(int k, int s, int d) {
        MultiLayerNetwork net = network(DataType.DOUBLE, ConvolutionMode.Same, k, s, 0, d, true, Activation.TANH);
        assertInstanceOf(DeconvKernel.class, EmbeddingKernelTest.kernel(net, 1));
        KernelChecks.Result r = KernelChecks.assertExact(net, features(DataType.DOUBLE, B), EmbeddingKernelTest.oneHot(B, 3), 1e-10);
        System.out.println("DECONV float64 Same k" + k + " s" + s + " d" + d + ": " + r);
    }

    @Test
    void nhwcRunsOnTheFallback() {
        MultiLayerNetwork net = init(builder(DataType.DOUBLE)
                .layer(new Deconvolution2D.Builder(2, 2).nIn(C).nOut(3).dataFormat(org.deeplearning4j.nn.conf.CNN2DFormat.NHWC)
                        .activation(Activation.TANH).build())
                .layer(new GlobalPoolingLayer.Builder(PoolingType.AVG).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(3).nOut(3).activation(Activation.SOFTMAX).build()).build());
        assertInstanceOf(FallbackKernel.class, EmbeddingKernelTest.kernel(net, 0));
    }
}
