package org.dpdl4j.cli;

import org.dpdl4j.benchmarks.Reporting;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import me.tongfei.progressbar.ProgressBar;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.Checkpoint;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdSettings;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.PrivateNormalisation;
import org.dpdl4j.dpsgd.TrainingListener;
import org.dpdl4j.dpsgd.TrainingResult;
import org.dpdl4j.models.FeatureStatistics;
import org.dpdl4j.models.Models;
import org.dpdl4j.release.InputSpec;
import org.dpdl4j.release.PrivateModel;
import org.dpdl4j.release.CheckpointState;
import org.dpdl4j.release.PrivacyLedger;
import org.dpdl4j.release.PrivateRun;
import org.nd4j.linalg.api.ndarray.INDArray;
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

    /** A new run: checks, σ, then {@link #start}. */
    private Integer plan() throws IOException {
        if (accountantOption.name == null) {
            accountantOption.name = org.dpdl4j.dpsgd.PrivateTraining.DEFAULT_ACCOUNTANT; // one run: the tighter accountant
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
        dataNorm.check(t.modelName(), t.nonPrivate);
        TrainTest data = load();
        int n = data.trainExamples().size();
        t.checkDelta(n); // before the calibration, which at a large delta can take half a minute to be refused after
        double q = t.samplingRate(n);
        long steps = DpSgdConfig.stepsForEpochs(t.epochs, q);
        PrivacyAccountant accountant = accountantOption.accountant();
        if (noiseMultiplier != null && targetEpsilon != null) {
            throw new IllegalArgumentException("give --noise-multiplier or --target-epsilon, not both");
        }
        settings = TrainingOptions.byOptionName(() -> {
            DpSgdSettings.Builder b = dataNorm.applyTo(DpSgdSettings.builder().settings(t.settings()).accountant(accountantOption.name)
                    .augmult(augmult.augmentation(t.dataset), augmult.k));
            if (!t.nonPrivate && noiseMultiplier == null) {
                b.targetEpsilon(targetEpsilon != null ? targetEpsilon : 3.0);
            }
            return b.build();
        });
        double sigma = t.nonPrivate ? 0 : noiseMultiplier != null ? noiseMultiplier
                : TrainingOptions.byOptionName(() -> settings.calibrateNoise(q, steps, accountant)); // with the statistics' cost
        DpSgdConfig config = config(q, sigma, steps);
        // with --data-normalisation: a ScatterNet without GroupNorm whose statistics are pending, released in finish() after
        // the charge and the step-0 checkpoint (a kill before the release leaves a checkpoint that releases them on --resume)
        org.deeplearning4j.nn.api.Model net = Models.byName(t.modelName(), t.modelOptions(data).withFeatures(placeholderStatistics(data)));
        if (dataNorm.on()) {
            PrivateNormalisation.scatteringLayer(net).setFeatureMean(null);
            PrivateNormalisation.scatteringLayer(net).setFeatureVariance(null);
        }
        PrivacyEvent planned = settings.event(q, sigma, steps);
        System.out.printf("dpdl4j %s | %s on %s: n=%d, q=%.6g (B=%d), T=%d (%.4g epochs), C=%s, sigma=%.4f, %s lr=%s, %d parameters%n",
                Cli.version(), t.modelName(), t.dataset, n, q, t.batchSize, steps, t.epochs, t.clip, sigma, t.optimizer,
                t.modelOptions(data).updater().getLearningRate(0, 0), net.numParams());
        if (dryRun) {
            PrivacyGuarantee g = accountant.guarantee(planned, t.delta);
            double seconds = Cli.estimateSecondsPerStep(net, data.train() != null ? data.train() : data.test(), config, n) * steps
                    * augmult.k; // k rows per example
            System.out.printf("dry run: epsilon %.4f at delta %s (%s); about %.0f s for %d steps (measured on random "
                    + "inputs); nothing was trained or charged%n", g.epsilon(), t.delta, AccountCommand.AccountantOption.how(g), seconds,
                    steps);
            if (t.json) {
                Map<String, Object> j = new LinkedHashMap<>();
                j.put("dry_run", true);
                j.put("epsilon", g.epsilon());
                j.put("delta", t.delta);
                j.put("noise_multiplier", sigma);
                j.put("sampling_rate", q);
                j.put("steps", steps);
                j.put("estimated_seconds", seconds);
                Cli.printJsonLine(System.out, j);
            }
            return 0;
        }
        Map<String, Object> state = checkpointState(data, n, q, sigma, steps);
        state.put("plan_sha256", CheckpointState.planHash(state));
        return start(out, data, net, config, state, planned);
    }

    /**
     * The run's start through {@link PrivateRun#start} (step-0 checkpoint, then the charge: no moment loses it), then the
     * training ({@link #finish}).
     */
    private Integer start(Path out, TrainTest data, org.deeplearning4j.nn.api.Model net, DpSgdConfig config,
                          Map<String, Object> state, PrivacyEvent planned) throws IOException {
        PrivacyLedger runLedger = ledger.open(t.dataset, t.delta);
        PrivateRun run;
        try {
            run = PrivateRun.start(out, state, net, config, planned, runLedger, chargeLabel(),
                    checkpointEvery != null ? checkpointEvery : 0);
        } catch (IOException | RuntimeException e) {
            if (runLedger != null) {
                runLedger.close();
            }
            throw e;
        }
        return finish(data, net, config, run, 0, null);
    }

    /** The ledger entry's label for this run. */
    private String chargeLabel() {
        return "train " + t.modelName() + " on " + t.dataset;
    }

    /** The run's settings: from the options for a new run, from the checkpoint's plan on --resume. */
    private DpSgdSettings settings;

    /** The run's engine configuration for q, σ and T; a seed only with --seed (without --secure-noise). */
    private DpSgdConfig config(double q, double sigma, long steps) {
        if (settings.seed() != null) {
            System.err.println("note: --seed fixes the sampling and the noise; whoever knows it can remove the noise, so keep it secret");
        }
        return TrainingOptions.byOptionName(() -> settings.config(q, sigma, steps, Reporting.configureWorkers(workers)));
    }

    /** What a checkpoint must hold besides the network to continue the run (never the seed). */
    private Map<String, Object> checkpointState(TrainTest data, int n, double q, double sigma, long steps) {
        Map<String, Object> s = CheckpointState.plan(t.dataset, data.digest(), t.imageSize, n, t.modelName(),
                t.activation, DpSgdSettings.builder().settings(settings).samplingRate(q).noiseMultiplier(sigma).build(), steps,
                t.weightSeed(), ledger.file);
        s.put("checkpoint_every", checkpointEvery != null ? checkpointEvery : 0L);
        return s;
    }

    /**
     * train --resume DIR: the settings from the checkpoint, the network from its model file, T from the plan. The
     * checkpoint is verified first ({@link CheckpointState#verify}): its hashes, its plan against itself and against the
     * ledger's charge, its files inside the checkpoint folder.
     */
    private Integer resumeRun() throws IOException {
        PrivateRun.Resumption r = PrivateRun.resume(resume, "--resume " + resume);
        if (r.releasedNow()) {
            System.out.println("the release interrupted before was finished: " + resume.resolve(PrivateModel.MODEL_FILE) + ", "
                    + resume.resolve(PrivateModel.SIDECAR_FILE));
            return 0;
        }
        try {
            return resumeTraining(resume, r.run());
        } catch (IOException | RuntimeException e) {
            r.run().close();
            throw e;
        }
    }

    /** Continues a verified checkpoint's training (settings from the state, network from its model file). */
    private Integer resumeTraining(Path dir, PrivateRun run) throws IOException {
        Map<String, Object> state = run.state();
        Path stateFile = run.checkpointDirectory().resolve("state.json");
        TrainTest data;
        DpSgdConfig config;
        org.deeplearning4j.nn.api.Model net;
        INDArray ema;
        long stepsDone;
        try { // the settings passed the hashes; a value no option accepts is still named as the checkpoint's
            t.dataset = (String) state.get("dataset");
            t.imageSize = (String) state.get("image_size");
            t.model = (String) state.get("model");
            t.optimizer = (String) state.get("optimizer");
            t.activation = (String) state.get("activation");
            // the plan's settings (absent keys: a checkpoint from before the setting); how it runs (--seed): the options'
            DpSgdSettings planned = DpSgdSettings.fromMap(state, t.settings());
            accountantOption.name = planned.accountant();
            augmult.k = planned.augmult();
            augmult.check(t.dataset, cluster != null);
            settings = DpSgdSettings.builder().settings(planned).augmult(augmult.augmentation(t.dataset), augmult.k).build();
            t.epochs = planned.epochs();
            dataNorm.sigma = Double.isNaN(planned.dataNormalisation()) ? null : planned.dataNormalisation();
            stepsDone = ((Number) state.get("steps_done")).longValue();
            data = load();
            run.checkData("--resume " + dir, t.dataset, data.trainExamples().size(), data.digest());
            config = config(settings.samplingRate(), settings.noiseMultiplier(), ((Number) state.get("steps")).longValue());
            try {
                net = run.network();
                ema = run.ema();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--resume " + dir + ": " + e.getMessage());
            }
        } catch (IllegalArgumentException e) {
            throw e.getMessage() != null && e.getMessage().startsWith("--resume") ? e
                    : new IllegalArgumentException("--resume " + dir + ": the checkpoint's settings (" + stateFile + ") are refused: "
                    + e.getMessage(), e);
        }
        org.dpdl4j.models.Scattering sc = net instanceof MultiLayerNetwork m && m.getnLayers() > 0
                && m.getLayer(0).conf().getLayer() instanceof org.dpdl4j.models.Scattering s0 ? s0 : null;
        if (dataNorm.on() ? sc == null : sc != null && sc.getFeatureMean() != null) {
            throw new IllegalArgumentException("--resume " + dir + ": the checkpoint's model " + (dataNorm.on()
                    ? "is not a ScatterNet, but its plan has a data normalisation" : "has feature statistics its plan did not release"));
        }
        System.out.printf("dpdl4j %s | resuming %s on %s from step %d of %d (fresh randomness; the ledger is not charged again)%n",
                Cli.version(), t.modelName(), t.dataset, stepsDone, config.steps());
        t.output = dir;
        return finish(data, net, config, checkpointEvery != null ? run.checkpointEvery(checkpointEvery) : run, stepsDone, ema);
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
     * Releases the feature statistics (after the ledger's charge and the step-0 checkpoint) and puts them into the
     * model's scattering layer, which DL4J's output() and the engine's kernel both read.
     */
    private void releaseStatistics(org.deeplearning4j.nn.api.Model net, org.dpdl4j.datasets.ExampleSource train, DpSgdConfig config) {
        long seed = config.secureRandom() ? new java.security.SecureRandom().nextLong() : config.seed();
        PrivateNormalisation.Release r = PrivateNormalisation.releaseInto(net, train, dataNorm.sigma, seed, config.workers());
        System.out.printf("data normalisation released: sigma_norm %s, C_mu %s, C_s %s%n", r.noiseMultiplier(), r.clipMean(),
                r.clipSquares());
        System.out.printf("[operator] data normalisation: %d of %d examples clipped%n", r.clipped(), train.size());
    }

    /**
     * The data; with --executor spark and --spark-data cache, executors load the training split from their own cache, and
     * {@code shards:} data are read by each executor from the shards' path, which every executor must be able to read.
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
        if (data.train() == null) { // read by index: as the settings read it (--read-cache-mb)
            data = new TrainTest(data.name(), null, data.test(), data.digest(), t.settings().trainingData(data.trainSource()));
        }
        return data;
    }

    /** Where a run's checkpoint lives under --output: operator-only (iterates under a noise stream that may be discarded). */
    static final String CHECKPOINT = PrivateRun.CHECKPOINT;

    /**
     * Trains (from step {@code from}), checkpointing if asked, then releases the model and privacy.json through the run
     * ({@link PrivateRun#release}: bound to the ledger's charge before it is published) and prints the report. The run's
     * lock (held when the run checkpoints or is charged) is released when the release is out.
     */
    private Integer finish(TrainTest data, org.deeplearning4j.nn.api.Model net, DpSgdConfig config, PrivateRun run, long from,
                           INDArray ema) throws IOException {
        try (run) { // the run's lock is held until the release is written and the checkpoint gone, or the run failed
            return train(data, net, config, run, from, ema, accountantOption.accountant());
        }
    }

    private Integer train(TrainTest data, org.deeplearning4j.nn.api.Model net, DpSgdConfig config, PrivateRun run, long from,
                          INDArray ema, PrivacyAccountant accountant) throws IOException {
        Path out = run.output();
        Map<String, Object> state = run.state();
        long every = run.checkpointEvery();
        Checkpoint.Sink sink = run.checkpoints();
        Cli.InterruptNotice notice = Cli.InterruptNotice.install("train interrupted" + (every > 0 || state.get("ledger_charge") != null
                ? ": continue with ./dpdl4j train --resume " + out : "") + (state.get("ledger_charge") != null
                ? "; the whole run was charged to " + state.get("ledger") + " (entry " + state.get("ledger_charge") + ")" : ""));
        if (dataNorm.on() && PrivateNormalisation.scatteringLayer(net).getFeatureMean() == null) {
            releaseStatistics(net, data.trainExamples(), config); // shards and folders: read in chunks
        }
        TrainingResult result;
        org.dpdl4j.spark.SparkClippedSums sums = null;
        try (ProgressBar bar = Reporting.progressBar("DP-SGD", config.steps(), t.noProgress)) {
            if (bar != null) {
                bar.stepTo(from);
            }
            TrainingListener listener = info -> {
                if (bar != null) {
                    bar.stepTo(info.step());
                    bar.setExtraMessage(String.format(" epoch %.1f eps%s %.3f %.0f ex/s | train loss %.3f (not private)",
                            info.epoch(), dataNorm.on() ? " (DP-SGD only)" : "", info.epsilonSoFar(), info.examplesPerSecond(),
                            info.meanLoss()));
                }
            };
            DpSgdTrainer trainer = new DpSgdTrainer(accountant).withClippedSums(augmult.clippedSums(t.dataset));
            if (cluster != null) {
                int parts = executorOptions.partitions != null ? executorOptions.partitions : cluster.parallelism();
                sums = cluster.clippedSums(parts);
                trainer = trainer.withClippedSums(sums);
                System.out.printf("clipped sums on Spark (%s): %d part(s), %d core(s) per task, data by %s; noise drawn here%n",
                        cluster.operatorSummary().get("master"),
                        org.dpdl4j.dpsgd.PoissonBatchSampler.partitionBounds(data.trainExamples().size(), parts).length - 1,
                        cluster.settings().taskCpus(), data.train() != null ? executorOptions.data
                                : "each executor reading its part of the shards at " + t.dataset.substring("shards:".length()));
            }
            result = from > 0 ? trainer.resume(new Checkpoint(net, config, from, ema), data.trainExamples(), every, sink, listener)
                    : every > 0 ? trainer.train(net, data.trainExamples(), config, every, sink, listener)
                    : trainer.train(net, data.trainExamples(), config, listener);
        } finally {
            notice.remove();
        }
        double testAccuracy = DpSgdTrainer.accuracy(net, data.test());
        int n = data.trainExamples().size();
        double q = config.samplingRate();
        double sigma = config.noiseMultiplier();
        Map<String, Object> settings = new LinkedHashMap<>(); // for people; the claim is the event
        settings.put("dataset", t.dataset);
        settings.putAll(DpSgdSettings.builder().settings(this.settings).samplingRate(q).noiseMultiplier(sigma).build()
                .configuration(n, result.stepsTaken())); // the settings' keys, as PrivateTraining's sidecar has them
        settings.put("resumed_from_step", from > 0 ? from : null);
        settings.put("ledger_charge", state.get("ledger_charge"));
        LabeledData shape = data.train() != null ? data.train() : data.test(); // packed shards: the test part, checked alike
        PrivacyEvent released = this.settings.event(result.event()); // with the statistics' release first
        PrivateModel release = PrivateModel.of(net, "training", released, accountantOption.name(), config.delta(),
                new InputSpec(shape.channels(), shape.height(), shape.width(), 255), settings);
        run.release(release, java.util.List.of("tuning.json", "trials.json"), // an earlier tuning's, kept by --overwrite,
                released);                                                     // would pass for this run's
        PrivacyGuarantee g = release.guarantee();
        Path modelPath = out.resolve(PrivateModel.MODEL_FILE);
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
        run.close(); // the release is out: operator/ goes if nothing else is in it, and another process may use the folder

        System.out.printf("test accuracy %.4f | epsilon %.4f at delta %s (%s) | %d steps, %.1f s, %.0f examples/s%n",
                testAccuracy, g.epsilon(), config.delta(), AccountCommand.AccountantOption.how(g), result.stepsTaken(), result.seconds(),
                result.examplesPerSecond());
        if (!g.warning().isEmpty()) {
            System.out.println("warning: " + g.warning());
        }
        System.out.println("model: " + modelPath + "  privacy: " + out.resolve("privacy.json"));
        if (t.json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("test_accuracy", testAccuracy);
            j.put("epsilon", g.epsilon());
            j.put("delta", config.delta());
            j.put("rdp_order", Double.isNaN(g.order()) ? null : g.order());
            j.putAll(release.configuration()); // the sidecar's: the data set, n, the settings by their keys, T, the charge
            j.put("accountant", accountantOption.name);
            j.put("learning_rate", org.dpdl4j.dpsgd.Networks.learningRate(net)); // the one that ran (the option may be unset)
            j.put("optimizer", t.optimizer);
            j.put("model", t.modelName());
            // no timings: the --json line is the release, and how long the run took is the operator's (printed above)
            j.put("model_path", modelPath.toString());
            Cli.printJsonLine(System.out, j);
        }
        return 0;
    }
}
