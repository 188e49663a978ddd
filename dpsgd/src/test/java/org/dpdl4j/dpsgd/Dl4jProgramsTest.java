package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.deeplearning4j.nn.conf.BackpropType;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.CenterLossOutputLayer;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.LSTM;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.RnnOutputLayer;
import org.deeplearning4j.nn.conf.layers.variational.VariationalAutoencoder;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.SelfComposedEvent;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.Mnist;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.dpdl4j.release.PrivateModel;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Sgd;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * What DL4J's own example programs need (issue 70): early stopping with its selection counted (item 4), the network's
 * own DL4J listeners called as fit calls them (item 5), refusals before training that say what to use instead (items 5
 * and 6), and images given to a network that reads them flat, as DL4J's fit takes them (item 7).
 */
class Dl4jProgramsTest {
    private static LabeledData mnist(int n, long seed) throws Exception {
        return Mnist.load(DatasetCache.root().resolve("mnist")).train().randomSubset(n, seed);
    }

    private static MultiLayerNetwork mlp() {
        return Models.mlp(ModelOptions.mnist().withSeed(2).withUpdater(new Sgd(0.5)));
    }

    /**
     * Early stopping on a private split: every 10 steps a noisy accuracy (its noise s·|V| on the count), k = T/10 Gaussian
     * releases composed with DP-SGD's event, σ calibrated for the whole, the sidecar says what was chosen. On a split
     * declared public: exact scores, no cost, and the released network is the best scored one (its accuracy on the split
     * is the largest score).
     */
    @Test
    void earlyStoppingCountsItsSelection() throws Exception {
        LabeledData all = mnist(1200, 3);
        LabeledData.Split split = all.splitByRecord(0.2, 5);
        LabeledData train = split.train();
        LabeledData held = split.validation();
        PrivateModel m = PrivateTraining.of(mlp(), train).validation(held, 10, 0.05).targetEpsilon(3).epochs(2).expectedBatchSize(60)
                .accountant("rdp").seed(4).train();
        double q = 60.0 / train.size();
        long steps = DpSgdConfig.stepsForEpochs(2, q);
        double sigma = ((Number) m.configuration().get("noise_multiplier")).doubleValue();
        var expected = ComposedEvent.of(new SelfComposedEvent(new GaussianEvent(0.05 * held.size()), steps / 10),
                NoiseCalibration.dpSgd(q, sigma, steps));
        assertEquals(expected, m.event(), "the scores' Gaussians composed with DP-SGD");
        assertTrue(m.guarantee().epsilon() <= 3, "calibrated for the composition: " + m.guarantee().epsilon());
        assertTrue(Accountants.byName("rdp").epsilon(NoiseCalibration.dpSgd(q, sigma, steps), 1e-5) < m.guarantee().epsilon() - 1e-3,
                "the selection costs something");
        assertEquals("private", m.configuration().get("validation"));
        assertEquals((int) (steps / 10), m.configuration().get("validation_evaluations"));

        PrivateModel p = PrivateTraining.of(mlp(), train).publicValidation(held, 5).noiseMultiplier(1).epochs(2).expectedBatchSize(60)
                .accountant("rdp").seed(4).train();
        assertEquals(NoiseCalibration.dpSgd(q, 1, steps), p.event(), "a public split costs nothing");
        @SuppressWarnings("unchecked")
        java.util.List<Double> scores = (java.util.List<Double>) p.configuration().get("validation_scores");
        double bestScore = scores.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
        assertEquals(bestScore, DpSgdTrainer.accuracy(p.network(), held), 1e-12, "the released network is the best scored");
        var withOutput = assertThrows(IllegalArgumentException.class, () -> PrivateTraining.of(mlp(), train).validation(held, 5, 0.01)
                .noiseMultiplier(1).epochs(1).expectedBatchSize(60).output(java.nio.file.Files.createTempDirectory("x")).train());
        assertTrue(withOutput.getMessage().contains("without output(dir)"), withOutput.getMessage());
        var tooRare = assertThrows(IllegalArgumentException.class, () -> PrivateTraining.of(mlp(), train).validation(held, 100_000, 0.01)
                .noiseMultiplier(1).epochs(1).expectedBatchSize(60).train());
        assertTrue(tooRare.getMessage().contains("validation every 100000 steps") && tooRare.getMessage().contains("nothing would be scored"),
                tooRare.getMessage());
        LabeledData wrongShape = LabeledData.of(Nd4j.rand(DataType.FLOAT, 3, 5), Nd4j.eye(3).castTo(DataType.FLOAT));
        MultiLayerNetwork untouched = mlp();
        INDArray before = untouched.params().dup();
        var misfit = assertThrows(IllegalArgumentException.class, () -> PrivateTraining.of(untouched, train).validation(wrongShape, 5, 0.01)
                .noiseMultiplier(1).epochs(1).expectedBatchSize(60).train());
        assertTrue(misfit.getMessage().contains("cannot read the data's examples (features [2, 5])")
                && misfit.getMessage().contains("nothing was charged"), misfit.getMessage());
        assertEquals(before, untouched.params(), "refused before training");
    }

    /** A network's own DL4J listeners hear every step (iterationDone, with the batch's loss as the score) and every epoch. */
    @Test
    void dl4jListenersAreCalledAsFitCallsThem() throws Exception {
        MultiLayerNetwork net = mlp();
        AtomicInteger iterations = new AtomicInteger();
        AtomicInteger epochs = new AtomicInteger();
        double[] lastScore = {Double.NaN};
        net.addListeners(new BaseTrainingListener() {
            @Override
            public void iterationDone(org.deeplearning4j.nn.api.Model model, int iteration, int epoch) {
                iterations.incrementAndGet();
                lastScore[0] = model.score();
            }

            @Override
            public void onEpochEnd(org.deeplearning4j.nn.api.Model model) {
                epochs.incrementAndGet();
            }
        });
        PrivateTraining.of(net, mnist(600, 4)).noiseMultiplier(1).epochs(2).expectedBatchSize(60).seed(1).train();
        assertEquals(DpSgdConfig.stepsForEpochs(2, 0.1), iterations.get(), "one iterationDone per step");
        assertEquals(2, epochs.get(), "one onEpochEnd per epoch");
        assertTrue(lastScore[0] > 0 && lastScore[0] < 10, "the batch's mean loss as the score: " + lastScore[0]);
    }

    /** Refused before training, each saying what to use instead (issue 70, items 5 and 6). */
    @Test
    void whatCannotBePrivateIsRefusedWell() {
        var tbptt = new NeuralNetConfiguration.Builder().list()
                .layer(new LSTM.Builder().nOut(4).build())
                .layer(new RnnOutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .backpropType(BackpropType.TruncatedBPTT).tBPTTLength(5).setInputType(InputType.recurrent(3)).build();
        var e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(tbptt));
        assertTrue(e.getMessage().contains("truncated backpropagation") && e.getMessage().contains("BackpropType.Standard"), e.getMessage());
        var center = new NeuralNetConfiguration.Builder().list().layer(new DenseLayer.Builder().nOut(4).build())
                .layer(new CenterLossOutputLayer.Builder().nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(8)).build();
        e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(center));
        assertTrue(e.getMessage().contains("centre update") && e.getMessage().contains("use an OutputLayer"), e.getMessage());
        var vae = new NeuralNetConfiguration.Builder().list().layer(new VariationalAutoencoder.Builder().nOut(3).encoderLayerSizes(4)
                .decoderLayerSizes(4).build()).setInputType(InputType.feedForward(8)).build();
        e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(vae));
        assertTrue(e.getMessage().contains("supervised loss") && e.getMessage().contains("VariationalAutoencoder inside a supervised"),
                e.getMessage());
        var uncollapsed = new NeuralNetConfiguration.Builder().list()
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(4).build())
                .layer(new org.deeplearning4j.nn.conf.layers.GlobalPoolingLayer.Builder(org.deeplearning4j.nn.conf.layers.PoolingType.AVG)
                        .collapseDimensions(false).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutional(8, 8, 1)).build();
        e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(uncollapsed)); // before any step
        assertTrue(e.getMessage().contains("layer 1") && e.getMessage().contains("collapse"), e.getMessage());

        // CnnSentenceDataSetIterator's 4-D mask [n, 1, T, 1]: refused with what to give instead, not dropped
        var sentences = new NeuralNetConfiguration.Builder().list()
                .layer(new ConvolutionLayer.Builder(3, 4).nOut(4)
                        .convolutionMode(org.deeplearning4j.nn.conf.ConvolutionMode.Same).build())
                .layer(new org.deeplearning4j.nn.conf.layers.GlobalPoolingLayer.Builder(org.deeplearning4j.nn.conf.layers.PoolingType.MAX).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutional(6, 4, 1)).build();
        MultiLayerNetwork cnn = new MultiLayerNetwork(sentences);
        cnn.init();
        INDArray mask4 = Nd4j.ones(DataType.FLOAT, 4, 1, 6, 1);
        DataSet batch = new DataSet(Nd4j.rand(DataType.FLOAT, 4, 1, 6, 4), Nd4j.eye(2).castTo(DataType.FLOAT).repeat(0, 2), mask4, null);
        e = assertThrows(IllegalArgumentException.class, () -> PrivateTraining.of(cnn,
                new org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator<>(List.of(batch), 4))
                .noiseMultiplier(1).epochs(1).expectedBatchSize(2).train());
        assertTrue(e.getMessage().contains("4-D mask") && e.getMessage().contains("[n, vectorSize, T]"), e.getMessage());
    }

    /**
     * DL4J's zoo networks built with InputType.convolutionalFlat (VGG16's, LeNet's) take NCHW images as DL4J's fit does
     * (issue 70, item 7: refused, "the network reads flat [B, d] input"): the same clipped sum from [B, c, h, w] as from
     * the same images flattened.
     */
    @Test
    void aFlatReadingNetworkTakesImages() {
        MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(1).dataType(DataType.DOUBLE).list()
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(2).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(6, 6, 3)).build());
        net.init();
        INDArray images = Nd4j.rand(DataType.DOUBLE, 5, 3, 6, 6);
        INDArray y = Nd4j.zeros(DataType.DOUBLE, 5, 2);
        y.getColumn(0).assign(1);
        PerExampleGradients g = new PerExampleGradients(net);
        assertEquals(2, g.inputRank());
        INDArray a = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        INDArray b = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        g.clippedSum(images, y, new int[]{0, 1, 2, 3, 4}, 1.0, 5, a);
        g.clippedSum(images.reshape('c', 5, 108), y, new int[]{0, 1, 2, 3, 4}, 1.0, 5, b);
        assertEquals(a, b, "images and the same images flattened");
        assertEquals(net.output(images), g.output(images));
    }
}
