package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.conf.ComputationGraphConfiguration;
import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.graph.ElementWiseVertex;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.GlobalPoolingLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.PoolingType;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.release.PrivateModel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Sgd;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * Networks configured the way DL4J users configure them (issue 51): {@code InputType.convolutional} (4-D input, no
 * flattening preprocessor) and {@code ConvolutionMode.Same} (DL4J's most common mode, whose padding is asymmetric when
 * the total is odd), checked against DL4J's own gradient of each example alone by {@link KernelChecks}, and trained by
 * the one-call trainer from flat data, from 4-D data and from an iterator of 4-D batches.
 */
class AnyNetworkTest {
    /**
     * Same-mode convolutions and pooling of every kind the asymmetric padding takes: odd and even sizes, strides 1–3,
     * dilation, 1×1 kernels with stride 2 (negative total padding), max and average pooling; then global pooling (so the
     * network reads [B, c, h, w] and has no preprocessor).
     */
    static MultiLayerNetwork sameCnn(DataType type, int channels) {
        var conf = new NeuralNetConfiguration.Builder().seed(5).dataType(type).updater(new Sgd(0.1)).weightInit(WeightInit.XAVIER)
                .convolutionMode(ConvolutionMode.Same).list()
                .layer(new ConvolutionLayer.Builder(3, 3).stride(2, 2).nOut(6).activation(Activation.TANH).build())
                .layer(new SubsamplingLayer.Builder(PoolingType.MAX).kernelSize(2, 2).stride(2, 2).build())
                .layer(new ConvolutionLayer.Builder(2, 3).stride(1, 3).dilation(1, 2).nOut(5).activation(Activation.RELU).build())
                .layer(new SubsamplingLayer.Builder(PoolingType.AVG).kernelSize(3, 3).stride(1, 1).build())
                .layer(new ConvolutionLayer.Builder(1, 1).stride(2, 2).nOut(4).activation(Activation.SIGMOID).build())
                .layer(new GlobalPoolingLayer.Builder(PoolingType.AVG).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutional(13, 11, channels)).build();
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    /** A residual block in Same mode, as ResNets are built: two convolutions and the input added back. */
    static ComputationGraph sameResidualGraph(DataType type) {
        ComputationGraphConfiguration conf = new NeuralNetConfiguration.Builder().seed(6).dataType(type).updater(new Sgd(0.1))
                .weightInit(WeightInit.XAVIER).convolutionMode(ConvolutionMode.Same).graphBuilder().addInputs("in")
                .setInputTypes(InputType.convolutional(9, 8, 3))
                .addLayer("stem", new ConvolutionLayer.Builder(3, 3).stride(2, 2).nOut(4).activation(Activation.RELU).build(), "in")
                .addLayer("c1", new ConvolutionLayer.Builder(3, 3).nOut(4).activation(Activation.TANH).build(), "stem")
                .addLayer("c2", new ConvolutionLayer.Builder(4, 4).nOut(4).activation(Activation.IDENTITY).build(), "c1")
                .addVertex("add", new ElementWiseVertex(ElementWiseVertex.Op.Add), "c2", "stem")
                .addLayer("pool", new SubsamplingLayer.Builder(PoolingType.MAX).kernelSize(3, 3).stride(2, 2).build(), "add")
                .addLayer("fc", new DenseLayer.Builder().nOut(6).activation(Activation.TANH).build(), "pool")
                .addLayer("out", new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX)
                        .build(), "fc")
                .setOutputs("out").build();
        ComputationGraph g = new ComputationGraph(conf);
        g.init();
        return g;
    }

    private static INDArray[] batch(DataType type, long... shape) {
        Nd4j.getRandom().setSeed(11);
        INDArray x = Nd4j.rand(type, shape).subi(0.3);
        INDArray y = Nd4j.zeros(type, shape[0], 3);
        for (int i = 0; i < shape[0]; i++) {
            y.putScalar(i, (i * 2) % 3, 1.0);
        }
        return new INDArray[]{x, y};
    }

    /** Same mode and 4-D input, exact in float64 against DL4J one example at a time, in a chain and in a graph. */
    @Test
    void sameModeAndImageInputAreExact() {
        MultiLayerNetwork chain = sameCnn(DataType.DOUBLE, 2);
        assertEquals(4, PerExampleGradients.of(chain).inputRank(), "InputType.convolutional: the network reads [B, c, h, w]");
        INDArray[] xy = batch(DataType.DOUBLE, 5, 2, 13, 11);
        assertClose(chain.output(xy[0]), PerExampleGradients.of(chain).output(xy[0]));
        KernelChecks.assertExact(chain, xy[0], xy[1], 1e-10);
        ComputationGraph graph = sameResidualGraph(DataType.DOUBLE);
        INDArray[] gxy = batch(DataType.DOUBLE, 4, 3, 9, 8);
        assertClose(graph.outputSingle(gxy[0]), PerExampleGradients.of(graph).output(gxy[0]));
        KernelChecks.assertExact(graph, gxy[0], gxy[1], 1e-10);
    }

    /** Float32, where the convolutions run on oneDNN (CPU) and the Java kernels: within 1e-4 of DL4J's float32 gradients. */
    @Test
    void sameModeInFloat32() {
        MultiLayerNetwork chain = sameCnn(DataType.FLOAT, 8); // 8 channels: oneDNN's per-example weight primitive too
        INDArray[] xy = batch(DataType.FLOAT, 6, 8, 13, 11);
        KernelChecks.assertExact(chain, xy[0], xy[1], 1e-4);
        ComputationGraph graph = sameResidualGraph(DataType.FLOAT);
        INDArray[] gxy = batch(DataType.FLOAT, 6, 3, 9, 8);
        KernelChecks.assertExact(graph, gxy[0], gxy[1], 1e-4);
    }

    /**
     * The crash of issue 51: a CNN configured with {@code InputType.convolutional} trained by the one-call trainer from flat
     * data (with its channels, height and width), from 4-D data, and from an iterator of 4-D batches; the three give the
     * same model for the same seed. A batch of the wrong rank handed to the engine is refused with the shape it needs.
     */
    @ParameterizedTest
    @ValueSource(strings = {"flat", "images", "iterator"})
    void imageInputTrainsFromEveryEntryPoint(String source) {
        int n = 40;
        INDArray[] xy = batch(DataType.FLOAT, n, 2, 13, 11);
        LabeledData images = LabeledData.of(xy[0], xy[1]);
        LabeledData flat = new LabeledData(xy[0].reshape('c', n, 2 * 13 * 11), xy[1], 2, 13, 11);
        MultiLayerNetwork reference = sameCnn(DataType.FLOAT, 2);
        PrivateTraining.of(reference, images).targetEpsilon(5).accountant("rdp").epochs(2).expectedBatchSize(10).seed(3).workers(1).train();
        MultiLayerNetwork net = sameCnn(DataType.FLOAT, 2);
        PrivateTraining run = switch (source) {
            case "flat" -> PrivateTraining.of(net, flat);
            case "images" -> PrivateTraining.of(net, images);
            default -> {
                List<DataSet> batches = new ArrayList<>();
                for (int at = 0; at < n; at += 7) {
                    int to = Math.min(n, at + 7);
                    batches.add(new DataSet(images.rows(java.util.stream.IntStream.range(at, to).toArray()).features(),
                            images.rows(java.util.stream.IntStream.range(at, to).toArray()).labels()));
                }
                yield PrivateTraining.of(net, new ListDataSetIterator<>(batches, 7));
            }
        };
        PrivateModel m = run.targetEpsilon(5).accountant("rdp").epochs(2).expectedBatchSize(10).seed(3).workers(1).train();
        assertTrue(m.guarantee().epsilon() > 0 && Double.isFinite(m.guarantee().epsilon()));
        assertEquals(0, reference.params().sub(net.params()).amaxNumber().doubleValue(), 1e-6, source + ": the same model");
        assertTrue(DpSgdTrainer.accuracy(net, flat) >= 0 && DpSgdTrainer.accuracy(net, images) == DpSgdTrainer.accuracy(net, flat));

        PerExampleGradients engine = PerExampleGradients.of(net);
        var wrong = assertThrows(IllegalArgumentException.class, () -> engine.compute(flat.features(), flat.labels()));
        assertTrue(wrong.getMessage().contains("image [B, c, h, w]") && wrong.getMessage().contains("LabeledData.features(4)"),
                wrong.getMessage());
    }

    private static NeuralNetConfiguration.ListBuilder builder(DataType type) {
        return new NeuralNetConfiguration.Builder().seed(9).dataType(type).updater(new Sgd(0.1)).weightInit(WeightInit.XAVIER).list();
    }

    private static MultiLayerNetwork init(org.deeplearning4j.nn.conf.MultiLayerConfiguration conf) {
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    /** Labels of 3 outputs: one-hot for classification, real values for regression, several 1s for multi-label. */
    private static INDArray labels(String kind, int b) {
        Nd4j.getRandom().setSeed(13);
        return switch (kind) {
            case "regression" -> Nd4j.randn(DataType.DOUBLE, b, 3);
            case "multi-label" -> Nd4j.rand(DataType.DOUBLE, b, 3).gt(0.4).castTo(DataType.DOUBLE);
            default -> batch(DataType.DOUBLE, b, 1)[1];
        };
    }

    /**
     * Any per-example loss (issue 51, item 6): OutputLayer with MSE and L1 (regression), XENT with sigmoid (multi-label),
     * class-weighted MCXENT, NEGATIVELOGLIKELIHOOD with softmax; a LossLayer after a dense layer; a dense layer with layer
     * normalisation (per example: on the fallback); all exact in float64.
     */
    @Test
    void anyPerExampleLossIsExact() {
        Object[][] heads = {
                {"regression", new OutputLayer.Builder(LossFunctions.LossFunction.MSE).nOut(3).activation(Activation.IDENTITY).build()},
                {"regression", new OutputLayer.Builder(LossFunctions.LossFunction.L1).nOut(3).activation(Activation.TANH).build()},
                {"multi-label", new OutputLayer.Builder(LossFunctions.LossFunction.XENT).nOut(3).activation(Activation.SIGMOID).build()},
                {"classes", new OutputLayer.Builder(new org.nd4j.linalg.lossfunctions.impl.LossMCXENT(Nd4j.createFromArray(1.0, 2.0, 0.5)))
                        .nOut(3).activation(Activation.SOFTMAX).build()},
                {"classes", new org.deeplearning4j.nn.conf.layers.LossLayer.Builder(LossFunctions.LossFunction.MCXENT)
                        .activation(Activation.SOFTMAX).build()},
        };
        for (Object[] head : heads) {
            var list = builder(DataType.DOUBLE).layer(new DenseLayer.Builder().nOut(head[1] instanceof OutputLayer ? 5 : 3)
                    .activation(Activation.TANH).hasLayerNorm(true).build());
            MultiLayerNetwork net = init(list.layer((org.deeplearning4j.nn.conf.layers.Layer) head[1])
                    .setInputType(InputType.feedForward(4)).build());
            INDArray x = Nd4j.rand(DataType.DOUBLE, 6, 4);
            KernelChecks.assertExact(net, x, labels((String) head[0], 6), 1e-10);
        }
        var fmeasure = builder(DataType.DOUBLE).layer(new OutputLayer.Builder(new org.nd4j.linalg.lossfunctions.impl.LossFMeasure()).nOut(1)
                .activation(Activation.SIGMOID).build()).setInputType(InputType.feedForward(4)).build();
        var e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(fmeasure));
        assertTrue(e.getMessage().contains("F-measure"), e.getMessage());
    }

    /**
     * What a user's network brings besides (items 3, 5, 7): LastTimeStep(LSTM) over [B, f, T] (the wrapper kept, on the
     * fallback), Cropping2D (a non-contiguous output), and a head DL4J cannot train (a final softmax ActivationLayer)
     * with gradient normalisation, which fix() turns into what the engine trains; check() names every problem at once.
     */
    @Test
    void wrappersCroppingAndFixedHeadsAreExact() {
        MultiLayerNetwork lstm = init(builder(DataType.DOUBLE)
                .layer(new org.deeplearning4j.nn.conf.layers.recurrent.LastTimeStep(new org.deeplearning4j.nn.conf.layers.LSTM.Builder()
                        .nOut(4).activation(Activation.TANH).build()))
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(5, 7)).build());
        assertEquals(3, PerExampleGradients.of(lstm).inputRank());
        INDArray[] seq = batch(DataType.DOUBLE, 4, 5, 7);
        KernelChecks.assertExact(lstm, seq[0], seq[1], 1e-10);

        MultiLayerNetwork crop = init(builder(DataType.DOUBLE)
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(3).activation(Activation.TANH).build())
                .layer(new org.deeplearning4j.nn.conf.layers.convolutional.Cropping2D(1, 0, 2, 1))
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutional(9, 10, 2)).build());
        INDArray[] img = batch(DataType.DOUBLE, 5, 2, 9, 10);
        KernelChecks.assertExact(crop, img[0], img[1], 1e-10);

        MultiLayerNetwork headless = init(builder(DataType.DOUBLE)
                .layer(new DenseLayer.Builder().nOut(3).activation(Activation.IDENTITY)
                        .gradientNormalization(org.deeplearning4j.nn.conf.GradientNormalization.ClipL2PerLayer).build())
                .layer(new org.deeplearning4j.nn.conf.layers.ActivationLayer.Builder().activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build());
        var e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(headless));
        assertTrue(e.getMessage().startsWith("2 problems: (1) layer 0") && e.getMessage().contains("gradient normalisation")
                && e.getMessage().contains("(2) layer 1") && e.getMessage().contains("DpCompatibility.fix"), e.getMessage());
        DpCompatibility.Fixed<org.deeplearning4j.nn.api.Model> fixed = DpCompatibility.fix((org.deeplearning4j.nn.api.Model) headless);
        assertEquals(2, fixed.changes().size(), fixed.message());
        DpCompatibility.check(fixed.network());
        assertEquals(0, headless.params().sub(fixed.network().params()).amaxNumber().doubleValue(), 0.0, "parameters kept");
        KernelChecks.assertExact(fixed.network(), Nd4j.rand(DataType.DOUBLE, 5, 4), batch(DataType.DOUBLE, 5, 1)[1], 1e-10);
    }

    /** A feature mask [B, T]: example i has its first T − (i % 3) steps (padding after them). */
    private static INDArray lengths(int b, int t) {
        INDArray m = Nd4j.zeros(DataType.DOUBLE, b, t);
        for (int i = 0; i < b; i++) {
            for (int s = 0; s < t - i % 3; s++) {
                m.putScalar(i, s, 1.0);
            }
        }
        return m;
    }

    /**
     * Sequences of different lengths (item 5): each example's own feature mask in its own gradient, through an LSTM and
     * masked global pooling (average and max), through LastTimeStep (the last unpadded step), and into an RnnOutputLayer
     * (a label per step, its loss summed over the example's unmasked steps) after a dense layer applied to every step
     * (DL4J's RnnToFeedForward and FeedForwardToRnn preprocessors); all exact in float64 against DL4J with the same masks.
     */
    @Test
    void sequencesWithMasksAreExact() {
        int b = 5;
        int t = 6;
        INDArray x = Nd4j.rand(DataType.DOUBLE, b, 4, t).subi(0.5);
        INDArray y = batch(DataType.DOUBLE, b, 1)[1];
        INDArray fm = lengths(b, t);
        for (PoolingType pooling : new PoolingType[]{PoolingType.AVG, PoolingType.MAX, PoolingType.SUM}) {
            MultiLayerNetwork pooled = init(builder(DataType.DOUBLE)
                    .layer(new org.deeplearning4j.nn.conf.layers.LSTM.Builder().nOut(5).activation(Activation.TANH).build())
                    .layer(new GlobalPoolingLayer.Builder(pooling).build())
                    .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                    .setInputType(InputType.recurrent(4, t)).build());
            KernelChecks.assertExact(pooled, x, y, fm, null, 1e-10);
        }
        MultiLayerNetwork last = init(builder(DataType.DOUBLE)
                .layer(new org.deeplearning4j.nn.conf.layers.recurrent.LastTimeStep(new org.deeplearning4j.nn.conf.layers.recurrent.SimpleRnn
                        .Builder().nOut(4).activation(Activation.TANH).build()))
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(4, t)).build());
        KernelChecks.assertExact(last, x, y, fm, null, 1e-10);

        MultiLayerNetwork perStep = init(builder(DataType.DOUBLE)
                .layer(new org.deeplearning4j.nn.conf.layers.LSTM.Builder().nOut(5).activation(Activation.TANH).build())
                .layer(new DenseLayer.Builder().nOut(4).activation(Activation.RELU).build()) // on every step
                .layer(new org.deeplearning4j.nn.conf.layers.RnnOutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3)
                        .activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(4, t)).build());
        INDArray ys = Nd4j.zeros(DataType.DOUBLE, b, 3, t);
        for (int i = 0; i < b; i++) {
            for (int s = 0; s < t; s++) {
                ys.putScalar(new int[]{i, (i + s) % 3, s}, 1.0);
            }
        }
        KernelChecks.assertExact(perStep, x, ys, null, null, 1e-10);
        KernelChecks.assertExact(perStep, x, ys, fm, fm, 1e-10);
        INDArray labelMaskOnly = fm.dup();
        labelMaskOnly.putScalar(0, 0, 0.0); // a label that does not count, on a step that does
        KernelChecks.assertExact(perStep, x, ys, null, labelMaskOnly, 1e-10);
        // padding before the steps (ALIGN_END) and holes: DL4J's LSTM does not take the mask (its recurrence runs over
        // padded steps too; the masking is downstream), and neither does the engine's
        INDArray leading = Nd4j.zeros(DataType.DOUBLE, b, t);
        INDArray holes = Nd4j.zeros(DataType.DOUBLE, b, t);
        for (int i = 0; i < b; i++) {
            for (int s = 0; s < t; s++) {
                leading.putScalar(i, s, fm.getDouble(i, t - 1 - s));
                holes.putScalar(i, s, (i * 7 + s * 3) % 4 == 1 ? 0.0 : 1.0);
            }
        }
        KernelChecks.assertExact(perStep, x, ys, leading, leading, 1e-10);
        KernelChecks.assertExact(perStep, x, ys, holes, holes, 1e-10);
        // LastTimeStep hands the mask to its layer, which DL4J's LSTM applies forward but not backward: padding after the
        // steps is exact on the layer's kernel; padding before them, holes and fractional masks run on the wrapper's
        // fallback, DL4J's own layer, which rounds its masked output to float32 (TimeSeriesUtils.pullLastTimeSteps
        // creates it in ND4J's default type, as in DL4J's own fit; KernelChecks' oracle runs DL4J in float64 throughout)
        INDArray fractional = fm.mul(0.5);
        for (org.deeplearning4j.nn.conf.layers.Layer rnn : new org.deeplearning4j.nn.conf.layers.Layer[]{
                new org.deeplearning4j.nn.conf.layers.LSTM.Builder().nOut(5).activation(Activation.TANH).build(),
                new org.deeplearning4j.nn.conf.layers.recurrent.SimpleRnn.Builder().nOut(5).activation(Activation.TANH).build()}) {
            MultiLayerNetwork lastOf = init(builder(DataType.DOUBLE)
                    .layer(new org.deeplearning4j.nn.conf.layers.recurrent.LastTimeStep(rnn))
                    .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                    .setInputType(InputType.recurrent(4, t)).build());
            KernelChecks.assertExact(lastOf, x, y, fm, null, 1e-10);
            for (INDArray m : new INDArray[]{leading, holes, fractional}) {
                KernelChecks.assertExact(lastOf, x, y, m, null, 1e-7);
            }
        }

        // the one-call trainer takes masked data (the same model from LabeledData and from an iterator of DataSets)
        LabeledData data = LabeledData.of(x.castTo(DataType.FLOAT), ys.castTo(DataType.FLOAT), fm.castTo(DataType.FLOAT),
                fm.castTo(DataType.FLOAT));
        MultiLayerNetwork a = perStep.clone().convertDataType(DataType.FLOAT);
        MultiLayerNetwork c = perStep.clone().convertDataType(DataType.FLOAT);
        PrivateTraining.of(a, data).targetEpsilon(5).accountant("rdp").epochs(2).expectedBatchSize(2).seed(3).workers(1).train();
        PrivateTraining.of(c, new ListDataSetIterator<>(List.of(data.rows(new int[]{0, 1}).toDataSet(),
                data.rows(new int[]{2, 3, 4}).toDataSet()), 3)).targetEpsilon(5).accountant("rdp").epochs(2).expectedBatchSize(2)
                .seed(3).workers(1).train();
        assertEquals(0, a.params().sub(c.params()).amaxNumber().doubleValue(), 1e-6);
        assertTrue(!a.params().equals(perStep.params().castTo(DataType.FLOAT)), "trained");
    }

    /** Rows of a 4-D array keep their rank and values (Nd4j.pullRows alone would gather [c] vectors). */
    @Test
    void rowsKeepTheirRank() {
        INDArray x = Nd4j.rand(DataType.FLOAT, 6, 3, 4, 5);
        INDArray rows = LabeledData.gatherRows(x, new int[]{4, 1});
        assertEquals(List.of(2L, 3L, 4L, 5L), java.util.Arrays.stream(rows.shape()).boxed().toList());
        assertEquals(x.slice(4), rows.slice(0));
        assertEquals(x.slice(1), rows.slice(1));
    }

    private static void assertClose(INDArray expected, INDArray actual) {
        double scale = Math.max(expected.amaxNumber().doubleValue(), 1e-300);
        double diff = expected.sub(actual.reshape(expected.shape())).amaxNumber().doubleValue();
        assertTrue(diff <= 1e-5 * scale, "outputs differ by " + diff / scale);
    }
}
