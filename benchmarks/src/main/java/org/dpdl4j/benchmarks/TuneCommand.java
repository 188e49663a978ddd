package org.dpdl4j.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import me.tongfei.progressbar.ProgressBar;
import org.deeplearning4j.util.ModelSerializer;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.accounting.RepeatAndSelectEvent;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.SelfComposedEvent;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.StepInfo;
import org.dpdl4j.tuning.Candidate;
import org.dpdl4j.tuning.DpSgdMechanism;
import org.dpdl4j.models.Models;
import org.dpdl4j.tuning.CheckpointedMechanism;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.tuning.TrainingMechanism;
import org.dpdl4j.tuning.OperatorRecord;
import org.dpdl4j.tuning.Release;
import org.dpdl4j.tuning.PrivacyLedger;
import org.dpdl4j.tuning.DpHypoTuner;
import org.dpdl4j.tuning.GaussianProcess;
import org.dpdl4j.tuning.GpUcbSoftmax;
import org.dpdl4j.tuning.RandomSearchTuner;
import org.dpdl4j.tuning.Tuner;
import org.dpdl4j.tuning.TrialResult;
import org.dpdl4j.tuning.TuningListener;
import org.dpdl4j.tuning.TuningResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code dpdl4j tune}: private hyperparameter tuning whose whole cost is accounted. */
@Command(name = "tune", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Tune hyperparameters with DP-SGD runs as the base mechanism and report the privacy cost of the",
                "whole search: one run's epsilon and the tuning's epsilon (the honest number).",
                "--output holds the release, exactly what that epsilon covers: model.zip and tuning.json (trials.json",
                "with --reveal-trials). --output/operator/ holds the operator record (the realised K, every trial,",
                "sizes, timings): not covered by epsilon, never to be published."})
final class TuneCommand implements Callable<Integer> {
    @Option(names = "--tuner", defaultValue = "random-search", description = {"random-search (Papernot & Steinke 2022),",
            "dp-hype (distributed voting with secure summation; Liebenow et al. 2025),",
            "dp-hypo (adaptive GP search with bounded densities; Wang et al. 2023),",
            "propose-test (k-part utilities, noisy thresholds with a doubling step; Ding & Wu 2022) or",
            "subsampled (tune on a Poisson subset, then train the final model; Koskela & Kulkarni 2023) (default ${DEFAULT-VALUE})."})
    String tuner;

    @Mixin
    DensityBoundsOption density;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--clients", paramLabel = "n", defaultValue = "10", description = "dp-hype: clients n, each holding one shard (default ${DEFAULT-VALUE}).")
    int clients;

    @Option(names = "--votes", paramLabel = "k", defaultValue = "5", description = "dp-hype: votes per client k (default ${DEFAULT-VALUE}).")
    int votes;

    @Option(names = "--min-clients", paramLabel = "n_min", description = {"dp-hype: a round completes with at least n_min clients;",
            "the noise is sized for n_min, so n - n_min dropouts are tolerated (default n)."})
    Integer minClients;

    @Option(names = "--partition", defaultValue = "iid", description = "dp-hype: iid shards or dirichlet:ALPHA label skew (Liebenow et al. 2025, arXiv:2510.04902, Sec. VI.D) (default ${DEFAULT-VALUE}).")
    String partition;

    @Option(names = "--transport", defaultValue = "in-process", description = {"dp-hype: in-process (client threads) or grpc",
            "(coordinator on loopback, one client process each) (default ${DEFAULT-VALUE})."})
    String transport;

    @Option(names = "--coordinator-port", defaultValue = "0", description = "dp-hype, grpc: port of the coordinator (0: any free port).")
    int coordinatorPort;

    @Option(names = "--phase-timeout", paramLabel = "SECONDS", defaultValue = "900", description = {"dp-hype: how long a protocol phase waits",
            "for missing clients after its first message (local training happens before) (default ${DEFAULT-VALUE})."})
    double phaseTimeout;

    @Option(names = "--vote-scale", paramLabel = "s", defaultValue = "65536", description = {"dp-hype: a vote is encoded as the integer s;",
            "discrete Gaussian noise on that grid (default ${DEFAULT-VALUE} = 2^16)."})
    long voteScale;

    @Option(names = "--evaluate", description = {"dp-hype: also train every candidate on all the training data, non-privately,",
            "for OPT and RANDGUESS (a research yardstick, written to the operator record only, not covered by epsilon)."})
    boolean evaluate;

    @Option(names = "--no-evaluate", hidden = true, description = "dp-hype: the default; kept for old command lines.")
    boolean noEvaluate;

    @Option(names = "--join", paramLabel = "HOST:PORT", hidden = true, description = "dp-hype: run as a client process of a coordinator.")
    String join;

    @Option(names = "--client-id", hidden = true, defaultValue = "0", description = "dp-hype: this client process's id in [1, n].")
    int clientId;

    @Option(names = "--partitions", paramLabel = "k", defaultValue = "10", description = "propose-test: disjoint parts k (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--granularity", paramLabel = "g", defaultValue = "0.1", description = {"propose-test: utility granularity g in (0, 1);",
            "T_max = 2*ceil((1-u0)/g)+2 iterations are charged (default ${DEFAULT-VALUE}: 22 iterations)."})
    double granularity;

    @Option(names = "--eps0", paramLabel = "ε₀", defaultValue = "0.1", description = "propose-test: epsilon of one loop iteration (default ${DEFAULT-VALUE}).")
    double epsilon0;

    @Option(names = "--u0", defaultValue = "0", description = "propose-test: utility lower bound u0 in [0, 1) (default ${DEFAULT-VALUE}).")
    double lowerUtility;

    @Option(names = "--max-iterations", paramLabel = "T_max", description = "propose-test: iteration cap, all of it charged (default 2*ceil((1-u0)/g)+2).")
    Integer maxIterations;

    @Option(names = "--ucb-tau", paramLabel = "τ", defaultValue = "0.1", description = "dp-hypo: UCB weight tau >= 0 (default ${DEFAULT-VALUE}).")
    double ucbTau;

    @Option(names = "--softmax-beta", paramLabel = "β", defaultValue = "1", description = "dp-hypo: softmax inverse temperature beta >= 0 (default ${DEFAULT-VALUE}).")
    double softmaxBeta;

    @Option(names = "--kernel", defaultValue = "matern52", description = "dp-hypo: GP kernel, matern52 or se (squared exponential) (default ${DEFAULT-VALUE}).")
    String kernel;

    @Mixin
    SubsampleOptions subsample;

    @Option(names = "--inner", defaultValue = "random-search", description = "subsampled: the tuner run on X1, random-search or dp-hypo (default ${DEFAULT-VALUE}).")
    String inner;

    @Option(names = "--extrapolation", defaultValue = "linear-lr", description = {"subsampled: linear-lr (learning rate x n/m for sgd",
            "and momentum, kept for adam; Koskela & Kulkarni 2023, arXiv:2301.11989, Sec. 3.2) or none (default ${DEFAULT-VALUE})."})
    String extrapolation;

    @Option(names = "--warm-start", description = "subsampled: start the final run from the tuned model (Koskela & Kulkarni 2023, arXiv:2301.11989, Remark 8).")
    boolean warmStart;

    @Option(names = "--candidate-epsilon", paramLabel = "ε", description = {"Calibrate sigma per candidate so each DP-SGD run is",
            "(epsilon, delta)-DP, for spaces over sampling_rate/epochs (Koskela & Kulkarni 2023, arXiv:2301.11989, Sec. 4.1); the tuning's total is then reported."})
    Double candidateEpsilon;

    @Option(names = "--repetitions", defaultValue = "poisson:10", paramLabel = "SPEC",
            description = "Distribution of the number of runs K: " + RepetitionSpec.FORMS + " (default ${DEFAULT-VALUE}; "
                    + "geometric:mean=10 for dp-hypo).")
    String repetitions;

    @Option(names = "--max-repetitions", paramLabel = "m", description = "Truncate K at m runs (Papernot & Steinke 2022, arXiv:2110.03620, Lemma 22).")
    Long maxRepetitions;

    @Option(names = "--space", paramLabel = "AXIS", description = {"A hyperparameter axis, repeatable: NAME=log:LO:HI:N, NAME=lin:LO:HI:N,",
            "NAME=cat:A,B, NAME=range:LO:HI, NAME=logrange:LO:HI or NAME=VALUE. Names: lr, optimizer, activation,",
            "sigma, clip, batch_size, sampling_rate, epochs (default lr=log:0.025:1:20)."})
    List<String> space = new ArrayList<>();

    @Option(names = "--range-points", defaultValue = "100", description = "Points a continuous range is discretised into (default ${DEFAULT-VALUE}).")
    int rangePoints;

    @Mixin
    TrainingOptions t;

    @Option(names = "--noise-multiplier", paramLabel = "σ", description = "Noise multiplier sigma of every run (or give --target-epsilon).")
    Double noiseMultiplier;

    @Option(names = "--target-epsilon", paramLabel = "ε", description = "Calibrate sigma so the WHOLE tuning run is (epsilon, delta)-DP "
            + "(default 3 when --noise-multiplier is not given; for dp-hype the vote's epsilon, default 1).")
    Double targetEpsilon;

    @Option(names = "--score", defaultValue = "private-validation", description = {"private-validation: score on a split of the",
            "training data, released with Gaussian noise whose cost is counted; public-holdout: that split is declared",
            "public (no noise, no cost) (default ${DEFAULT-VALUE})."})
    String score;

    @Option(names = "--score-noise", defaultValue = "0.005", description = "Std of the noisy validation accuracy (default ${DEFAULT-VALUE}).")
    double scoreNoise;

    @Option(names = "--validation-fraction", defaultValue = "0.1", description = "Fraction of the training data used for scores (default ${DEFAULT-VALUE}).")
    double validationFraction;

    @Option(names = "--threads", defaultValue = "1", description = "Trials run in parallel (default ${DEFAULT-VALUE}); each uses cores/threads DP-SGD workers.")
    int threads;

    @Mixin
    LedgerOptions ledgerOptions;

    @Option(names = "--reveal-trials", description = {"Release K and every trial (candidate and score, in trials.json). The",
            "random-K bounds cover only the best run with K hidden, so K is drawn first and the composition of the",
            "K drawn runs is charged before any run (random-search and dp-hypo; needs --noise-multiplier)."})
    boolean revealTrialScores;

    @Option(names = "--reveal-trial-scores", hidden = true, description = "The old name of --reveal-trials.")
    boolean revealTrialScoresOldName;

    @Option(names = "--resume", paramLabel = "DIR", description = {"Continue the tuning whose output directory",
            "is DIR after a crash: same K and candidates, finished trials not re-run, nothing charged twice; the other",
            "options come from DIR/operator/state.json."})
    Path resume;

    @Option(names = "--dry-run", description = {"Print sigma, the tuning's epsilon and an estimate of the time, and stop: nothing is",
            "trained or charged (random-search and dp-hypo)."})
    boolean dryRun;

    /** The saved state of the tuning being resumed, or null. */
    private Map<String, Object> resumeState;

    /** The tuner's seed once chosen (saved for --resume), or null. */
    private Long chosenTunerSeed;

    @Override
    public Integer call() throws IOException {
        if (resume != null) {
            return resumeTuning();
        }
        revealTrialScores |= revealTrialScoresOldName;
        if (join == null && !dryRun) {
            t.outputDirectory("tune"); // checked before anything is charged or trained
        }
        t.checkRunSettings();
        if (t.nonPrivate) {
            if (targetEpsilon != null || candidateEpsilon != null || noiseMultiplier != null && noiseMultiplier != 0) {
                throw new IllegalArgumentException("--non-private trains with sigma = 0: --target-epsilon, --candidate-epsilon and a "
                        + "non-zero --noise-multiplier do not apply");
            }
            if (ledgerOptions.file != null) {
                throw new IllegalArgumentException("--non-private runs have infinite epsilon and are never charged to a ledger: "
                        + "drop --ledger");
            }
            if (!tuner.equals("dp-hype")) {
                noiseMultiplier = 0.0;
            }
        } else if (noiseMultiplier != null && noiseMultiplier == 0) {
            throw new IllegalArgumentException("--noise-multiplier 0 trains without privacy: add --non-private to do that on purpose");
        }
        if (!List.of("random-search", "subsampled", "dp-hypo", "propose-test", "dp-hype").contains(tuner)) {
            throw new IllegalArgumentException("--tuner must be random-search, dp-hypo, subsampled, propose-test or dp-hype, got '"
                    + tuner + "'");
        }
        if (!inner.equals("random-search") && !inner.equals("dp-hypo")) {
            throw new IllegalArgumentException("--inner must be random-search or dp-hypo, got '" + inner + "'");
        }
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
        if ((tuner.equals("dp-hypo") || tuner.equals("subsampled") && inner.equals("dp-hypo"))
                && !spec.commandLine().getParseResult().hasMatchedOption("--repetitions")) {
            repetitions = "geometric:mean=10"; // DP-HyPO's Theorem 1 is for truncated negative binomial K; Poisson costs far more
        }
        RepetitionDistribution k = RepetitionSpec.parse(repetitions, maxRepetitions);
        List<HyperparameterSpace.Axis> axes = new ArrayList<>();
        for (String s : space.isEmpty() ? List.of("lr=log:0.025:1:20") : space) {
            axes.add(HyperparameterSpace.parseAxis(s));
        }
        HyperparameterSpace hs = HyperparameterSpace.of(axes).withRangePoints(rangePoints);
        DpSgdMechanism.Scoring scoring = switch (score) {
            case "private-validation" -> DpSgdMechanism.Scoring.PRIVATE_VALIDATION;
            case "public-holdout" -> DpSgdMechanism.Scoring.PUBLIC_HOLDOUT;
            default -> throw new IllegalArgumentException("--score must be private-validation or public-holdout, got '" + score + "'");
        };
        boolean sigmaAxis = axes.stream().anyMatch(a -> a.name().equals("sigma"));
        if ((noiseMultiplier != null ? 1 : 0) + (targetEpsilon != null ? 1 : 0) + (candidateEpsilon != null ? 1 : 0) > 1) {
            throw new IllegalArgumentException("give one of --noise-multiplier, --target-epsilon and --candidate-epsilon");
        }
        if (candidateEpsilon != null && (!(candidateEpsilon > 0) || candidateEpsilon.isInfinite())) {
            throw new IllegalArgumentException("--candidate-epsilon must be finite and > 0, got " + candidateEpsilon);
        }
        if (sigmaAxis && (targetEpsilon != null || candidateEpsilon != null)) {
            throw new IllegalArgumentException("--target-epsilon and --candidate-epsilon calibrate sigma, so sigma cannot also be a "
                    + "--space axis");
        }
        // one seed for the whole tuning, saved for --resume
        chosenTunerSeed = resumeState != null ? Long.parseLong((String) resumeState.get("tuner_seed")) : tunerSeed();
        if (tuner.equals("subsampled")) {
            return new SubsampledRun(this, k, hs, scoring, sigmaAxis).call();
        }
        if (tuner.equals("dp-hype")) {
            try {
                return new DpHypeRun(this, hs).call();
            } catch (IOException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("dp-hype: " + e.getMessage(), e);
            }
        }
        if (tuner.equals("propose-test")) {
            return new ProposeTestRun(this, hs, scoring).call();
        }
        if (revealTrialScores && noiseMultiplier == null && !sigmaAxis && candidateEpsilon == null) {
            throw new IllegalArgumentException("--reveal-trials charges the realised K runs, which is unknown before "
                    + "they are drawn: give --noise-multiplier instead of --target-epsilon");
        }

        if (resumeState != null && revealTrialScores) {
            throw new IllegalArgumentException("--resume is not available for a tuning with --reveal-trials (its charge depends on K)");
        }
        Tuner search = tuner(k); // validates the tuner's options before the data is loaded
        TrainTest data = t.load();
        t.checkDelta(data.train().size());
        DpSgdMechanism mechanism = mechanism(data, scoring).build();
        RdpAccountant acc = RdpAccountant.standard();
        if (noiseMultiplier == null && !sigmaAxis && candidateEpsilon == null) {
            DpSgdMechanism unscaled = mechanism;
            double sigma = calibrate(s -> search.event(hs, unscaled.withNoiseMultiplier(s)), search instanceof DpHypoTuner
                    ? "the adaptivity cost log(C/c) of --density-bounds and the distribution of K" : "the distribution of K");
            mechanism = mechanism.withNoiseMultiplier(sigma);
            noiseMultiplier = sigma;
        }
        PrivacyEvent base = RandomSearchTuner.baseEvent(hs, mechanism);
        System.out.printf("dpdl4j %s | %s on %s: K ~ %s (E[K] = %.4g), space %s, %d candidates%n", Cli.version(),
                search instanceof DpHypoTuner ? "DP-HyPO (density bounds " + density.densityBounds + ", " + rule().name() + ")"
                        : "random search", t.dataset, k.describe(), k.mean(), hs, hs.size());
        System.out.printf("each run: %s, n=%d, B=%d, %.4g epochs, C=%s, sigma=%.4f, %s; one run epsilon %.4f%n",
                t.modelName(), data.train().size(), t.batchSize, t.epochs, t.clip,
                noiseMultiplier == null ? Double.NaN : noiseMultiplier,
                scoring == DpSgdMechanism.Scoring.PRIVATE_VALIDATION
                        ? String.format("score noise std %.4g", scoreNoise) : "score on a split declared public, no cost",
                acc.epsilon(base, t.delta));

        if (dryRun) {
            return dryRun(search, hs, mechanism, data, k);
        }
        Path out = t.outputDirectory("tune");
        PrivacyLedger ledger = openLedger();
        DpSgdMechanism calibrated = mechanism;
        Long covering = chargeOnce(revealTrialScores ? null : ledger, chargeLabel(search, k), () -> search.event(hs, calibrated), out);
        if (revealTrialScores && ledger != null) {
            covering = null; // the tuner charges the composition of the K runs once K is drawn
        }
        TrainingMechanism trials = new CheckpointedMechanism(mechanism, trialsDirectory(out), runId);
        TuningResult result;
        Cli.InterruptNotice notice = interruptNotice(out, ledger);
        try (ProgressReporter progress = new ProgressReporter(t.noProgress, revealTrialScores)) {
            result = search.tune(hs, trials, ledger, covering, progress);
        } finally {
            notice.remove();
            if (ledger != null) {
                ledger.close();
            }
        }
        finished(out);

        Release release = result.release();
        OperatorRecord record = result.operatorRecord();
        PrivacyGuarantee total = acc.guarantee(release.event(), t.delta);
        PrivacyGuarantee single = acc.guarantee(result.baseEvent(), t.delta);
        double naive = result.repetitions() == 0 ? 0
                : acc.epsilon(new SelfComposedEvent(result.baseEvent(), result.repetitions()), t.delta);
        Double testAccuracy = release.model() != null ? DpSgdTrainer.accuracy(release.model(), data.test()) : null;

        Map<String, Object> report = new LinkedHashMap<>();
        report.put("tuner", search instanceof DpHypoTuner ? "dp-hypo" : "random-search");
        report.putAll(release.toMap());
        report.put("best_run", runSettings(mechanism, release.candidate()));
        report.put("test_accuracy", testAccuracy);
        report.put("epsilon_total", total.epsilon());
        report.put("epsilon_single_run", single.epsilon());
        Double adaptivity = null;
        if (search instanceof DpHypoTuner && !release.trialsRevealed()) {
            double random = acc.epsilon(new RepeatAndSelectEvent(result.baseEvent(), k), t.delta);
            adaptivity = total.epsilon() - random;
            report.put("density_bounds", List.of(density.bounds(DEFAULT_BOUNDS)[0], density.bounds(DEFAULT_BOUNDS)[1]));
            report.put("epsilon_random_search", random);
            report.put("adaptivity_cost", adaptivity);
        }
        report.put("delta", t.delta);
        report.put("rdp_order", total.order());
        report.put("distribution", k.describe());
        report.put("expected_repetitions", k.mean());
        report.put("noise_multiplier", noiseMultiplier);
        report.put("score", score);
        report.put("trials_revealed", release.trialsRevealed());
        report.put("dataset", t.dataset);
        report.put("dataset_size", data.train().size());
        report.put("model", t.modelName());
        report.put("config", releaseConfig(hs));
        report.put("notes", release.notes());
        report.put("event", release.event().toMap());
        report.put("library_version", Cli.version());

        Map<String, Object> operator = new LinkedHashMap<>(record.toMap());
        operator.put("epsilon_naive_composition", naive);
        operator.put("train_split_size", mechanism.train().size());
        operator.put("validation_split_size", mechanism.validation().size());
        TuningOutput.write(out, release.model(), report, release.trialsRevealed() ? release.trialMaps() : null, operator);

        System.out.printf("best: %s | validation score %s | test accuracy %s%n", release.candidate(),
                release.score() == null ? "n/a" : String.format("%.4f", release.score()),
                testAccuracy == null ? "n/a (no model)" : String.format("%.4f", testAccuracy));
        System.out.printf("epsilon at delta %s:  one run %.4f | whole tuning %.4f (the honest number, RDP order %s)%n", t.delta,
                single.epsilon(), total.epsilon(), total.order());
        if (adaptivity != null) {
            System.out.printf("adaptivity cost: %.4f (random search with the same runs would cost %.4f)%n", adaptivity,
                    total.epsilon() - adaptivity);
        }
        for (String note : release.notes()) {
            System.out.println("note: " + note);
        }
        if (!total.warning().isEmpty()) {
            System.out.println("warning: " + total.warning());
        }
        System.out.printf("[operator] K = %d runs (naive composition over them: epsilon %.4f)%n", result.repetitions(), naive);
        for (String note : record.notes()) {
            System.out.println("[operator] " + note);
        }
        TuningOutput.printWhere(System.out, out, release.model() != null, release.trialsRevealed());
        if (t.json) {
            report.remove("event");
            Cli.printJsonLine(System.out, report);
        }
        return 0;
    }

    /** The released model's DP-SGD settings: data-independent (q from the public dataset size). */
    static Map<String, Object> runSettings(DpSgdMechanism mechanism, Candidate c) {
        org.dpdl4j.dpsgd.DpSgdConfig cfg = mechanism.config(c, 0);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("sampling_rate", cfg.samplingRate());
        m.put("noise_multiplier", cfg.noiseMultiplier());
        m.put("clip", cfg.clipNorm());
        m.put("steps", cfg.steps());
        return m;
    }

    /** The data-independent configuration of a tuning, for its release. */
    Map<String, Object> releaseConfig(HyperparameterSpace hs) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("space", hs.toString());
        m.put("epochs", t.epochs);
        m.put("batch_size", t.batchSize);
        m.put("clip", t.clip);
        m.put("optimizer", t.optimizer);
        m.put("lr", t.lr);
        m.put("activation", t.activation);
        m.put("validation_fraction", validationFraction);
        m.put("score_noise", score.equals("private-validation") ? scoreNoise : null);
        return m;
    }

    private static final String STATE = "state.json";

    /**
     * The smallest σ for which the procedure meets --target-epsilon (default 3). When no σ can (a floor the noise
     * cannot lower), says so with the floor, its cause and the fix.
     */
    double calibrate(java.util.function.DoubleFunction<PrivacyEvent> eventOf, String floorCause) {
        double target = targetEpsilon != null ? targetEpsilon : 3.0;
        RdpAccountant acc = RdpAccountant.standard();
        try {
            return NoiseCalibration.smallestNoise(eventOf::apply, target, t.delta, acc, 1e-3);
        } catch (IllegalArgumentException e) {
            double floor = acc.epsilon(eventOf.apply(1e6), t.delta);
            throw new IllegalArgumentException(String.format("--target-epsilon %s cannot be met: with any noise the procedure costs "
                    + "at least epsilon %.4f at delta %s, from %s. Raise --target-epsilon above %.4f or lower that floor.", target, floor,
                    t.delta, floorCause, floor));
        }
    }

    /** What --dry-run prints: σ, the tuning's ε, E[K] and the expected time from a short timing on random inputs. */
    private Integer dryRun(Tuner search, HyperparameterSpace hs, DpSgdMechanism mechanism, TrainTest data, RepetitionDistribution k) {
        RdpAccountant acc = RdpAccountant.standard();
        PrivacyEvent event = revealTrialScores ? null : search.event(hs, mechanism);
        Candidate c = hs.first();
        org.dpdl4j.dpsgd.DpSgdConfig cfg = mechanism.config(c, 0);
        double perRun = Cli.estimateSecondsPerStep(Models.byName(t.modelName(), t.modelOptions(data)), mechanism.train(), cfg)
                * cfg.steps();
        System.out.printf("dry run: sigma %.4f; whole tuning epsilon %s at delta %s; E[K] = %.4g runs of about %.0f s each (%s), "
                        + "about %.0f s in all; nothing was trained or charged%n", noiseMultiplier,
                event == null ? "(the composition of the K drawn runs)" : String.format("%.4f", acc.epsilon(event, t.delta)), t.delta,
                k.mean(), perRun, c, perRun * k.mean());
        if (t.json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("dry_run", true);
            j.put("noise_multiplier", noiseMultiplier);
            j.put("epsilon_total", event == null ? null : acc.epsilon(event, t.delta));
            j.put("delta", t.delta);
            j.put("expected_repetitions", k.mean());
            j.put("estimated_seconds", perRun * k.mean());
            Cli.printJsonLine(System.out, j);
        }
        return 0;
    }

    /** True when this command continues a tuning (--resume). */
    boolean resuming() {
        return resumeState != null;
    }

    /** The identifier of this tuning, kept across its resumptions (set by {@link #chargeOnce}). */
    String runId;

    /** Where a tuning keeps its finished trials for --resume (operator-only). */
    static Path trialsDirectory(Path out) {
        return TuningOutput.operatorDirectory(out).resolve("trials");
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
        try {
            if (resumeState == null) {
                Cli.deleteTree(trialsDirectory(out)); // an earlier tuning's trials never stand in for this one's
                Long charge = ledger != null ? ledger.charge(label, event.get()).sequence() : null;
                runId = java.util.UUID.randomUUID().toString();
                saveResumeState(out, charge, runId);
                return charge;
            }
            Long charge = resumeState.get("ledger_charge") instanceof Number n ? n.longValue() : null;
            runId = (String) resumeState.get("run");
            if (ledger == null) {
                return null;
            }
            if (charge == null) {
                return ledger.charge(label, event.get()).sequence();
            }
            long seq = charge;
            PrivacyEvent expected = event.get();
            if (ledger.entries().stream().noneMatch(e -> e.charged() && e.sequence() == seq && e.event().equals(expected))) {
                throw new IllegalArgumentException("--resume " + resume + ": the ledger " + ledgerOptions.file + " has no charge " + seq
                        + " of this tuning's cost; it was not made for this tuning");
            }
            return charge;
        } catch (IOException | RuntimeException e) {
            if (ledger != null) {
                ledger.close(); // nothing ran: release the ledger's lock
            }
            throw e;
        }
    }

    /** The tuning has ended: its resume state (which holds the seed) is deleted. */
    void finished(Path out) throws IOException {
        Files.deleteIfExists(TuningOutput.operatorDirectory(out).resolve(STATE));
    }

    /** The one-line notice printed if the JVM is stopped during the tuning. */
    Cli.InterruptNotice interruptNotice(Path out, PrivacyLedger ledger) {
        return Cli.InterruptNotice.install("tune interrupted: " + (ledger != null
                ? "the tuning's whole cost was charged to " + ledgerOptions.file + " before its first trial; " : "")
                + "continue with ./dpdl4j tune --resume " + out);
    }

    private static String chargeLabel(Tuner search, RepetitionDistribution k) {
        return (search instanceof DpHypoTuner ? "DP-HyPO" : "random search") + ", K ~ " + k.describe();
    }

    /** Saves what --resume needs (the command line, the tuner's seed, the charge paying for the tuning) in the operator record. */
    private void saveResumeState(Path out, Long charge, String run) throws IOException {
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("note", "operator record: holds the tuning's seed, which determines its noise; never publish");
        List<String> original = spec.commandLine().getParseResult().originalArgs(); // from "tune" on
        state.put("args", original.subList(original.indexOf("tune") + 1, original.size()));
        state.put("tuner_seed", Long.toString(chosenTunerSeed));
        state.put("ledger_charge", charge);
        state.put("run", run);
        Files.createDirectories(TuningOutput.operatorDirectory(out));
        Cli.writeJsonAtomically(TuningOutput.operatorDirectory(out).resolve(STATE), state);
    }

    /** tune --resume DIR: the saved command line, parsed anew, with the saved seed and DIR as the output. */
    private Integer resumeTuning() throws IOException {
        Path stateFile = TuningOutput.operatorDirectory(resume).resolve(STATE);
        if (Files.exists(resume.resolve("tuning.json"))) {
            throw new IllegalArgumentException("--resume " + resume + ": that tuning has finished (tuning.json exists)");
        }
        if (!Files.exists(stateFile)) {
            throw new IllegalArgumentException("--resume " + resume + ": no tuning to resume (" + stateFile + " does not exist; "
                    + "the tuning ended or never started)");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> state = Cli.JSON.readValue(stateFile.toFile(), Map.class);
        @SuppressWarnings("unchecked")
        List<String> args = (List<String>) state.get("args");
        TuneCommand again = new TuneCommand();
        picocli.CommandLine cl = new picocli.CommandLine(again);
        cl.parseArgs(args.toArray(String[]::new));
        again.spec = cl.getCommandSpec();
        again.resumeState = state;
        again.t.output = resume;
        again.t.overwrite = true;
        again.t.noProgress |= t.noProgress;
        again.t.json |= t.json;
        System.out.println("resuming the tuning in " + resume + " (same K and candidates; finished trials are not re-run; "
                + "the ledger is not charged again)");
        return again.call();
    }

    /** tune's default density bounds: the paper's 0.75:2 alone costs about ε 3 by Theorem 1 (3·log(8/3)). */
    private static final double[] DEFAULT_BOUNDS = {0.8, 1.25};

    /** The tuner --tuner names (random search or DP-HyPO). */
    private Tuner tuner(RepetitionDistribution k) {
        return tuner(k, tuner);
    }

    /** The tuner of that name: random-search or dp-hypo (with this command's options). */
    Tuner tuner(RepetitionDistribution k, String name) {
        if (!name.equals("dp-hypo")) {
            if (density.densityBounds != null) {
                throw new IllegalArgumentException("--density-bounds is for --tuner dp-hypo");
            }
            return new RandomSearchTuner(k, tunerSeed(), threads, revealTrialScores);
        }
        double[] b = density.bounds(DEFAULT_BOUNDS);
        density.densityBounds = b[0] + ":" + b[1];
        DpHypoTuner hypo = new DpHypoTuner(k, b[0], b[1], rule(), tunerSeed());
        return revealTrialScores ? hypo.withRevealedTrials() : hypo;
    }

    private GpUcbSoftmax rule() {
        GaussianProcess.Kernel kern = switch (kernel) {
            case "matern52" -> GaussianProcess.Kernel.MATERN_52;
            case "se" -> GaussianProcess.Kernel.SQUARED_EXPONENTIAL;
            default -> throw new IllegalArgumentException("--kernel must be matern52 or se, got '" + kernel + "'");
        };
        try {
            return new GpUcbSoftmax(kern, ucbTau, softmaxBeta);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException((ucbTau < 0 || Double.isNaN(ucbTau) ? "--ucb-tau: " : "--softmax-beta: ") + e.getMessage());
        }
    }

    /** The base mechanism's settings from the command line (workers split between trial threads). */
    DpSgdMechanism.Builder mechanism(TrainTest data, DpSgdMechanism.Scoring scoring) {
        int workers = Cli.configureWorkers(Math.max(1, Runtime.getRuntime().availableProcessors() / threads));
        DpSgdMechanism.Builder b = DpSgdMechanism.builder(data.train()).model(t.modelName(), t.modelOptions(data))
                .optimizer(t.optimizer, t.lr).activation(t.activation).noiseMultiplier(noiseMultiplier != null ? noiseMultiplier : 1)
                .clipNorm(t.clip).batchSize(t.batchSize).epochs(t.epochs).physicalBatchSize(t.physicalBatchSize).delta(t.delta)
                .workers(workers).secureRandom(t.secureNoise).validation(validationFraction, t.weightSeed())
                .scoring(scoring, scoreNoise).nonPrivate(t.nonPrivate);
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

    /** Writes the model atomically as out/model.zip (nothing when null). */
    static void saveModel(Path out, org.deeplearning4j.nn.multilayer.MultiLayerNetwork model) throws IOException {
        Files.createDirectories(out);
        if (model != null) {
            Path tmp = Files.createTempFile(out, ".model", ".zip");
            try {
                ModelSerializer.writeModel(model, tmp.toFile(), true);
                Cli.publish(tmp, out.resolve("model.zip"));
            } finally {
                Files.deleteIfExists(tmp);
            }
        }
    }

    PrivacyLedger openLedger() throws IOException {
        return ledgerOptions.open(t.dataset, t.delta);
    }

    /** Progress bar over trials; the running trials' steps in its message; one line per finished trial. */
    static final class ProgressReporter implements TuningListener, AutoCloseable {
        private final boolean quiet;
        private final boolean reveal;
        private final Map<Integer, String> running = new ConcurrentHashMap<>();
        private ProgressBar bar;
        private long total;

        ProgressReporter(boolean quiet, boolean reveal) {
            this.quiet = quiet;
            this.reveal = reveal;
        }

        @Override
        public synchronized void onStart(long trials) {
            total = trials;
            if (trials > 0) {
                bar = Cli.progressBar("trials", trials, quiet);
            }
        }

        @Override
        public void onTrialStart(int index, Candidate candidate) {
            running.put(index, "starting");
        }

        @Override
        public void onTrialStep(int index, StepInfo s) {
            running.put(index, String.format("%d/%d %.0f ex/s", s.step(), s.totalSteps(), s.examplesPerSecond()));
            ProgressBar b = bar;
            if (b != null) {
                StringBuilder m = new StringBuilder();
                running.forEach((i, v) -> m.append(" | trial ").append(i + 1).append(": step ").append(v));
                b.setExtraMessage(m.toString());
            }
        }

        @Override
        public synchronized void onTrialEnd(TrialResult r) {
            running.remove(r.index());
            if (bar != null) {
                bar.step();
            }
            String outcome = r.failed() ? "failed (" + r.failure() + ")"
                    : reveal ? String.format("score %.4f", r.score()) : "score withheld (only the best is released)";
            System.out.printf("[operator] trial %d/%d  %s  %s  %.1f s%n", r.index() + 1, total, r.candidate(), outcome, r.seconds());
        }

        @Override
        public synchronized void onFinalRunStart(Candidate candidate) {
            if (bar != null) {
                bar.close();
                bar = null;
            }
            System.out.printf("[operator] final run: %s%n", candidate);
        }

        @Override
        public synchronized void onFinalRunStep(StepInfo s) {
            if (bar == null) {
                bar = Cli.progressBar("final run", s.totalSteps(), quiet);
            }
            if (bar != null) {
                bar.stepTo(s.step());
                bar.setExtraMessage(String.format(" %.0f ex/s", s.examplesPerSecond()));
            }
        }

        @Override
        public synchronized void close() {
            if (bar != null) {
                bar.close();
            }
        }
    }
}
