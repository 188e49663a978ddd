package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.ops.transforms.Transforms;

/**
 * The oneDNN primitives of {@link Dnnl} against the libnd4j ops they replace (independent
 * implementations), in float32, and the float32 engine that uses them against DL4J's own
 * one-example-at-a-time gradients.
 */
class DnnlTest {

    @Test
    void servesFloat32OnTheCpuBackendOnly() {
        assertTrue(Dnnl.enabled(Nd4j.create(DataType.FLOAT, 2)), "oneDNN must serve float32 on the CPU backend");
        assertTrue(!Dnnl.enabled(Nd4j.create(DataType.FLOAT, 2), Nd4j.create(DataType.DOUBLE, 2)), "float64 keeps libnd4j");
    }

    @ParameterizedTest(name = "B={0} M={1} P={2} K={3}")
    @CsvSource({"256, 32, 25, 256", "7, 16, 196, 64", "1, 3, 1, 5", "33, 5, 11, 13"})
    void batchedMatmulEqualsLibnd4j(int b, int m, int p, int k) {
        Nd4j.getRandom().setSeed(b + m);
        INDArray a = Nd4j.rand(DataType.FLOAT, b, m, p).subi(0.5);
        INDArray c = Nd4j.rand(DataType.FLOAT, b, k, p).subi(0.5);
        assertClose(Nd4j.matmul(a, c, false, true, false), Dnnl.batchedMatmulTransposed(a, c), 1e-5, "matmul");
        if (b == 1) {
            return;
        }
        // views (every other example) are read in their logical order
        INDArray a2 = Nd4j.rand(DataType.FLOAT, 2 * b, m, p).get(NDArrayIndex.interval(1, 2, 2 * b), NDArrayIndex.all(), NDArrayIndex.all());
        INDArray c2 = Nd4j.rand(DataType.FLOAT, 2 * b, k, p).get(NDArrayIndex.interval(0, 2, 2 * b), NDArrayIndex.all(), NDArrayIndex.all());
        assertClose(Nd4j.matmul(a2.dup('c'), c2.dup('c'), false, true, false), Dnnl.batchedMatmulTransposed(a2, c2), 1e-5, "matmul of views");
        // into examples [1, b + 1) of a larger array, whose other examples stay as they were
        INDArray big = Nd4j.rand(DataType.FLOAT, b + 2, m, k);
        INDArray before = big.dup();
        Dnnl.batchedMatmulTransposedInto(a, c, big.get(NDArrayIndex.interval(1, b + 1), NDArrayIndex.all(), NDArrayIndex.all()));
        assertClose(Nd4j.matmul(a, c, false, true, false), big.get(NDArrayIndex.interval(1, b + 1), NDArrayIndex.all(), NDArrayIndex.all()),
                1e-5, "matmul into a range");
        assertEquals(before.get(NDArrayIndex.point(0)), big.get(NDArrayIndex.point(0)), "example before the range");
        assertEquals(before.get(NDArrayIndex.point(b + 1)), big.get(NDArrayIndex.point(b + 1)), "example after the range");
    }

    @Test
    void tanhEqualsLibnd4j() {
        Nd4j.getRandom().setSeed(3);
        INDArray z = Nd4j.randn(DataType.FLOAT, 37, 3, 5, 7).muli(3);
        INDArray expected = Transforms.tanh(z, true);
        INDArray actual = Dnnl.tanhInPlace(z.dup());
        assertClose(expected, actual, 1e-6, "tanh");
    }

    @Test
    void convolutionMatmulsEqualTheirDefinition() {
        Nd4j.getRandom().setSeed(8);
        INDArray w = Nd4j.randn(DataType.FLOAT, 16, 64);
        INDArray x = Nd4j.randn(DataType.FLOAT, 13, 64, 196);
        INDArray bias = Nd4j.randn(DataType.FLOAT, 16);
        INDArray d = Nd4j.randn(DataType.FLOAT, 13, 16, 196);
        INDArray expected = Nd4j.create(DataType.FLOAT, 13, 16, 196);
        INDArray expectedT = Nd4j.create(DataType.FLOAT, 13, 196, 64);
        for (int b = 0; b < 13; b++) {
            expected.putSlice(b, w.mmul(x.slice(b)).addiColumnVector(bias.reshape(16, 1)));
            expectedT.putSlice(b, w.transpose().mmul(d.slice(b)).transpose());
        }
        assertClose(expected, Dnnl.convolutionForward(w, x, bias), 1e-5, "w · x_b + bias");
        assertClose(expected.sub(bias.reshape(1, 16, 1)), Dnnl.convolutionForward(w, x, null), 1e-5, "w · x_b");
        assertClose(expectedT, Dnnl.convolutionColumnsGradientTransposed(w, d), 1e-5, "(wᵀ · d_b)ᵀ");
        // the weights as a view into a larger buffer (a network's parameter view) are read correctly
        INDArray params = Nd4j.randn(DataType.FLOAT, 1, 10 + 16 * 64);
        INDArray view = params.get(NDArrayIndex.point(0), NDArrayIndex.interval(10, 10 + 16 * 64)).reshape('c', 16, 64);
        assertClose(Dnnl.convolutionForward(view.dup('c'), x, null), Dnnl.convolutionForward(view, x, null), 0, "forward, parameter view");
        assertClose(Dnnl.convolutionColumnsGradientTransposed(view.dup('c'), d),
                Dnnl.convolutionColumnsGradientTransposed(view, d), 0, "columns' gradient, parameter view");
    }

    @Test
    void refusesArraysThatDoNotFillTheirMemory() {
        INDArray a = Nd4j.rand(DataType.FLOAT, 4, 3, 3);
        INDArray shorter = Nd4j.rand(DataType.FLOAT, 4, 3, 2);
        assertThrows(IllegalArgumentException.class, () -> Dnnl.tanhBackward(a, shorter));
        INDArray x = Nd4j.rand(DataType.FLOAT, 2, 3, 6, 6);
        Ops.Window g = new Ops.Window(3, 3, 1, 1, 1, 1, 1, 1);
        INDArray delta = Nd4j.rand(DataType.FLOAT, 2, 4, 6, 6);
        assertThrows(IllegalArgumentException.class, // 4·3·3·3 weights expected
                () -> Dnnl.convolutionBackwardWeights(x, delta, g, 1, Nd4j.create(DataType.FLOAT, 4, 3, 3, 2)));
        assertThrows(IllegalArgumentException.class, // 2 examples, 3 gradients
                () -> Dnnl.perExampleConvolutionWeights(x, delta, g, 1, Nd4j.create(DataType.FLOAT, 3, 108)));
        assertThrows(IllegalArgumentException.class, // the output gradient is not this window's output size
                () -> Dnnl.convolutionBackwardData(Nd4j.rand(DataType.FLOAT, 2, 4, 5, 6), Nd4j.rand(DataType.FLOAT, 4, 3, 3, 3), x.shape(),
                        g, 1));
        HostKernels.MaxPool pooled = new HostKernels().maxPoolForward(x, new Ops.Window(2, 2, 2, 2, 0, 0, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new HostKernels().maxPoolBackward(Nd4j.rand(DataType.FLOAT, 2, 3, 2, 3),
                pooled, x.shape()));
    }

    /**
     * oneDNN's convolution passes (forward, input gradient, weight gradient summed over the batch, per-example weight
     * gradients) against libnd4j's conv2d and conv2d_bp run in float64, on windows with stride, padding, dilation and a
     * rectangular kernel; each per-example gradient against conv2d_bp on that example alone. m &gt; 0: a depthwise
     * convolution of depth multiplier m (groups = iC, weights [iC·m, 1, kH, kW]) against depthwise_conv2d(_bp).
     */
    @ParameterizedTest(name = "{0}x{1} k{2}x{3} s{4} p{5} d{6} m{7}")
    @CsvSource({"8, 8, 3, 3, 1, 1, 1, 0", "9, 7, 3, 3, 2, 1, 1, 0", "10, 10, 5, 3, 1, 2, 1, 0", "11, 9, 3, 3, 1, 0, 2, 0",
            "6, 6, 1, 1, 1, 0, 1, 0", "9, 8, 3, 3, 1, 1, 1, 1", "9, 7, 4, 2, 2, 1, 1, 2", "11, 9, 3, 3, 1, 0, 2, 3"})
    void convolutionPassesEqualLibnd4j(int h, int w, int kh, int kw, int s, int p, int d, int m) {
        Ops.Window g = new Ops.Window(kh, kw, s, s, p, p, d, d);
        assertTrue(Dnnl.convolutionSupported(g, h, w));
        Nd4j.getRandom().setSeed(h * 31 + kh);
        int b = 5, ic = 3, oc = m == 0 ? 4 : ic * m, groups = m == 0 ? 1 : ic;
        INDArray x = Nd4j.rand(DataType.FLOAT, b, ic, h, w).subi(0.5);
        INDArray weights = Nd4j.rand(DataType.FLOAT, oc, ic / groups, kh, kw).subi(0.5);
        INDArray delta = Nd4j.rand(DataType.FLOAT, b, oc, g.outH(h), g.outW(w)).subi(0.5);
        INDArray x64 = x.castTo(DataType.DOUBLE);
        INDArray[] expected = libnd4jBackprop(x64, weights, delta, g, groups);
        INDArray forward = groups == 1 ? Ops.conv2d(x64, weights.castTo(DataType.DOUBLE), null, g)
                : Ops.depthwiseConv2d(x64, depthwiseLayout(weights, groups, g).castTo(DataType.DOUBLE), null, g);
        assertClose(forward.castTo(DataType.FLOAT), Dnnl.convolutionForward(x, weights, null, g, groups), 1e-5, "z");
        assertClose(expected[0].castTo(DataType.FLOAT), Dnnl.convolutionBackwardData(delta, weights, x.shape(), g, groups), 1e-5,
                "dL/dx");
        INDArray sum = Nd4j.create(DataType.FLOAT, weights.shape());
        Dnnl.convolutionBackwardWeights(x, delta, g, groups, sum);
        assertClose(expected[1].castTo(DataType.FLOAT), sum, 1e-5, "dL/dW summed");
        INDArray perExample = Nd4j.create(DataType.FLOAT, b, weights.length());
        Dnnl.perExampleConvolutionWeights(x, delta, g, groups, perExample);
        for (int i = 0; i < b; i++) {
            INDArray[] one = libnd4jBackprop(x64.get(NDArrayIndex.interval(i, i + 1)), weights,
                    delta.get(NDArrayIndex.interval(i, i + 1)), g, groups);
            assertClose(one[1].castTo(DataType.FLOAT).reshape(1, weights.length()), perExample.getRow(i, true), 1e-5,
                    "dL/dW of example " + i);
        }
    }

    /** {dL/dx, dL/dW} in float64 from libnd4j's conv2d_bp, or depthwise_conv2d_bp with dL/dW back in [iC·m, 1, kH, kW]. */
    private static INDArray[] libnd4jBackprop(INDArray x64, INDArray weights, INDArray delta, Ops.Window g, int groups) {
        INDArray d64 = delta.castTo(DataType.DOUBLE);
        if (groups == 1) {
            return Ops.conv2dBackprop(x64, weights.castTo(DataType.DOUBLE), null, d64, g);
        }
        INDArray[] r = Ops.depthwiseConv2dBackprop(x64, depthwiseLayout(weights, groups, g).castTo(DataType.DOUBLE), null, d64, g);
        return new INDArray[]{r[0], r[1].permute(2, 3, 0, 1).dup('c').reshape('c', weights.shape())};
    }

    /** Depthwise weights [iC·m, 1, kH, kW] in libnd4j's layout [kH, kW, iC, m]. */
    private static INDArray depthwiseLayout(INDArray weights, int groups, Ops.Window g) {
        return weights.reshape('c', groups, weights.size(0) / groups, g.kH(), g.kW()).permute(2, 3, 0, 1).dup('c');
    }

    @Test
    void convolutionWindowsThatNeedNegativePaddingStayWithLibnd4j() {
        // 1×1, stride 2, no padding on 32×32: DL4J's 16 outputs would need oneDNN's right padding −1
        assertTrue(!Dnnl.convolutionSupported(new Ops.Window(1, 1, 2, 2, 0, 0, 1, 1), 32, 32));
        assertTrue(Dnnl.convolutionSupported(new Ops.Window(1, 1, 2, 2, 0, 0, 1, 1), 31, 31));
        assertTrue(Dnnl.convolutionSupported(new Ops.Window(3, 3, 2, 2, 1, 1, 1, 1), 32, 32));
    }

    @Test
    void tanhBackwardEqualsLibnd4j() {
        Nd4j.getRandom().setSeed(4);
        INDArray a = Transforms.tanh(Nd4j.randn(DataType.FLOAT, 19, 4, 3, 3).muli(2), true);
        INDArray grad = Nd4j.randn(DataType.FLOAT, 19, 4, 3, 3);
        assertClose(a.mul(a).rsubi(1).muli(grad), Dnnl.tanhBackward(a, grad), 1e-6, "tanh backward");
    }

    @Test
    void vectorMatrixProductEqualsLibnd4j() {
        Nd4j.getRandom().setSeed(6);
        INDArray w = Nd4j.rand(DataType.FLOAT, 1, 37);
        INDArray g = Nd4j.randn(DataType.FLOAT, 37, 8192);
        assertClose(w.mmul(g), Dnnl.vectorTimesMatrix(w, g), 1e-5, "w · g");
        // a dense offset-free reshape is read in place, a transposed view through a copy
        assertClose(w.mmul(g.transpose().dup('c').transpose()), Dnnl.vectorTimesMatrix(w, g.transpose().dup('c').transpose()), 1e-5, "w · view");
    }

    @ParameterizedTest(name = "{0}x{1} k{2} s{3}")
    @CsvSource({"14, 14, 2, 1", "5, 5, 2, 2", "7, 9, 3, 2", "4, 4, 4, 1"})
    void maxPoolingEqualsLibnd4j(int h, int w, int k, int s) {
        Ops.Window g = new Ops.Window(k, k, s, s, 0, 0, 1, 1);
        assertTrue(HostKernels.maxPoolSupported(g, h, w));
        Nd4j.getRandom().setSeed(h * w);
        INDArray x = Nd4j.rand(DataType.FLOAT, 9, 3, h, w); // continuous values: no ties in a window
        HostKernels host = new HostKernels();
        HostKernels.MaxPool pooled = host.maxPoolForward(x, g);
        INDArray expected = Ops.pool(x, g, true, 0);
        assertArrayEquals(expected.shape(), pooled.output().shape());
        assertClose(expected, pooled.output(), 0, "max pooling");
        INDArray gradOut = Nd4j.randn(DataType.FLOAT, expected.shape());
        assertClose(Ops.poolInputGradient(x, gradOut, g, true, 0), host.maxPoolBackward(gradOut, pooled, x.shape()),
                1e-6, "max pooling backward");
        assertTrue(!HostKernels.maxPoolSupported(new Ops.Window(k, k, s, s, 1, 1, 1, 1), h, w), "padding stays with libnd4j");
        // a NaN is its window's maximum, so a poisoned example's output stays non-finite
        INDArray poisoned = x.dup();
        poisoned.putScalar(new long[]{0, 0, h - 1, w - 1}, Float.NaN);
        poisoned.putScalar(new long[]{0, 1, 0, 0}, Float.NaN);
        INDArray out = host.maxPoolForward(poisoned, g).output();
        assertTrue(Double.isNaN(out.getDouble(0, 1, 0, 0)), "NaN at a window's first element");
        assertEquals(expected.get(NDArrayIndex.interval(1, 9)), out.get(NDArrayIndex.interval(1, 9)), "other examples unchanged");
    }

    static Stream<Arguments> float32Networks() {
        ModelOptions mnist = ModelOptions.mnist().withDataType(DataType.FLOAT).withSeed(7);
        return Stream.of(
                Arguments.of("standard-cnn tanh", Models.standardCnn(mnist.withActivation(Activation.TANH.getActivationFunction()))),
                Arguments.of("standard-cnn relu", Models.standardCnn(mnist.withActivation(Activation.RELU.getActivationFunction()))),
                Arguments.of("all-conv", Models.allConvNet(mnist.withActivation(Activation.TANH.getActivationFunction()))),
                Arguments.of("cifar-cnn", Models.cifarCnn(ModelOptions.cifar10().withDataType(DataType.FLOAT).withSeed(7))),
                Arguments.of("avg-pool, dilation, no bias, sigmoid", PerExampleGradientsTest.oddLayers(DataType.FLOAT)));
    }

    /**
     * The float32 engine (oneDNN matmuls, tanh and pooling, im2col and col2im in Java) against DL4J's
     * gradients of single examples in float32: equal up to float32 rounding, its forward pass equals
     * DL4J's, and its norms are those of the gradients it sums.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("float32Networks")
    void float32EngineMatchesDl4jPerExample(String name, MultiLayerNetwork net) {
        matchesDl4jPerExample(name, net, pg -> {
        });
    }

    /**
     * The same with every convolution streaming its per-example gradients ({@link ConvKernel#streamAbove} = 0): norms
     * from blocks of per-example gradients, the clipped sum from one backward-weights pass on the weighted deltas.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("float32Networks")
    void float32StreamedConvolutionsMatchDl4jPerExample(String name, MultiLayerNetwork net) {
        matchesDl4jPerExample(name + " (streamed)", net, DnnlTest::streamAllConvolutions);
    }

    /**
     * The same with every ungrouped convolution on oneDNN's path taking ghost norms ({@link ConvKernel#alwaysGhost}):
     * norms from the positions' Gram matrices, the clipped sum from one backward-weights pass on the weighted deltas.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("float32Networks")
    void float32GhostNormConvolutionsMatchDl4jPerExample(String name, MultiLayerNetwork net) {
        matchesDl4jPerExample(name + " (ghost norms)", net, DnnlTest::ghostAllConvolutions);
    }

    /**
     * Puts every ungrouped convolution of the engine on oneDNN's path on ghost norms (a weight-standardised one maps its
     * gradients through the standardisation and keeps forming them).
     */
    static void ghostAllConvolutions(PerExampleGradients pg) {
        pg.kernels(ConvKernel.class).forEach(k -> k.alwaysGhost = true);
    }

    /** Puts every convolution of the engine (also inside weight-standardised ones) on the streamed path. */
    static void streamAllConvolutions(PerExampleGradients pg) {
        pg.kernels(ConvKernel.class).forEach(k -> k.streamAbove = 0);
        pg.kernels(WsConvKernel.class).forEach(k -> k.convolution().streamAbove = 0);
    }

    /** A float32 example whose pixels are NaN contributes exactly nothing to the clipped sum, on both paths. */
    @ParameterizedTest(name = "streamed {0}, ghost norms {1}")
    @CsvSource({"false, false", "true, false", "false, true"})
    void float32NonFiniteExampleContributesNothing(boolean streamed, boolean ghost) {
        MultiLayerNetwork net = Models.cifarCnn(ModelOptions.cifar10().withDataType(DataType.FLOAT).withSeed(9));
        INDArray[] xy = PerExampleGradientsTest.randomBatch(net, DataType.FLOAT, 6, 27);
        xy[0].getRow(2).assign(Float.NaN);
        PerExampleGradients pg = new PerExampleGradients(net);
        if (streamed) {
            streamAllConvolutions(pg);
        }
        if (ghost) {
            ghostAllConvolutions(pg);
        }
        INDArray withPoison = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        pg.addClippedSum(xy[0], xy[1], new int[]{0, 1, 2, 3, 4, 5}, 0.5, withPoison);
        INDArray without = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        pg.addClippedSum(xy[0], xy[1], new int[]{0, 1, 3, 4, 5}, 0.5, without);
        assertTrue(Double.isFinite(withPoison.sumNumber().doubleValue()), "no NaN or infinity reaches the sum");
        assertClose(without, withPoison, 1e-5, "clipped sum with a NaN example");
    }

    private static void matchesDl4jPerExample(String name, MultiLayerNetwork net,
                                              java.util.function.Consumer<PerExampleGradients> path) {
        int b = 6;
        INDArray[] xy = PerExampleGradientsTest.randomBatch(net, DataType.FLOAT, b, 21);
        INDArray x = xy[0];
        INDArray y = xy[1];
        PerExampleGradients pg = new PerExampleGradients(net);
        path.accept(pg);
        assertClose(net.output(x), pg.output(x), 1e-5, name + " output");
        pg.compute(x, y);
        INDArray squaredNorms = pg.squaredNorms();
        for (int i = 0; i < b; i++) {
            net.setInput(x.getRow(i, true));
            net.setLabels(y.getRow(i, true));
            net.computeGradientAndScore();
            INDArray reference = net.gradient().gradient().dup().reshape(1, net.numParams());
            INDArray ours = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
            INDArray oneHot = Nd4j.zeros(DataType.FLOAT, b);
            oneHot.putScalar(i, 1.0);
            pg.addWeightedSum(oneHot, ours);
            assertClose(reference, ours, 2e-4, name + " gradient of example " + i);
            double norm = ours.castTo(DataType.DOUBLE).norm2Number().doubleValue();
            double engineNorm = Math.sqrt(squaredNorms.getDouble(i));
            assertTrue(Math.abs(norm - engineNorm) <= 1e-5 * norm, name + " norm of example " + i + ": " + norm + " vs " + engineNorm);
        }
        // clipped at the median norm, each example's contribution, summed in float32, has norm ≤ C(1 + 1e-6)
        double c = Transforms.sqrt(squaredNorms, true).medianNumber().doubleValue();
        INDArray factors = pg.clipFactors(c);
        for (int i = 0; i < b; i++) {
            INDArray weight = Nd4j.zeros(DataType.FLOAT, b);
            weight.putScalar(i, factors.getDouble(i));
            INDArray clipped = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
            pg.addWeightedSum(weight, clipped);
            double norm = clipped.castTo(DataType.DOUBLE).norm2Number().doubleValue();
            assertTrue(norm <= c * (1 + 1e-6), name + " clipped norm of example " + i + ": " + norm + " > C = " + c);
        }
    }

    /**
     * The per-example weight gradients are made a block of examples at a time (about 20 and 40
     * examples for the standard CNN's convolutions): at 45 examples, crossing both block sizes with
     * remainders, each example's gradient equals the engine's on that example alone.
     */
    @Test
    void blocksOfExamplesGiveEachExamplesOwnGradient() {
        MultiLayerNetwork net = Models.standardCnn(ModelOptions.mnist().withDataType(DataType.FLOAT).withSeed(7));
        int b = 45;
        INDArray[] xy = PerExampleGradientsTest.randomBatch(net, DataType.FLOAT, b, 23);
        PerExampleGradients all = new PerExampleGradients(net);
        all.compute(xy[0], xy[1]);
        PerExampleGradients one = new PerExampleGradients(net);
        for (int i = 0; i < b; i++) {
            INDArray oneHot = Nd4j.zeros(DataType.FLOAT, b);
            oneHot.putScalar(i, 1.0);
            INDArray inBatch = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
            all.addWeightedSum(oneHot, inBatch);
            one.compute(xy[0].getRow(i, true).dup(), xy[1].getRow(i, true).dup());
            INDArray alone = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
            one.addWeightedSum(Nd4j.ones(DataType.FLOAT, 1), alone);
            assertClose(alone, inBatch, 1e-5, "example " + i);
            assertEquals(one.squaredNorms().getDouble(0), all.squaredNorms().getDouble(i), 1e-5 * one.squaredNorms().getDouble(0),
                    "squared norm of example " + i);
        }
    }

    /**
     * The non-private mode in float32 on a network with a dilated convolution (the column path, where
     * libnd4j's conv2d_bp fails): its batch gradient is the sum of the engine's per-example gradients.
     */
    @Test
    void float32NonPrivateModeSumsThePerExampleGradients() {
        MultiLayerNetwork net = PerExampleGradientsTest.oddLayers(DataType.FLOAT);
        int b = 6;
        INDArray[] xy = PerExampleGradientsTest.randomBatch(net, DataType.FLOAT, b, 25);
        INDArray batch = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        new PerExampleGradients(net).addBatchGradient(xy[0], xy[1], java.util.stream.IntStream.range(0, b).toArray(), batch);
        PerExampleGradients pg = new PerExampleGradients(net);
        pg.compute(xy[0], xy[1]);
        INDArray sum = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        pg.addWeightedSum(Nd4j.ones(DataType.FLOAT, b), sum);
        assertClose(sum, batch, 1e-5, "batch gradient");
    }

    private static void assertClose(INDArray expected, INDArray actual, double tol, String what) {
        assertArrayEquals(expected.shape(), actual.shape(), what + " shape");
        double scale = Math.max(expected.amaxNumber().doubleValue(), 1e-30);
        double diff = expected.castTo(DataType.DOUBLE).sub(actual.castTo(DataType.DOUBLE)).amaxNumber().doubleValue();
        assertTrue(diff <= tol * scale, what + ": max abs difference " + diff + " relative " + diff / scale);
    }
}
