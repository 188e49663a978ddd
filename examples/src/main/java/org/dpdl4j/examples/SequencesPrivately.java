package org.dpdl4j.examples;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.LSTM;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.recurrent.LastTimeStep;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.dpsgd.PrivateTraining;
import org.dpdl4j.release.PrivateModel;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * A sequence classifier from a DL4J iterator whose minibatches are each padded to their own longest sequence (as
 * DL4J's sequence iterators pad them, with masks), trained privately with early stopping: the network is scored every
 * 10 steps on a held-out split with noise, and the best scored one is released, the scores' cost in ε.
 */
public final class SequencesPrivately {
    private SequencesPrivately() {
    }

    /** One example: a sequence of 5 to 40 steps of 2 features; its class: whether its first feature sums above 0. */
    private static DataSet example(Random r) {
        int t = 5 + r.nextInt(36);
        double[][] x = new double[2][t];
        double sum = 0;
        for (int s = 0; s < t; s++) {
            x[0][s] = r.nextGaussian() + 0.15;
            x[1][s] = r.nextGaussian();
            sum += x[0][s];
        }
        double[] y = sum > 0.15 * t ? new double[]{0, 1} : new double[]{1, 0};
        return new DataSet(Nd4j.createFromArray(x).reshape(1, 2, t).castTo(org.nd4j.linalg.api.buffer.DataType.FLOAT),
                Nd4j.createFromArray(y).reshape(1, 2).castTo(org.nd4j.linalg.api.buffer.DataType.FLOAT));
    }

    /** @param args the number of epochs (default 3) */
    public static void main(String[] args) {
        double epochs = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        Random r = new Random(7);
        List<DataSet> train = new ArrayList<>();
        List<DataSet> held = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            (i % 5 == 0 ? held : train).add(example(r)); // a held-out fifth, disjoint from the training examples
        }
        MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(1).updater(new Adam(0.01)).list()
                .layer(new LastTimeStep(new LSTM.Builder().nOut(16).activation(Activation.TANH).build()))
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(2)).build());
        net.init();
        DataSet v = DataSet.merge(held); // padded to the longest, with masks
        LabeledData validation = LabeledData.of(v.getFeatures(), v.getLabels(), v.getFeaturesMaskArray(), v.getLabelsMaskArray());

        PrivateModel model = PrivateTraining.of(net, new ListDataSetIterator<>(train, 32)) // each batch padded to its own longest
                .validation(validation, 10, 0.05)                                            // early stopping, counted
                .targetEpsilon(4).delta(1e-5).epochs(epochs).expectedBatchSize(64)
                .train();
        System.out.printf(java.util.Locale.ROOT, "epsilon %.4f at delta %s (training and %s noisy scores); best step %s, "
                        + "validation accuracy %.4f (noisy)%n", model.guarantee().epsilon(), model.guarantee().delta(),
                model.configuration().get("validation_evaluations"), model.configuration().get("validation_best_step"),
                ((List<?>) model.configuration().get("validation_scores")).stream().mapToDouble(s -> ((Number) s).doubleValue()).max()
                        .orElse(Double.NaN));
    }
}
