package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.RNNFormat;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.EmbeddingLayer;
import org.deeplearning4j.nn.conf.layers.EmbeddingSequenceLayer;
import org.deeplearning4j.nn.conf.layers.GlobalPoolingLayer;
import org.deeplearning4j.nn.conf.layers.LSTM;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.PoolingType;
import org.deeplearning4j.nn.conf.layers.RnnOutputLayer;
import org.deeplearning4j.nn.conf.layers.misc.FrozenLayer;
import org.deeplearning4j.nn.conf.layers.recurrent.LastTimeStep;
import org.deeplearning4j.nn.conf.layers.recurrent.SimpleRnn;
import org.deeplearning4j.nn.conf.preprocessor.FeedForwardToRnnPreProcessor;
import org.deeplearning4j.nn.conf.preprocessor.RnnToFeedForwardPreProcessor;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Sgd;
import org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * {@link EmbeddingKernel} against DL4J's own gradient of each example alone ({@link KernelChecks}: 10⁻¹⁰ in float64,
 * clipped norms ≤ C(1 + 10⁻⁶)): {@code EmbeddingLayer} and {@code EmbeddingSequenceLayer} with and without bias, under
 * several activations, with an index repeated within one example (its rows summed before the norm) and across examples,
 * input [B, T] and [B, 1, T], feature and label masks, an {@code EmbeddingLayer} on every step of a sequence, frozen, the
 * grouped norms of augmentation multiplicity, float32, and the non-private mode against DL4J's batch gradient; indices
 * out of range or fractional refused with the example named; the settings left on the fallback still exact.
 */
class EmbeddingKernelTest {
    private static final int VOCAB = 7;
    private static final int DIM = 4;
    private static final int T = 6;
    private static final int B = 5;

    private static NeuralNetConfiguration.ListBuilder builder(DataType type) {
        return new NeuralNetConfiguration.Builder().seed(21).dataType(type).updater(new Sgd(0.1)).weightInit(WeightInit.XAVIER).list();
    }

    private static MultiLayerNetwork init(MultiLayerConfiguration conf) {
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    /**
     * Indices [B, T] with repeats within every example (steps 0, 2 and 3 of example i share an index; steps 1 and 4
     * share another) and across examples.
     */
    static INDArray sequenceIndices(int b, int t) {
        INDArray x = Nd4j.zeros(DataType.DOUBLE, b, t);
        for (int i = 0; i < b; i++) {
            for (int s = 0; s < t; s++) {
                int v = switch (s) {
                    case 0, 2, 3 -> i % VOCAB;
                    case 1, 4 -> (i + 3) % VOCAB;
                    default -> (i * 5 + s) % VOCAB;
                };
                x.putScalar(i, s, v);
            }
        }
        return x;
    }

    static INDArray oneHot(int b, int classes) {
        INDArray y = Nd4j.zeros(DataType.DOUBLE, b, classes);
        for (int i = 0; i < b; i++) {
            y.putScalar(i, (i * 2 + 1) % classes, 1.0);
        }
        return y;
    }

    static INDArray perStepLabels(int b, int classes, int t) {
        INDArray y = Nd4j.zeros(DataType.DOUBLE, b, classes, t);
        for (int i = 0; i < b; i++) {
            for (int s = 0; s < t; s++) {
                y.putScalar(new int[]{i, (i + s) % classes, s}, 1.0);
            }
        }
        return y;
    }

    /** Example i has its first T − (i % 3) steps. */
    static INDArray lengths(int b, int t) {
        INDArray m = Nd4j.zeros(DataType.DOUBLE, b, t);
        for (int i = 0; i < b; i++) {
            for (int s = 0; s < t - i % 3; s++) {
                m.putScalar(i, s, 1.0);
            }
        }
        return m;
    }

    /** The kernel the engine runs for step s of the network's plan. */
    static LayerKernel kernel(Model net, int s) {
        return NetworkPlan.of(net).steps.get(s).kernel();
    }

    static MultiLayerNetwork embeddingDense(DataType type, boolean bias, Activation activation) {
        return init(builder(type)
                .layer(new EmbeddingLayer.Builder().nIn(VOCAB).nOut(DIM).hasBias(bias).activation(activation).build())
                .layer(new DenseLayer.Builder().nIn(DIM).nOut(5).activation(Activation.TANH).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(5).nOut(3).activation(Activation.SOFTMAX).build()).build());
    }

    static MultiLayerNetwork sequenceLstm(DataType type, boolean bias, Activation activation) {
        return init(builder(type)
                .layer(new EmbeddingSequenceLayer.Builder().nIn(VOCAB).nOut(DIM).inputLength(T).hasBias(bias).activation(activation)
                        .build())
                .layer(new LastTimeStep(new LSTM.Builder().nIn(DIM).nOut(5).activation(Activation.TANH).build()))
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(5).nOut(3).activation(Activation.SOFTMAX).build()).build());
    }

    /** The embedding, a SimpleRnn and masked average pooling over time (the masked path on kernels throughout). */
    static MultiLayerNetwork sequencePooled(DataType type, boolean bias) {
        return init(builder(type)
                .layer(new EmbeddingSequenceLayer.Builder().nIn(VOCAB).nOut(DIM).inputLength(T).hasBias(bias)
                        .activation(Activation.IDENTITY).build())
                .layer(new SimpleRnn.Builder().nIn(DIM).nOut(5).activation(Activation.TANH).build())
                .layer(new GlobalPoolingLayer.Builder(PoolingType.AVG).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(5).nOut(3).activation(Activation.SOFTMAX).build()).build());
    }

    @ParameterizedTest(name = "bias {0}")
    @ValueSource(booleans = {true, false})
    void embeddingLayerIsExact(boolean bias) {
        INDArray x = Nd4j.createFromArray(new double[][]{{3}, {0}, {3}, {6}, {3}, {1}}); // 3 three times in the batch
        for (Activation a : new Activation[]{Activation.IDENTITY, Activation.TANH, Activation.RELU, Activation.ELU}) {
            MultiLayerNetwork net = embeddingDense(DataType.DOUBLE, bias, a);
            assertInstanceOf(EmbeddingKernel.class, kernel(net, 0));
            KernelChecks.assertExact(net, x, oneHot(6, 3), 1e-10);
        }
    }

    @ParameterizedTest(name = "bias {0}")
    @ValueSource(booleans = {true, false})
    void repeatedIndicesWithinAnExampleAreSummedBeforeTheNorm(boolean bias) {
        INDArray x = sequenceIndices(B, T);
        for (Activation a : new Activation[]{Activation.IDENTITY, Activation.TANH, Activation.SIGMOID}) {
            MultiLayerNetwork net = sequenceLstm(DataType.DOUBLE, bias, a);
            assertInstanceOf(EmbeddingKernel.class, kernel(net, 0));
            KernelChecks.assertExact(net, x, oneHot(B, 3), 1e-10);
            KernelChecks.assertExact(net, x.reshape(B, 1, T), oneHot(B, 3), 1e-10); // DL4J's other input shape
        }
        // one example whose steps all read one index: its W gradient is one row, the sum of the T deltas
        INDArray same = Nd4j.valueArrayOf(new long[]{1, T}, 2.0, DataType.DOUBLE);
        KernelChecks.assertExact(sequenceLstm(DataType.DOUBLE, bias, Activation.TANH), same, oneHot(1, 3), 1e-10);
    }

    /**
     * The norm is of the summed rows: a kernel that added the squared norms of each step's row instead (as if the
     * steps' indices were distinct) would give a larger norm for an example whose steps share an index.
     */
    @Test
    void theNormIsOfTheSummedRows() {
        MultiLayerNetwork net = sequenceLstm(DataType.DOUBLE, false, Activation.IDENTITY);
        INDArray same = Nd4j.valueArrayOf(new long[]{1, T}, 2.0, DataType.DOUBLE);
        PerExampleGradients engine = PerExampleGradients.of(net);
        engine.compute(same, oneHot(1, 3));
        INDArray g = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        engine.addWeightedSum(Nd4j.ones(DataType.DOUBLE, 1), g);
        long embedding = net.getLayer(0).numParams();
        INDArray w = g.get(org.nd4j.linalg.indexing.NDArrayIndex.point(0), org.nd4j.linalg.indexing.NDArrayIndex.interval(0, embedding));
        double rest = g.norm2Number().doubleValue() * g.norm2Number().doubleValue() - w.norm2Number().doubleValue() * w.norm2Number().doubleValue();
        double embeddingSq = engine.squaredNorms().getDouble(0) - rest;
        assertEquals(w.norm2Number().doubleValue() * w.norm2Number().doubleValue(), embeddingSq, 1e-12 * engine.squaredNorms().getDouble(0));
        assertEquals(DIM, w.neq(0).castTo(DataType.INT32).sumNumber().intValue(), "one row of W");
    }

    @Test
    void masksAreTheExamplesOwn() {
        INDArray x = sequenceIndices(B, T);
        INDArray fm = lengths(B, T);
        for (boolean bias : new boolean[]{true, false}) {
            MultiLayerNetwork pooled = sequencePooled(DataType.DOUBLE, bias);
            assertInstanceOf(EmbeddingKernel.class, kernel(pooled, 0));
            assertInstanceOf(SimpleRnnKernel.class, kernel(pooled, 1));
            KernelChecks.assertExact(pooled, x, oneHot(B, 3), fm, null, 1e-10);
            KernelChecks.assertExact(pooled, x, oneHot(B, 3), null, null, 1e-10);
        }
        // a label per step, masked: the embedding straight into an RnnOutputLayer
        MultiLayerNetwork perStep = init(builder(DataType.DOUBLE)
                .layer(new EmbeddingSequenceLayer.Builder().nIn(VOCAB).nOut(DIM).inputLength(T).activation(Activation.TANH).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MCXENT).nIn(DIM).nOut(3).dataFormat(RNNFormat.NCW)
                        .activation(Activation.SOFTMAX).build()).build());
        KernelChecks.assertExact(perStep, x, perStepLabels(B, 3, T), fm, fm, 1e-10);
        // and into an LSTM, whose masked batches run on its fallback
        KernelChecks.assertExact(sequenceLstm(DataType.DOUBLE, true, Activation.TANH), x, oneHot(B, 3), fm, null, 1e-10);
    }

    /** DL4J's pattern before EmbeddingSequenceLayer: an EmbeddingLayer on every step, between the sequence preprocessors. */
    @Test
    void anEmbeddingLayerOnEveryStepIsExact() {
        MultiLayerNetwork net = init(builder(DataType.DOUBLE)
                .layer(new EmbeddingLayer.Builder().nIn(VOCAB).nOut(DIM).activation(Activation.IDENTITY).build())
                .layer(new SimpleRnn.Builder().nIn(DIM).nOut(5).activation(Activation.TANH).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MCXENT).nIn(5).nOut(3).dataFormat(RNNFormat.NCW)
                        .activation(Activation.SOFTMAX).build())
                .inputPreProcessor(0, new RnnToFeedForwardPreProcessor()).inputPreProcessor(1, new FeedForwardToRnnPreProcessor())
                .build());
        assertInstanceOf(TimeDistributedKernel.class, kernel(net, 1));
        INDArray x = sequenceIndices(B, T).reshape(B, 1, T);
        KernelChecks.assertExact(net, x, perStepLabels(B, 3, T), 1e-10);
    }

    @Test
    void aFrozenEmbeddingIsExact() {
        MultiLayerNetwork net = init(builder(DataType.DOUBLE)
                .layer(new FrozenLayer(new EmbeddingSequenceLayer.Builder().nIn(VOCAB).nOut(DIM).inputLength(T).build()))
                .layer(new LastTimeStep(new SimpleRnn.Builder().nIn(DIM).nOut(5).activation(Activation.TANH).build()))
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(5).nOut(3).activation(Activation.SOFTMAX).build()).build());
        KernelChecks.assertExact(net, sequenceIndices(B, T), oneHot(B, 3), 1e-10);
    }

    /** DL4J's embedding layers ignore their dropout (they never call it): so does the engine, rather than drop indices. */
    @Test
    void anEmbeddingsDropoutIsIgnoredAsDl4jIgnoresIt() {
        MultiLayerNetwork net = init(builder(DataType.DOUBLE)
                .layer(new EmbeddingSequenceLayer.Builder().nIn(VOCAB).nOut(DIM).inputLength(T).dropOut(0.5).build())
                .layer(new LastTimeStep(new SimpleRnn.Builder().nIn(DIM).nOut(5).activation(Activation.TANH).build()))
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(5).nOut(3).activation(Activation.SOFTMAX).build()).build());
        assertInstanceOf(EmbeddingKernel.class, kernel(net, 0));
        KernelChecks.assertExact(net, sequenceIndices(B, T), oneHot(B, 3), 1e-10);
        MultiLayerNetwork single = init(builder(DataType.DOUBLE)
                .layer(new EmbeddingLayer.Builder().nIn(VOCAB).nOut(DIM).dropOut(0.5).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(DIM).nOut(3).activation(Activation.SOFTMAX).build()).build());
        assertInstanceOf(EmbeddingKernel.class, kernel(single, 0));
        KernelChecks.assertExact(single, Nd4j.createFromArray(new double[][]{{1}, {4}, {1}}), oneHot(3, 3), 1e-10);
    }

    @Test
    void float32AgreesWithDl4j() {
        INDArray x = sequenceIndices(B, T).castTo(DataType.FLOAT);
        KernelChecks.Result r = KernelChecks.assertExact(sequenceLstm(DataType.FLOAT, true, Activation.TANH), x,
                oneHot(B, 3).castTo(DataType.FLOAT), 1e-5);
        System.out.println("EMBEDDING float32 sequence+LSTM: " + r);
        r = KernelChecks.assertExact(sequencePooled(DataType.FLOAT, true), x, oneHot(B, 3).castTo(DataType.FLOAT),
                lengths(B, T).castTo(DataType.FLOAT), null, 1e-5);
        System.out.println("EMBEDDING float32 masked sequence+SimpleRnn: " + r);
        r = KernelChecks.assertExact(embeddingDense(DataType.FLOAT, true, Activation.TANH),
                Nd4j.createFromArray(new float[][]{{3}, {0}, {3}, {6}}), oneHot(4, 3).castTo(DataType.FLOAT), 1e-5);
        System.out.println("EMBEDDING float32 EmbeddingLayer: " + r);
    }

    /** The non-private mode (C = ∞: one batch backward pass, {@code addSum}) gives DL4J's batch gradient. */
    @Test
    void theNonPrivateSumIsDl4jsBatchGradient() {
        INDArray x = sequenceIndices(B, T);
        INDArray fm = lengths(B, T);
        int[] rows = {0, 1, 2, 3, 4};
        for (DataType type : new DataType[]{DataType.DOUBLE, DataType.FLOAT}) {
            double tolerance = type == DataType.DOUBLE ? 1e-12 : 1e-5;
            MultiLayerNetwork pooled = sequencePooled(type, true);
            assertNonPrivateSum(pooled, x, oneHot(B, 3), fm, rows, tolerance);
            assertNonPrivateSum(pooled, x, oneHot(B, 3), null, rows, tolerance);
            assertNonPrivateSum(embeddingDense(type, true, Activation.TANH), Nd4j.createFromArray(new double[][]{{3}, {0}, {3}, {6}, {3}}),
                    oneHot(B, 3), null, rows, tolerance);
        }
    }

    static void assertNonPrivateSum(MultiLayerNetwork net, INDArray x, INDArray y, INDArray fm, int[] rows, double tolerance) {
        DataType type = net.params().dataType();
        PerExampleGradients engine = PerExampleGradients.of(net);
        INDArray ours = Nd4j.zeros(type, 1, net.numParams());
        engine.clippedSum(x.castTo(type), y.castTo(type), fm == null ? null : fm.castTo(type), null, rows, Double.POSITIVE_INFINITY,
                2, ours);
        net.setInput(x.castTo(type));
        net.setLabels(y.castTo(type));
        net.setLayerMaskArrays(fm == null ? null : fm.castTo(type), null);
        net.computeGradientAndScore();
        net.clearLayerMaskArrays();
        INDArray dl4j = net.gradient().gradient().castTo(DataType.DOUBLE).reshape(1, net.numParams());
        double error = ours.castTo(DataType.DOUBLE).sub(dl4j).amaxNumber().doubleValue() / dl4j.amaxNumber().doubleValue();
        assertTrue(error <= tolerance, "non-private sum differs from DL4J's batch gradient by " + error + " (relative)");
    }

    /** Augmentation multiplicity: each example's k rows (here with different indices) summed, then clipped as a whole. */
    @Test
    void groupedNormsAreOfTheCopiesSum() {
        int k = 2;
        int n = 4;
        INDArray x = sequenceIndices(n * k, T);
        INDArray y = oneHot(n, 3);
        for (MultiLayerNetwork net : new MultiLayerNetwork[]{sequencePooled(DataType.DOUBLE, true),
                init(builder(DataType.DOUBLE)
                        .layer(new EmbeddingSequenceLayer.Builder().nIn(VOCAB).nOut(DIM).inputLength(T).build())
                        .layer(new GlobalPoolingLayer.Builder(PoolingType.MAX).build())
                        .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(DIM).nOut(3).activation(Activation.SOFTMAX).build())
                        .build())}) {
            assertClippedMeans(net, x, y, n, k);
        }
    }

    /** The engine's clipped sum with k copies against the copies' mean gradients formed one example at a time. */
    static void assertClippedMeans(Model net, INDArray x, INDArray y, int n, int k) {
        INDArray[] means = new INDArray[n];
        double[] norms = new double[n];
        for (int i = 0; i < n; i++) {
            PerExampleGradients g = PerExampleGradients.of(net);
            int[] rows = new int[k];
            int[] labelRows = new int[k];
            for (int j = 0; j < k; j++) {
                rows[j] = i * k + j;
                labelRows[j] = i;
            }
            g.compute(rowsOf(x, rows), rowsOf(y, labelRows));
            INDArray sum = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
            g.addWeightedSum(Nd4j.ones(DataType.DOUBLE, k), sum);
            means[i] = sum.divi(k);
            norms[i] = means[i].norm2Number().doubleValue();
        }
        double c = java.util.Arrays.stream(norms).sorted().toArray()[n / 2];
        INDArray expected = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        for (int i = 0; i < n; i++) {
            expected.addi(means[i].mul(Math.min(1, c / norms[i])));
        }
        INDArray actual = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = (i * 3) % n;
        }
        PerExampleGradients.of(net).clippedSum(x, y, order, c, 2, actual, k);
        double error = actual.sub(expected).norm2Number().doubleValue() / expected.norm2Number().doubleValue();
        assertTrue(error <= 1e-10, "clipped means with k = " + k + ": relative error " + error);
    }

    /** The given rows of an array of any rank (Nd4j.pullRows takes matrices only). */
    static INDArray rowsOf(INDArray a, int[] rows) {
        org.nd4j.linalg.indexing.INDArrayIndex[] index = org.nd4j.linalg.indexing.NDArrayIndex.allFor(a);
        index[0] = new org.nd4j.linalg.indexing.SpecifiedIndex(rows);
        return a.get(index).dup('c');
    }

    /**
     * Indices are data: out of range, fractional or NaN. Before a run (the check on the data's first examples) they are
     * refused, naming which example holds what (DL4J throws too); in a run, one example's bad index must not stop a
     * charged run (issue 68, item 6), so that example gets factor 0 and adds nothing: the clipped sum is the other
     * examples'.
     */
    @Test
    void indicesMustBeIntegersInRange() {
        MultiLayerNetwork net = sequenceLstm(DataType.DOUBLE, true, Activation.TANH);
        for (double bad : new double[]{VOCAB, -1, 2.5, Double.NaN}) {
            INDArray x = sequenceIndices(B, T);
            x.putScalar(3, 4, bad);
            var e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(net,
                    org.dpdl4j.datasets.LabeledData.of(rowsOf(x, new int[]{3, 0, 1}), oneHot(3, 3))));
            assertTrue(e.getMessage().contains("[0, " + VOCAB + ")") && e.getMessage().contains("EmbeddingSequenceLayer"),
                    e.getMessage());
            PerExampleGradients g = PerExampleGradients.of(net);
            int[] all = java.util.stream.IntStream.range(0, B).toArray();
            int[] others = java.util.stream.IntStream.range(0, B).filter(i -> i != 3).toArray();
            INDArray withBad = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
            INDArray without = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
            g.clippedSum(x, oneHot(B, 3), all, 1.0, B, withBad);
            g.clippedSum(x, oneHot(B, 3), others, 1.0, B, without);
            assertEquals(0, withBad.sub(without).amaxNumber().doubleValue(), 1e-12, "index " + bad + ": example 3 adds nothing");
        }
        MultiLayerNetwork single = embeddingDense(DataType.DOUBLE, true, Activation.TANH);
        var e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(single,
                org.dpdl4j.datasets.LabeledData.of(Nd4j.createFromArray(new double[][]{{VOCAB + 3}}), oneHot(1, 3))));
        assertTrue(e.getMessage().contains("EmbeddingLayer") && e.getMessage().contains("[0, " + VOCAB + ")"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PerExampleGradients.of(single)
                .compute(Nd4j.createFromArray(new double[][]{{1, 2}, {3, 4}}), oneHot(2, 3)));
        assertTrue(e.getMessage().contains("[B, 1]"), e.getMessage());
        MultiLayerNetwork fixedLength = init(builder(DataType.DOUBLE)
                .layer(new EmbeddingSequenceLayer.Builder().nIn(VOCAB).nOut(DIM).inputLength(T).inferInputLength(false).build())
                .layer(new LastTimeStep(new SimpleRnn.Builder().nIn(DIM).nOut(5).activation(Activation.TANH).build()))
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(5).nOut(3).activation(Activation.SOFTMAX).build()).build());
        KernelChecks.assertExact(fixedLength, sequenceIndices(B, T), oneHot(B, 3), 1e-10);
        var wrongLength = assertThrows(IllegalArgumentException.class, () -> PerExampleGradients.of(fixedLength)
                .compute(sequenceIndices(B, T + 1), oneHot(B, 3)));
        assertTrue(wrongLength.getMessage().contains("configured for sequences of " + T), wrongLength.getMessage());
    }

    /** A softmax activation (not element-wise) and NWC output stay on DL4J's own layer, exact. */
    @Test
    void settingsWithoutAKernelRunOnTheFallback() {
        MultiLayerNetwork softmax = sequenceLstm(DataType.DOUBLE, true, Activation.SOFTMAX);
        assertInstanceOf(FallbackKernel.class, kernel(softmax, 0));
        KernelChecks.assertExact(softmax, sequenceIndices(B, T), oneHot(B, 3), 1e-10);
        MultiLayerNetwork nwc = init(builder(DataType.DOUBLE)
                .layer(new EmbeddingSequenceLayer.Builder().nIn(VOCAB).nOut(DIM).inputLength(T).outputDataFormat(RNNFormat.NWC).build())
                .layer(new LastTimeStep(new SimpleRnn.Builder().nIn(DIM).nOut(5).dataFormat(RNNFormat.NWC)
                        .activation(Activation.TANH).build()))
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(5).nOut(3).activation(Activation.SOFTMAX).build()).build());
        assertInstanceOf(FallbackKernel.class, kernel(nwc, 0));
        KernelChecks.assertExact(nwc, sequenceIndices(B, T), oneHot(B, 3), 1e-10);
    }
}
