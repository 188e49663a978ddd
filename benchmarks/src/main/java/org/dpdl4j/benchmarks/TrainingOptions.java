package org.dpdl4j.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Datasets;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.models.ModelOptions;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.learning.config.IUpdater;
import picocli.CommandLine.Option;

/** The options of one DP-SGD run that {@code train} and {@code tune} share. */
final class TrainingOptions {
    @Option(names = "--dataset", defaultValue = "mnist", description = "mnist, fashion-mnist, cifar10 or folder:PATH (default ${DEFAULT-VALUE}).")
    String dataset;

    @Option(names = "--model", description = "standard-cnn, all-conv, cifar-cnn or mlp (default: cifar-cnn for cifar10, else standard-cnn).")
    String model;

    @Option(names = "--epochs", defaultValue = "40", description = "Epochs E; steps T = ceil(E/q) (default ${DEFAULT-VALUE}).")
    double epochs;

    @Option(names = "--batch-size", defaultValue = "256", description = "Expected (Poisson) batch size B; q = B/n (default ${DEFAULT-VALUE}).")
    int batchSize;

    @Option(names = "--clip", defaultValue = "1.0", paramLabel = "C", description = "Per-example clipping norm C (default ${DEFAULT-VALUE}).")
    double clip;

    @Option(names = "--delta", defaultValue = "1e-5", paramLabel = "δ", description = "delta (default ${DEFAULT-VALUE}).")
    double delta;

    @Option(names = "--lr", paramLabel = "η", description = "Learning rate (default: 0.5 sgd, 0.05 momentum, 0.002 adam).")
    Double lr;

    @Option(names = "--optimizer", defaultValue = "sgd", description = "sgd, momentum (Nesterov, 0.9) or adam (default ${DEFAULT-VALUE}).")
    String optimizer;

    @Option(names = "--activation", defaultValue = "tanh", description = "tanh, relu or tempered-sigmoid (s, T, o) = (2, 2, 1), which equals tanh (default ${DEFAULT-VALUE}).")
    String activation;

    @Option(names = "--seed", description = {"Seed of weights, sampling and noise, for reproducible runs. Anyone who knows it",
            "can regenerate and remove the noise: keep it secret. Default: weights seed 0, sampling and noise seeded",
            "from SecureRandom."})
    Long seed;

    @Option(names = "--secure-noise", description = "Seed sampling and noise from SecureRandom (runs are then not reproducible).")
    boolean secureNoise;

    @Option(names = "--physical-batch-size", defaultValue = "512", description = "Largest chunk pushed through the network at once (default ${DEFAULT-VALUE}).")
    int physicalBatchSize;

    @Option(names = "--image-size", defaultValue = "28x28x1", description = "HxWxC for folder: datasets (default ${DEFAULT-VALUE}).")
    String imageSize;

    @Option(names = "--output", description = "Output directory (default runs/<command>-<dataset>-<time>).")
    Path output;

    @Option(names = "--json", description = "Print one JSON object with the results as the last line of stdout.")
    boolean json;

    @Option(names = "--no-progress", description = "Do not draw a progress bar.")
    boolean noProgress;

    /** The weights seed: --seed, else 0. */
    long weightSeed() {
        return seed != null ? seed : 0;
    }

    /** Train and test data, fetched and verified. */
    TrainTest load() throws IOException {
        int[] hwc = parseImageSize(imageSize);
        return Datasets.load(dataset, DatasetCache.root(), hwc[0], hwc[1], hwc[2], weightSeed());
    }

    /** The model name: --model, else the dataset's default. */
    String modelName() {
        return model != null ? model : dataset.equals("cifar10") ? "cifar-cnn" : "standard-cnn";
    }

    /** Model options for this data with the chosen activation and optimiser. */
    ModelOptions modelOptions(TrainTest data) {
        IActivation a;
        IUpdater u;
        try {
            a = ModelOptions.activationNamed(activation);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--activation: " + e.getMessage());
        }
        try {
            u = ModelOptions.updaterNamed(optimizer, lr);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException((lr != null && !(lr > 0 && lr < Double.POSITIVE_INFINITY) ? "--lr: " : "--optimizer: ")
                    + e.getMessage());
        }
        return new ModelOptions(data.train().height(), data.train().width(), data.train().channels(),
                data.train().numClasses(), a, u, weightSeed(), DataType.FLOAT);
    }

    /** --output, else runs/&lt;command&gt;-&lt;dataset&gt;-&lt;time&gt;. */
    Path outputDirectory(String command) {
        return output != null ? output : Paths.get("runs", command + "-" + dataset.replaceAll("[^A-Za-z0-9_-]", "_") + "-"
                + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
    }

    /** Checks B against n and returns q = B/n. */
    double samplingRate(int n) {
        if (batchSize < 1 || batchSize > n) {
            throw new IllegalArgumentException("--batch-size must be in [1, " + n + "], got " + batchSize);
        }
        return (double) batchSize / n;
    }

    static int[] parseImageSize(String s) {
        String[] p = s.split("x");
        try {
            if (p.length == 3) {
                int[] hwc = {Integer.parseInt(p[0]), Integer.parseInt(p[1]), Integer.parseInt(p[2])};
                if (hwc[0] > 0 && hwc[1] > 0 && (hwc[2] == 1 || hwc[2] == 3)) {
                    return hwc;
                }
            }
        } catch (NumberFormatException ignored) {
            // falls through to the error below
        }
        throw new IllegalArgumentException("--image-size must be HxWxC with C = 1 or 3, got '" + s + "'");
    }
}
