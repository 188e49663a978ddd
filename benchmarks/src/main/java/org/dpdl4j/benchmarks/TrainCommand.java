package org.dpdl4j.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Datasets;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.TrainingResult;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.nd4j.linalg.api.buffer.DataType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code dpdl4j train}: one DP-SGD run, its test accuracy and its (ε, δ). */
@Command(name = "train", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Train a differentially private model with DP-SGD and report its test accuracy and (epsilon, delta).",
                "Saves the model (DL4J ModelSerializer) and privacy.json in --output."})
final class TrainCommand implements Callable<Integer> {
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

    @Option(names = "--noise-multiplier", paramLabel = "σ", description = "Noise multiplier sigma (or give --target-epsilon).")
    Double noiseMultiplier;

    @Option(names = "--target-epsilon", paramLabel = "ε", description = "Calibrate sigma so the run is (epsilon, delta)-DP (default 3 when --noise-multiplier is not given).")
    Double targetEpsilon;

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

    @Option(names = "--workers", description = "Threads computing each batch in parallel (default: the number of cores); "
            + "ND4J's per-op threads are set to cores/workers.")
    Integer workers;

    @Option(names = "--output", description = "Output directory (default runs/train-<dataset>-<time>).")
    Path output;

    @Option(names = "--image-size", defaultValue = "28x28x1", description = "HxWxC for folder: datasets (default ${DEFAULT-VALUE}).")
    String imageSize;

    @Option(names = "--json", description = "Print one JSON object with the results as the last line of stdout.")
    boolean json;

    @Option(names = "--no-progress", description = "Do not draw a progress bar.")
    boolean noProgress;

    @Override
    public Integer call() throws IOException {
        int[] hwc = parseImageSize(imageSize);
        long weightSeed = seed != null ? seed : 0;
        TrainTest data = Datasets.load(dataset, DatasetCache.root(), hwc[0], hwc[1], hwc[2], weightSeed);
        int n = data.train().size();
        if (batchSize < 1 || batchSize > n) {
            throw new IllegalArgumentException("--batch-size must be in [1, " + n + "], got " + batchSize);
        }
        double q = (double) batchSize / n;
        long steps = DpSgdConfig.stepsForEpochs(epochs, q);
        RdpAccountant accountant = RdpAccountant.standard();
        double sigma;
        if (noiseMultiplier != null && targetEpsilon != null) {
            throw new IllegalArgumentException("give --noise-multiplier or --target-epsilon, not both");
        } else if (noiseMultiplier != null) {
            sigma = noiseMultiplier;
        } else {
            double target = targetEpsilon != null ? targetEpsilon : 3.0;
            sigma = NoiseCalibration.noiseMultiplier(q, steps, target, delta, accountant, 1e-4);
        }
        String modelName = model != null ? model : dataset.equals("cifar10") ? "cifar-cnn" : "standard-cnn";
        ModelOptions options = new ModelOptions(data.train().height(), data.train().width(), data.train().channels(),
                data.train().numClasses(), ModelOptions.activationNamed(activation), ModelOptions.updaterNamed(optimizer, lr), weightSeed, DataType.FLOAT);
        MultiLayerNetwork net = Models.byName(modelName, options);
        DpSgdConfig.Builder builder = DpSgdConfig.builder().samplingRate(q).noiseMultiplier(sigma).clipNorm(clip).steps(steps)
                .physicalBatchSize(physicalBatchSize).secureRandom(secureNoise).delta(delta)
                .workers(Cli.configureWorkers(workers));
        if (seed != null && !secureNoise) {
            builder.seed(seed);
            System.err.println("note: --seed fixes the sampling and the noise; whoever knows it can remove the noise, so keep it secret");
        }
        DpSgdConfig config = builder.build();
        Path out = output != null ? output : Paths.get("runs", "train-" + dataset.replaceAll("[^A-Za-z0-9_-]", "_") + "-"
                + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));

        System.out.printf("dpdl4j %s | %s on %s: n=%d, q=%.6g (B=%d), T=%d (%.4g epochs), C=%s, sigma=%.4f, %s lr=%s, %d parameters%n",
                Cli.version(), modelName, dataset, n, q, batchSize, steps, epochs, clip, sigma, optimizer,
                options.updater().getLearningRate(0, 0), net.numParams());
        TrainingResult result;
        try (ProgressBar bar = noProgress ? null : new ProgressBarBuilder().setTaskName("DP-SGD").setInitialMax(steps)
                .setConsumer(new ConsoleProgressBarConsumer(System.err, 150)).setUpdateIntervalMillis(500).build()) {
            result = new DpSgdTrainer(accountant).train(net, data.train(), config, info -> {
                if (bar != null) {
                    bar.stepTo(info.step());
                    bar.setExtraMessage(String.format(" epoch %.1f eps %.3f %.0f ex/s | train loss %.3f (not private)",
                            info.epoch(), info.epsilonSoFar(), info.examplesPerSecond(), info.meanLoss()));
                }
            });
        }
        double testAccuracy = DpSgdTrainer.accuracy(net, data.test());
        PrivacyGuarantee g = accountant.guarantee(result.event(), delta);

        Files.createDirectories(out);
        Path modelPath = out.resolve("model.zip");
        Path tmp = Files.createTempFile(out, ".model", ".zip");
        try {
            ModelSerializer.writeModel(net, tmp.toFile(), true);
            Cli.publish(tmp, modelPath);
        } finally {
            Files.deleteIfExists(tmp);
        }
        Map<String, Object> privacy = new LinkedHashMap<>();
        privacy.put("dataset", dataset);
        privacy.put("n", n);
        privacy.put("sampling_rate", q);
        privacy.put("noise_multiplier", sigma);
        privacy.put("clip_norm", clip);
        privacy.put("steps", result.stepsTaken());
        privacy.put("delta", delta);
        privacy.put("epsilon", g.epsilon());
        privacy.put("rdp_order", g.order());
        privacy.put("accountant", "rdp (Mironov-Talwar-Zhang sampled Gaussian; Canonne-Kamath-Steinke conversion; 156 orders)");
        privacy.put("event", result.event().toMap());
        privacy.put("library_version", Cli.version());
        Cli.writeJsonAtomically(out.resolve("privacy.json"), privacy);

        System.out.printf("test accuracy %.4f | epsilon %.4f at delta %s (RDP order %s) | %d steps, %.1f s, %.0f examples/s%n",
                testAccuracy, g.epsilon(), delta, g.order(), result.stepsTaken(), result.seconds(), result.examplesPerSecond());
        if (!g.warning().isEmpty()) {
            System.out.println("warning: " + g.warning());
        }
        System.out.println("model: " + modelPath + "  privacy: " + out.resolve("privacy.json"));
        if (json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("test_accuracy", testAccuracy);
            j.put("epsilon", g.epsilon());
            j.put("delta", delta);
            j.put("rdp_order", g.order());
            j.put("noise_multiplier", sigma);
            j.put("sampling_rate", q);
            j.put("steps", result.stepsTaken());
            j.put("epochs", epochs);
            j.put("clip_norm", clip);
            j.put("learning_rate", options.updater().getLearningRate(0, 0));
            j.put("optimizer", optimizer);
            j.put("model", modelName);
            j.put("dataset", dataset);
            j.put("examples_per_second", result.examplesPerSecond());
            j.put("seconds", result.seconds());
            j.put("model_path", modelPath.toString());
            Cli.printJsonLine(System.out, j);
        }
        return 0;
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
