package org.dpdl4j.cli;

import org.dpdl4j.release.CheckpointState;
import org.dpdl4j.benchmarks.Reporting;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.tuning.DpSgdMechanism;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.release.InputSpec;
import org.dpdl4j.release.PrivacyLedger;
import org.dpdl4j.release.PrivateModel;
import org.dpdl4j.tuning.PrivateTuning;
import org.dpdl4j.tuning.Tuner;
import org.dpdl4j.tuning.TuningOutcome;
import org.dpdl4j.benchmarks.TrialProgress;
import org.dpdl4j.release.PrivateRun;
import org.dpdl4j.release.StagedRelease;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What every {@code tune} subcommand shares: the space, the DP-SGD settings of a run, scoring, the noise options, the
 * ledger, --resume and --dry-run, and the plumbing that charges a tuning once, saves what --resume needs and writes the
 * release apart from the operator record. A subcommand adds its own options and {@link #run}.
 */
abstract class TuningCommand implements Callable<Integer> {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--candidate-epsilon", paramLabel = "ε", description = {"Calibrate sigma per candidate so each DP-SGD run is (epsilon, delta)-DP, for spaces over "
                        + "sampling_rate/epochs (Koskela & Kulkarni 2023, arXiv:2301.11989, Sec. 4.1); the tuning's total is "
                        + "then reported."})
    Double candidateEpsilon;

    @Option(names = "--space", paramLabel = "AXIS", description = {"A hyperparameter axis, repeatable: NAME=log:LO:HI:N, NAME=lin:LO:HI:N, NAME=cat:A,B, "
                        + "NAME=range:LO:HI, NAME=logrange:LO:HI or NAME=VALUE.",
                "Names: learning_rate (or lr), optimizer, activation, noise_multiplier, clip_norm, batch_size, sampling_rate, epochs "
                        + "(default learning_rate=log:0.025:1:20); sigma and clip, older names, are still read."})
    List<String> spaceAxes = new ArrayList<>();

    @Option(names = "--range-points", defaultValue = "100", description = "Points a continuous range is discretised into (default ${DEFAULT-VALUE}).")
    int rangePoints;

    @Mixin
    TrainingOptions t;

    @Option(names = "--noise-multiplier", paramLabel = "σ", description = "Noise multiplier sigma of every run (or give --target-epsilon).")
    Double noiseMultiplier;

    @Option(names = "--target-epsilon", paramLabel = "ε", description = "Calibrate sigma so the WHOLE tuning run is (epsilon, delta)-DP "
            + "(default 3 when --noise-multiplier is not given; for dp-hype the vote's epsilon, default 1).")
    Double targetEpsilon;

    @Option(names = "--score", defaultValue = "private-validation", description = {"private-validation: score on a split of the training data, released with Gaussian noise whose cost "
                        + "is counted; public-holdout: that split is declared public (no noise, no cost) (default "
                        + "${DEFAULT-VALUE})."})
    String score;

    @Option(names = "--score-noise", defaultValue = "0.005", description = "Std of the noisy validation accuracy (default ${DEFAULT-VALUE}).")
    double scoreNoise;

    @Option(names = "--validation-fraction", defaultValue = "0.1", description = "Fraction of the training data used for scores (default ${DEFAULT-VALUE}).")
    double validationFraction;

    @Option(names = "--threads", defaultValue = "1", description = {"Trials run in parallel (default ${DEFAULT-VALUE}; with --executor spark:",
            "the cluster's cores / --spark-task-cpus); each uses cores/threads DP-SGD workers."})
    int threads;

    @Option(names = "--trial-workers", paramLabel = "N", description = {"DP-SGD worker threads per trial (default: cores / --threads; on Spark, --spark-task-cpus).",
                "A trial's result depends on its seed and on N, so keep N to compare runs."})
    Integer trialWorkers;

    @Mixin
    ExecutorOptions executorOptions;

    @Mixin
    AugmultOption augmult;

    @Option(names = "--train-executor", defaultValue = "local", paramLabel = "local|spark", description = {"Where each trial's DP-SGD steps compute their clipped sums: local (the trial's own threads) or spark "
                        + "(one Spark job per step over --spark-partitions parts of the data on --spark-master; the noise stays "
                        + "on the driver).",
                "With spark the trials run one at a time, each using the whole cluster; it needs --executor local (a "
                        + "trial that is itself a Spark task cannot start Spark jobs) and is refused by dp-hype (default "
                        + "${DEFAULT-VALUE})."})
    String trainExecutor;

    /** The cluster the trials run on (--executor spark), or null for this JVM. */
    org.dpdl4j.spark.SparkCluster cluster;

    /** The cluster every trial's steps compute their clipped sums on (--train-executor spark), or null. */
    private org.dpdl4j.spark.SparkCluster trainCluster;

    /** The clipped sums handed to mechanisms (--train-executor spark), for the operator record. */
    private final List<org.dpdl4j.spark.SparkClippedSums> sums = new java.util.ArrayList<>();

    @Mixin
    LedgerOptions ledgerOptions;

    @Option(names = "--reveal-trials", description = {"Release K and every trial (candidate and score, in trials.json).",
                "The random-K bounds cover only the best run with K hidden, so K is drawn first and the composition "
                        + "of the K drawn runs is charged before any run (random-search and dp-hypo; needs --noise-multiplier)."})
    boolean revealTrialScores;

    @Option(names = "--reveal-trial-scores", hidden = true, description = "The old name of --reveal-trials.")
    boolean revealTrialScoresOldName;

    @Option(names = "--resume", paramLabel = "DIR", description = {"Continue the tuning whose output directory is DIR after a crash: same K and candidates, finished "
                        + "trials not re-run, nothing charged twice; the other options come from DIR/operator/state.json."})
    Path resume;

    @Option(names = "--dry-run", description = {"Print sigma, the tuning's epsilon and an estimate of the time, and stop: nothing is trained or "
                        + "charged (random-search and dp-hypo)."})
    boolean dryRun;

    /** The saved state of the tuning being resumed, or null. */
    Map<String, Object> resumeState;

    /** The tuner's seed once chosen (saved for --resume), or null. */
    private Long chosenTunerSeed;

    @Override
    public final Integer call() throws Exception {
        if (resume != null) {
            if (resumeState == null) { // the user's command line, not the saved one parsed again
                refuseOptionsWithResume();
            }
            return resumeTuning();
        }
        revealTrialScores |= revealTrialScoresOldName;
        if (writesOutput()) {
            t.outputDirectory("tune"); // checked before anything is charged or trained
        }
        t.checkRunSettings();
        checkNoiseOptions();
        checkOwnOptions();
        checkNumbers();
        HyperparameterSpace hs = space();
        org.dpdl4j.tuning.DpSgdSpace.checkSpace(hs, t.nonPrivate); // before the data are loaded, which takes a while
        DpSgdMechanism.Scoring scoring = switch (score) {
            case "private-validation" -> DpSgdMechanism.Scoring.PRIVATE_VALIDATION;
            case "public-holdout" -> DpSgdMechanism.Scoring.PUBLIC_HOLDOUT;
            default -> throw new IllegalArgumentException("--score must be private-validation or public-holdout, got '" + score + "'");
        };
        boolean sigmaAxis = hs.axes().stream().anyMatch(a -> a.name().equals("noise_multiplier"));
        if ((noiseMultiplier != null ? 1 : 0) + (targetEpsilon != null ? 1 : 0) + (candidateEpsilon != null ? 1 : 0) > 1) {
            throw new IllegalArgumentException("give one of --noise-multiplier, --target-epsilon and --candidate-epsilon");
        }
        if (candidateEpsilon != null && (!(candidateEpsilon > 0) || candidateEpsilon.isInfinite())) {
            throw new IllegalArgumentException("--candidate-epsilon must be finite and > 0, got " + candidateEpsilon);
        }
        if (sigmaAxis && (targetEpsilon != null || candidateEpsilon != null)) {
            throw new IllegalArgumentException("--target-epsilon and --candidate-epsilon calibrate sigma, so noise_multiplier (sigma) cannot "
                    + "also be a --space axis");
        }
        Executors executors = checkExecutors();
        boolean trainOnSpark = executors.trainOnSpark();
        org.dpdl4j.spark.SparkCluster.Settings sparkSettings = executors.spark();
        // one seed for the whole tuning, saved for --resume
        chosenTunerSeed = resumeState != null ? Long.parseLong((String) resumeState.get("tuner_seed")) : tunerSeed();
        if (sparkSettings == null || dryRun) {
            return run(hs, scoring, sigmaAxis);
        }
        // the cluster is up, and has executors, before anything is loaded or charged
        try (org.dpdl4j.spark.SparkCluster c = org.dpdl4j.spark.SparkCluster.start(sparkSettings)) {
            if (trainOnSpark) {
                trainCluster = c;
                System.out.printf("each trial's steps on Spark (%s): trials one at a time, data by %s%n",
                        c.operatorSummary().get("master"), executorOptions.data);
                return run(hs, scoring, sigmaAxis);
            }
            cluster = c;
            if (!spec.commandLine().getParseResult().hasMatchedOption("--threads")) {
                threads = c.parallelism();
            }
            System.out.printf("trials on Spark (%s): %d at a time, %d core(s) each, data by %s%n", c.operatorSummary().get("master"),
                    threads, sparkSettings.taskCpus(), executorOptions.data);
            return run(hs, scoring, sigmaAxis);
        } finally {
            cluster = null;
            trainCluster = null;
        }
    }

    /** With --resume, the options the user gave besides --resume, --no-progress and --json are refused by name. */
    private void refuseOptionsWithResume() {
        List<String> refused = spec.commandLine().getParseResult().matchedOptions().stream().map(o -> o.longestName())
                .filter(n -> !List.of("--resume", "--no-progress", "--json").contains(n)).distinct().toList();
        if (!refused.isEmpty()) {
            throw new IllegalArgumentException("--resume continues the tuning as it was started and charged, with its saved "
                    + "command line; " + String.join(", ", refused) + (refused.size() == 1 ? " is" : " are")
                    + " not taken with it: drop " + (refused.size() == 1 ? "it" : "them") + " (allowed with --resume: "
                    + "--no-progress, --json)");
        }
    }

    /** --non-private, --noise-multiplier 0 and a ledger: checked before anything else. */
    private void checkNoiseOptions() {
        TrainingOptions.checkNoiseMultiplier(noiseMultiplier);
        if (t.nonPrivate) {
            if (targetEpsilon != null || candidateEpsilon != null || noiseMultiplier != null && noiseMultiplier != 0) {
                throw new IllegalArgumentException("--non-private trains with sigma = 0: --target-epsilon, --candidate-epsilon and a "
                        + "non-zero --noise-multiplier do not apply");
            }
            if (ledgerOptions.file != null) {
                throw new IllegalArgumentException("--non-private runs have infinite epsilon and are never charged to a ledger: "
                        + "drop --ledger");
            }
            if (!calibratesItsOwnNoise()) {
                noiseMultiplier = 0.0;
            }
        } else if (noiseMultiplier != null && noiseMultiplier == 0) {
            throw new IllegalArgumentException("--noise-multiplier 0 trains without privacy: add --non-private to do that on purpose");
        }
    }

    /** The shared numeric options: --threads, --range-points, --score-noise, --validation-fraction. */
    private void checkNumbers() {
        if (threads < 1) {
            throw new IllegalArgumentException("--threads must be >= 1, got " + threads);
        }
        if (rangePoints < 2) {
            throw new IllegalArgumentException("--range-points must be >= 2, got " + rangePoints);
        }
        if (!(scoreNoise > 0) || Double.isInfinite(scoreNoise)) {
            throw new IllegalArgumentException("--score-noise must be finite and > 0, got " + scoreNoise);
        }
        if (!(validationFraction > 0 && validationFraction < 1)) {
            throw new IllegalArgumentException("--validation-fraction must be in (0, 1), got " + validationFraction);
        }
    }

    /** The --space axes (default learning_rate=log:0.025:1:20) as a space, each refused by its text. */
    private HyperparameterSpace space() {
        List<HyperparameterSpace.Axis> axes = new ArrayList<>();
        for (String s : spaceAxes.isEmpty() ? List.of("learning_rate=log:0.025:1:20") : spaceAxes) {
            try {
                axes.add(HyperparameterSpace.parseAxis(s));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--space " + s + ": " + e.getMessage(), e);
            }
        }
        HyperparameterSpace hs;
        try {
            hs = HyperparameterSpace.of(axes).withRangePoints(rangePoints);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--space: " + e.getMessage(), e);
        }
        return hs;
    }

    /**
     * --trial-workers, --train-executor and --executor spark against each other and this tuner, before a cluster starts
     * or anything loads.
     *
     * @return whether each trial's steps run on Spark (--train-executor spark), and the cluster's settings (null: none)
     */
    private Executors checkExecutors() {
        if (trialWorkers != null && (trialWorkers < 1 || trialWorkers > 256)) {
            throw new IllegalArgumentException("--trial-workers must be in [1, 256], got " + trialWorkers);
        }
        boolean trainOnSpark = switch (trainExecutor) {
            case "local" -> false;
            case "spark" -> true;
            default -> throw new IllegalArgumentException("--train-executor must be local or spark, got '" + trainExecutor + "'");
        };
        augmult.check(t.dataset, executorOptions.spark() || trainOnSpark); // before a cluster starts or anything loads
        org.dpdl4j.spark.SparkCluster.Settings sparkSettings = executorOptions.settings(executorOptions.spark() || trainOnSpark,
                "--executor spark or --train-executor spark");
        if (trainOnSpark) {
            if (executorOptions.spark()) {
                throw new IllegalArgumentException("--executor spark with --train-executor spark: a trial that runs as a Spark task "
                        + "cannot start Spark jobs of its own. Choose one: --executor spark runs many trials at once, one task each; "
                        + "--train-executor spark runs one trial at a time with each step spread over the cluster");
            }
            String why = sparkUnavailable();
            if (why != null) {
                throw new IllegalArgumentException("--train-executor spark: " + why);
            }
            if (threads != 1 || trialWorkers != null) {
                throw new IllegalArgumentException("--train-executor spark runs one trial at a time, its steps on the cluster: drop "
                        + (threads != 1 ? "--threads " + threads : "--trial-workers " + trialWorkers));
            }
        } else if (executorOptions.partitions != null) {
            throw new IllegalArgumentException("--spark-partitions splits each training's steps over the cluster: it needs "
                    + "--train-executor spark");
        }
        if (executorOptions.spark()) {
            String why = sparkUnavailable();
            if (why != null) {
                throw new IllegalArgumentException("--executor spark: " + why);
            }
            if (t.secureNoise) {
                throw new IllegalArgumentException("--executor spark runs each trial from a seed drawn on the driver, so that a "
                        + "task Spark re-runs recomputes the same output; --secure-noise would give a re-run fresh noise (a second "
                        + "release). Drop --secure-noise: without --seed the driver draws the seeds from SecureRandom");
            }
        }
        return new Executors(trainOnSpark, sparkSettings);
    }

    /** Where the trials run: each trial's steps on Spark, and the cluster's settings (null: no cluster). */
    private record Executors(boolean trainOnSpark, org.dpdl4j.spark.SparkCluster.Settings spark) {
    }

    /** Why this tuner cannot run its trials on Spark, or null if it can (default: it can). */
    String sparkUnavailable() {
        return null;
    }

    /**
     * The private data (--dataset): in memory, except {@code shards:} data, whose trials read each step's Poisson batch by
     * index (the splits and X₁ are index sets of it; on Spark the executors read them from the shards' path, which every
     * executor must be able to read); with --spark-data cache the executors load its training split from their own cache.
     */
    TrainTest loadData() throws IOException {
        TrainTest data = t.dataset.startsWith("shards:") ? t.loadReadByIndex() : t.load();
        dataDigest = data.digest();
        if (cluster != null || trainCluster != null) {
            ExecutorOptions.trainingSplitOn(cluster != null ? cluster : trainCluster, t, data);
        }
        return data;
    }

    /**
     * Q as the tuner gets it: itself, or with every run on the Spark cluster (refused now, before any charge, if it
     * cannot be sent there).
     */
    org.dpdl4j.tuning.TrainingMechanism placed(org.dpdl4j.tuning.TrainingMechanism mechanism) {
        return cluster == null ? mechanism : cluster.place(mechanism);
    }

    /** Adds what the executor did to the operator record (Spark's tasks and lost executors; never released). */
    Map<String, Object> withExecutorRecord(Map<String, Object> operator) {
        Map<String, Object> m = new LinkedHashMap<>(operator);
        if (trainCluster != null) {
            Map<String, Object> e = new LinkedHashMap<>(trainCluster.operatorSummary());
            e.put("clipped_sums", sums.stream().map(org.dpdl4j.spark.SparkClippedSums::operatorSummary).toList());
            m.put("executor", e);
        } else {
            m.put("executor", cluster == null ? Map.of("name", "local", "threads", threads) : cluster.operatorSummary());
        }
        return m;
    }

    /**
     * Runs this tuner once the shared options are checked.
     *
     * @param space     the hyperparameter space from --space
     * @param scoring   how trials are scored (--score)
     * @param sigmaAxis whether σ is an axis of the space (then it is not calibrated)
     * @return the exit status
     */
    abstract Integer run(HyperparameterSpace space, DpSgdMechanism.Scoring scoring, boolean sigmaAxis) throws Exception;

    /** Checks this tuner's own options before anything else is done (default: nothing to check). */
    void checkOwnOptions() {
    }

    /** Whether this run writes --output (a dp-hype client process and --dry-run do not). */
    boolean writesOutput() {
        return !dryRun;
    }

    /** Whether the tuner sizes its own noise (dp-hype's vote), so --non-private leaves --noise-multiplier alone. */
    boolean calibratesItsOwnNoise() {
        return false;
    }


    /**
     * The console's last lines of a tuning: the operator's notes (marked as such), where the release and the operator
     * record are, and with --json the release report without its event.
     */
    void printEnd(Path out, List<String> operatorNotes, boolean model, boolean trials, Object report) {
        for (String note : operatorNotes) {
            System.out.println("[operator] " + note);
        }
        TuningOutput.printWhere(System.out, out, model, trials);
        if (t.json) {
            Cli.printJsonLine(System.out, TuningReports.jsonLine(report));
        }
    }

    /**
     * The tail every tuning report ends with: the dataset and its public size, the model, the configuration as given,
     * the release's notes (null for none) and the whole tuning's event.
     */
    TuningReports.Provenance provenance(HyperparameterSpace hs, int datasetSize, List<String> notes, PrivacyEvent event) {
        TuningReports.Config config = new TuningReports.Config(hs.toString(), t.epochs, t.batchSize, t.clip, t.optimizer, t.lr,
                t.activation, validationFraction, score.equals("private-validation") ? scoreNoise : null);
        return new TuningReports.Provenance(t.dataset, datasetSize, t.modelName(), config, notes, event.toMap(), Cli.version());
    }


    /**
     * The tuning as the library runs it ({@link PrivateTuning#of}): σ calibrated for the whole tuning to --target-epsilon
     * (default 3), or --noise-multiplier as given, or each candidate's (a noise_multiplier axis, --candidate-epsilon); the
     * ledger's one charge, the resume record (the command line; the seed), the trials' placement (--executor spark) and
     * the release, which {@code writer} writes with its report.
     *
     * @param label the ledger charge's label
     */
    PrivateTuning tuning(Tuner<? extends TuningOutcome> tuner, HyperparameterSpace hs, DpSgdMechanism runs, TrainTest data,
                         String label, PrivateTuning.ReleaseWriter writer) {
        boolean perCandidate = candidateEpsilon != null || hs.axes().stream().anyMatch(a -> a.name().equals("noise_multiplier"));
        calibratedTo = noiseMultiplier == null && !perCandidate ? (targetEpsilon != null ? targetEpsilon : 3.0) : null;
        var shape = data.train() != null ? data.train() : data.test(); // packed shards: the test part, checked alike
        PrivateTuning tuning = PrivateTuning.of(tuner, hs, runs, searchSettings(hs)).delta(t.delta).seed(chosenTunerSeed)
                .dataset(t.dataset, dataDigest).input(new InputSpec(shape.channels(), shape.height(), shape.width(), 255))
                .label(label).placement(this::placed).releaseWriter(writer).tunerCharges(revealTrialScores);
        if (noiseMultiplier != null) {
            tuning.noiseMultiplier(noiseMultiplier);
        } else if (calibratedTo != null) {
            tuning.targetEpsilon(calibratedTo);
        }
        if (resumeState != null) {
            tuning.resumeFrom(resumeState);
        } else {
            tuning.resumeRecord(Map.of("args", savedArgs()));
        }
        return tuning;
    }

    /** The command line from "tune" on, which --resume parses again. */
    private List<String> savedArgs() {
        List<String> original = spec.commandLine().getParseResult().originalArgs();
        return original.subList(original.indexOf("tune") + 1, original.size());
    }

    /**
     * The tuning's plan (σ, the whole event), its refusals naming options; σ is then this command's for its reports.
     */
    PrivateTuning.Plan plan(PrivateTuning tuning) {
        PrivateTuning.Plan plan = TrainingOptions.byOptionName(tuning::plan);
        noiseMultiplier = plan.noiseMultiplier();
        return plan;
    }

    /**
     * Runs the planned tuning into --output with the ledger (--ledger), the progress bars and the notice printed if the JVM
     * is stopped; the release is written by the tuning's writer.
     */
    void run(PrivateTuning tuning) throws IOException {
        Path out = t.outputDirectory("tune");
        PrivacyLedger ledger = openLedger();
        if (ledger != null) {
            tuning.ledger(ledger);
        }
        Cli.InterruptNotice notice = interruptNotice(out, ledger);
        try (TrialProgress progress = new TrialProgress(t.noProgress, revealTrialScores)) {
            tuning.output(out, t.overwrite).listener(progress).run();
        } finally {
            notice.remove();
            if (ledger != null) {
                ledger.close();
            }
        }
    }

    /**
     * The search's public settings for the sidecar, by the keys {@code PrivateTuning} writes: the tuner, its own settings,
     * the space, K's distribution, the runs' DP-SGD settings with the whole tuning's target ε, the validation fraction and
     * the score noise (null for a public holdout).
     */
    private Map<String, Object> searchSettings(HyperparameterSpace hs) {
        Map<String, Object> search = new LinkedHashMap<>();
        search.put("tuner", getClass().getAnnotation(picocli.CommandLine.Command.class).name());
        Map<String, Object> own = new LinkedHashMap<>(ownSettings());
        Object k = own.remove("repetitions"); // after the space, in PrivateTuning's order
        search.putAll(own);
        search.put("space", hs.axes().stream().map(HyperparameterSpace.Axis::describe).toList());
        if (k != null) {
            search.put("repetitions", k);
        }
        search.putAll(t.settings().toMap()); // the runs' DP-SGD settings; target_epsilon is the whole tuning's
        search.put("target_epsilon", calibratedTo);
        search.put("validation_fraction", validationFraction);
        search.put("score_noise", score.equals("private-validation") ? scoreNoise : null);
        return search;
    }

    /** The whole tuning's target ε that σ was calibrated to, or null when σ was given (or is an axis). */
    private Double calibratedTo;

    /** True when this command continues a tuning (--resume). */
    boolean resuming() {
        return resumeState != null;
    }

    /**
     * The ledger charge that pays for this tuning, made once for every tuner: on a fresh run the earlier trials are
     * wiped, the whole event is charged (when there is a ledger) and the resume state is saved naming that charge; on
     * --resume the saved charge is found and checked against this tuning's event, or made now if the run had none yet.
     * The ledger is closed if this fails.
     *
     * @return the charge's sequence number, or null without a ledger
     */
    Long chargeOnce(PrivacyLedger ledger, String label, java.util.function.Supplier<PrivacyEvent> event, Path out) throws IOException {
        Map<String, Object> fresh = new LinkedHashMap<>();
        if (resumeState == null) {
            fresh.put("note", "operator record: holds the tuning's seed, which determines its noise; never publish");
            fresh.put("args", savedArgs());
            fresh.put("tuner_seed", Long.toString(chosenTunerSeed));
            Files.createDirectories(TuningOutput.operatorDirectory(out));
        }
        tuningRun = PrivateRun.chargeTuning(out, resumeState, fresh, ledger, ledgerOptions.file, label, event, t.dataset, dataDigest);
        charge = tuningRun.charge();
        return charge;
    }

    /** The tuning's lifecycle in its output directory (set by {@link #chargeOnce}). */
    private PrivateRun tuningRun;

    /** The loaded data's digest (a folder's or shards'; null for a named data set), saved for --resume to check. */
    String dataDigest;

    /** The charge that pays for this tuning (set by {@link #chargeOnce}), or null. */
    Long charge;

    /**
     * Writes the operator record and releases the tuning: staged, bound to its ledger charge (a charge releases once),
     * published, and only then is the resume state (which holds the seed) deleted, so that a crash at any point leaves
     * either the state to resume from or the release on disk.
     *
     * @param event the release's event (what the tuning's ε covers)
     * @throws PrivacyLedger.AlreadyReleasedException if a copy of this tuning released under the same charge first
     */
    void release(Path out, org.dpdl4j.release.PrivateModel model, Object report, List<Map<String, Object>> revealedTrials,
                 Map<String, Object> operator, PrivacyEvent event) throws IOException {
        org.dpdl4j.release.CrashPoint.reached("tune:before-release");
        StagedRelease staged = TuningOutput.stage(out, model, report, revealedTrials, operator);
        tuningRun.releaseTuning(staged, event);
    }

    /** The one-line notice printed if the JVM is stopped during the tuning. */
    Cli.InterruptNotice interruptNotice(Path out, PrivacyLedger ledger) {
        return Cli.InterruptNotice.install("tune interrupted: " + (ledger != null
                ? "the tuning's whole cost was charged to " + ledgerOptions.file + " before its first trial; " : "")
                + "continue with ./dpdl4j tune --resume " + out);
    }


    /** tune --resume DIR: the saved command line, parsed anew, with the saved seed and DIR as the output. */
    private Integer resumeTuning() throws Exception {
        Path stateFile = resume.resolve(PrivateRun.TUNING_STATE);
        java.util.Optional<StagedRelease> pending;
        try {
            pending = StagedRelease.pending(resume);
        } catch (IllegalStateException e) {
            throw new IllegalArgumentException("--resume " + resume + ": " + e.getMessage());
        }
        if (pending.isEmpty() && Files.exists(resume.resolve("tuning.json"))) {
            throw new IllegalArgumentException("--resume " + resume + ": that tuning has finished (tuning.json exists)");
        }
        Map<String, Object> state = PrivateRun.tuningState(resume, "--resume " + resume);
        if (!(state.get("args") instanceof List<?> saved) || !saved.stream().allMatch(a -> a instanceof String)) {
            throw new IllegalArgumentException("--resume " + resume + ": " + stateFile + ": field 'args' is missing or not a list of "
                    + "strings (the saved command line)");
        }
        if (pending.isPresent()) { // stopped while releasing: the staged files go out as they are, nothing runs again
            PrivateRun.finishStagedTuning(resume, pending.get(), state);
            System.out.println("the release interrupted before was finished: " + resume.resolve("tuning.json"));
            return 0;
        }
        PrivateRun.checkNotReleased(resume, state); // a copy whose charge has released
        @SuppressWarnings("unchecked")
        List<String> args = (List<String>) state.get("args");
        for (String a : args) {
            if (List.of("--resume", "-h", "--help", "-V", "--version").contains(a) || a.startsWith("--resume=")) {
                throw new IllegalArgumentException("--resume " + resume + ": " + stateFile + ": the saved command line holds '" + a
                        + "', which no tuning was started with; the state was edited");
            }
        }
        picocli.CommandLine cl = new picocli.CommandLine(new TuneCommand());
        picocli.CommandLine.ParseResult parsed = cl.parseArgs(TuneCommand.withTunerSubcommand(args).toArray(String[]::new));
        TuningCommand again = (TuningCommand) parsed.subcommand().commandSpec().userObject();
        again.resumeState = state;
        again.t.output = resume;
        if (state.get("ledger") instanceof String ledgerPath) { // as charged, whatever the directory resume runs in
            again.ledgerOptions.file = java.nio.file.Path.of(ledgerPath);
        }
        again.t.overwrite = true;
        again.t.noProgress |= t.noProgress;
        again.t.json |= t.json;
        System.out.println("resuming the tuning in " + resume + " (same K and candidates; finished trials are not re-run; "
                + "the ledger is not charged again)");
        return again.call();
    }





    /** The base mechanism's settings from the command line (workers split between trial threads). */
    DpSgdMechanism.Builder mechanism(TrainTest data, DpSgdMechanism.Scoring scoring) {
        int cores = Runtime.getRuntime().availableProcessors();
        int workers = trialWorkers != null ? trialWorkers : cluster != null ? cluster.settings().taskCpus() : Math.max(1, cores / threads);
        // op threads per trial: a Spark task's cores, or this machine's shared by the trials running at once (the
        // executors take this JVM's setting, so that a trial computes the same bits wherever it runs)
        Reporting.configureWorkers(workers, cluster != null ? cluster.settings().taskCpus() : cores, cluster != null ? 1 : threads);
        DpSgdMechanism.Builder b = DpSgdMechanism.builder(data.trainExamples()).model(t.modelName(), t.modelOptions(data))
                .settings(t.settings()).activation(t.activation)
                .noiseMultiplier(noiseMultiplier != null ? noiseMultiplier : 1).workers(workers)
                .validation(validationFraction, t.weightSeed()).scoring(scoring, scoreNoise)
                .augmult(augmult.augmentation(t.dataset), augmult.k);
        if (trainCluster != null) {
            org.dpdl4j.spark.SparkClippedSums s = trainCluster.clippedSums(executorOptions.partitions != null
                    ? executorOptions.partitions : trainCluster.parallelism());
            sums.add(s);
            b.clippedSums(s);
        }
        return candidateEpsilon != null ? b.perCandidateEpsilon(candidateEpsilon) : b;
    }

    private boolean seedNoted;

    /** The tuner's seed: --seed, or a secure one. */
    long tunerSeed() {
        if (chosenTunerSeed != null) {
            return chosenTunerSeed;
        }
        if (t.seed != null && !t.secureNoise) {
            if (!seedNoted) {
                System.err.println("note: --seed fixes K, the candidates, the subsets, the sampling and the noise; keep it secret");
                seedNoted = true;
            }
            return t.seed;
        }
        return new SecureRandom().nextLong();
    }

    /** This tuner's own settings for the sidecar, by the keys {@code PrivateTuning} writes (default: none). */
    Map<String, Object> ownSettings() {
        return Map.of();
    }

    PrivacyLedger openLedger() throws IOException {
        return ledgerOptions.open(t.dataset, t.delta);
    }
}
