package org.dpdl4j.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.dpdl4j.datasets.TrainTest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dpdl4j evaluate}: the test accuracy of a saved model. */
@Command(name = "evaluate", mixinStandardHelpOptions = true, description = {"Test accuracy of a saved model (model.zip from train or tune) on a dataset's test split.",
                "Evaluating a released model on public test data is post-processing: it costs no privacy."})
final class EvaluateCommand implements Callable<Integer> {
    @Parameters(paramLabel = "MODEL", description = "A model.zip written by train or tune (DL4J ModelSerializer).")
    Path model;

    @Option(names = "--dataset", defaultValue = "mnist", description = "mnist, fashion-mnist, cifar10 or folder:PATH (default ${DEFAULT-VALUE}).")
    String dataset;

    @Option(names = "--image-size", defaultValue = "28x28x1", description = "HxWxC for folder: datasets (default ${DEFAULT-VALUE}).")
    String imageSize;

    @Option(names = "--json", description = "Print one JSON object as the last line of stdout (test_accuracy null on a private test "
            + "split: see --public-test).")
    boolean json;

    @Option(names = "--public-test", description = "Declare the test split public, so that the --json line holds its exact accuracy "
            + "(only mnist, fashion-mnist and cifar10 are public without it; a folder's accuracy is printed for the operator).")
    boolean publicTest;

    @Override
    public Integer call() throws Exception {
        if (!Files.isRegularFile(model)) {
            throw new IllegalArgumentException("MODEL " + model + " is not a file");
        }
        org.deeplearning4j.nn.api.Model net;
        try {
            net = org.dpdl4j.dpsgd.Networks.restore(model.toFile(), false);
        } catch (Exception e) {
            throw new IllegalArgumentException("MODEL " + model + " is not a DL4J network saved by ModelSerializer ("
                    + e.getClass().getSimpleName() + ")");
        }
        TrainingOptions t = new TrainingOptions();
        t.dataset = dataset;
        t.imageSize = imageSize;
        t.publicTest = publicTest;
        TrainTest data = t.loadReadByIndex(); // the test part only: shards and a folder's training images are not read
        long inputs = net instanceof org.deeplearning4j.nn.multilayer.MultiLayerNetwork m ? m.layerInputSize(0) : -1;
        long features = data.test().features().size(1);
        if (inputs > 0 && inputs != features && inputs != data.test().channels()) {
            throw new IllegalArgumentException("MODEL " + model + " takes " + inputs + " inputs; --dataset " + dataset + " has "
                    + features + " per example");
        }
        Cli.TestAccuracy accuracy = Cli.TestAccuracy.of(net, data);
        System.out.printf("test accuracy %s on %s (%d examples)%n", accuracy.console(), dataset, data.test().size());
        if (json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("test_accuracy", accuracy.release());
            j.put("dataset", dataset);
            j.put("examples", data.publicTest() ? data.test().size() : null); // a private split's size is the operator's too
            j.put("model_path", model.toString());
            Cli.printJsonLine(System.out, j);
        }
        return 0;
    }
}
