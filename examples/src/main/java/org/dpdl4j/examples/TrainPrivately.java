package org.dpdl4j.examples;

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
import org.dpdl4j.release.PrivateModel;

/** Trains a CNN on MNIST at ε = 3 in one call, saves it with its sidecar, and loads it back through the verified loader. */
public final class TrainPrivately {
    private TrainPrivately() {
    }

    /** @param args the output directory (default: private-mnist) and the number of epochs (default 1) */
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args.length > 0 ? args[0] : "private-mnist");
        double epochs = args.length > 1 ? Double.parseDouble(args[1]) : 1;
        TrainTest mnist = Mnist.load(DatasetCache.root().resolve("mnist"));

        MultiLayerNetwork network = Models.standardCnn(ModelOptions.mnist());    // or any DL4J network of your own
        PrivateModel model = PrivateTraining.of(network, mnist.train())
                .targetEpsilon(3).delta(1e-5).epochs(epochs).expectedBatchSize(256)
                .train();                                                        // sigma calibrated, DP-SGD run
        model.save(out);                                                         // model.zip + privacy.json

        PrivateModel loaded = PrivateModel.load(out, LoadPolicy.privateOnly().withMaxEpsilon(3));
        System.out.printf(java.util.Locale.ROOT, "epsilon %.4f at delta %s (%s); test accuracy %.4f; saved in %s%n", loaded.guarantee().epsilon(),
                loaded.guarantee().delta(), loaded.accountant(),
                DpSgdTrainer.accuracy((MultiLayerNetwork) loaded.network(), mnist.test()), out);
    }
}
