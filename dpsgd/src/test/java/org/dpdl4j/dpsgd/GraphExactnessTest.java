package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.deeplearning4j.nn.api.Layer;
import org.deeplearning4j.nn.conf.ComputationGraphConfiguration;
import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.graph.ElementWiseVertex;
import org.deeplearning4j.nn.conf.graph.MergeVertex;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.ActivationLayer;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.GlobalPoolingLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.PReLULayer;
import org.deeplearning4j.nn.conf.layers.PoolingType;
import org.deeplearning4j.nn.conf.layers.ZeroPaddingLayer;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.transferlearning.TransferLearning;
import org.deeplearning4j.nn.weights.WeightInit;
import org.dpdl4j.models.GroupNormalization;
import org.dpdl4j.models.WeightStandardizedConvolution;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.learning.config.Sgd;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * The engine on a {@link ComputationGraph} holding every supported vertex kind at once — a residual block with Add and
 * a projection shortcut, GroupNorm, a weight-standardised convolution, a MergeVertex, zero padding, an activation layer,
 * global average and max pooling, a dense layer (with dropout in one variant), a PReLU layer (no kernel: the exact
 * fallback) and the softmax output — against DL4J's own gradient of each example alone (computeGradientAndScore on a
 * batch of one): per-example gradients to 1e-10 in float64 and 1e-5 in float32, each clipped contribution within
 * C(1 + 1e-6). The same class runs a second time with {@code -Ddpdl4j.onednn=false -Ddpdl4j.javakernels=false} (the
 * libnd4j ops alone, as under CUDA; see the module's POM).
 */
class GraphExactnessTest {
    private static final int B = 6;

    /**
     * @param mask        "engine": the dense layer has DL4J dropout (retain 0.7); "reference": a second input "mask"
     *                    multiplied in by a Product vertex (DL4J's reference for a fixed mask); null: no dropout
     */
    static ComputationGraph graph(DataType type, String mask) {
        var g = new NeuralNetConfiguration.Builder().seed(5).dataType(type).updater(new Sgd(0.1)).weightInit(WeightInit.XAVIER)
                .convolutionMode(ConvolutionMode.Truncate).graphBuilder();
        if ("reference".equals(mask)) {
            g.addInputs("input", "mask").setInputTypes(InputType.convolutionalFlat(6, 6, 2), InputType.feedForward(20));
        } else {
            g.addInputs("input").setInputTypes(InputType.convolutionalFlat(6, 6, 2));
        }
        g.addLayer("conv0", new WeightStandardizedConvolution.Builder(3, 3).padding(1, 1).nOut(4).activation(Activation.IDENTITY)
                        .build(), "input")
                .addLayer("gn0", new GroupNormalization.Builder().groups(2).activation(Activation.RELU).build(), "conv0")
                .addLayer("c1", new ConvolutionLayer.Builder(3, 3).stride(2, 2).padding(1, 1).nOut(8).hasBias(false)
                        .activation(Activation.IDENTITY).build(), "gn0")
                .addLayer("n2", new GroupNormalization.Builder().groups(4).activation(Activation.TANH).build(), "c1")
                .addLayer("c2", new ConvolutionLayer.Builder(3, 3).padding(1, 1).nOut(8).activation(Activation.TANH).build(), "n2")
                .addLayer("sc", new ConvolutionLayer.Builder(1, 1).stride(2, 2).nOut(8).activation(Activation.IDENTITY).build(), "gn0")
                .addVertex("add", new ElementWiseVertex(ElementWiseVertex.Op.Add), "c2", "sc")
                .addLayer("side", new ConvolutionLayer.Builder(1, 1).nOut(2).activation(Activation.SIGMOID).build(), "add")
                .addVertex("merge", new MergeVertex(), "add", "side")
                .addLayer("pad", new ZeroPaddingLayer.Builder(1, 1).build(), "merge")
                .addLayer("act", new ActivationLayer.Builder().activation(Activation.TANH).build(), "pad")
                .addLayer("avg", new GlobalPoolingLayer.Builder(PoolingType.AVG).build(), "act")
                .addLayer("max", new GlobalPoolingLayer.Builder(PoolingType.MAX).build(), "act")
                .addVertex("cat", new MergeVertex(), "avg", "max");
        String denseInput = "cat";
        if ("reference".equals(mask)) {
            g.addVertex("drop", new ElementWiseVertex(ElementWiseVertex.Op.Product), "cat", "mask");
            denseInput = "drop";
        }
        var dense = new DenseLayer.Builder().nOut(6).activation(Activation.TANH);
        if ("engine".equals(mask)) {
            dense.dropOut(0.7);
        }
        g.addLayer("dense", dense.build(), denseInput)
                .addLayer("prelu", new PReLULayer.Builder().inputShape(6).build(), "dense")
                .addLayer("output", new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3)
                        .activation(Activation.SOFTMAX).build(), "prelu")
                .setOutputs("output");
        ComputationGraph net = new ComputationGraph(g.build());
        net.init();
        Nd4j.getRandom().setSeed(17); // PReLU's α and GroupNorm's γ, β away from their initial values
        for (Layer l : net.getLayers()) {
            for (var e : l.paramTable().entrySet()) {
                if (!e.getKey().equals("W")) {
                    e.getValue().assign(Nd4j.rand(DataType.DOUBLE, e.getValue().shape()).subi(0.3).castTo(type));
                }
            }
        }
        return net;
    }

    static INDArray[] data(DataType type) {
        Nd4j.getRandom().setSeed(23);
        INDArray x = Nd4j.randn(DataType.DOUBLE, B, 72).castTo(type);
        INDArray y = Nd4j.zeros(type, B, 3);
        for (int i = 0; i < B; i++) {
            y.putScalar(i, (i * 7) % 3, 1.0);
        }
        return new INDArray[]{x, y};
    }

    /** DL4J's gradient of example i's loss alone, by "layer_param" key (absent for frozen layers). */
    static Map<String, INDArray> reference(ComputationGraph net, INDArray... inputsAndLabels) {
        int n = inputsAndLabels.length - 1;
        net.setInputs(java.util.Arrays.copyOf(inputsAndLabels, n));
        net.setLabels(inputsAndLabels[n]);
        net.computeGradientAndScore();
        Map<String, INDArray> out = new HashMap<>();
        net.gradient().gradientForVariable().forEach((k, v) -> out.put(k, v.dup()));
        return out;
    }

    /** The engine's flat gradient split into "layer_param" views (frozen layers under their own names too). */
    static Map<String, INDArray> views(ComputationGraph net, INDArray flat) {
        Map<String, INDArray> out = new HashMap<>();
        long base = net.params().offset();
        INDArray row = flat.reshape(1, flat.length());
        for (Layer l : net.getLayers()) {
            long n = l.numParams();
            if (n == 0) {
                continue;
            }
            long off = l.params().offset() - base;
            INDArray slice = row.get(NDArrayIndex.point(0), NDArrayIndex.interval(off, off + n)).reshape(1, n);
            Layer inner = NetworkPlan.unwrap(l);
            inner.conf().getLayer().initializer().getGradientsFromFlattened(inner.conf(), slice)
                    .forEach((k, v) -> out.put(l.conf().getLayer().getLayerName() + "_" + k, v));
        }
        return out;
    }

    /** g_i from the engine: its weighted sum with the one-hot weight e_i. */
    static INDArray perExample(PerExampleGradients pg, ComputationGraph net, int i) {
        INDArray target = Nd4j.zeros(net.params().dataType(), 1, net.numParams());
        INDArray w = Nd4j.zeros(DataType.DOUBLE, B);
        w.putScalar(i, 1.0);
        pg.addWeightedSum(w, target);
        return target;
    }

    static INDArray row(INDArray a, int i) {
        return a.get(NDArrayIndex.interval(i, i + 1), NDArrayIndex.all()).dup();
    }

    /** max |a − b| over the keys of {@code expected}, relative to max |expected|; also checks the sets of keys. */
    static double relativeError(Map<String, INDArray> expected, Map<String, INDArray> actual) {
        double diff = 0;
        double scale = 0;
        for (var e : expected.entrySet()) {
            INDArray a = actual.get(e.getKey());
            assertTrue(a != null, "the engine has no gradient for " + e.getKey());
            INDArray ex = e.getValue().castTo(DataType.DOUBLE);
            diff = Math.max(diff, ex.sub(a.castTo(DataType.DOUBLE).reshape(ex.shape())).amaxNumber().doubleValue());
            scale = Math.max(scale, ex.amaxNumber().doubleValue());
        }
        return diff / scale;
    }

    @Test
    void libnd4jOnlyPathIsWhatItSays() {
        if ("false".equals(System.getProperty("dpdl4j.javakernels"))) {
            assertFalse(HostKernels.enabled(DataType.FLOAT) || HostKernels.enabled(DataType.DOUBLE));
            assertFalse(Dnnl.enabled(Nd4j.create(DataType.FLOAT, 2)));
        }
    }

    @Test
    void perExampleGradientsOfAResidualGraphEqualDl4jsOnEachExampleAlone() {
        ComputationGraph net64 = graph(DataType.DOUBLE, null);
        INDArray[] xy = data(DataType.DOUBLE);
        PerExampleGradients pg = new PerExampleGradients(net64);
        assertEquals(1, pg.kernels(FallbackKernel.class).size(), "PReLU runs through the fallback");
        pg.compute(xy[0], xy[1]);
        double[] sq = pg.squaredNorms().toDoubleVector();
        Map<String, INDArray>[] expected = new Map[B];
        double[] worst = new double[4]; // float64, float32, float32 streamed, largest clipped norm / C
        for (int i = 0; i < B; i++) {
            expected[i] = reference(net64, row(xy[0], i), row(xy[1], i));
            double err = relativeError(expected[i], views(net64, perExample(pg, net64, i)));
            assertTrue(err <= 1e-10, "float64 example " + i + ": relative error " + err);
            worst[0] = Math.max(worst[0], err);
            double norm2 = expected[i].values().stream().mapToDouble(a -> a.norm2Number().doubleValue() * a.norm2Number().doubleValue()).sum();
            assertEquals(norm2, sq[i], 1e-10 * norm2, "squared norm of example " + i);
        }
        // clipping: C at about the median norm, so that some examples are clipped and some are not
        double c = Math.sqrt(java.util.Arrays.stream(sq).sorted().toArray()[B / 2]);
        worst[3] = Math.max(worst[3], assertClippedWithinC(pg, net64, c, sq));

        // float32: the same parameters, the same data
        ComputationGraph net32 = graph(DataType.FLOAT, null);
        net32.params().assign(net64.params().castTo(DataType.FLOAT));
        PerExampleGradients pg32 = new PerExampleGradients(net32);
        pg32.compute(xy[0].castTo(DataType.FLOAT), xy[1].castTo(DataType.FLOAT));
        for (int i = 0; i < B; i++) {
            double err = relativeError(expected[i], views(net32, perExample(pg32, net32, i)));
            assertTrue(err <= 1e-5, "float32 example " + i + ": relative error " + err);
            worst[1] = Math.max(worst[1], err);
        }
        worst[3] = Math.max(worst[3], assertClippedWithinC(pg32, net32, c, pg32.squaredNorms().toDoubleVector()));
        // float32 with every convolution streaming its per-example gradients (norms by blocks, one weighted pass)
        PerExampleGradients streamed = new PerExampleGradients(net32);
        DnnlTest.streamAllConvolutions(streamed);
        streamed.compute(xy[0].castTo(DataType.FLOAT), xy[1].castTo(DataType.FLOAT));
        for (int i = 0; i < B; i++) {
            double err = relativeError(expected[i], views(net32, perExample(streamed, net32, i)));
            assertTrue(err <= 1e-5, "float32 streamed example " + i + ": relative error " + err);
            worst[2] = Math.max(worst[2], err);
        }
        worst[3] = Math.max(worst[3], assertClippedWithinC(streamed, net32, c, streamed.squaredNorms().toDoubleVector()));
        System.out.printf("residual graph (%s): largest relative error of a per-example gradient: float64 %.2e, float32 %.2e, "
                + "float32 streamed %.2e; largest clipped norm / C %.9f%n", "false".equals(System.getProperty("dpdl4j.javakernels"))
                ? "libnd4j only" : "oneDNN and Java kernels",
                worst[0], worst[1], worst[2], worst[3]);
        // inference: the engine's forward pass is DL4J's output()
        INDArray p = pg.output(xy[0]);
        assertTrue(p.sub(net64.outputSingle(xy[0])).amaxNumber().doubleValue() < 1e-12);
    }

    /**
     * Each example's clipped contribution min(1, C/‖g_i‖)·g_i, summed alone into a fresh gradient, has norm ≤ C(1 + 1e-6).
     *
     * @return the largest such norm divided by C
     */
    static double assertClippedWithinC(PerExampleGradients pg, ComputationGraph net, double c, double[] squaredNorms) {
        INDArray factors = pg.clipFactors(c);
        double largest = 0;
        for (int i = 0; i < B; i++) {
            INDArray w = Nd4j.zeros(DataType.DOUBLE, B);
            w.putScalar(i, factors.getDouble(i));
            INDArray target = Nd4j.zeros(net.params().dataType(), 1, net.numParams());
            pg.addWeightedSum(w, target);
            double norm = target.castTo(DataType.DOUBLE).norm2Number().doubleValue();
            assertTrue(norm <= c * (1 + 1e-6),
                    net.params().dataType() + " clipped norm of example " + i + " (" + Math.sqrt(squaredNorms[i]) + " before)");
            largest = Math.max(largest, norm / c);
        }
        return largest;
    }

    /** Each example keeps its own dropout mask: with the engine's mask fixed, DL4J's gradient with that mask as an input. */
    @Test
    void dropoutGradientsUseEachExamplesOwnMask() {
        ComputationGraph ref = graph(DataType.DOUBLE, "reference");
        ComputationGraph net = graph(DataType.DOUBLE, "engine");
        for (Layer l : net.getLayers()) {
            String name = l.conf().getLayer().getLayerName();
            if (l.numParams() > 0) {
                l.params().assign(ref.getLayer(name).params());
            }
        }
        INDArray[] xy = data(DataType.DOUBLE);
        Nd4j.getRandom().setSeed(29);
        INDArray scale = Nd4j.rand(DataType.DOUBLE, B, 20).gt(0.3).castTo(DataType.DOUBLE).divi(0.7); // m/p
        PerExampleGradients pg = new PerExampleGradients(net);
        List<DropoutKernel> dropouts = pg.kernels(DropoutKernel.class);
        assertEquals(1, dropouts.size());
        dropouts.get(0).fixedScale = scale;
        pg.compute(xy[0], xy[1]);
        for (int i = 0; i < B; i++) {
            Map<String, INDArray> expected = reference(ref, row(xy[0], i), row(scale, i), row(xy[1], i));
            double err = relativeError(expected, views(net, perExample(pg, net, i)));
            assertTrue(err <= 1e-10, "example " + i + ": relative error " + err);
        }
        // at inference dropout is off: the engine's output is DL4J's
        assertTrue(pg.output(xy[0]).sub(net.outputSingle(xy[0])).amaxNumber().doubleValue() < 1e-12);
    }

    /**
     * TransferLearning's feature extractor: the frozen prefix has no per-example state and no gradient, the rest equals
     * DL4J's gradient of the frozen graph, and training leaves the frozen parameters bit for bit as they were.
     */
    @Test
    void frozenPrefixIsNotTrainedAndTheRestIsExact() {
        // TransferLearning rebuilds the graph in ND4J's default type (float32): back to float64 for the 1e-10 comparison
        ComputationGraph frozen = new TransferLearning.GraphBuilder(graph(DataType.DOUBLE, null)).setFeatureExtractor("gn0").build()
                .convertDataType(DataType.DOUBLE);
        assertEquals(DataType.DOUBLE, frozen.params().dataType());
        assertTrue(frozen.getLayer("conv0") instanceof org.deeplearning4j.nn.layers.FrozenLayer);
        INDArray[] xy = data(DataType.DOUBLE);
        PerExampleGradients pg = new PerExampleGradients(frozen);
        pg.compute(xy[0], xy[1]);
        for (int i = 0; i < B; i++) {
            Map<String, INDArray> engine = views(frozen, perExample(pg, frozen, i));
            for (String k : List.of("conv0_W", "conv0_b", "gn0_gamma", "gn0_beta")) {
                assertEquals(0.0, engine.get(k).amaxNumber().doubleValue(), 0.0, k + " is frozen");
            }
            Map<String, INDArray> expected = reference(frozen, row(xy[0], i), row(xy[1], i));
            expected.keySet().removeIf(k -> k.startsWith("conv0_") || k.startsWith("gn0_"));
            double err = relativeError(expected, engine);
            assertTrue(err <= 1e-10, "example " + i + ": relative error " + err);
        }
        INDArray frozenBefore = frozen.getLayer("conv0").params().dup();
        INDArray gnBefore = frozen.getLayer("gn0").params().dup();
        INDArray trainedBefore = frozen.getLayer("c1").params().dup();
        var data = new org.dpdl4j.datasets.LabeledData(xy[0], xy[1], 2, 6, 6);
        new DpSgdTrainer().train(frozen, data, DpSgdConfig.builder().samplingRate(0.5).noiseMultiplier(1.0).clipNorm(1.0)
                .steps(3).seed(1).build());
        assertEquals(frozenBefore, frozen.getLayer("conv0").params(), "frozen convolution bit for bit");
        assertEquals(gnBefore, frozen.getLayer("gn0").params(), "frozen GroupNorm bit for bit");
        assertFalse(trainedBefore.equals(frozen.getLayer("c1").params()), "the layers after the prefix train");
    }

    /**
     * The graph configurations that check() refuses: two outputs, a vertex that moves examples along the batch (Stack),
     * batch normalisation. Vertices without parameters that act on each example alone (Scale, ElementWise Max) run on
     * DL4J's own vertex and are exact.
     */
    @Test
    void unsupportedGraphsAreRefusedWithTheVertexNamed() {
        var base = new NeuralNetConfiguration.Builder().dataType(DataType.DOUBLE).seed(4).graphBuilder().addInputs("in")
                .setInputTypes(InputType.feedForward(4)).addLayer("d", new DenseLayer.Builder().nOut(3).activation(Activation.TANH).build(), "in");
        ComputationGraphConfiguration scale = base.addVertex("s", new org.deeplearning4j.nn.conf.graph.ScaleVertex(2.0), "d")
                .addVertex("n", new org.deeplearning4j.nn.conf.graph.L2NormalizeVertex(), "s")
                .addLayer("out", new OutputLayer.Builder().nOut(2).activation(Activation.SOFTMAX).build(), "n")
                .setOutputs("out").build();
        DpCompatibility.check(scale);
        var max = new NeuralNetConfiguration.Builder().dataType(DataType.DOUBLE).seed(4).graphBuilder().addInputs("in")
                .setInputTypes(InputType.feedForward(4))
                .addLayer("a", new DenseLayer.Builder().nOut(3).activation(Activation.TANH).build(), "in")
                .addLayer("b", new DenseLayer.Builder().nOut(3).activation(Activation.SIGMOID).build(), "in")
                .addVertex("m", new ElementWiseVertex(ElementWiseVertex.Op.Max), "a", "b")
                .addLayer("out", new OutputLayer.Builder().nOut(2).activation(Activation.SOFTMAX).build(), "m")
                .setOutputs("out").build();
        for (ComputationGraphConfiguration conf : List.of(scale, max)) {
            ComputationGraph g = new ComputationGraph(conf);
            g.init();
            Nd4j.getRandom().setSeed(3);
            INDArray y = Nd4j.zeros(DataType.DOUBLE, 5, 2);
            for (int i = 0; i < 5; i++) {
                y.putScalar(i, i % 2, 1.0);
            }
            KernelChecks.assertExact(g, Nd4j.rand(DataType.DOUBLE, 5, 4), y, 1e-10);
        }
        var stack = new NeuralNetConfiguration.Builder().graphBuilder().addInputs("in").setInputTypes(InputType.feedForward(4))
                .addLayer("a", new DenseLayer.Builder().nOut(3).build(), "in")
                .addLayer("b", new DenseLayer.Builder().nOut(3).build(), "in")
                .addVertex("st", new org.deeplearning4j.nn.conf.graph.StackVertex(), "a", "b")
                .addLayer("out", new OutputLayer.Builder().nOut(2).activation(Activation.SOFTMAX).build(), "st")
                .setOutputs("out").build();
        var e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(stack));
        assertTrue(e.getMessage().startsWith("vertex 'st' (StackVertex) moves examples along the batch"), e.getMessage());
        var two = new NeuralNetConfiguration.Builder().graphBuilder().addInputs("in").setInputTypes(InputType.feedForward(4))
                .addLayer("a", new OutputLayer.Builder().nOut(2).activation(Activation.SOFTMAX).build(), "in")
                .addLayer("b", new OutputLayer.Builder().nOut(2).activation(Activation.SOFTMAX).build(), "in")
                .setOutputs("a", "b").build();
        e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(two));
        assertTrue(e.getMessage().startsWith("the graph must have one input and one output"), e.getMessage());
    }

    /** A MultiLayerNetwork with TransferLearning's feature extractor: frozen layers stay bit for bit, the rest trains. */
    @Test
    void frozenLayersOfAMultiLayerNetworkStayPut() {
        var conf = new NeuralNetConfiguration.Builder().seed(3).dataType(DataType.DOUBLE).updater(new Sgd(0.5)).list()
                .layer(new DenseLayer.Builder().nOut(5).activation(Activation.TANH).build())
                .layer(new DenseLayer.Builder().nOut(4).activation(Activation.TANH).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(72)).build();
        var mln = new org.deeplearning4j.nn.multilayer.MultiLayerNetwork(conf);
        mln.init();
        var frozen = new TransferLearning.Builder(mln).setFeatureExtractor(0).build();
        assertTrue(Networks.isFrozen(frozen.getLayer(0)));
        INDArray before = frozen.getLayer(0).params().dup();
        INDArray trainedBefore = frozen.getLayer(1).params().dup();
        INDArray[] xy = data(frozen.params().dataType());
        new DpSgdTrainer().train(frozen, new org.dpdl4j.datasets.LabeledData(xy[0], xy[1], 2, 6, 6),
                DpSgdConfig.builder().samplingRate(0.5).noiseMultiplier(1.0).clipNorm(1.0).steps(3).seed(1).build());
        assertEquals(before, frozen.getLayer(0).params());
        assertFalse(trainedBefore.equals(frozen.getLayer(1).params()));
    }
}
