package org.dpdl4j.examples;

import java.nio.file.Path;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.zoo.model.LeNet;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Mnist;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpCompatibility;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.PrivateTraining;
import org.dpdl4j.release.PrivateModel;

/**
 * Trains DL4J's own zoo LeNet on MNIST at ε = 3, as a user brings a network: DL4J's zoo builds it (Same-mode
 * convolutions, 4-D input), {@link DpCompatibility#fix} makes it trainable with DP-SGD and says what it changed (for LeNet:
 * nothing; for ResNet50: its batch normalisations become group normalisations), {@link PrivateTraining} trains it.
 */
public final class TrainZooModel {
    private TrainZooModel() {
    }

    /** @param args the output directory (default: private-lenet) and the number of epochs (default 1) */
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args.length > 0 ? args[0] : "private-lenet");
        double epochs = args.length > 1 ? Double.parseDouble(args[1]) : 1;
        TrainTest mnist = Mnist.load(DatasetCache.root().resolve("mnist"));

        MultiLayerNetwork lenet = (MultiLayerNetwork) LeNet.builder().numClasses(10).inputShape(new int[]{1, 28, 28}).build().init();
        DpCompatibility.Fixed<MultiLayerNetwork> fixed = DpCompatibility.fix(lenet);
        System.out.println(fixed.message());
        PrivateModel model = PrivateTraining.of(fixed.network(), mnist.train())
                .targetEpsilon(3).delta(1e-5).epochs(epochs).expectedBatchSize(256)
                .train();
        model.save(out);
        System.out.printf(java.util.Locale.ROOT, "zoo LeNet: epsilon %.4f at delta %s; test accuracy %.4f; saved in %s%n",
                model.guarantee().epsilon(), model.guarantee().delta(),
                DpSgdTrainer.accuracy((MultiLayerNetwork) model.network(), mnist.test()), out);
    }
}
