package org.dpdl4j.cli;

import org.dpdl4j.benchmarks.Reporting;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import me.tongfei.progressbar.ProgressBar;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdSettings;
import org.dpdl4j.dpsgd.PrivateTraining;
import org.dpdl4j.dpsgd.StepInfo;
import org.dpdl4j.models.FeatureStatistics;
import org.dpdl4j.models.Models;
import org.dpdl4j.release.InputSpec;
import org.dpdl4j.release.PrivateModel;
import org.dpdl4j.release.PrivacyLedger;
import org.dpdl4j.release.PrivateRun;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code dpdl4j train}: one DP-SGD run, its test accuracy and its (ε, δ). */
@Command(name = "train", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Train a differentially private model with DP-SGD and report its test accuracy and (epsilon, delta).",
                "Saves the model (DL4J ModelSerializer) and privacy.json in --output; with --checkpoint-every (or a "
                        + "--ledger), a checkpoint in --output/operator/checkpoint/ (operator-only, never to be published) that "
                        + "--resume continues after a crash.",
                "With a --ledger a charge releases once: the ledger records the release, and a copy of the checkpoint "
                        + "(a backup restored, a folder copied) cannot release a second, differently noised model under the "
                        + "same charge. Without a ledger nothing records it, and each copy of a checkpoint can release."})
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

    @Option(names = "--checkpoint-every", paramLabel = "N", description = {"Save a checkpoint (model, updater state, steps done, event so far) into "
                        + "--output/operator/checkpoint/ every N steps, atomically; removed when the run finishes.",
                "A run charged to a --ledger also saves one at step 0, before the charge, so that every charge has a "
                        + "checkpoint to resume."})
    Long checkpointEvery;

    @Mixin
    AccountCommand.AccountantOption accountantOption;

    @Option(names = "--resume", paramLabel = "DIR", description = {"Continue the run whose checkpoint is in DIR/operator/checkpoint/ to its planned steps, with fresh "
                        + "randomness; its settings come from the checkpoint (give --seed again for a reproducible "
                        + "continuation).",
                "The result is written into DIR. A release interrupted on its way to DIR is finished. Only --workers, --seed, "
                        + "--checkpoint-every, --no-progress, --json and the executor options may be given with it.",
                "Without a --ledger, every copy of a checkpoint can be resumed and release: the ledger is what makes a "
                        + "charge release once."})
    Path resume;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** What --resume accepts besides itself: how the rest of the run is computed and shown, never what it is. */
    private static final java.util.Set<String> RESUME_OPTIONS = java.util.Set.of("--resume", "--workers", "--seed",
            "--checkpoint-every", "--no-progress", "--json", "--read-cache-mb", "--executor", "--spark-master", "--spark-data", "--spark-task-cpus",
            "--spark-wait", "--spark-conf", "--spark-partitions");

    @Mixin
    LedgerOptions ledger;

    @Mixin
    DataNormalisationOption dataNorm;

    @Mixin
    AugmultOption augmult;

    @Option(names = "--dry-run", description = "Print sigma, epsilon, the steps and an estimate of the time, and stop: nothing is trained or charged.")
    boolean dryRun;

    @Mixin
    ExecutorOptions executorOptions;

    /** The cluster that computes the clipped sums (--executor spark), or null for this JVM. */
    private org.dpdl4j.spark.SparkCluster cluster;

    @Override
    public Integer call() throws IOException {
        org.dpdl4j.spark.SparkCluster.Settings spark = executorOptions.settings(executorOptions.spark(), "--executor spark");
        if (spark != null && workers != null) {
            throw new IllegalArgumentException("--workers sets this JVM's threads; with --executor spark each part of a step is a "
                    + "Spark task with --spark-task-cpus cores: drop --workers");
        }
        if (resume == null) { // before the cluster starts (a checkpoint's k is checked when it is read)
            augmult.check(t.dataset, spark != null);
        } else {
            checkResumeOptions();
        }
        if (spark == null || dryRun) {
            return resume != null ? resumeRun() : plan();
        }
        // the cluster is up, and has executors, before anything is loaded or charged
        try (org.dpdl4j.spark.SparkCluster c = org.dpdl4j.spark.SparkCluster.start(spark)) {
            cluster = c;
            return resume != null ? resumeRun() : plan();
        } finally {
            cluster = null;
        }
    }

    /** --resume continues the run as planned and charged: an option that would change it is refused by name. */
    private void checkResumeOptions() {
        java.util.List<String> refused = spec.commandLine().getParseResult().matchedOptions().stream()
                .map(o -> o.longestName()).filter(n -> !RESUME_OPTIONS.contains(n)).distinct().toList();
        if (!refused.isEmpty()) {
            throw new IllegalArgumentException("--resume continues the run as it was planned and charged; "
                    + String.join(", ", refused) + (refused.size() == 1 ? " is" : " are") + " part of that plan and cannot change "
                    + "on resume: drop " + (refused.size() == 1 ? "it" : "them") + " (the checkpoint's settings are used; "
                    + "allowed with --resume: " + String.join(", ", new java.util.TreeSet<>(RESUME_OPTIONS)) + ")");
        }
    }

    /** A new run: checks, the run through {@link PrivateTraining} (σ calibrated, or as given), then {@link #finish}. */
    private Integer plan() throws IOException {
        if (accountantOption.name == null) {
            accountantOption.name = PrivateTraining.DEFAULT_ACCOUNTANT; // one run: the tighter accountant
        }
        Path out = dryRun ? null : t.outputDirectory("train"); // checked before anything runs
        if (t.nonPrivate && (targetEpsilon != null || noiseMultiplier != null && noiseMultiplier != 0)) {
            throw new IllegalArgumentException("--non-private trains with sigma = 0: --target-epsilon and a non-zero "
                    + "--noise-multiplier do not apply");
        }
        TrainingOptions.checkNoiseMultiplier(noiseMultiplier);
        if (!t.nonPrivate && noiseMultiplier != null && noiseMultiplier == 0) {
            throw new IllegalArgumentException("--noise-multiplier 0 trains without privacy: add --non-private to do that on purpose");
        }
        if (t.nonPrivate && ledger.file != null) {
            throw new IllegalArgumentException("--non-private runs have infinite epsilon and are never charged to a ledger: drop --ledger");
        }
        if (checkpointEvery != null && checkpointEvery < 1) {
            throw new IllegalArgumentException("--checkpoint-every must be >= 1 step, got " + checkpointEvery);
        }
        t.checkRunSettings();
        dataNorm.check(t.modelName(), t.nonPrivate, true);
        if (noiseMultiplier != null && targetEpsilon != null) {
            throw new IllegalArgumentException("give --noise-multiplier or --target-epsilon, not both");
        }
        TrainTest data = load();
        int n = data.trainExamples().size();
        t.checkDelta(n); // before the calibration, which at a large delta can take half a minute to be refused after
        DpSgdSettings settings = TrainingOptions.byOptionName(() -> {
            DpSgdSettings.Builder b = dataNorm.applyTo(DpSgdSettings.builder().settings(t.settings()).accountant(accountantOption.name)
                    .augmult(augmult.augmentation(t.dataset), augmult.k));
            if (t.nonPrivate || noiseMultiplier != null) {
                b.noiseMultiplier(t.nonPrivate ? 0 : noiseMultiplier);
            } else {
                b.targetEpsilon(targetEpsilon != null ? targetEpsilon : 3.0);
            }
            return b.build();
        });
        // with --data-normalisation: a ScatterNet whose statistics PrivateTraining releases after the charge and the
        // step-0 checkpoint (a kill before the release leaves a checkpoint that releases them on --resume)
        boolean scatterNet = t.modelName().startsWith("scatternet-");
        Model net = Models.byName(t.modelName(), t.modelOptions(data).withFeatures(scatterNet ? placeholderStatistics(data) : null));
        if (dataNorm.on() && !scatterNet) { // the input standardised by statistics released in the run
            net = Models.withStandardizedInput((org.deeplearning4j.nn.multilayer.MultiLayerNetwork) net,
                    (data.train() != null ? data.train() : data.test()).channels());
        }
        PrivateTraining training = PrivateTraining.of(net, data.trainExamples()).settings(settings).input(input(data))
                .provenance(new PrivateTraining.Provenance(t.dataset, data.digest(), t.imageSize, t.modelName(), t.activation,
                        t.weightSeed())).workers(Reporting.configureWorkers(workers));
        PrivateTraining.Plan planned = TrainingOptions.byOptionName(training::plan); // σ with the statistics' cost
        DpSgdConfig config = planned.config();
        if (settings.seed() != null) {
            System.err.println("note: --seed fixes the sampling and the noise; whoever knows it can remove the noise, so keep it secret");
        }
        System.out.printf("dpdl4j %s | %s on %s: n=%d, q=%.6g (B=%d), T=%d (%.4g epochs), C=%s, sigma=%.4f, %s lr=%s, %d parameters%n",
                Cli.version(), t.modelName(), t.dataset, n, config.samplingRate(), t.batchSize, config.steps(), t.epochs, t.clip,
                config.noiseMultiplier(), t.optimizer, t.modelOptions(data).updater().getLearningRate(0, 0), net.numParams());
        if (dryRun) {
            return dryRun(planned, net, data, n);
        }
        PrivacyLedger runLedger = ledger.open(t.dataset, t.delta);
        training.output(out, t.overwrite);
        if (runLedger != null) {
            training.ledger(runLedger);
        }
        if (checkpointEvery != null) {
            training.checkpointEvery(checkpointEvery);
        }
        try {
            return finish(training, data, out, runLedger == null ? null : runLedger.file().toString(), 0, config.steps());
        } finally {
            if (runLedger != null) {
                runLedger.close();
            }
        }
    }

    /** --dry-run: ε and an estimate of the time; nothing trained or charged. */
    private Integer dryRun(PrivateTraining.Plan planned, Model net, TrainTest data, int n) {
        PrivacyGuarantee g = accountantOption.accountant().guarantee(planned.event(), t.delta);
        DpSgdConfig config = planned.config();
        double seconds = Cli.estimateSecondsPerStep(net, data.train() != null ? data.train() : data.test(), config, n)
                * config.steps() * augmult.k; // k rows per example
        System.out.printf("dry run: epsilon %.4f at delta %s (%s); about %.0f s for %d steps (measured on random "
                + "inputs); nothing was trained or charged%n", g.epsilon(), t.delta, AccountCommand.AccountantOption.how(g), seconds,
                config.steps());
        if (t.json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("dry_run", true);
            j.put("epsilon", g.epsilon());
            j.put("delta", t.delta);
            j.put("noise_multiplier", config.noiseMultiplier());
            j.put("sampling_rate", config.samplingRate());
            j.put("steps", config.steps());
            j.put("estimated_seconds", seconds);
            Cli.printJsonLine(System.out, j);
        }
        return 0;
    }

    /** The input the model expects: the data's image shape, pixel scale 255 (packed shards: the test part's, checked alike). */
    private static InputSpec input(TrainTest data) {
        LabeledData shape = data.train() != null ? data.train() : data.test();
        return new InputSpec(shape.channels(), shape.height(), shape.width(), 255);
    }

    /**
     * train --resume DIR: the plan from the checkpoint (verified: its hashes, its plan against itself; against the
     * ledger's charge when {@link PrivateTraining} resumes it), the data set it names, then the run to its planned steps.
     */
    private Integer resumeRun() throws IOException {
        String what = "--resume " + resume;
        Map<String, Object> state = PrivateRun.plan(resume, what);
        TrainTest data;
        try { // the settings passed the hashes; a value no option accepts is still named as the checkpoint's
            t.dataset = (String) state.get("dataset");
            t.imageSize = (String) state.get("image_size");
            t.model = (String) state.get("model");
            t.optimizer = (String) state.get("optimizer");
            t.activation = (String) state.get("activation");
            DpSgdSettings planned = DpSgdSettings.fromMap(state);
            accountantOption.name = planned.accountant();
            augmult.k = planned.augmult();
            augmult.check(t.dataset, cluster != null);
            t.epochs = planned.epochs();
            dataNorm.sigma = Double.isNaN(planned.dataNormalisation()) ? null : planned.dataNormalisation();
            if (state.get("weights_seed") instanceof Number seed) { // a folder's split is the run's, not --seed's (fresh noise)
                t.splitSeed = seed.longValue();
            }
            data = load();
        } catch (IllegalArgumentException e) {
            throw e.getMessage() != null && e.getMessage().startsWith("--") ? e : new IllegalArgumentException(what
                    + ": the checkpoint's settings (" + resume.resolve(PrivateRun.CHECKPOINT).resolve("state.json")
                    + ") are refused: " + e.getMessage(), e);
        }
        PrivateTraining training = PrivateTraining.resume(resume, data.trainExamples()).input(input(data))
                .provenance(new PrivateTraining.Provenance(t.dataset, data.digest(), t.imageSize, t.modelName(), t.activation,
                        t.weightSeed())).workers(Reporting.configureWorkers(workers)).readCacheMb(t.readCacheMb);
        if (t.seed != null) {
            System.err.println("note: --seed fixes the sampling and the noise; whoever knows it can remove the noise, so keep it secret");
            training.seed(t.seed);
        }
        if (checkpointEvery != null) {
            training.checkpointEvery(checkpointEvery);
        }
        System.out.printf("dpdl4j %s | resuming %s on %s from step %s of %s (fresh randomness; the ledger is not charged again)%n",
                Cli.version(), t.modelName(), t.dataset, state.get("steps_done"), state.get("steps"));
        t.output = resume;
        return finish(training, data, resume, (String) state.get("ledger"), ((Number) state.get("steps_done")).longValue(),
                ((Number) state.get("steps")).longValue());
    }

    /** With --data-normalisation, statistics of the right shape (mean 0, variance 1) to build the model; else null. */
    private FeatureStatistics placeholderStatistics(TrainTest data) {
        if (!dataNorm.on()) {
            return null;
        }
        int channels = (data.train() != null ? data.train() : data.test()).channels() * new org.dpdl4j.models.Scattering.Builder().build()
                .coefficients();
        double[] ones = new double[channels];
        java.util.Arrays.fill(ones, 1);
        return new FeatureStatistics(new double[channels], ones);
    }

    /**
     * The data; with --executor spark and --spark-data cache, executors load the training split from their own cache, and
     * {@code shards:} data are read by each executor from the shards' path, which every executor must be able to read.
     * The training part read by index is read as the settings say (--read-cache-mb) by {@link PrivateTraining}.
     */
    private TrainTest load() throws IOException {
        if (t.readCacheMb > 0 && cluster != null) {
            throw new IllegalArgumentException("--read-cache-mb must be 0 with --executor spark (the executors read their own "
                    + "parts), got " + t.readCacheMb);
        }
        boolean inMemory = cluster != null; // a folder's images then decoded up front, as for tuning
        TrainTest data = inMemory && t.dataset.startsWith("folder:") ? t.load() : t.loadReadByIndex();
        if (cluster != null && data.train() != null) {
            ExecutorOptions.trainingSplitOn(cluster, t, data);
        }
        return data;
    }

    /** Where a run's checkpoint lives under --output: operator-only (iterates under a noise stream that may be discarded). */
    static final String CHECKPOINT = PrivateRun.CHECKPOINT;

    /**
     * Trains (from step {@code from}) and releases the model and privacy.json through {@link PrivateTraining} (bound to
     * the ledger's charge before it is published), with a progress bar, then prints the report.
     */
    private Integer finish(PrivateTraining training, TrainTest data, Path out, String ledgerFile, long from, long steps)
            throws IOException {
        boolean resumable = checkpointEvery != null || ledgerFile != null || from > 0;
        Cli.InterruptNotice notice = Cli.InterruptNotice.install("train interrupted" + (resumable
                ? ": continue with ./dpdl4j train --resume " + out : "") + (ledgerFile != null
                ? "; the whole run is charged to " + ledgerFile + " once, when it starts" : ""));
        org.dpdl4j.spark.SparkClippedSums sums = null;
        if (cluster != null) {
            int parts = executorOptions.partitions != null ? executorOptions.partitions : cluster.parallelism();
            sums = cluster.clippedSums(parts);
            training.clippedSums(sums);
            System.out.printf("clipped sums on Spark (%s): %d part(s), %d core(s) per task, data by %s; noise drawn here%n",
                    cluster.operatorSummary().get("master"),
                    org.dpdl4j.dpsgd.PoissonBatchSampler.partitionBounds(data.trainExamples().size(), parts).length - 1,
                    cluster.settings().taskCpus(), data.train() != null ? executorOptions.data
                            : "each executor reading its part of the shards at " + t.dataset.substring("shards:".length()));
        }
        StepInfo[] last = new StepInfo[1];
        long start = System.nanoTime();
        PrivateModel release;
        try (ProgressBar bar = Reporting.progressBar("DP-SGD", steps, t.noProgress)) {
            if (bar != null) {
                bar.stepTo(from);
            }
            training.listeners(new org.dpdl4j.dpsgd.TrainingListener() {
                @Override
                public void onStep(StepInfo info) {
                    last[0] = info;
                    if (bar != null) {
                        bar.stepTo(info.step());
                        bar.setExtraMessage(String.format(" epoch %.1f eps%s %.3f %.0f ex/s | train loss %.3f (not private)",
                                info.epoch(), dataNorm.on() ? " (DP-SGD only)" : "", info.epsilonSoFar(),
                                info.examplesPerSecond(), info.meanLoss()));
                    }
                }

                @Override
                public void onStatisticsReleased(org.dpdl4j.dpsgd.PrivateNormalisation.Release r) {
                    System.out.printf("data normalisation released: sigma_norm %s, C_mu %s, C_s %s%n", r.noiseMultiplier(),
                            r.clipMean(), r.clipSquares());
                    System.out.printf("[operator] data normalisation: %d of %d examples clipped%n", r.clipped(),
                            data.trainExamples().size());
                }
            });
            release = training.train();
        } finally {
            notice.remove();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        Map<String, Object> configuration = release.configuration();
        Cli.TestAccuracy testAccuracy = Cli.TestAccuracy.of(release.network(), data);
        if (sums != null) { // what the cluster did: operator-only, never released
            Map<String, Object> record = new LinkedHashMap<>();
            Map<String, Object> executor = new LinkedHashMap<>(cluster.operatorSummary());
            if (data.train() == null) { // shards: read by the executors from their path, not shipped
                executor.put("data", "shards read by each executor at " + t.dataset.substring("shards:".length()));
            }
            record.put("executor", executor);
            record.put("clipped_sums", sums.operatorSummary());
            Files.createDirectories(out.resolve("operator"));
            Reporting.writeJsonAtomically(out.resolve("operator").resolve("record.json"), record);
        }
        PrivacyGuarantee g = release.guarantee();
        Path modelPath = out.resolve(PrivateModel.MODEL_FILE);
        System.out.printf("test accuracy %s | epsilon %.4f at delta %s (%s) | %s steps, %.1f s, %.0f examples/s%n",
                testAccuracy.console(), g.epsilon(), g.delta(), AccountCommand.AccountantOption.how(g), configuration.get("steps"),
                seconds, last[0] != null ? last[0].examplesPerSecond() : Double.NaN);
        if (!g.warning().isEmpty()) {
            System.out.println("warning: " + g.warning());
        }
        System.out.println("model: " + modelPath + "  privacy: " + out.resolve(PrivateModel.SIDECAR_FILE));
        if (t.json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("test_accuracy", testAccuracy.release()); // null on a private test split
            j.put("epsilon", g.epsilon());
            j.put("delta", g.delta());
            j.put("rdp_order", Double.isNaN(g.order()) ? null : g.order());
            j.putAll(configuration); // the sidecar's: the data set, n, the settings by their keys, T
            j.put("accountant", release.accountant());
            j.put("learning_rate", org.dpdl4j.dpsgd.Networks.learningRate(release.network())); // the one that ran
            j.put("optimizer", t.optimizer);
            j.put("model", t.modelName());
            // no timings: the --json line is the release, and how long the run took is the operator's (printed above)
            j.put("model_path", modelPath.toString());
            Cli.printJsonLine(System.out, j);
        }
        return 0;
    }
}
