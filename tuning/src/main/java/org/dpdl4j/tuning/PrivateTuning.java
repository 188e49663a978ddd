package org.dpdl4j.tuning;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.SubsampledTuningEvent;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.dpsgd.DpSgdSettings;
import org.dpdl4j.release.InputSpec;
import org.dpdl4j.release.PrivacyLedger;
import org.dpdl4j.release.PrivateModel;
import org.dpdl4j.release.PrivateRun;

/**
 * A whole private hyperparameter search in one call, over the user's own network: Papernot &amp; Steinke's random
 * search ("Hyperparameter Tuning with Renyi Differential Privacy", ICLR 2022, arXiv:2110.03620, Thm. 2) with K drawn
 * from a {@link RepetitionDistribution} and every trial a DP-SGD run scored on a noisy validation split. σ is the
 * smallest noise multiplier for which the whole search (every trial's run and score, and the random K) meets the target
 * ε ({@link Accountants#standard()}); the result is the best trial's network with that total claim. With {@link #output}
 * the search runs through {@link PrivateRun#chargeTuning}: its settings and seed are saved, the ledger is charged once
 * for the whole search before its first trial, and the best model and its sidecar are released into the directory,
 * bound to that charge.
 *
 * <pre>{@code
 * PrivateModel best = PrivateTuning.randomSearch((updater, seed) -> myNetwork(updater, seed), data)
 *         .space("lr=log:0.01,1", "clip_norm=cat:0.5,1").repetitions(RepetitionDistribution.poisson(8))
 *         .targetEpsilon(3).delta(1e-5).epochs(5).expectedBatchSize(256)
 *         .ledger(ledger).output(Path.of("runs/search")).run();
 * }</pre>
 *
 * {@link #subsampled} is Koskela &amp; Kulkarni's procedure ("Practical Differentially Private Hyperparameter Tuning with
 * Subsampling", NeurIPS 2023, arXiv:2301.11989, Theorem 6): the same random search on a Poisson subset X₁ of the data
 * (each example with probability q_tune, {@link #tuneFraction}), then one run of the best candidate, extrapolated to the
 * larger data ({@link #extrapolation}), on X \ X₁ (variant 1) or X (variant 2) is released; σ is calibrated for the
 * whole procedure, which costs less than the search on all of X.
 *
 * <p>{@link #dpHypo} is DP-HyPO (Wang et al., "DP-HyPO: An Adaptive Private Hyperparameter Optimization Framework",
 * NeurIPS 2023, arXiv:2306.05734, Theorem 1): each trial's candidate is drawn from a density that a Gaussian process
 * fitted to the earlier trials' noisy scores adapts, within {@link #densityBounds} [c, C] times the uniform prior; the
 * adaptivity costs log(C/c) more than the random search, and c = C = 1 is the random search.
 *
 * <p>{@link #proposeTest} is Ding &amp; Wu's propose-test tuning ("Revisiting Hyperparameter Tuning with Differential
 * Privacy", 2022, arXiv:2211.01852, Algorithm 1): every candidate is trained (without noise) on k disjoint parts of the
 * training data, a loop of noisy thresholds (AboveThreshold with a doubling step) picks one, and a DP-SGD run of it on
 * the whole training split is released; the loop is charged as T_max iterations of ε₀-DP whatever it ran.
 *
 * <p>Only the best model, its candidate and its noisy score are released; the trials and the realised K stay inside.
 * A search stopped on the way is continued by {@link #resume} under the same charge: its finished trials (kept under
 * the output's {@code operator/trials} until the release) are read back, and it releases what the uninterrupted search
 * would have released.
 */
public final class PrivateTuning extends DpSgdSettings.Setters<PrivateTuning> {
    private final DpSgdMechanism.NetworkFactory network;
    private final ExampleSource data;
    private final List<HyperparameterSpace.Axis> axes = new ArrayList<>();
    private final List<String> axisTexts = new ArrayList<>();
    private RepetitionDistribution repetitions = RepetitionDistribution.poisson(10);
    private double validationFraction = 0.1;
    private double scoreNoise = 0.005;
    private int workers = 1;
    private TuningListener listener = TuningListener.NONE;
    private String procedure = "random-search";
    private double tuneFraction = 0.1;
    private int variant = 1;
    private Extrapolation extrapolation = Extrapolation.LINEAR_LEARNING_RATE;
    private boolean warmStart;
    private double densityLower = 0.8;
    private double densityUpper = 1.25;
    private int partitions = 10;
    private double granularity = 0.1;
    private double epsilon0 = 0.1;
    private double lowerUtility;
    private Integer maxIterations;
    private boolean repetitionsSet;
    private InputSpec input;
    private PrivacyLedger ledger;
    private Path output;
    private boolean started;
    private Map<String, Object> saved; // a stopped search's state, when resumed
    private boolean ownsLedger; // opened by resume(): closed when run() ends
    private boolean overwrite;
    private String dataset = "data";
    private String dataSha256;
    private boolean dataSha256Given;
    // a search by a tuner of the caller's own (of): its tuner, space, base mechanism, sidecar settings and resume record
    private Tuner<? extends TuningOutcome> ownTuner;
    private HyperparameterSpace ownSpace;
    private DpSgdMechanism ownRuns;
    private Map<String, Object> ownConfiguration;
    private Map<String, Object> resumeRecord = Map.of();
    private boolean tunerCharges;
    private String label;
    private UnaryOperator<TrainingMechanism> placement = UnaryOperator.identity();
    private ReleaseWriter releaseWriter;
    private Plan plan;
    private Object plannedFor; // the settings the plan was made for
    private long tunerSeed;

    private PrivateTuning(DpSgdMechanism.NetworkFactory network, ExampleSource data) {
        super(DpSgdSettings.DEFAULTS);
        this.network = Objects.requireNonNull(network, "network");
        this.data = Objects.requireNonNull(data, "data");
    }

    private PrivateTuning(Tuner<? extends TuningOutcome> tuner, HyperparameterSpace space, DpSgdMechanism runs,
                          Map<String, ?> configuration) {
        super(DpSgdSettings.DEFAULTS);
        this.network = null;
        this.data = null;
        this.ownTuner = Objects.requireNonNull(tuner, "tuner");
        this.ownSpace = Objects.requireNonNull(space, "space");
        this.ownRuns = Objects.requireNonNull(runs, "runs");
        this.ownConfiguration = new LinkedHashMap<>(Objects.requireNonNull(configuration, "configuration"));
        if (!(configuration.get("tuner") instanceof String name) || name.isBlank()) {
            throw new IllegalArgumentException("configuration must name its procedure under \"tuner\" (e.g. \"random-search\"), got "
                    + configuration.get("tuner"));
        }
        this.procedure = name;
    }

    /**
     * A search by a tuner of the caller's own over a base mechanism the caller built (a model by name, public-holdout
     * scoring, a σ per candidate, clipped sums computed on a cluster, …): {@code dpdl4j tune} runs every procedure through
     * it. This object then owns what the privacy depends on and what the other procedures share: σ's calibration for the
     * whole search ({@link #targetEpsilon}) or σ as given ({@link #noiseMultiplier}; with neither, σ is each candidate's,
     * an axis of the space or calibrated per run by the mechanism), the output checked before anything is charged, the
     * ledger charged once ({@link PrivateRun#chargeTuning}), the trials kept for a resume, and the release bound to the
     * charge, the sidecar last. Its DP-SGD settings but σ, target ε, δ and the seed are the mechanism's;
     * {@link #space(String...)} and {@link #repetitions} are the tuner's and are refused here.
     *
     * @param tuner         the procedure, built with the seed given to {@link #seed} (which the resume state keeps)
     * @param space         the space it searches
     * @param runs          the base mechanism Q: one run and its score, with any σ (replaced unless σ is per candidate)
     * @param configuration the search's public settings for the sidecar's {@code configuration} (none may depend on the
     *                      data), starting with {@code tuner}, the procedure's name
     * @return the search, to complete
     * @throws IllegalArgumentException if the configuration names no procedure under {@code tuner}
     */
    public static PrivateTuning of(Tuner<? extends TuningOutcome> tuner, HyperparameterSpace space, DpSgdMechanism runs,
                                   Map<String, ?> configuration) {
        return new PrivateTuning(tuner, space, runs, configuration);
    }

    /**
     * Writes a search's release into its output directory, in place of the model and its sidecar alone (for example
     * with a report of the search).
     */
    @FunctionalInterface
    public interface ReleaseWriter {
        /**
         * Stages the release: every file it holds is what the search's ε covers; what is not covered goes under
         * {@code out/operator/}.
         *
         * @param out     the output directory
         * @param outcome the search's outcome (its release, and the operator's record, which must not be released)
         * @param model   the released model with its claim, or null when the search released none
         * @return the staged release ({@link org.dpdl4j.release.StagedRelease#stage}), published once bound to the charge
         * @throws IOException if a file cannot be written
         */
        org.dpdl4j.release.StagedRelease stage(Path out, TuningOutcome outcome, PrivateModel model) throws IOException;
    }

    /**
     * What the search will run and claim, resolved before anything trains or is charged.
     *
     * @param space           the space searched
     * @param tuner           the procedure
     * @param mechanism       the base mechanism at the search's σ
     * @param noiseMultiplier σ of every run (given or calibrated for the whole search), or null when σ is each
     *                        candidate's
     * @param event           the whole search's event, or null when the tuner charges its own once it has drawn K
     *                        ({@link #tunerCharges})
     */
    public record Plan(HyperparameterSpace space, Tuner<? extends TuningOutcome> tuner, DpSgdMechanism mechanism,
                       Double noiseMultiplier, PrivacyEvent event) {
    }

    /**
     * Names the data for the sidecar's {@code dataset}, the ledger and a resume's check (default {@code data}, and the
     * digest of the data given).
     *
     * @param name       the data set's public name
     * @param dataSha256 the data's digest, which a resume must match, or null for a named data set whose files are
     *                   verified by their own checksums
     * @return this
     */
    public PrivateTuning dataset(String name, String dataSha256) {
        this.dataset = Objects.requireNonNull(name, "name");
        this.dataSha256 = dataSha256;
        this.dataSha256Given = true;
        return this;
    }

    /**
     * What the resume state keeps besides the seed, for a caller that rebuilds the search itself (a command line); a
     * search by {@link #randomSearch} and the like keeps its settings instead.
     *
     * @param record public, JSON-writable values
     * @return this
     */
    public PrivateTuning resumeRecord(Map<String, ?> record) {
        this.resumeRecord = new LinkedHashMap<>(Objects.requireNonNull(record, "record"));
        return this;
    }

    /**
     * Continues a search from its saved state ({@link PrivateRun#TUNING_STATE} of its {@link #output}), rebuilt by the
     * caller as it was started (same seed): its finished trials are read back, nothing is charged again.
     *
     * @param state the saved state
     * @return this
     */
    public PrivateTuning resumeFrom(Map<String, Object> state) {
        this.saved = Objects.requireNonNull(state, "state");
        return this;
    }

    /**
     * Lets the tuner charge the ledger itself (a search that releases its trials charges the composition of the K runs it
     * drew, before the first): the ledger is not charged for the search before it starts. Its outcome must name that
     * charge ({@link TuningOutcome#ledgerCharge}), of the released event, and the release is bound to it; such a search is
     * not resumed (a second run would draw and charge anew), though a release it staged before it stopped is finished.
     *
     * @param charges whether the tuner charges (default false)
     * @return this
     */
    public PrivateTuning tunerCharges(boolean charges) {
        this.tunerCharges = charges;
        return this;
    }

    /**
     * @param label the ledger charge's label (default: the procedure, its K and σ)
     * @return this
     */
    public PrivateTuning label(String label) {
        this.label = Objects.requireNonNull(label, "label");
        return this;
    }

    /**
     * Where the trials run, for example {@code cluster::place} for a Spark cluster's executors; applied before anything
     * is charged, so that a mechanism that cannot be sent there is refused first.
     *
     * @param placement the base mechanism as the tuner gets it (default: itself)
     * @return this
     */
    public PrivateTuning placement(UnaryOperator<TrainingMechanism> placement) {
        this.placement = Objects.requireNonNull(placement, "placement");
        return this;
    }

    /**
     * @param writer writes the release (default: the model and its sidecar)
     * @return this
     */
    public PrivateTuning releaseWriter(ReleaseWriter writer) {
        this.releaseWriter = Objects.requireNonNull(writer, "writer");
        return this;
    }

    /**
     * Random search over the user's network.
     *
     * @param network builds each trial's network from its optimiser (the candidate's {@code lr}, {@code optimizer}) and
     *                weights' seed; serializable
     * @param data    the private training data; a fraction ({@link #validationFraction}) is split off by record to score
     *                the trials
     * @return the search's settings, to complete
     */
    public static PrivateTuning randomSearch(DpSgdMechanism.NetworkFactory network, ExampleSource data) {
        return new PrivateTuning(network, data);
    }

    /**
     * Subsampled tuning over the user's network (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Theorem 6): a random search
     * on a Poisson subset X₁ (q_tune = {@link #tuneFraction}), then the best candidate, extrapolated, trained once on
     * X \ X₁ ({@link #variant} 1) or X (variant 2); that run is released. Each trial's DP-SGD sampling rate is fixed, B
     * over the expected size of X₁'s training split (a {@code batch_size} axis is refused; a {@code sampling_rate} axis is
     * allowed), so that the runs on X₁ and the final run cost what was charged.
     *
     * @param network builds each run's network from its optimiser and weights' seed; serializable
     * @param data    the private training data X
     * @return the procedure's settings, to complete
     */
    public static PrivateTuning subsampled(DpSgdMechanism.NetworkFactory network, ExampleSource data) {
        PrivateTuning t = new PrivateTuning(network, data);
        t.procedure = "subsampled";
        return t;
    }

    /**
     * DP-HyPO over the user's network (Wang et al. 2023, arXiv:2306.05734, Theorem 1): an adaptive random search whose
     * sampling density, fitted by a Gaussian process (Matérn-5/2 kernel, GP-UCB with τ = 0.1 and a softmax with β = 1,
     * the paper's defaults) to the noisy scores so far, stays within [c, C] times the uniform prior
     * ({@link #densityBounds}, default [0.8, 1.25]). K defaults to a geometric distribution with mean 10, as {@code tune
     * dp-hypo}'s does.
     *
     * @param network builds each trial's network from its optimiser and weights' seed; serializable
     * @param data    the private training data
     * @return the search's settings, to complete
     */
    public static PrivateTuning dpHypo(DpSgdMechanism.NetworkFactory network, ExampleSource data) {
        PrivateTuning t = new PrivateTuning(network, data);
        t.procedure = "dp-hypo";
        t.repetitions = RepetitionDistribution.geometric(10);
        return t;
    }

    /**
     * Propose-test tuning over the user's network (Ding &amp; Wu 2022, arXiv:2211.01852, Algorithm 1): each candidate's
     * utility is its mean validation accuracy over networks trained without noise on k disjoint parts of the training
     * split ({@link #partitions}; sensitivity 1/k); a selection loop of T_max iterations, each ε₀-DP ({@link #epsilon0},
     * {@link #granularity}, {@link #lowerUtility}, {@link #maxIterations}), picks a candidate, and one DP-SGD run of it on
     * the whole training split is released. The charge is T_max ε₀-DP iterations composed with the final run, σ being
     * calibrated for that; there is no K ({@link #repetitions} is refused).
     *
     * @param network builds each network from its optimiser and weights' seed; serializable
     * @param data    the private training data; a fraction ({@link #validationFraction}) is split off by record to
     *                measure the utilities, and must hold at least k examples
     * @return the procedure's settings, to complete
     */
    public static PrivateTuning proposeTest(DpSgdMechanism.NetworkFactory network, ExampleSource data) {
        PrivateTuning t = new PrivateTuning(network, data);
        t.procedure = "propose-test";
        return t;
    }

    /**
     * Sets k, the number of disjoint parts of the training split that every candidate is trained on (propose-test only).
     *
     * @param k k ≥ 1 (default 10), at most the training and the validation examples
     * @return this
     * @throws IllegalArgumentException if k &lt; 1
     */
    public PrivateTuning partitions(int k) {
        if (k < 1) {
            throw new IllegalArgumentException("partitions k must be >= 1, got " + k);
        }
        this.partitions = k;
        return this;
    }

    /**
     * Sets g, the utility step of the selection loop (propose-test only); T_max defaults to 2⌈(1 − u₀)/g⌉ + 2.
     *
     * @param g g ∈ (0, 1) (default 0.1: 22 iterations)
     * @return this
     * @throws IllegalArgumentException if g is outside (0, 1)
     */
    public PrivateTuning granularity(double g) {
        if (!(g > 0 && g < 1)) {
            throw new IllegalArgumentException("granularity g must be in (0, 1), got " + g);
        }
        this.granularity = g;
        return this;
    }

    /**
     * Sets ε₀, the privacy loss of one iteration of the selection loop (propose-test only).
     *
     * @param eps0 ε₀ &gt; 0, finite (default 0.1)
     * @return this
     * @throws IllegalArgumentException if ε₀ is not finite and positive
     */
    public PrivateTuning epsilon0(double eps0) {
        if (!(eps0 > 0) || Double.isInfinite(eps0)) {
            throw new IllegalArgumentException("epsilon0 must be finite and > 0, got " + eps0);
        }
        this.epsilon0 = eps0;
        return this;
    }

    /**
     * Sets u₀, the utility (validation accuracy) the selection loop starts from (propose-test only).
     *
     * @param u0 u₀ ∈ [0, 1) (default 0)
     * @return this
     * @throws IllegalArgumentException if u₀ is outside [0, 1)
     */
    public PrivateTuning lowerUtility(double u0) {
        if (!(u0 >= 0 && u0 < 1)) {
            throw new IllegalArgumentException("lower_utility u0 must be in [0, 1), got " + u0);
        }
        this.lowerUtility = u0;
        return this;
    }

    /**
     * Sets T_max, the cap on the selection loop's iterations, all of which are charged (propose-test only).
     *
     * @param tMax T_max ≥ 1 (default 2⌈(1 − u₀)/g⌉ + 2)
     * @return this
     * @throws IllegalArgumentException if T_max &lt; 1
     */
    public PrivateTuning maxIterations(int tMax) {
        if (tMax < 1) {
            throw new IllegalArgumentException("max_iterations T_max must be >= 1, got " + tMax);
        }
        this.maxIterations = tMax;
        return this;
    }

    /**
     * Sets DP-HyPO's density bounds (DP-HyPO only): every trial's sampling density lies within [c, C] times the prior;
     * the adaptivity costs log(C/c).
     *
     * @param c the lower bound, in (0, 1]
     * @param cMax the upper bound C, finite and ≥ 1
     * @return this
     * @throws IllegalArgumentException if 0 &lt; c ≤ 1 ≤ C &lt; ∞ does not hold
     */
    public PrivateTuning densityBounds(double c, double cMax) {
        if (!(c > 0 && c <= 1) || !(cMax >= 1) || Double.isInfinite(cMax)) {
            throw new IllegalArgumentException("density_bounds need 0 < c <= 1 <= C (finite), got c = " + c + ", C = " + cMax);
        }
        this.densityLower = c;
        this.densityUpper = cMax;
        return this;
    }

    /**
     * Sets q_tune, the probability with which each example joins the tuning subset X₁ (subsampled tuning only).
     *
     * @param qTune q_tune in (0, 1) (default 0.1)
     * @return this
     * @throws IllegalArgumentException if q_tune is outside (0, 1)
     */
    public PrivateTuning tuneFraction(double qTune) {
        if (!(qTune > 0 && qTune < 1)) {
            throw new IllegalArgumentException("tune_fraction must be in (0, 1), got " + qTune);
        }
        this.tuneFraction = qTune;
        return this;
    }

    /**
     * Sets which data the final run of subsampled tuning trains on.
     *
     * @param v 1: X \ X₁ (the default), 2: all of X
     * @return this
     * @throws IllegalArgumentException if v is not 1 or 2
     */
    public PrivateTuning variant(int v) {
        SubsampledTuningEvent.Variant.of(v); // refuses any other number
        this.variant = v;
        return this;
    }

    /**
     * Sets how subsampled tuning transfers the best candidate to the final run's larger data.
     *
     * @param rule {@link Extrapolation#LINEAR_LEARNING_RATE} (the default) or {@link Extrapolation#NONE}
     * @return this
     * @throws IllegalArgumentException for another rule (a resumed procedure must rebuild it from its name)
     */
    public PrivateTuning extrapolation(Extrapolation rule) {
        if (rule != Extrapolation.LINEAR_LEARNING_RATE && rule != Extrapolation.NONE) {
            throw new IllegalArgumentException("extrapolation must be Extrapolation.LINEAR_LEARNING_RATE or Extrapolation.NONE");
        }
        this.extrapolation = rule;
        return this;
    }

    /**
     * Starts subsampled tuning's final run from the tuned model (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Remark 8).
     *
     * @param warm whether to start from the tuned model (default false: a fresh network)
     * @return this
     */
    public PrivateTuning warmStart(boolean warm) {
        this.warmStart = warm;
        return this;
    }

    /**
     * Continues a search that was started with {@link #output} and stopped before its release: the same settings and seed
     * from its saved state (so the same K, candidates and trial seeds), its finished trials read back rather than trained
     * again, under the same charge; {@link #run()} then releases what the uninterrupted search would have released.
     *
     * @param dir     the search's output directory
     * @param network the same network factory
     * @param data    the same data (its digest is checked)
     * @return the search, to {@link #run()}
     * @throws IllegalArgumentException if there is no search to resume in {@code dir} or its state is damaged
     * @throws UncheckedIOException     if its state or ledger cannot be read
     */
    public static PrivateTuning resume(Path dir, DpSgdMechanism.NetworkFactory network, ExampleSource data) {
        PrivateTuning t = new PrivateTuning(network, data);
        Path stateFile = dir.resolve(PrivateRun.TUNING_STATE);
        try {
            Map<String, Object> state = PrivateRun.tuningState(dir, "resume " + dir);
            String seed = (String) state.get("tuner_seed");
            if (!(state.get("settings") instanceof Map<?, ?> settings)) {
                throw new IllegalArgumentException("resume " + dir + ": " + stateFile + " is not the state of a PrivateTuning "
                        + "search (no settings: a search that dpdl4j tune started is resumed by tune --resume)");
            }
            for (Object a : (List<?>) settings.get("space")) {
                t.space((String) a);
            }
            if (settings.get("repetitions") instanceof Map<?, ?> k) { // propose-test has no K
                t.repetitions = RepetitionDistribution.fromMap(k);
            }
            if ("dp-hypo".equals(settings.get("tuner"))) {
                t.procedure = "dp-hypo";
                List<?> bounds = (List<?>) settings.get("density_bounds");
                t.densityBounds(((Number) bounds.get(0)).doubleValue(), ((Number) bounds.get(1)).doubleValue());
            }
            if ("propose-test".equals(settings.get("tuner"))) {
                t.procedure = "propose-test";
                t.partitions(((Number) settings.get("partitions")).intValue());
                t.granularity(((Number) settings.get("granularity")).doubleValue());
                t.epsilon0(((Number) settings.get("epsilon0")).doubleValue());
                t.lowerUtility(((Number) settings.get("lower_utility")).doubleValue());
                t.maxIterations(((Number) settings.get("max_iterations")).intValue());
            }
            if ("subsampled".equals(settings.get("tuner"))) { // absent: a random search, from before subsampled tuning
                t.procedure = "subsampled";
                t.tuneFraction(((Number) settings.get("tune_fraction")).doubleValue());
                t.variant(((Number) settings.get("variant")).intValue());
                t.extrapolation("none".equals(settings.get("extrapolation")) ? Extrapolation.NONE : Extrapolation.LINEAR_LEARNING_RATE);
                t.warmStart(Boolean.TRUE.equals(settings.get("warm_start")));
            }
            @SuppressWarnings("unchecked")
            Map<String, ?> values = (Map<String, ?>) settings;
            t.settings(DpSgdSettings.fromMap(values));
            t.validationFraction = ((Number) settings.get("validation_fraction")).doubleValue();
            t.scoreNoise = ((Number) settings.get("score_noise")).doubleValue();
            t.workers = ((Number) settings.get("workers")).intValue();
            t.seed(Long.parseLong(seed));
            if (settings.get("input") instanceof List<?> in) {
                t.input = new InputSpec(((Number) in.get(0)).intValue(), ((Number) in.get(1)).intValue(), ((Number) in.get(2)).intValue(),
                        ((Number) in.get(3)).doubleValue());
            }
            if (state.get("ledger") instanceof String ledgerFile) {
                t.ledger = PrivacyLedger.openExisting(Path.of(ledgerFile));
                t.ownsLedger = true;
            }
            t.output = dir;
            t.saved = state;
            return t;
        } catch (IOException e) {
            throw new UncheckedIOException("could not read the search's state in " + dir, e);
        } catch (ClassCastException | NullPointerException | NumberFormatException e) {
            throw new IllegalArgumentException("resume " + dir + ": " + stateFile + " has a damaged setting (" + e.getMessage() + ")");
        }
    }

    /**
     * The hyperparameters searched, one axis each, as {@link HyperparameterSpace#parseAxis} reads them (e.g.
     * {@code lr=log:0.01,1}, {@code clip_norm=cat:0.5,1}, {@code batch_size=cat:128,256}); axes of
     * {@link DpSgdSpace#AXES} but {@code activation}.
     *
     * @param axes one or more axes
     * @return this
     * @throws IllegalArgumentException naming an axis that does not parse
     */
    public PrivateTuning space(String... axes) {
        for (String a : axes) {
            this.axes.add(HyperparameterSpace.parseAxis(a));
            this.axisTexts.add(a);
        }
        return this;
    }

    /**
     * The distribution of the number of trials K (default Poisson with mean μ = 10).
     *
     * @param k e.g. {@code RepetitionDistribution.poisson(8)}
     * @return this
     */
    public PrivateTuning repetitions(RepetitionDistribution k) {
        this.repetitions = Objects.requireNonNull(k, "k");
        this.repetitionsSet = true;
        return this;
    }

    /**
     * @param f the fraction of the data split off (by record) to score the trials, in (0, 1) (default 0.1)
     * @return this
     */
    public PrivateTuning validationFraction(double f) {
        this.validationFraction = f;
        return this;
    }

    /**
     * @param s the standard deviation of the Gaussian noise on each released validation accuracy, a fraction (default
     *          0.005: half a percentage point), &gt; 0
     * @return this
     */
    public PrivateTuning scoreNoise(double s) {
        this.scoreNoise = s;
        return this;
    }

    /**
     * @param workers worker threads of each trial, ≥ 1 (default 1)
     * @return this
     */
    public PrivateTuning workers(int workers) {
        this.workers = workers;
        return this;
    }

    /**
     * Follows the search as it runs (progress bars, logs). What it is told is the operator's, not the release: the
     * realised K ({@link TuningListener#onStart}), every trial's candidate and score, each step's loss; none of it is
     * covered by the search's ε, so do not publish it.
     *
     * @param listener the listener (default: none); called on the trials' threads
     * @return this
     */
    public PrivateTuning listener(TuningListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener");
        return this;
    }

    /**
     * @param input the input the model expects, recorded in the sidecar (null: unknown)
     * @return this
     */
    public PrivateTuning input(InputSpec input) {
        this.input = input;
        return this;
    }

    /**
     * @param ledger the ledger charged once for the whole search before its first trial (needs {@link #output})
     * @return this
     */
    public PrivateTuning ledger(PrivacyLedger ledger) {
        this.ledger = Objects.requireNonNull(ledger, "ledger");
        return this;
    }

    /**
     * @param dir where the best model and its sidecar are released ({@code model.zip}, {@code privacy.json}); a directory
     *            without a release in it
     * @return this
     */
    public PrivateTuning output(Path dir) {
        this.output = Objects.requireNonNull(dir, "dir");
        return this;
    }

    /**
     * @param dir       where the best model and its sidecar are released
     * @param overwrite whether an earlier release in {@code dir} may be replaced (default false: refused)
     * @return this
     */
    public PrivateTuning output(Path dir, boolean overwrite) {
        this.overwrite = overwrite;
        return output(dir);
    }

    /** What a fresh search's resume state holds: its settings (or the caller's record) and seed (operator-only). */
    private Map<String, Object> freshState() {
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("note", "operator record: holds the search's seed, which determines its noise; never publish");
        if (ownTuner != null) {
            state.putAll(resumeRecord);
        } else {
            state.put("settings", searchSettings());
        }
        state.put("tuner_seed", Long.toString(tunerSeed));
        return state;
    }

    /**
     * The released sidecar's {@code configuration} of a tuning, which {@code PrivateTuning} and {@code dpdl4j tune} both
     * write: the released candidate ({@code best}) and its noisy score ({@code best_score}), both covered by the tuning's
     * event; the search's settings (public: none depends on the data); the base mechanism's σ. Not the ledger's charge:
     * its sequence number counts the ledger's entries, among them a tuning's one record per trial, so that two releases'
     * charges would tell the realised K of a search between them, which a random-K bound does not release (the ledger
     * itself binds each release to its charge).
     *
     * @param release         the tuning's release (its candidate and score)
     * @param search          the search's settings by key: {@code tuner}, the procedure's own, {@code space}, the runs'
     *                        DP-SGD settings ({@code DpSgdSettings.toMap}, with the whole tuning's {@code target_epsilon}), ...
     * @param noiseMultiplier the base mechanism's σ, or null when σ is an axis of the space
     * @return a new map, in the order best, best_score, the search's settings, noise_multiplier
     */
    public static Map<String, Object> releaseConfiguration(Release release, Map<String, ?> search, Double noiseMultiplier) {
        Map<String, Object> configuration = new LinkedHashMap<>();
        configuration.put("best", release.candidate().toMap());
        configuration.put("best_score", release.score());
        configuration.putAll(search);
        configuration.put("noise_multiplier", noiseMultiplier);
        return configuration;
    }

    /** The search's settings (public: none depends on the data). */
    private Map<String, Object> searchSettings() {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("tuner", procedure);
        if (procedure.equals("subsampled")) {
            settings.put("tune_fraction", tuneFraction);
            settings.put("variant", variant);
            settings.put("extrapolation", extrapolation == Extrapolation.NONE ? "none" : "linear-lr");
            settings.put("warm_start", warmStart);
        }
        if (procedure.equals("dp-hypo")) {
            settings.put("density_bounds", List.of(densityLower, densityUpper));
        }
        if (procedure.equals("propose-test")) {
            settings.put("partitions", partitions);
            settings.put("granularity", granularity);
            settings.put("epsilon0", epsilon0);
            settings.put("lower_utility", lowerUtility);
            settings.put("max_iterations", maxIterations != null ? maxIterations
                    : ProposeTestTuner.defaultMaxIterations(lowerUtility, granularity));
        }
        settings.put("space", List.copyOf(axisTexts));
        if (!procedure.equals("propose-test")) {
            settings.put("repetitions", repetitions.toMap());
        }
        settings.putAll(settings().toMap()); // the runs' DP-SGD settings; target_epsilon is the whole search's
        settings.put("validation_fraction", validationFraction);
        settings.put("score_noise", scoreNoise);
        settings.put("workers", workers);
        settings.put("input", input == null ? null : List.of(input.channels(), input.height(), input.width(), input.scale()));
        return settings;
    }

    /**
     * Resolves the search without running it: the space, the tuner, σ (calibrated for the whole search to
     * {@link #targetEpsilon}, or as given) and the whole event; {@link #run()} then runs this plan. Nothing is trained or
     * charged. {@link #run()} runs the same plan unless a setting changed since (then it is made again).
     *
     * @return the plan, the same on every call while the settings stay
     * @throws IllegalArgumentException naming a missing or out-of-range setting, both or neither of target_epsilon and
     *                                  noise_multiplier, a bad axis, or a target no σ meets
     */
    public Plan plan() {
        Object key = List.of(settings(), ownTuner != null ? ownConfiguration : searchSettings(), tunerCharges);
        if (plan == null || !key.equals(plannedFor)) {
            plan = resolve();
            plannedFor = key;
        }
        return plan;
    }

    private Plan resolve() {
        DpSgdSettings s = settings();
        double targetEpsilon = s.targetEpsilon();
        double delta = s.delta();
        boolean sigmaGiven = !Double.isNaN(s.noiseMultiplier());
        if (sigmaGiven && !Double.isNaN(targetEpsilon)) {
            throw new IllegalArgumentException("noise_multiplier is calibrated for the whole search from target_epsilon: set one "
                    + "of them, not both");
        }
        tunerSeed = s.seed() != null ? s.seed() : new java.security.SecureRandom().nextLong();
        if (ownTuner != null) {
            if (!axes.isEmpty() || repetitionsSet) {
                throw new IllegalArgumentException("space and repetitions are the tuner's: a search by PrivateTuning.of takes them "
                        + "from its tuner and space");
            }
            // neither σ nor a target: σ is each candidate's (an axis, or calibrated per run by the mechanism)
            Double sigma = sigmaGiven ? Double.valueOf(s.noiseMultiplier()) : Double.isNaN(targetEpsilon) ? null
                    : calibrate(ownTuner, ownSpace, ownRuns, targetEpsilon, delta);
            return planned(ownSpace, ownTuner, ownRuns, sigma);
        }
        if (!sigmaGiven && Double.isNaN(targetEpsilon)) {
            throw new IllegalArgumentException("target_epsilon (the whole search's) must be set (finite and > 0), or every run's "
                    + "noise_multiplier");
        }
        if (sigmaGiven && s.noiseMultiplier() == 0) {
            throw new IllegalArgumentException("noise_multiplier 0 gives a search without privacy: give sigma > 0");
        }
        if (Double.isNaN(s.epochs())) {
            throw new IllegalArgumentException("epochs must be set (> 0)");
        }
        if (s.expectedBatchSize() < 1 && Double.isNaN(s.samplingRate())) {
            throw new IllegalArgumentException("batch_size B must be set (>= 1)");
        }
        if (axes.isEmpty()) {
            throw new IllegalArgumentException("space: give at least one axis, e.g. space(\"lr=log:0.01,1\")");
        }
        HyperparameterSpace space = HyperparameterSpace.of(axes);
        for (HyperparameterSpace.Axis a : axes) {
            if (a.name().equals("activation")) {
                throw new IllegalArgumentException("space: activation applies to models by name; a network factory chooses "
                        + "its own activations");
            }
        }
        DpSgdSpace.checkSpace(space, false);
        // each run's settings: σ is the search's, calibrated below (the target is the search's, not a run's)
        DpSgdMechanism.Builder b = DpSgdMechanism.builder(data).network(network).settings(s).targetEpsilon(Double.NaN)
                .noiseMultiplier(1).secureRandom(s.seed() == null).workers(workers).validation(validationFraction, tunerSeed)
                .scoring(DpSgdMechanism.Scoring.PRIVATE_VALIDATION, scoreNoise);
        boolean subsampled = procedure.equals("subsampled");
        if (!subsampled && (tuneFraction != 0.1 || variant != 1 || extrapolation != Extrapolation.LINEAR_LEARNING_RATE || warmStart)) {
            throw new IllegalArgumentException("tuneFraction, variant, extrapolation and warmStart are settings of subsampled "
                    + "tuning (PrivateTuning.subsampled), not of " + procedure);
        }
        if (!procedure.equals("dp-hypo") && (densityLower != 0.8 || densityUpper != 1.25)) {
            throw new IllegalArgumentException("densityBounds is a setting of DP-HyPO (PrivateTuning.dpHypo), not of " + procedure);
        }
        boolean proposeTest = procedure.equals("propose-test");
        if (!proposeTest && (partitions != 10 || granularity != 0.1 || epsilon0 != 0.1 || lowerUtility != 0 || maxIterations != null)) {
            throw new IllegalArgumentException("partitions, granularity, epsilon0, lowerUtility and maxIterations are settings of "
                    + "propose-test tuning (PrivateTuning.proposeTest), not of " + procedure);
        }
        if (proposeTest && repetitionsSet) {
            throw new IllegalArgumentException("repetitions: propose-test tuning trains every candidate and has no K; its loop "
                    + "is set by partitions, granularity, epsilon0, lowerUtility and maxIterations");
        }
        if (subsampled) { // the runs on X1 and the final run must cost what was charged: q fixed, not B over a realised size
            if (axes.stream().anyMatch(a -> a.name().equals("batch_size"))) {
                throw new IllegalArgumentException("space: subsampled tuning keeps the DP-SGD sampling rate fixed: use a "
                        + "sampling_rate axis, not batch_size");
            }
            double expectedTuneTrain = tuneFraction * data.size() * (1 - validationFraction);
            double q = Double.isNaN(s.samplingRate()) ? s.expectedBatchSize() / expectedTuneTrain : s.samplingRate();
            if (!(q <= 1)) {
                throw new IllegalArgumentException(String.format("batch_size %d is the expected batch of the runs on X1, which "
                        + "train on about %.0f examples: it must be at most that", s.expectedBatchSize(), expectedTuneTrain));
            }
            b.samplingRate(q);
        }
        DpSgdMechanism unscaled = b.build();
        Tuner<? extends TuningOutcome> tuner = subsampled ? new SubsampledTuner(new RandomSearchTuner(repetitions, tunerSeed, 1,
                false), tuneFraction, SubsampledTuningEvent.Variant.of(variant), extrapolation, warmStart,
                tunerSeed * 0x9E3779B97F4A7C15L + 1, false) // X1 from the saved (secret) seed, so that a resume draws the same X1
                : procedure.equals("dp-hypo") ? new DpHypoTuner(repetitions, densityLower, densityUpper, GpUcbSoftmax.defaults(),
                        tunerSeed)
                : proposeTest ? new ProposeTestTuner(partitions, granularity, epsilon0, lowerUtility, maxIterations, tunerSeed)
                : new RandomSearchTuner(repetitions, tunerSeed, 1, false);
        if (tuner instanceof ProposeTestTuner pt) {
            pt.checkData(unscaled, s.expectedBatchSize());
        }
        double sigma = sigmaGiven ? s.noiseMultiplier() : calibrate(tuner, space, unscaled, targetEpsilon, delta);
        return planned(space, tuner, unscaled, sigma);
    }

    /** The smallest σ for which the whole search meets the target (as given: the claim is then what it gives). */
    private double calibrate(Tuner<? extends TuningOutcome> tuner, HyperparameterSpace space, DpSgdMechanism unscaled,
                             double targetEpsilon, double delta) {
        String floor = tuner instanceof ProposeTestTuner pt ? String.format("its selection loop's T_max = %d iterations of "
                + "%s-DP (lower epsilon0 or raise granularity)", pt.maxIterations(), pt.epsilon0())
                : tuner instanceof DpHypoTuner ? "the adaptivity cost log(C/c) of the density bounds and the distribution of K"
                : unscaled.scoring() == DpSgdMechanism.Scoring.PRIVATE_VALIDATION
                ? String.format("the trials' noisy validation scores (score noise %s of accuracy on %d validation examples; "
                + "raise it) and the distribution of K", unscaled.scoreNoiseCount() / unscaled.publicValidationSize(),
                unscaled.validation().size()) : "the distribution of K";
        return TuningCalibration.noiseMultiplier(x -> tuner.event(space, unscaled.withNoiseMultiplier(x)), targetEpsilon, delta,
                floor);
    }

    private Plan planned(HyperparameterSpace space, Tuner<? extends TuningOutcome> tuner, DpSgdMechanism unscaled, Double sigma) {
        DpSgdMechanism mechanism = sigma == null ? unscaled : unscaled.withNoiseMultiplier(sigma);
        return new Plan(space, tuner, mechanism, sigma, tunerCharges ? null : tuner.event(space, mechanism));
    }

    /**
     * Runs the {@link #plan()}: checks the output, charges the ledger (if any) once, runs the trials and returns the best
     * trial's network with the search's claim; with {@link #output}, releases it there (bound to the charge, the sidecar
     * last) and removes the trials kept for a resume. Call it once.
     *
     * @return the best model, its claim the whole search's event; null only when a search by {@link #of} with a
     *         {@link #releaseWriter} released no model
     * @throws IllegalArgumentException as {@link #plan()}, when the output holds a release already, or on a resume of a
     *                                  search whose tuner charges ({@link #tunerCharges})
     * @throws IllegalStateException    on a second call, if no trial produced a model, or if a tuner that charges names
     *                                  no charge of what it releases
     * @throws PrivacyLedger.BudgetExceededException if the ledger's budget does not allow the search (nothing ran)
     */
    public PrivateModel run() {
        if (started) {
            throw new IllegalStateException("run() was already called on this PrivateTuning: a second search is a second charge");
        }
        try {
            if (ledger != null && output == null) {
                throw new IllegalArgumentException("a ledger needs output(dir): the release is bound to the charge there");
            }
            Plan p = plan();
            started = true;
            return run(p);
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the search's release in " + output, e);
        } finally {
            if (ownsLedger) {
                ledger.close();
            }
        }
    }

    private PrivateModel run(Plan p) throws IOException {
        HyperparameterSpace space = p.space();
        Tuner<? extends TuningOutcome> tuner = p.tuner();
        if (saved != null) { // a search stopped while releasing, or a copy of one that has released
            var pending = org.dpdl4j.release.StagedRelease.pending(output);
            if (pending.isPresent()) {
                PrivateRun.finishStagedTuning(output, pending.get(), saved);
                return PrivateModel.load(output, org.dpdl4j.release.LoadPolicy.privateOnly());
            }
            PrivateRun.checkNotReleased(output, saved);
            if (tunerCharges) { // its charge is the tuner's, made for the K it drew: a second run would charge again
                throw new IllegalArgumentException("resume: a search whose tuner charges the ledger itself (revealed trials) "
                        + "is not resumed; start it anew (a new charge)");
            }
        } else if (output != null && !overwrite && (java.nio.file.Files.exists(output.resolve(PrivateModel.SIDECAR_FILE))
                || java.nio.file.Files.exists(output.resolve(PrivateModel.MODEL_FILE)))) {
            throw new IllegalArgumentException("output " + output + " holds a release already: choose a new directory");
        }
        TrainingMechanism placed = placement.apply(p.mechanism()); // refused here, before the charge, if it cannot go there
        p.mechanism().checkNetwork(space.first()); // a network the engine refuses (a layer that mixes examples) costs nothing
        PrivateRun run = output == null ? null : PrivateRun.chargeTuning(output, saved, freshState(), tunerCharges ? null : ledger,
                ledger == null ? null : ledger.file(), label != null ? label : defaultLabel(p), p::event, dataset, dataSha256());
        Path trialsDir = output == null ? null : output.resolve(PrivateRun.TUNING_TRIALS);
        UnaryOperator<TrainingMechanism> kept = m -> run == null ? m : new CheckpointedMechanism(m, trialsDir, run.runId());
        Long charge = run == null ? null : run.charge();
        TuningOutcome result = tuner instanceof SubsampledTuner sub // the trials on X1 are what a resume must not re-run
                ? sub.tune(space, placed, ledger, charge, listener, kept::apply)
                : tuner.tune(space, tuner instanceof ProposeTestTuner ? placed : kept.apply(placed), ledger, charge, listener);
        Release release = result.release();
        Long tunerCharge = tunerCharges && ledger != null && run != null ? result.ledgerCharge() : null;
        if (tunerCharges && ledger != null && run != null && tunerCharge == null) {
            throw new IllegalStateException("the tuner was to charge the ledger itself (tunerCharges) but names no charge "
                    + "(TuningOutcome.ledgerCharge): nothing is released");
        }
        PrivateModel model = null;
        if (release.model() != null) {
            Map<String, Object> configuration = new LinkedHashMap<>();
            configuration.put("dataset", dataset);
            configuration.putAll(releaseConfiguration(release, ownTuner != null ? ownConfiguration : releasedSettings(space),
                    p.noiseMultiplier()));
            model = PrivateModel.of(release.model(), "tuning", release.event(), Accountants.DEFAULT, settings().delta(), input,
                    configuration);
        } else if (releaseWriter == null) {
            throw new IllegalStateException("no trial produced a model (K = 0 or every trial failed): nothing to release");
        }
        if (run != null) {
            org.dpdl4j.release.CrashPoint.reached("tune:before-release");
            if (tunerCharge != null) { // the release is bound to the charge the tuner made, which must be of what it releases
                run.chargedByTuner(tunerCharge, release.event());
            }
            run.releaseTuning(releaseWriter != null ? releaseWriter.stage(output, result, model)
                    : org.dpdl4j.release.StagedRelease.stage(output, model.releaseFiles(Map.of()), List.of()), release.event());
            try {
                java.nio.file.Files.deleteIfExists(output.resolve("operator"));
            } catch (java.nio.file.DirectoryNotEmptyException e) {
                // the caller's operator record stays
            }
        }
        return model;
    }

    /** The search's settings as the sidecar holds them: as the resume state does, the axes as tune writes them. */
    private Map<String, Object> releasedSettings(HyperparameterSpace space) {
        Map<String, Object> search = searchSettings();
        search.put("space", space.axes().stream().map(HyperparameterSpace.Axis::describe).toList());
        return search;
    }

    private String defaultLabel(Plan p) {
        String sigma = p.noiseMultiplier() == null ? "sigma per candidate" : "sigma " + p.noiseMultiplier();
        if (ownTuner != null) {
            return procedure + ", " + sigma;
        }
        return procedure + " over a network factory: " + (p.tuner() instanceof ProposeTestTuner pt ? "T_max = "
                + pt.maxIterations() + " x " + pt.epsilon0() + "-DP iterations + final run" : "K ~ " + repetitions.describe()) + ", " + sigma;
    }

    /** The data's digest, which a resume must match: as given, else the private data's. */
    private String dataSha256() {
        if (dataSha256Given) {
            return dataSha256;
        }
        return org.dpdl4j.datasets.Sha256.of(data != null ? data : ownRuns.privateData());
    }
}
