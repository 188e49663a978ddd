package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.LSTM;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.recurrent.LastTimeStep;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.PackedExamples;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.learning.config.Sgd;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * A DL4J sequence iterator whose minibatches are each padded to their own longest sequence (issue 70, item 1: such
 * iterators were refused) trains exactly: the clipped sum of a batch read back equals DL4J's own per-example gradients
 * clipped by hand (float64), and an example's clipped gradient does not depend on how much padding its batch-mates
 * brought (the same sequence padded to 59 and to 200 steps in its DataSet gives the same gradient).
 */
class VariableLengthIteratorTest {
    private static MultiLayerNetwork lstm() {
        MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(5).dataType(DataType.DOUBLE)
                .updater(new Sgd(0.1)).list()
                .layer(new LastTimeStep(new LSTM.Builder().nOut(6).activation(Activation.TANH).build()))
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(3)).build());
        net.init();
        return net;
    }

    /** One DataSet of the given sequences, padded at the end (or, alignEnd, at the start) to {@code t} steps, with masks. */
    private static DataSet padded(List<double[][]> seqs, int t, boolean alignEnd, int labelFrom) {
        INDArray x = Nd4j.zeros(DataType.DOUBLE, seqs.size(), 3, t);
        INDArray m = Nd4j.zeros(DataType.DOUBLE, seqs.size(), t);
        INDArray y = Nd4j.zeros(DataType.DOUBLE, seqs.size(), 2);
        for (int i = 0; i < seqs.size(); i++) {
            double[][] q = seqs.get(i);
            int shift = alignEnd ? t - q[0].length : 0;
            for (int f = 0; f < 3; f++) {
                for (int s = 0; s < q[0].length; s++) {
                    x.putScalar(new int[]{i, f, shift + s}, q[f][s]);
                }
            }
            for (int s = 0; s < q[0].length; s++) {
                m.putScalar(i, shift + s, 1);
            }
            y.putScalar(i, (labelFrom + i) % 2, 1);
        }
        return new DataSet(x, y, m, null);
    }

    private static double[][] sequence(java.util.Random r, int length) {
        double[][] q = new double[3][length];
        for (double[] row : q) {
            for (int s = 0; s < length; s++) {
                row[s] = r.nextGaussian();
            }
        }
        return q;
    }

    @Test
    void aVariableLengthIteratorTrainsExactlyWhateverItsPadding() {
        java.util.Random r = new java.util.Random(9);
        List<double[][]> all = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            all.add(sequence(r, 4 + i * 5)); // 4 to 59 steps
        }
        List<DataSet> minibatches = new ArrayList<>(); // as DL4J's iterators make them: each padded to its own longest
        for (int from = 0; from < 12; from += 4) {
            List<double[][]> part = all.subList(from, from + 4);
            minibatches.add(padded(part, part.get(3)[0].length, from == 4, from)); // one of them padded at its start
        }
        MultiLayerNetwork net = lstm();
        double c = 0.5;
        try (PackedExamples packed = PackedExamples.packToTemporaryFile(new ListDataSetIterator<>(minibatches, 1))) {
            int[] rows = {0, 5, 7, 11};
            LabeledData b = packed.read(rows);
            // the engine on the batch read back against DL4J's own gradient of each example alone, with its masks
            KernelChecks.assertExact(net, b.features(), b.labels(), b.featureMask(), b.labelMask(), 1e-10);
            PerExampleGradients g = new PerExampleGradients(net);
            INDArray sum = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
            g.clippedSum(b.features(), b.labels(), b.featureMask(), b.labelMask(), new int[]{0, 1, 2, 3}, c, 4, sum);
            INDArray byHand = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
            double dl4jOwn = 0;
            for (int k = 0; k < rows.length; k++) { // DL4J on each example alone (as read back, with its mask), clipped by hand
                INDArray y = Nd4j.zeros(DataType.DOUBLE, 1, 2);
                y.putScalar(0, rows[k] % 2, 1);
                INDArray gi = dl4jGradient(net, LabeledData.gatherRows(b.features(), new int[]{k}), y,
                        LabeledData.gatherRows(b.featureMask(), new int[]{k}));
                byHand.addi(gi.mul(Math.min(1, c / gi.norm2Number().doubleValue())));
                double[][] q = all.get(rows[k]); // and DL4J on it unpadded, without a mask: the same
                INDArray bare = dl4jGradient(net, Nd4j.createFromArray(q).reshape(1, 3, q[0].length), y, null);
                dl4jOwn = Math.max(dl4jOwn, bare.sub(gi).norm2Number().doubleValue() / bare.norm2Number().doubleValue());
            }
            double diff = sum.sub(byHand).norm2Number().doubleValue() / byHand.norm2Number().doubleValue();
            System.out.printf("variable-length iterator, 4 sequences of 4 to 59 steps: |engine - DL4J clipped by hand| / |DL4J| = %.3g "
                    + "(DL4J's own gradient with a mask against without one, unpadded: up to %.3g)%n", diff, dl4jOwn);
            assertTrue(diff <= 1e-10, "the clipped sum differs from DL4J's by " + diff + " (relative)");
            assertTrue(dl4jOwn <= 1e-12, "DL4J's masked and unmasked gradients of one example: " + dl4jOwn);
        }
        // the same sequence (59 steps) in a DataSet padded to 59 and in one padded to 200 by a longer batch-mate
        double[][] q = all.get(11);
        try (PackedExamples short59 = PackedExamples.packToTemporaryFile(new ListDataSetIterator<>(List.of(padded(java.util.Collections.singletonList(q), 59,
                false, 1)), 1));
             PackedExamples long200 = PackedExamples.packToTemporaryFile(new ListDataSetIterator<>(List.of(padded(List.of(q,
                     sequence(r, 200)), 200, true, 1)), 1))) {
            INDArray a = clippedOf(net, short59.read(new int[]{0}), c);
            INDArray b = clippedOf(net, long200.read(new int[]{0}), c);
            assertEquals(0, a.sub(b).amaxNumber().doubleValue(), 1e-12, "its batch-mates' padding changes nothing");
            LabeledData withMate = long200.read(new int[]{0, 1});
            assertEquals(200, withMate.features().size(2));
            PerExampleGradients g = new PerExampleGradients(net);
            g.compute(withMate.features(), withMate.labels(), withMate.featureMask(), withMate.labelMask());
            INDArray first = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
            g.addWeightedSum(Nd4j.createFromArray(Math.min(1, c / Math.sqrt(g.squaredNorms().getDouble(0))), 0.0), first);
            assertEquals(0, a.sub(first).amaxNumber().doubleValue(), 1e-12, "padded to 200 in a batch: the same gradient");
        }
    }

    /** DL4J's own gradient of one example (features [1, 3, T], optional feature mask [1, T]), flattened. */
    /**
     * UCISequenceClassification's layout (SequenceRecordReaderDataSetIterator with ALIGN_END): each minibatch padded at
     * the front to its own longest, one label per sequence on its last step of an [n, classes, T] label array, with a
     * label mask; an LSTM into an RnnOutputLayer. Read back, each sequence starts at step 0 with its label on its own
     * last step, and the engine's gradient of it equals DL4J's of the unpadded sequence alone (float64).
     */
    @Test
    void alignEndWithALabelOnTheLastStepIsTheUnpaddedSequence() {
        MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(5).dataType(DataType.DOUBLE)
                .updater(new Sgd(0.1)).list()
                .layer(new LSTM.Builder().nOut(5).activation(Activation.TANH).build())
                .layer(new org.deeplearning4j.nn.conf.layers.RnnOutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3)
                        .activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(3)).build());
        net.init();
        assertAlignEndIsUnpadded(net, true);
    }

    /**
     * Conv1DUCISequenceClassification's network on the same ALIGN_END iterator (one label per sequence, [n, classes]):
     * a 1-D convolution in Same mode and masked max pooling over the steps, each sequence's gradient that of the
     * sequence alone (the padding read after it is zeros, as Same mode's own padding is).
     */
    @Test
    void alignEndIntoAOneDimensionalConvolutionIsTheUnpaddedSequence() {
        MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(5).dataType(DataType.DOUBLE)
                .updater(new Sgd(0.1)).convolutionMode(org.deeplearning4j.nn.conf.ConvolutionMode.Same).list()
                .layer(new org.deeplearning4j.nn.conf.layers.Convolution1DLayer.Builder(3).nOut(4).activation(Activation.TANH).build())
                .layer(new org.deeplearning4j.nn.conf.layers.GlobalPoolingLayer.Builder(
                        org.deeplearning4j.nn.conf.layers.PoolingType.MAX).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(3)).build());
        net.init();
        assertAlignEndIsUnpadded(net, false);
    }

    /**
     * Two ALIGN_END minibatches of 3 sequences (3 to 11 steps), packed and read back: each sequence starts at step 0,
     * and the engine's gradient of it equals DL4J's of the unpadded sequence alone, to 1e-12 (float64). With
     * {@code labelPerStep} the label is on the last step of [n, 3, T] labels with a label mask, as an RnnOutputLayer
     * reads it; otherwise [n, 3].
     */
    private static void assertAlignEndIsUnpadded(MultiLayerNetwork net, boolean labelPerStep) {
        java.util.Random r = new java.util.Random(4);
        List<double[][]> all = new ArrayList<>();
        List<DataSet> minibatches = new ArrayList<>();
        for (int from = 0; from < 6; from += 3) {
            List<double[][]> part = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                part.add(sequence(r, 3 + r.nextInt(9)));
            }
            all.addAll(part);
            int t = part.stream().mapToInt(q -> q[0].length).max().getAsInt();
            DataSet d = padded(part, t, true, from);
            INDArray y = labelPerStep ? Nd4j.zeros(DataType.DOUBLE, 3, 3, t) : Nd4j.zeros(DataType.DOUBLE, 3, 3);
            INDArray lm = labelPerStep ? Nd4j.zeros(DataType.DOUBLE, 3, t) : null;
            for (int i = 0; i < 3; i++) {
                if (labelPerStep) {
                    y.putScalar(new int[]{i, (from + i) % 3, t - 1}, 1);
                    lm.putScalar(i, t - 1, 1);
                } else {
                    y.putScalar(i, (from + i) % 3, 1);
                }
            }
            minibatches.add(new DataSet(d.getFeatures(), y, d.getFeaturesMaskArray(), lm));
        }
        try (PackedExamples packed = PackedExamples.packToTemporaryFile(new ListDataSetIterator<>(minibatches, 1))) {
            int[] rows = {0, 1, 2, 3, 4, 5};
            LabeledData b = packed.read(rows);
            PerExampleGradients g = new PerExampleGradients(net);
            g.compute(b.features(), b.labels(), b.featureMask(), b.labelMask());
            for (int k = 0; k < rows.length; k++) {
                double[][] q = all.get(k);
                int length = q[0].length;
                assertEquals(length, b.featureMask().getRow(k).sumNumber().intValue(), "the sequence's own steps");
                assertEquals(length, b.featureMask().getRow(k).get(NDArrayIndex.interval(0, length)).sumNumber().intValue(),
                        "starting at step 0");
                INDArray y = labelPerStep ? Nd4j.zeros(DataType.DOUBLE, 1, 3, length) : Nd4j.zeros(DataType.DOUBLE, 1, 3);
                INDArray lm = null;
                if (labelPerStep) {
                    assertEquals(1.0, b.labelMask().getDouble(k, length - 1), "its label on its own last step");
                    y.putScalar(new int[]{0, k % 3, length - 1}, 1);
                    lm = Nd4j.zeros(DataType.DOUBLE, 1, length);
                    lm.putScalar(0, length - 1, 1);
                } else {
                    y.putScalar(0, k % 3, 1);
                }
                INDArray alone = KernelChecks.dl4jGradient(net, Nd4j.createFromArray(q).reshape(1, 3, length), y, null, lm);
                INDArray ours = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
                INDArray oneHot = Nd4j.zeros(DataType.DOUBLE, rows.length);
                oneHot.putScalar(k, 1.0);
                g.addWeightedSum(oneHot, ours);
                double diff = ours.reshape(net.numParams()).sub(alone).norm2Number().doubleValue() / alone.norm2Number().doubleValue();
                assertTrue(diff <= 1e-12, "example " + k + ": the engine differs from DL4J on the unpadded sequence by " + diff);
            }
        }
    }

    private static INDArray dl4jGradient(MultiLayerNetwork net, INDArray x, INDArray y, INDArray mask) {
        return KernelChecks.dl4jGradient(net, x, y, mask, null).reshape(1, net.numParams());
    }

    private static INDArray clippedOf(MultiLayerNetwork net, LabeledData one, double c) {
        INDArray s = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        new PerExampleGradients(net).clippedSum(one.features(), one.labels(), one.featureMask(), one.labelMask(), new int[]{0}, c, 1, s);
        return s;
    }
}
