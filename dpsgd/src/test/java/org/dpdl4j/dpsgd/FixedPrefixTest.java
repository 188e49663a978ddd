package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.transferlearning.TransferLearning;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.dpdl4j.models.Scattering;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * The fixed prefix (layers that nothing trains and that draw no random numbers, computed once per example): the clipped
 * sum read from its precomputed output is the clipped sum on the raw rows, bit for bit, for the scattering networks
 * and a frozen feature extractor; a run's workers split and reassemble it in row order; a layer trained before the
 * scattering transform is refused.
 */
class FixedPrefixTest {
    private static final int[] ROWS = {4, 0, 7, 2, 9};

    private static INDArray[] data(int n, int inputs, int classes, DataType type) {
        Nd4j.getRandom().setSeed(41);
        INDArray x = Nd4j.rand(DataType.DOUBLE, n, inputs).castTo(type);
        INDArray y = Nd4j.zeros(type, n, classes);
        for (int i = 0; i < n; i++) {
            y.putScalar(i, (i * 3) % classes, 1.0);
        }
        return new INDArray[]{x, y};
    }

    /** clippedSum on raw rows and on rows of the precomputed prefix output: identical. */
    private static void assertPrefixChangesNothing(Model net, INDArray x, INDArray y, String what) {
        PerExampleGradients raw = PerExampleGradients.of(net);
        assertTrue(raw.hasFixedPrefix(), what + " has a fixed prefix");
        INDArray expected = Nd4j.zeros(net.params().dataType(), 1, net.numParams());
        double lossRaw = raw.clippedSum(x, y, ROWS, 0.3, 2, expected);
        PerExampleGradients cached = PerExampleGradients.of(net);
        INDArray prefix = cached.fixedPrefixOutput(x, 0, (int) x.size(0), 3);
        cached.readFixedPrefixOutput(true, cached.fixedPrefixShape());
        INDArray actual = Nd4j.zeros(net.params().dataType(), 1, net.numParams());
        double lossCached = cached.clippedSum(prefix, y, ROWS, 0.3, 2, actual);
        assertEquals(expected, actual, what + ": clipped sum from the prefix's output");
        assertEquals(lossRaw, lossCached, 0.0, what + ": loss");
        INDArray nonPrivateRaw = Nd4j.zeros(net.params().dataType(), 1, net.numParams());
        raw.clippedSum(x, y, ROWS, Double.POSITIVE_INFINITY, 5, nonPrivateRaw);
        INDArray nonPrivateCached = Nd4j.zeros(net.params().dataType(), 1, net.numParams());
        cached.clippedSum(prefix, y, ROWS, Double.POSITIVE_INFINITY, 5, nonPrivateCached);
        assertEquals(nonPrivateRaw, nonPrivateCached, what + ": non-private sum from the prefix's output");
        // inference always reads network inputs
        assertEquals(raw.output(x), cached.output(x), what + ": output");
    }

    @Test
    void scatteringNetworksGiveTheSameSumsFromTheirPrecomputedFeatures() {
        INDArray[] xy = data(10, 784, 10, DataType.FLOAT);
        for (String name : new String[]{"scatternet-linear", "scatternet-cnn"}) {
            assertPrefixChangesNothing(Models.byName(name, ModelOptions.mnist().withSeed(3)), xy[0], xy[1], name);
        }
    }

    @Test
    void aFrozenFeatureExtractorIsAFixedPrefix() {
        ComputationGraph frozen = new TransferLearning.GraphBuilder(GraphExactnessTest.graph(DataType.DOUBLE, null))
                .setFeatureExtractor("gn0").build().convertDataType(DataType.DOUBLE);
        INDArray[] xy = data(10, 72, 3, DataType.DOUBLE);
        assertPrefixChangesNothing(frozen, xy[0], xy[1], "graph frozen up to gn0");
        assertFalse(PerExampleGradients.of(GraphExactnessTest.graph(DataType.DOUBLE, null)).hasFixedPrefix(),
                "a graph whose first layer trains has none");
        assertFalse(PerExampleGradients.of(Models.standardCnn(ModelOptions.mnist())).hasFixedPrefix());
    }

    /** A run's session (two workers) precomputes the prefix once, in row order: its step equals the raw clipped sum. */
    @Test
    void aRunsWorkersPrecomputeThePrefixInRowOrder() {
        MultiLayerNetwork net = Models.scatterNetLinear(ModelOptions.mnist().withSeed(5));
        INDArray[] xy = data(11, 784, 10, DataType.FLOAT);
        LabeledData train = new LabeledData(xy[0], xy[1], 1, 28, 28);
        DpSgdConfig config = DpSgdConfig.builder().samplingRate(0.5).noiseMultiplier(1).clipNorm(0.3).steps(2).workers(2)
                .physicalBatchSize(2).seed(1).build();
        PoissonBatchSampler sampler = new PoissonBatchSampler(11, 0.5, 8);
        INDArray fromSession = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        try (ClippedSums.Session session = ClippedSums.local().open(net, train, config, sampler)) {
            assertTrue(((LocalClippedSums.LocalSession) session).readsFixedPrefix(), "q T = 1: the prefix is precomputed");
            session.step(0, fromSession);
        }
        INDArray expected = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        PerExampleGradients.of(net).clippedSum(xy[0], xy[1], sampler.batch(0), 0.3, 2, expected);
        assertTrue(sampler.batch(0).length > 2, "the batch spans both workers");
        assertTrue(expected.sub(fromSession).amaxNumber().doubleValue() <= 1e-6 * expected.amaxNumber().doubleValue(),
                "session step vs raw clipped sum");
    }

    @Test
    void aLayerTrainedBeforeTheScatteringTransformIsRefused() {
        var conf = new NeuralNetConfiguration.Builder().seed(1).list()
                .layer(new ConvolutionLayer.Builder(3, 3).padding(1, 1).nOut(1).activation(Activation.IDENTITY).build())
                .layer(new Scattering.Builder().build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(12, 12, 1)).build();
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        var e = assertThrows(IllegalArgumentException.class, () -> PerExampleGradients.of(net));
        assertTrue(e.getMessage().contains("layer 1") && e.getMessage().contains("Scattering")
                && e.getMessage().contains("no input gradient"), e.getMessage());
    }
}
