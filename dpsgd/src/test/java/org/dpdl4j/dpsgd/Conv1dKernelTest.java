package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.RNNFormat;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.Convolution1DLayer;
import org.deeplearning4j.nn.conf.layers.GlobalPoolingLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.PoolingType;
import org.deeplearning4j.nn.conf.layers.RnnOutputLayer;
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
 * {@link Conv1dKernel} against DL4J's own gradient of each example alone ({@link KernelChecks}: 10⁻¹⁰ in float64,
 * clipped norms ≤ C(1 + 10⁻⁶)): every convolution mode (Truncate with padding, Strict, Same with its odd padding at the
 * end, Causal) with strides, dilations, no bias, two stacked layers (the first one's input gradient), global pooling
 * over time and a label per step, float32 on oneDNN's path (per-example gradients kept, streamed, and ghost norms),
 * grouped norms, the non-private sum, and feature masks as DL4J's network reduces them; NWC stays on the fallback.
 */
class Conv1dKernelTest {
    private static final int B = 5;
    private static final int F = 3;
    private static final int T = 11;

    private static NeuralNetConfiguration.ListBuilder builder(DataType type) {
        return new NeuralNetConfiguration.Builder().seed(17).dataType(type).updater(new Sgd(0.1)).weightInit(WeightInit.XAVIER).list();
    }

    private static MultiLayerNetwork init(MultiLayerConfiguration conf) {
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    private static INDArray features(DataType type, int b) {
        Nd4j.getRandom().setSeed(9);
        return Nd4j.rand(DataType.DOUBLE, b, F, T).subi(0.5).muli(2).castTo(type);
    }

    private static Convolution1DLayer conv(ConvolutionMode mode, int k, int s, int p, int d, boolean bias, int nOut, Activation a) {
        return new Convolution1DLayer.Builder(k, s, p).dilation(d).convolutionMode(mode).hasBias(bias).nOut(nOut).activation(a).build();
    }

    /** Two 1-D convolutions (the second in the given mode), average pooling over time, the softmax head. */
    static MultiLayerNetwork pooled(DataType type, ConvolutionMode mode, int k, int s, int p, int d, boolean bias) {
        return init(builder(type).layer(conv(ConvolutionMode.Truncate, 2, 1, 1, 1, true, 4, Activation.TANH))
                .layer(conv(mode, k, s, p, d, bias, 5, Activation.RELU))
                .layer(new GlobalPoolingLayer.Builder(PoolingType.AVG).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(F, T)).build());
    }

    /** A causal convolution and a label per step (the causal language-model shape). */
    static MultiLayerNetwork perStep(DataType type, int k, int d) {
        return init(builder(type).layer(conv(ConvolutionMode.Causal, k, 1, 0, d, true, 4, Activation.TANH))
                .layer(new RnnOutputLayer.Builder(LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(F, T)).build());
    }

    @ParameterizedTest(name = "{0} k{1} s{2} p{3} d{4} bias {5}")
    @CsvSource({"Truncate, 3, 1, 0, 1, true", "Truncate, 3, 2, 2, 1, false", "Strict, 2, 1, 0, 2, true", "Same, 4, 1, 0, 1, true",
            "Same, 3, 2, 0, 1, true", "Same, 2, 3, 0, 2, false", "Causal, 3, 1, 0, 1, true", "Causal, 2, 2, 0, 3, true"})
    void exactInEveryMode(ConvolutionMode mode, int k, int s, int p, int d, boolean bias) {
        MultiLayerNetwork net = pooled(DataType.DOUBLE, mode, k, s, p, d, bias);
        assertInstanceOf(Conv1dKernel.class, EmbeddingKernelTest.kernel(net, 0));
        assertInstanceOf(Conv1dKernel.class, EmbeddingKernelTest.kernel(net, 1));
        KernelChecks.Result r = KernelChecks.assertExact(net, features(DataType.DOUBLE, B), EmbeddingKernelTest.oneHot(B, 3), 1e-10);
        System.out.println("CONV1D float64 " + mode + " k" + k + " s" + s + " p" + p + " d" + d + ": " + r);
    }

    @Test
    void causalWithALabelPerStep() {
        for (int[] kd : new int[][]{{2, 1}, {3, 2}}) {
            KernelChecks.assertExact(perStep(DataType.DOUBLE, kd[0], kd[1]), features(DataType.DOUBLE, B),
                    EmbeddingKernelTest.perStepLabels(B, 3, T), 1e-10);
        }
    }

    @Test
    void theOneLineCheck() {
        KernelChecks.assertExact(new Convolution1DLayer.Builder(3).convolutionMode(ConvolutionMode.Same).nOut(4)
                .activation(Activation.TANH).build(), InputType.recurrent(3, 7));
    }

    /**
     * float32 on oneDNN's path: the per-example gradients kept, streamed, and as ghost norms, each against DL4J's float32
     * gradient of each example alone.
     */
    @Test
    void float32AgreesWithDl4jOnEveryPath() {
        INDArray x = features(DataType.FLOAT, B);
        INDArray y = EmbeddingKernelTest.oneHot(B, 3).castTo(DataType.FLOAT);
        for (ConvolutionMode mode : new ConvolutionMode[]{ConvolutionMode.Same, ConvolutionMode.Causal}) {
            MultiLayerNetwork net = pooled(DataType.FLOAT, mode, 3, 1, 0, 1, true);
            for (String path : new String[]{"kept", "streamed", "ghost"}) {
                PerExampleGradients engine = PerExampleGradients.of(net);
                java.util.List<ConvKernel> convolutions = SeparableKernelTest.convolutions(engine);
                assertTrue(convolutions.size() == 2, "both convolutions on the 2-D kernel: " + convolutions);
                convolutions.forEach(c -> {
                    c.streamAbove = path.equals("streamed") ? 0 : c.streamAbove;
                    c.alwaysGhost = path.equals("ghost");
                });
                KernelChecks.Result r = KernelChecks.assertExact(net, x, y, 1e-5, engine);
                System.out.println("CONV1D float32 " + mode + " " + path + ": " + r);
            }
        }
    }

    @Test
    void groupedNormsAndTheNonPrivateSum() {
        int n = 4;
        int k = 2;
        MultiLayerNetwork net = pooled(DataType.DOUBLE, ConvolutionMode.Causal, 3, 1, 0, 2, true);
        EmbeddingKernelTest.assertClippedMeans(net, features(DataType.DOUBLE, n * k), EmbeddingKernelTest.oneHot(n, 3), n, k);
        for (DataType type : new DataType[]{DataType.DOUBLE, DataType.FLOAT}) {
            EmbeddingKernelTest.assertNonPrivateSum(pooled(type, ConvolutionMode.Same, 3, 2, 0, 1, true), features(DataType.DOUBLE, B),
                    EmbeddingKernelTest.oneHot(B, 3), null, new int[]{0, 1, 2, 3, 4}, type == DataType.DOUBLE ? 1e-12 : 1e-5);
        }
    }

    /**
     * A feature mask as DL4J's network uses it: the convolutions read every step, and the mask, reduced over each window,
     * reaches the pooling. Two stacked convolutions, so that the first one's unmasked output at masked steps reaches the
     * second one's windows (the exact fallback, which set the mask on DL4J's layer, zeroed it: 5 % off DL4J's gradient and
     * its finite differences). In float32 in every mode; in float64 against DL4J where DL4J's own network takes the mask
     * (Same and Causal at stride 1), and against DL4J's float32 copy of the network where DL4J's float64 mask reduction
     * fails (a window that shortens the sequence).
     */
    @Test
    void masksAreReducedAsDl4jsNetworkReducesThem() {
        INDArray fm = EmbeddingKernelTest.lengths(B, T);
        INDArray y = EmbeddingKernelTest.oneHot(B, 3);
        INDArray x = features(DataType.DOUBLE, B);
        for (Object[] c : new Object[][]{{ConvolutionMode.Same, 3, 1, 0}, {ConvolutionMode.Causal, 3, 1, 0}, {ConvolutionMode.Same, 3, 2, 0},
                {ConvolutionMode.Causal, 2, 2, 0}, {ConvolutionMode.Truncate, 2, 1, 1}, {ConvolutionMode.Truncate, 3, 2, 0}}) {
            MultiLayerNetwork net = pooled(DataType.FLOAT, (ConvolutionMode) c[0], (int) c[1], (int) c[2], (int) c[3], 1, true);
            KernelChecks.Result r = KernelChecks.assertExact(net, x.castTo(DataType.FLOAT), y.castTo(DataType.FLOAT),
                    fm.castTo(DataType.FLOAT), null, 1e-5);
            System.out.println("CONV1D float32 masked " + java.util.Arrays.toString(c) + ": " + r);
        }
        MultiLayerNetwork same = init(builder(DataType.DOUBLE).layer(conv(ConvolutionMode.Same, 3, 1, 0, 1, true, 4, Activation.TANH))
                .layer(conv(ConvolutionMode.Causal, 2, 1, 0, 2, true, 5, Activation.RELU))
                .layer(new GlobalPoolingLayer.Builder(PoolingType.AVG).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(F, T)).build());
        System.out.println("CONV1D float64 masked Same, Causal: " + KernelChecks.assertExact(same, x, y, fm, null, 1e-10));
        MultiLayerNetwork strided = pooled(DataType.DOUBLE, ConvolutionMode.Same, 3, 2, 0, 1, true);
        KernelChecks.Result r = KernelChecks.compare(PerExampleGradients.of(strided), strided.convertDataType(DataType.FLOAT), x, y,
                fm, null);
        System.out.println("CONV1D float64 masked Same stride 2 against DL4J's float32: " + r);
        assertTrue(r.worst() <= 1e-5 && r.largestClipRatio() <= 1 + 1e-6, r.toString());
    }

    @Test
    void nwcRunsOnTheFallback() {
        MultiLayerNetwork nwc = init(builder(DataType.DOUBLE)
                .layer(new Convolution1DLayer.Builder(2).nIn(F).nOut(4).rnnDataFormat(RNNFormat.NWC).activation(Activation.TANH).build())
                .layer(new GlobalPoolingLayer.Builder(PoolingType.MAX).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(4).nOut(3).activation(Activation.SOFTMAX).build()).build());
        assertInstanceOf(FallbackKernel.class, EmbeddingKernelTest.kernel(nwc, 0));
    }

    /** A user's subclass of the layer: the registry matches exact classes, so it runs on the fallback. */
    static final class OwnConvolution1D extends Convolution1DLayer {
        OwnConvolution1D(int k, int nIn, int nOut) {
            setKernelSize(new int[]{k, 1});
            setStride(new int[]{1, 1});
            setPadding(new int[]{0, 0});
            setDilation(new int[]{1, 1});
            setConvolutionMode(ConvolutionMode.Same);
            setCnn2dDataFormat(org.deeplearning4j.nn.conf.CNN2DFormat.NCHW);
            setRnnDataFormat(RNNFormat.NCW);
            setHasBias(true);
            setNIn(nIn);
            setNOut(nOut);
            setActivationFn(Activation.TANH.getActivationFunction());
        }
    }

    /**
     * The fallback hands DL4J's layer a mask as DL4J's network does ({@code feedForwardMaskArray}): a 1-D convolution on
     * the fallback, masked, under a 1-D convolution kernel, exact in float32 (DL4J's float64 mask reduction fails). While the
     * fallback set the mask on the layer, which then zeroed its masked outputs, this was 7.5 % off DL4J's gradient.
     */
    @Test
    void theFallbackTakesAMaskAsDl4jsNetworkDoes() {
        MultiLayerNetwork net = init(builder(DataType.FLOAT).layer(new OwnConvolution1D(2, F, 4))
                .layer(conv(ConvolutionMode.Same, 3, 1, 0, 1, true, 4, Activation.TANH))
                .layer(new GlobalPoolingLayer.Builder(PoolingType.AVG).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(F, T)).build());
        assertInstanceOf(FallbackKernel.class, EmbeddingKernelTest.kernel(net, 0));
        KernelChecks.Result r = KernelChecks.assertExact(net, features(DataType.FLOAT, B), EmbeddingKernelTest.oneHot(B, 3).castTo(DataType.FLOAT),
                EmbeddingKernelTest.lengths(B, T).castTo(DataType.FLOAT), null, 1e-5);
        System.out.println("CONV1D float32 masked, first layer on the fallback: " + r);
    }
}
