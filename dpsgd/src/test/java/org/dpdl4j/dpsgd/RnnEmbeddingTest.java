package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.EmbeddingLayer;
import org.deeplearning4j.nn.conf.layers.LSTM;
import org.deeplearning4j.nn.conf.layers.RnnOutputLayer;
import org.deeplearning4j.nn.conf.preprocessor.FeedForwardToRnnPreProcessor;
import org.deeplearning4j.nn.conf.preprocessor.RnnToFeedForwardPreProcessor;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.release.PrivacyLedger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * DL4J's RNNEmbedding example (EmbeddingLayer between DL4J's RnnToFeedForward and FeedForwardToRnn preprocessors, an
 * LSTM, an RnnOutputLayer with a label per step; issue 70, item 2): the JVM died with "double free or corruption",
 * because the leading preprocessor, which turns a batch's B sequences into B·T rows, was taken as a fixed prefix whose
 * output has one row per example, and B·T rows were written into a cache of B. Now such a prefix is not cut, a prefix's
 * output of another row count is refused in Java, the network trains, and an example whose label and input lengths
 * differ is refused by name before anything is charged.
 */
class RnnEmbeddingTest {
    @TempDir
    Path tmp;

    private static MultiLayerConfiguration conf() {
        return new NeuralNetConfiguration.Builder().seed(1).activation(Activation.RELU).list()
                .layer(new EmbeddingLayer.Builder().nIn(3).nOut(5).build())
                .layer(new LSTM.Builder().nIn(5).nOut(7).activation(Activation.SOFTSIGN).build())
                .layer(new RnnOutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(7).nOut(4).activation(Activation.SOFTMAX).build())
                .inputPreProcessor(0, new RnnToFeedForwardPreProcessor()).inputPreProcessor(1, new FeedForwardToRnnPreProcessor()).build();
    }

    private static LabeledData data(int b, int inputSteps, int labelSteps) {
        java.util.Random r = new java.util.Random(1);
        INDArray x = Nd4j.create(DataType.FLOAT, b, 1, inputSteps);
        INDArray y = Nd4j.create(DataType.FLOAT, b, 4, labelSteps);
        for (int i = 0; i < b; i++) {
            for (int s = 0; s < Math.max(inputSteps, labelSteps); s++) {
                int k = r.nextInt(3);
                if (s < inputSteps) {
                    x.putScalar(new int[]{i, 0, s}, k);
                }
                if (s < labelSteps) {
                    y.putScalar(new int[]{i, k, s}, 1);
                }
            }
        }
        return LabeledData.of(x, y);
    }

    @Test
    void theRnnEmbeddingExampleTrainsAndAMismatchIsRefusedBeforeTheCharge() throws Exception {
        MultiLayerNetwork net = new MultiLayerNetwork(conf());
        net.init();
        PerExampleGradients g = PerExampleGradients.of(net);
        assertTrue(!g.hasFixedPrefix(), "rows of time steps are no fixed prefix");
        LabeledData d = data(64, 8, 8);
        INDArray two = d.features().get(NDArrayIndex.interval(0, 2), NDArrayIndex.all(), NDArrayIndex.all());
        assertEquals(0, net.output(two).sub(g.output(two)).amaxNumber().doubleValue(), 1e-6, "the engine computes DL4J's output");
        INDArray before = net.params().dup();
        var m = PrivateTraining.of(net, d).noiseMultiplier(1).epochs(1).expectedBatchSize(8).seed(2).train();
        assertTrue(!net.params().equals(before), "trained");
        assertTrue(Double.isFinite(m.guarantee().epsilon()));

        MultiLayerNetwork other = new MultiLayerNetwork(conf());
        other.init();
        try (PrivacyLedger ledger = PrivacyLedger.open(tmp.resolve("l.jsonl"), "x", 10, 1e-5)) {
            var e = assertThrows(IllegalArgumentException.class, () -> PrivateTraining.of(other, data(8, 8, 9)).noiseMultiplier(1)
                    .epochs(1).expectedBatchSize(4).output(tmp.resolve("out")).ledger(ledger).train());
            assertTrue(e.getMessage().contains("output for the data's first examples has shape [2, 4, 8] and their labels [2, 4, 9]")
                    && e.getMessage().contains("label and input lengths differ"), e.getMessage());
            assertEquals(0, ledger.entries().size(), "nothing charged");
        }
    }
}
