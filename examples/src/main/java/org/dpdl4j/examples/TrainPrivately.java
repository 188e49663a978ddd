package org.dpdl4j.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Mnist;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.PrivateTraining;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.dpdl4j.release.LoadPolicy;
import org.dpdl4j.release.PrivacyLedger;
import org.dpdl4j.release.PrivateRun;
import org.dpdl4j.release.PrivateModel;

/**
 * Trains a CNN on MNIST at ε = 3 in one call, charged once to a privacy ledger and checkpointed, releases it with its
 * sidecar, and loads it back through the verified loader. Run it again after a crash and it continues the run under its
 * charge.
 */
public final class TrainPrivately {
    private TrainPrivately() {
    }

    /** @param args the output directory (default: private-mnist) and the number of epochs (default 1) */
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args.length > 0 ? args[0] : "private-mnist");
        double epochs = args.length > 1 ? Double.parseDouble(args[1]) : 1;
        TrainTest mnist = Mnist.load(DatasetCache.root().resolve("mnist"));

        Path ledgerFile = out.resolveSibling(out.getFileName() + "-ledger.jsonl");   // every run on this data, charged
        if (Files.exists(out.resolve(PrivateRun.CHECKPOINT))) {                      // stopped earlier: continue it
            PrivateTraining.resume(out, mnist.train()).train();                      // same plan and charge, fresh noise
        } else {
            try (PrivacyLedger ledger = PrivacyLedger.open(ledgerFile, "mnist", 10, 1e-5)) { // ε budget 10, δ 1e-5
                MultiLayerNetwork network = Models.standardCnn(ModelOptions.mnist());   // or any DL4J network of your own
                PrivateTraining.of(network, mnist.train())
                        .targetEpsilon(3).delta(1e-5).epochs(epochs).expectedBatchSize(256)  // sigma calibrated
                        .output(out).ledger(ledger).checkpointEvery(50)                  // charged once, checkpointed
                        .train();                                                        // model.zip + privacy.json in out
            }
        }

        PrivateModel loaded = PrivateModel.load(out, LoadPolicy.privateOnly().withMaxEpsilon(3));
        System.out.printf(java.util.Locale.ROOT, "epsilon %.4f at delta %s (%s); test accuracy %.4f; saved in %s%n", loaded.guarantee().epsilon(),
                loaded.guarantee().delta(), loaded.accountant(),
                DpSgdTrainer.accuracy((MultiLayerNetwork) loaded.network(), mnist.test()), out);
    }
}
