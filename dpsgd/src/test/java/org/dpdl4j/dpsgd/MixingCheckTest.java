package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.stream.IntStream;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.Layer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.samediff.SameDiffLambdaLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.release.PrivacyLedger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.autodiff.samediff.SDVariable;
import org.nd4j.autodiff.samediff.SameDiff;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * A layer the engine cannot vouch for is checked not to mix the examples of a batch wherever it stands: before every
 * trained layer too (the SameDiffLambdaLayer x − mean over the batch, before Dense → Output, was never checked,
 * and moved the clipped sum by 1.9·C when one of 10 examples was removed), and on the first real batch of two or more
 * examples (an engine whose first batch had one row was never checked again).
 */
class MixingCheckTest {
    @TempDir
    Path tmp;

    /** Subtracts the batch's mean: each example's output depends on every example of the batch. No parameters. */
    public static class CenterBatch extends SameDiffLambdaLayer {
        @Override
        public SDVariable defineLayer(SameDiff sd, SDVariable x) {
            return x.sub(x.mean(true, 0));
        }

        @Override
        public InputType getOutputType(int layerIndex, InputType inputType) {
            return inputType;
        }
    }

    /** Doubles its input: parameterless, on DL4J's own code, and each example's output its own. */
    public static class Twice extends SameDiffLambdaLayer {
        @Override
        public SDVariable defineLayer(SameDiff sd, SDVariable x) {
            return x.mul(2.0);
        }

        @Override
        public InputType getOutputType(int layerIndex, InputType inputType) {
            return inputType;
        }
    }

    /** The same mixing as an ActivationLayer subclass (the fallback, without parameters), which also runs on one row. */
    public static class CenterBatchActivation extends org.deeplearning4j.nn.conf.layers.ActivationLayer {
        public CenterBatchActivation() {
            setActivationFn(Activation.IDENTITY.getActivationFunction());
        }

        @Override
        public org.deeplearning4j.nn.api.Layer instantiate(NeuralNetConfiguration conf,
                java.util.Collection<org.deeplearning4j.optimize.api.TrainingListener> listeners, int index, INDArray view,
                boolean init, DataType type) {
            var layer = new org.deeplearning4j.nn.layers.ActivationLayer(conf, type) {
                @Override
                public INDArray activate(boolean training, org.deeplearning4j.nn.workspace.LayerWorkspaceMgr ws) {
                    INDArray a = super.activate(training, ws);
                    return a.subRowVector(a.mean(0));
                }
            };
            return org.dpdl4j.models.LayerWiring.wire(layer, conf, listeners, index, view, init, initializer());
        }
    }

    private static MultiLayerNetwork network(Layer... layers) {
        var b = new NeuralNetConfiguration.Builder().seed(1).dataType(DataType.DOUBLE).list();
        for (Layer l : layers) {
            b.layer(l);
        }
        var net = new MultiLayerNetwork(b.layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3)
                .activation(Activation.SOFTMAX).build()).setInputType(InputType.feedForward(4)).build());
        net.init();
        return net;
    }

    private static LabeledData data(int n) {
        Nd4j.getRandom().setSeed(7);
        INDArray x = Nd4j.randn(DataType.DOUBLE, n, 4).muli(3);
        INDArray y = Nd4j.zeros(DataType.DOUBLE, n, 3);
        for (int i = 0; i < n; i++) {
            y.putScalar(i, i % 3, 1.0);
        }
        x.getRow(n - 1).muli(10); // an outlier: removing it moves every other example's centred input
        return LabeledData.of(x, y);
    }

    /** The largest ‖S(D) − S(D∖{i})‖ over every example i, of the clipped sums S over all the data's rows. */
    private static double largestMove(MultiLayerNetwork net, LabeledData d, double c) {
        return largestMove(net, d, c, false);
    }

    /** {@link #largestMove(MultiLayerNetwork, LabeledData, double)} on an engine set to one example at a time, or not. */
    private static double largestMove(MultiLayerNetwork net, LabeledData d, double c, boolean oneAtATime) {
        PerExampleGradients g = new PerExampleGradients(net);
        g.oneAtATime = oneAtATime;
        g.mixingChecked = !oneAtATime; // as a batch: what the engine computed unchecked before
        int n = d.size();
        INDArray all = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        g.clippedSum(d.features(), d.labels(), IntStream.range(0, n).toArray(), c, n, all);
        double worst = 0;
        for (int i = 0; i < n; i++) {
            int skip = i;
            INDArray without = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
            g.clippedSum(d.features(), d.labels(), IntStream.range(0, n).filter(r -> r != skip).toArray(), c, n, without);
            worst = Math.max(worst, all.sub(without).norm2Number().doubleValue());
        }
        return worst;
    }

    @Test
    void aMixingLayerBeforeEveryTrainedLayerIsRefusedAtPlanTime() {
        LabeledData d = data(10);
        MultiLayerNetwork mixing = network(new CenterBatch(), new DenseLayer.Builder().nOut(8).activation(Activation.TANH).build());
        assertEquals(java.util.List.of(), DpCompatibility.problems(mixing), "its configuration alone says nothing");
        var e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(mixing, d));
        assertTrue(e.getMessage().startsWith("layer 0 (CenterBatch") && e.getMessage().contains("depends on the other examples"),
                e.getMessage());
        // the engine's public compute() refuses it on a real batch too (it ran, unchecked, before)
        var engine = assertThrows(IllegalArgumentException.class, () -> new PerExampleGradients(mixing).compute(d.features(),
                d.labels()));
        assertTrue(engine.getMessage().contains("depends on the other examples"), engine.getMessage());

        // the same network with a parameterless layer that keeps the examples apart passes, and its sensitivity is C
        MultiLayerNetwork own = network(new Twice(), new DenseLayer.Builder().nOut(8).activation(Activation.TANH).build());
        DpCompatibility.check(own, d);
        double c = 0.05;
        double moved = largestMove(own, d, c);
        System.out.printf("Twice -> Dense -> Output, C = %.2f: largest ||S(D) - S(D')|| over the 10 neighbours = %.5f%n", c, moved);
        assertTrue(moved <= c * (1 + 1e-9), "removing one example moved the clipped sum by " + moved + " > C = " + c);
    }

    @Test
    void aMixingNetworkIsRefusedBeforeTheLedgerIsCharged() throws Exception {
        LabeledData d = data(40);
        MultiLayerNetwork mixing = network(new CenterBatch(), new DenseLayer.Builder().nOut(8).activation(Activation.TANH).build());
        Path ledgerFile = tmp.resolve("ledger.jsonl");
        try (PrivacyLedger ledger = PrivacyLedger.open(ledgerFile, "mixing", 10, 1e-5)) {
            var e = assertThrows(IllegalArgumentException.class, () -> PrivateTraining.of(mixing, d).noiseMultiplier(1).epochs(1)
                    .expectedBatchSize(10).output(tmp.resolve("out")).ledger(ledger).train());
            assertTrue(e.getMessage().contains("layer 0 (CenterBatch") && e.getMessage().contains("depends on the other examples"),
                    e.getMessage());
            assertEquals(0, ledger.entries().stream().filter(x -> x.kind() == PrivacyLedger.Kind.CHARGE).count(),
                    "nothing charged: " + ledger.entries());
        }
    }

    /**
     * A mixing layer after a trained one, on an engine whose first batch has one row (a Spark part, a small worker share):
     * checked on its next batch of two or more examples (the one-time check was spent on the one row before, and proved
     * nothing). Refused before a run; in a run (a mixing that only real data showed, after the charge) the engine does
     * not stop on one example's content but computes one example at a time, each example's gradient its own: the
     * sensitivity, measured over every neighbour, is C all the same.
     */
    @Test
    void anEngineWhoseFirstBatchHasOneRowChecksItsNextBatch() {
        LabeledData d = data(10);
        MultiLayerNetwork net = network(new DenseLayer.Builder().nOut(8).activation(Activation.TANH).build(),
                new CenterBatchActivation());
        var plan = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(net, d));
        assertTrue(plan.getMessage().startsWith("layer 1 (CenterBatchActivation") && plan.getMessage().contains("depends on the other"),
                plan.getMessage());
        PerExampleGradients part = new PerExampleGradients(net);
        INDArray t = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        part.clippedSum(d.features(), d.labels(), new int[]{0}, 0.05, 10, t); // one row: nothing to compare
        assertTrue(!part.oneAtATime);
        part.clippedSum(d.features(), d.labels(), IntStream.range(0, 10).toArray(), 0.05, 10, t);
        assertTrue(part.oneAtATime, "the ten-row batch showed the mixing");
        double c = 0.05;
        double moved = largestMove(net, d, c, true);
        System.out.printf("Dense -> CenterBatchActivation -> Output, one example at a time, C = %.2f: largest ||S(D) - S(D')|| = %.5f%n",
                c, moved);
        assertTrue(moved <= c * (1 + 1e-9), "removing one example moved the clipped sum by " + moved + " > C = " + c);
        double asBatch = largestMove(net, d, c, false);
        System.out.printf("the same computed as one batch (unchecked): %.5f%n", asBatch);
        assertTrue(asBatch > c * (1 + 1e-6), "computed as a batch, the mixing moves it beyond C: " + asBatch);
    }
}
