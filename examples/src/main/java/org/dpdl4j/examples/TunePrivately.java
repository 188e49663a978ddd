package org.dpdl4j.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Mnist;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.release.LoadPolicy;
import org.dpdl4j.release.PrivacyLedger;
import org.dpdl4j.release.PrivateModel;
import org.dpdl4j.release.PrivateRun;
import org.dpdl4j.tuning.PrivateTuning;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.learning.config.IUpdater;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * Tunes the learning rate of a DL4J network of your own by private random search (Papernot &amp; Steinke,
 * "Hyperparameter Tuning with Renyi Differential Privacy", ICLR 2022, arXiv:2110.03620): σ is calibrated so that the
 * whole search (every trial's DP-SGD run and noisy validation score, and the random number K of trials) is
 * (3, 10⁻⁵)-DP; the ledger is charged once, before the first trial; only the best model is released, with its sidecar.
 * Run it again after a crash and it continues the search under its charge.
 */
public final class TunePrivately {
    private TunePrivately() {
    }

    /** Your network, built for each trial from the trial's optimiser (with its learning rate) and weights' seed. */
    static MultiLayerNetwork network(IUpdater updater, long seed) {
        MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(seed).updater(updater)
                .weightInit(WeightInit.XAVIER).list()
                .layer(new DenseLayer.Builder().nOut(128).activation(Activation.TANH).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(10).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(28 * 28)).build());
        net.init();
        return net;
    }

    /** @param args the output directory (default: private-search), the epochs of each trial (default 1), E[K] (default 4) */
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args.length > 0 ? args[0] : "private-search");
        double epochs = args.length > 1 ? Double.parseDouble(args[1]) : 1;
        double meanK = args.length > 2 ? Double.parseDouble(args[2]) : 4;
        TrainTest mnist = Mnist.load(DatasetCache.root().resolve("mnist"));

        Path ledgerFile = out.resolveSibling(out.getFileName() + "-ledger.jsonl");
        PrivateModel best;
        if (Files.exists(out.resolve(PrivateRun.TUNING_STATE))) {                   // stopped earlier: continue it
            best = PrivateTuning.resume(out, TunePrivately::network, mnist.train()).run(); // same K, candidates and charge
        } else {
            try (PrivacyLedger ledger = PrivacyLedger.open(ledgerFile, "mnist", 10, 1e-5)) { // ε budget 10, δ 1e-5
                best = PrivateTuning.randomSearch(TunePrivately::network, mnist.train())
                        .space("learning_rate=cat:0.5,1,2")                            // the candidates
                        .repetitions(RepetitionDistribution.geometric(meanK))        // K >= 1, E[K] = meanK
                        .targetEpsilon(3).delta(1e-5).epochs(epochs).expectedBatchSize(256) // σ for the whole search
                        .ledger(ledger).output(out)                                  // charged once, best model released
                        .run();
            }
        }

        PrivateModel loaded = PrivateModel.load(out, LoadPolicy.privateOnly().withMaxEpsilon(3));
        System.out.printf(java.util.Locale.ROOT, "best %s: epsilon %.4f at delta %s for the whole search; test accuracy %.4f; "
                        + "saved in %s%n", best.configuration().get("best"), loaded.guarantee().epsilon(), loaded.guarantee().delta(),
                DpSgdTrainer.accuracy((MultiLayerNetwork) loaded.network(), mnist.test()), out);
    }
}
