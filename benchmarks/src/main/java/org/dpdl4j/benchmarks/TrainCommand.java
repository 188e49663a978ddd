package org.dpdl4j.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.TrainingResult;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code dpdl4j train}: one DP-SGD run, its test accuracy and its (ε, δ). */
@Command(name = "train", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Train a differentially private model with DP-SGD and report its test accuracy and (epsilon, delta).",
                "Saves the model (DL4J ModelSerializer) and privacy.json in --output."})
final class TrainCommand implements Callable<Integer> {
    @Mixin
    TrainingOptions t;

    @Option(names = "--noise-multiplier", paramLabel = "σ", description = "Noise multiplier sigma (or give --target-epsilon).")
    Double noiseMultiplier;

    @Option(names = "--target-epsilon", paramLabel = "ε", description = "Calibrate sigma so the run is (epsilon, delta)-DP (default 3 when --noise-multiplier is not given).")
    Double targetEpsilon;

    @Option(names = "--workers", description = "Threads computing each batch in parallel (default: the number of cores); "
            + "ND4J's per-op threads are set to cores/workers.")
    Integer workers;

    @Override
    public Integer call() throws IOException {
        Path out = t.outputDirectory("train"); // checked before anything runs
        if (t.nonPrivate && (targetEpsilon != null || noiseMultiplier != null && noiseMultiplier != 0)) {
            throw new IllegalArgumentException("--non-private trains with sigma = 0: --target-epsilon and a non-zero "
                    + "--noise-multiplier do not apply");
        }
        if (!t.nonPrivate && noiseMultiplier != null && noiseMultiplier == 0) {
            throw new IllegalArgumentException("--noise-multiplier 0 trains without privacy: add --non-private to do that on purpose");
        }
        TrainTest data = t.load();
        int n = data.train().size();
        double q = t.samplingRate(n);
        long steps = DpSgdConfig.stepsForEpochs(t.epochs, q);
        RdpAccountant accountant = RdpAccountant.standard();
        double sigma;
        if (noiseMultiplier != null && targetEpsilon != null) {
            throw new IllegalArgumentException("give --noise-multiplier or --target-epsilon, not both");
        } else if (t.nonPrivate) {
            sigma = 0;
        } else if (noiseMultiplier != null) {
            sigma = noiseMultiplier;
        } else {
            double target = targetEpsilon != null ? targetEpsilon : 3.0;
            sigma = NoiseCalibration.noiseMultiplier(q, steps, target, t.delta, accountant, 1e-4);
        }
        String modelName = t.modelName();
        ModelOptions options = t.modelOptions(data);
        MultiLayerNetwork net = Models.byName(modelName, options);
        DpSgdConfig.Builder builder = DpSgdConfig.builder().samplingRate(q).noiseMultiplier(sigma).clipNorm(t.clip).steps(steps)
                .physicalBatchSize(t.physicalBatchSize).secureRandom(t.secureNoise).delta(t.delta).nonPrivate(t.nonPrivate)
                .workers(Cli.configureWorkers(workers));
        if (t.seed != null && !t.secureNoise) {
            builder.seed(t.seed);
            System.err.println("note: --seed fixes the sampling and the noise; whoever knows it can remove the noise, so keep it secret");
        }
        DpSgdConfig config = builder.build();

        System.out.printf("dpdl4j %s | %s on %s: n=%d, q=%.6g (B=%d), T=%d (%.4g epochs), C=%s, sigma=%.4f, %s lr=%s, %d parameters%n",
                Cli.version(), modelName, t.dataset, n, q, t.batchSize, steps, t.epochs, t.clip, sigma, t.optimizer,
                options.updater().getLearningRate(0, 0), net.numParams());
        TrainingResult result;
        try (ProgressBar bar = t.noProgress ? null : new ProgressBarBuilder().setTaskName("DP-SGD").setInitialMax(steps)
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
        PrivacyGuarantee g = accountant.guarantee(result.event(), t.delta);

        Path modelPath = out.resolve("model.zip");
        Path tmp = Files.createTempFile(out, ".model", ".zip");
        try {
            ModelSerializer.writeModel(net, tmp.toFile(), true);
            Cli.publish(tmp, modelPath);
        } finally {
            Files.deleteIfExists(tmp);
        }
        Map<String, Object> privacy = new LinkedHashMap<>();
        privacy.put("dataset", t.dataset);
        privacy.put("n", n);
        privacy.put("sampling_rate", q);
        privacy.put("noise_multiplier", sigma);
        privacy.put("clip_norm", t.clip);
        privacy.put("steps", result.stepsTaken());
        privacy.put("delta", t.delta);
        privacy.put("epsilon", g.epsilon());
        privacy.put("non_private", t.nonPrivate);
        privacy.put("rdp_order", g.order());
        privacy.put("accountant", "rdp (Mironov-Talwar-Zhang sampled Gaussian; Canonne-Kamath-Steinke conversion; 156 orders)");
        privacy.put("event", result.event().toMap());
        privacy.put("library_version", Cli.version());
        Cli.writeJsonAtomically(out.resolve("privacy.json"), privacy);

        System.out.printf("test accuracy %.4f | epsilon %.4f at delta %s (RDP order %s) | %d steps, %.1f s, %.0f examples/s%n",
                testAccuracy, g.epsilon(), t.delta, g.order(), result.stepsTaken(), result.seconds(), result.examplesPerSecond());
        if (!g.warning().isEmpty()) {
            System.out.println("warning: " + g.warning());
        }
        System.out.println("model: " + modelPath + "  privacy: " + out.resolve("privacy.json"));
        if (t.json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("test_accuracy", testAccuracy);
            j.put("epsilon", g.epsilon());
            j.put("delta", t.delta);
            j.put("rdp_order", g.order());
            j.put("noise_multiplier", sigma);
            j.put("sampling_rate", q);
            j.put("steps", result.stepsTaken());
            j.put("epochs", t.epochs);
            j.put("clip_norm", t.clip);
            j.put("learning_rate", options.updater().getLearningRate(0, 0));
            j.put("optimizer", t.optimizer);
            j.put("model", modelName);
            j.put("dataset", t.dataset);
            j.put("examples_per_second", result.examplesPerSecond());
            j.put("seconds", result.seconds());
            j.put("model_path", modelPath.toString());
            Cli.printJsonLine(System.out, j);
        }
        return 0;
    }
}
