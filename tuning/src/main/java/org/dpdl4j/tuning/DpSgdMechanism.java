package org.dpdl4j.tuning;

import java.security.SecureRandom;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.dpsgd.Networks;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.Splits;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdSettings;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.TrainingListener;
import org.dpdl4j.dpsgd.TrainingResult;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;

/**
 * The standard base mechanism Q: one DP-SGD training run on the private training split, scored on
 * a validation split carved from the same private data, with the score released through a Gaussian
 * mechanism whose cost is composed into Q's event (Papernot &amp; Steinke 2022, arXiv:2110.03620, footnote 2). With
 * {@link Scoring#PUBLIC_HOLDOUT} the carved split is declared public instead: no noise, no cost,
 * and the caller must be able to justify that the split is not private. The test set is never
 * touched.
 *
 * <p>Candidate axes it understands (others are rejected): {@code lr}, {@code optimizer}
 * ({@value ModelOptions#OPTIMIZERS}), {@code activation} ({@value ModelOptions#ACTIVATIONS}),
 * {@code sigma} (noise multiplier σ), {@code clip} (C), {@code batch_size} (expected batch B,
 * q = B/((1 − f)·n), the expected training-split size), {@code sampling_rate} (q itself, expected batch q·n), {@code epochs} (T = ⌈E/q⌉). Axes
 * that change σ, q or T change the event. With {@link Builder#perCandidateEpsilon} a candidate
 * without {@code sigma} gets the smallest σ for which its DP-SGD run (q, T) meets that ε
 * (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Section 4.1).
 *
 * <p>The split is made record by record ({@link Splits#byRecord}): adding or removing one
 * example changes only the part it falls in, so a run is charged its DP-SGD event composed with the
 * score's release, whichever part the example is in (joint quasi-convexity covers the mixture).
 * The score is (correct + N(0, s²))/(f·n), divided by the expected validation size and not by the realised one (whose
 * dependence on the data would scale the noise differently on neighbouring datasets), with s = {@code scoreNoise}·f·n (f the validation
 * fraction, n the private data's size): changing one example changes the count of correct
 * predictions by at most 1, so the release is a {@link GaussianEvent} with noise multiplier s. Every
 * quantity the event depends on (q = B/((1 − f)n), T, σ, s) is computed from n, which is treated as
 * public as in DP-SGD; the realised split sizes only normalise.
 *
 * <p>A mechanism is {@link java.io.Serializable} as its settings and its private data: the splits are not written but
 * made again (with the same seed, so identically) when it is read back. {@link LabeledData} itself is not
 * serializable, so a plain {@code ObjectOutputStream} refuses; a stream that replaces the data by a handle (as the
 * Spark executor's does, shipping the data once per cluster) carries the rest.
 */
public final class DpSgdMechanism implements RetrainableMechanism, java.io.Serializable {
    private static final long serialVersionUID = 1L;
    /**
     * A user's own network for each run, in place of a model by name: given the run's optimiser (the candidate's
     * {@code optimizer} and {@code lr}) and its weights' seed, a new, initialised network (a {@code MultiLayerNetwork}
     * or {@code ComputationGraph} that {@code DpCompatibility} accepts). Serializable, so that a mechanism placed on a
     * Spark cluster builds it on the executors (a lambda is serializable when its target type is).
     */
    @FunctionalInterface
    public interface NetworkFactory extends java.io.Serializable {
        /**
         * @param updater the run's optimiser with its learning rate
         * @param seed    the seed of the run's initial weights
         * @return a new network, initialised; the same arguments must give the same network
         */
        Model create(org.nd4j.linalg.learning.config.IUpdater updater, long seed);
    }

    /** How a run's score is released. */
    public enum Scoring {
        /** Validation split of the private data, noisy score, cost composed into Q (the default). */
        PRIVATE_VALIDATION,
        /** A split declared public: exact score, no cost. */
        PUBLIC_HOLDOUT
    }

    private final ExampleSource train;
    private final ExampleSource validation;
    private final String modelName;
    private final ModelOptions modelOptions;
    private final Builder b;
    private final ConcurrentHashMap<String, Double> calibrated = new ConcurrentHashMap<>();

    private DpSgdMechanism(Builder b, ExampleSource train, ExampleSource validation) {
        this.b = b;
        this.train = train;
        this.validation = validation;
        if (validation.size() < 1) {
            throw new IllegalArgumentException("validationFraction " + b.validationFraction + " leaves no validation examples");
        }
        this.modelName = b.modelName;
        this.modelOptions = b.modelOptions;
    }

    /** Serialised as its settings and data only; the splits are made again on reading. */
    private Object writeReplace() throws java.io.NotSerializableException {
        if (b.clippedSums != null) { // its runs already use a cluster: an executor cannot start jobs of its own
            throw new java.io.NotSerializableException("a DpSgdMechanism whose runs compute their clipped sums elsewhere "
                    + "(clippedSums) cannot itself be sent to an executor");
        }
        return new SerializedForm(b);
    }

    private void readObject(java.io.ObjectInputStream in) throws java.io.InvalidObjectException {
        throw new java.io.InvalidObjectException("a DpSgdMechanism is read through its serialized form");
    }

    /** What a serialised mechanism holds: its builder (settings and private data). */
    private record SerializedForm(Builder settings) implements java.io.Serializable {
        private Object readResolve() {
            return settings.build();
        }
    }

    /**
     * The same mechanism (same splits) with another default noise multiplier σ, for calibration.
     *
     * @param sigma the default noise multiplier σ ≥ 0, finite (candidates with a noise_multiplier keep theirs)
     * @return a new mechanism over the same splits
     */
    public DpSgdMechanism withNoiseMultiplier(double sigma) {
        Builder copy = b.copy().noiseMultiplier(sigma).targetEpsilon(Double.NaN);
        return new DpSgdMechanism(copy, train, validation);
    }

    /**
     * The same mechanism (same splits) with the score's noise fixed at {@code s} correct-counts
     * (ignored for a public holdout).
     *
     * @throws IllegalArgumentException if s is not finite and &gt; 0 under private scoring
     */
    public DpSgdMechanism withScoreNoiseCount(double s) {
        Builder copy = b.copy();
        if (b.scoring == Scoring.PRIVATE_VALIDATION) {
            if (!(s > 0) || Double.isInfinite(s)) {
                throw new IllegalArgumentException("score noise (correct-counts) must be finite and > 0, got " + s);
            }
            copy.scoreNoiseCount = s;
        }
        return new DpSgdMechanism(copy, train, validation);
    }

    /**
     * The same settings over other private data (split anew with the same seed), for example a
     * subset to tune on, with the score released with noise of standard deviation {@code scoreNoiseCount}
     * correct-counts (fixed, so that the event does not depend on the new data's size).
     *
     * @throws IllegalArgumentException if the count is not finite and &gt; 0 under private scoring
     */
    public DpSgdMechanism withData(ExampleSource privateData, double scoreNoiseCount) {
        return b.copyFor(privateData).build().withScoreNoiseCount(scoreNoiseCount);
    }

    /** All the private data this mechanism was built over (its train and validation splits together). */
    public ExampleSource privateData() {
        return b.data;
    }

    /** The validation fraction f. */
    public double validationFraction() {
        return b.validationFraction;
    }

    /** True if the DP-SGD sampling rate q is set directly, so that runs cost the same on data of any size. */
    public boolean hasFixedSamplingRate() {
        return !Double.isNaN(b.settings().samplingRate());
    }

    /** The candidate with its optimiser and learning rate written out (defaults made explicit). */
    public Candidate explicit(Candidate c) {
        return c.with("optimizer", optimizer(c)).with("learning_rate", learningRate(c));
    }

    /**
     * A builder over the private training data (the test set is not given to the mechanism): in memory, or read by index
     * ({@link ExampleSource}), when the splits are index sets of it and each step reads only its Poisson batch.
     *
     * @param privateData the private training data, split into a training and a validation part at {@link Builder#build}
     * @return a builder with the defaults of {@code dpdl4j train}
     */
    public static Builder builder(ExampleSource privateData) {
        return new Builder(privateData);
    }

    /** The examples a run trains on. */
    public ExampleSource train() {
        return train;
    }

    /** The examples a run is scored on. */
    public ExampleSource validation() {
        return validation;
    }

    /**
     * The scoring mode.
     *
     * @return how a run's score is released
     */
    public Scoring scoring() {
        return b.scoring;
    }

    /**
     * f·n, the validation split's expected size from public quantities: the divisor of the released score.
     *
     * @return f·n, in examples
     */
    public double publicValidationSize() {
        return b.validationFraction * b.data.size();
    }

    /** The standard deviation s of the released correct-count (0 for a public holdout). */
    public double scoreNoiseCount() {
        if (b.scoring != Scoring.PRIVATE_VALIDATION) {
            return 0;
        }
        return b.scoreNoiseCount != null ? b.scoreNoiseCount : b.scoreNoise * b.validationFraction * b.data.size();
    }

    /**
     * The optimiser a candidate trains with.
     *
     * @param c the candidate
     * @return its {@code optimizer}, else the builder's default
     */
    public String optimizer(Candidate c) {
        return c.text("optimizer", b.optimizerName());
    }

    /**
     * The learning rate a candidate trains with (the optimiser's default when neither sets one).
     *
     * @param c the candidate
     * @return its learning rate, &gt; 0
     */
    public double learningRate(Candidate c) {
        return c.has("learning_rate") ? c.number("learning_rate") : ModelOptions.updaterNamed(optimizer(c), b.learningRate()).getLearningRate(0, 0);
    }

    /**
     * The DP-SGD settings this candidate runs with (seed and workers as configured).
     *
     * @param c    the candidate (its axes override the settings)
     * @param seed the run's seed of its sampler and noise (unless secure randomness is set)
     * @return the engine's configuration of the candidate's run on the training split
     * @throws IllegalArgumentException if the candidate sets a bad value, naming it
     */
    public DpSgdConfig config(Candidate c, long seed) {
        return config(c, seed, (1 - b.validationFraction) * b.data.size());
    }

    private DpSgdConfig config(Candidate c, long seed, double n) {
        DpSgdSpace.check(c);
        DpSgdSettings s = b.settings();
        double q = samplingRate(c, n);
        long steps = DpSgdConfig.stepsForEpochs(c.number("epochs", s.epochs()), q);
        double sigma = noiseMultiplier(c, q, steps);
        if (sigma == 0 && !s.nonPrivate()) {
            throw DpSgdSpace.sigmaZero(c);
        }
        // the candidate's C over the default; the seed is the trial's
        return DpSgdSettings.builder().settings(s).clipNorm(c.number("clip_norm", s.clipNorm())).seed(seed).build()
                .config(q, sigma, steps, b.workers);
    }

    private double samplingRate(Candidate c, double n) {
        if (c.has("sampling_rate") && c.has("batch_size")) {
            throw new IllegalArgumentException("a candidate sets either batch_size or sampling_rate, not both: " + c);
        }
        double fixed = b.settings().samplingRate();
        if (c.has("sampling_rate") || !c.has("batch_size") && !Double.isNaN(fixed)) {
            double q = c.number("sampling_rate", fixed);
            if (!(q > 0 && q <= 1)) {
                throw new IllegalArgumentException("sampling_rate q must be in (0, 1], got " + q + " in " + c);
            }
            return q;
        }
        double batch = c.number("batch_size", b.settings().expectedBatchSize());
        if (batch != Math.rint(batch) || batch < 1 || batch > n) {
            throw new IllegalArgumentException("batch_size must be an integer in [1, " + (long) n + "], got " + batch + " in " + c);
        }
        return batch / n;
    }

    private double noiseMultiplier(Candidate c, double q, long steps) {
        DpSgdSettings s = b.settings();
        if (c.has("noise_multiplier") || Double.isNaN(s.targetEpsilon())) {
            return c.number("noise_multiplier", s.noiseMultiplier());
        }
        return calibrated.computeIfAbsent(q + "/" + steps,
                k -> NoiseCalibration.noiseMultiplier(q, steps, s.targetEpsilon(), s.delta(), s.accountant() != null
                        ? Accountants.byName(s.accountant()) : Accountants.standard(), NoiseCalibration.DEFAULT_TOLERANCE));
    }

    @Override
    public PrivacyEvent event(Candidate c) {
        PrivacyEvent run = trainingEvent(c);
        return b.scoring == Scoring.PRIVATE_VALIDATION ? ComposedEvent.of(run, new GaussianEvent(scoreNoiseCount())) : run;
    }

    /** The DP-SGD part of {@link #event}: what training with this candidate costs, without the score. */
    @Override
    public PrivacyEvent trainingEvent(Candidate c) {
        DpSgdConfig cfg = config(c, 0);
        return DpSgdTrainer.event(cfg.samplingRate(), cfg.noiseMultiplier(), cfg.steps());
    }

    /** q·|train|·T of this candidate's run on the training split (expected: the realised batch sizes are private). */
    @Override
    public double expectedGradients(Candidate c) {
        DpSgdConfig cfg = config(c, 0);
        return cfg.samplingRate() * train.size() * cfg.steps();
    }

    /**
     * One DP-SGD run with this candidate on other data (for example a final model on all the
     * training data), with no validation and no score. Its event is {@link #trainingEvent} whenever the
     * sampling rate does not depend on the data's size (candidates with {@code sampling_rate}, or a
     * builder with {@link Builder#samplingRate}).
     *
     * @param init     a network to continue from (copied, then given the candidate's learning rate), or
     *                 null for a fresh one
     * @param listener progress of the run
     */
    public TrainingResult train(Candidate c, ExampleSource data, long seed, Model init, TrainingListener listener) {
        DpSgdConfig cfg = config(c, seed, data.size());
        Model net;
        if (init != null) {
            net = Networks.copy(init);
            Networks.setLearningRate(net, learningRate(c));
        } else {
            net = network(c, seed);
        }
        return trainer().train(net, data, cfg, listener);
    }

    /**
     * One DP-SGD run with this candidate on this mechanism's training split, a fresh network, no score: a
     * final model after a selection. It trains with exactly {@link #trainingEvent}'s q, σ and T (q from the
     * expected split size (1 − f)·n, never from the realised size of the split, which depends on the data).
     *
     * @param listener progress of the run
     */
    public TrainingResult trainOnTrainingSplit(Candidate c, long seed, TrainingListener listener) {
        return trainer().train(network(c, seed), train, config(c, seed), listener);
    }

    /**
     * The checks a run makes of its network before it trains ({@link org.dpdl4j.dpsgd.DpCompatibility#check(Model,
     * org.dpdl4j.datasets.ExampleSource)}: its configuration, and every layer the engine cannot vouch for run on a
     * synthetic batch in the training data's shape), made here before a tuning is charged; and a network that carries
     * the claim of an earlier private release ({@link org.dpdl4j.dpsgd.PrivateHistory}) is refused.
     *
     * @param c a candidate of the space (its network is built with seed 0 and discarded)
     * @throws IllegalArgumentException naming what the engine refuses
     */
    public void checkNetwork(Candidate c) {
        Model net = network(c, 0);
        org.dpdl4j.dpsgd.PrivateHistory history = org.dpdl4j.dpsgd.PrivateHistory.of(net);
        if (history != null) {
            throw new IllegalArgumentException("the network factory returned a network that carries the claim of an earlier "
                    + "private release (" + history.event() + "): a tuning's trials each start from a fresh network, and its "
                    + "event does not compose an earlier claim; return freshly initialised networks (or weights pre-trained on "
                    + "public data)");
        }
        org.dpdl4j.dpsgd.DpCompatibility.check(net, train);
    }

    /**
     * A fresh network for this candidate: weights from the run's seed, or, when the mechanism is audited with
     * gradient canaries, from the model options' fixed seed, so that the auditor knows θ₀ whichever trial is released.
     *
     * @param c    the candidate (its optimiser, learning rate and activation)
     * @param seed the seed of the run's initial weights
     * @return a new, initialised network
     * @throws IllegalArgumentException if the candidate has an activation axis and the network comes from a factory
     */
    public Model network(Candidate c, long seed) {
        if (b.factory != null) {
            if (c.has("activation")) {
                throw new IllegalArgumentException("hyperparameter activation in " + c + ": a network factory chooses its own "
                        + "activations (the axis applies to models by name)");
            }
            Model m = b.factory.create(ModelOptions.updaterNamed(optimizer(c), c.has("learning_rate") ? Double.valueOf(c.number("learning_rate")) : b.learningRate()),
                    b.canaries != null ? modelOptions.seed() : seed);
            return Objects.requireNonNull(m, "the network factory returned null");
        }
        ModelOptions options = modelOptions
                .withUpdater(ModelOptions.updaterNamed(optimizer(c), c.has("learning_rate") ? Double.valueOf(c.number("learning_rate")) : b.learningRate()))
                .withActivation(ModelOptions.activationNamed(c.text("activation", b.activation)))
                .withSeed(b.canaries != null ? modelOptions.seed() : seed);
        return Models.byName(modelName, options);
    }

    /** The trainer every run uses: with the audit's gradient canaries, if any, and its sums where the builder says. */
    private DpSgdTrainer trainer() {
        DpSgdTrainer t = b.canaries != null ? new DpSgdTrainer().withGradientCanaries(b.canaries) : new DpSgdTrainer();
        return b.clippedSums != null ? t.withClippedSums(b.clippedSums)
                : b.settings().augmult() > 1 ? t.withClippedSums(b.settings().clippedSums()) : t;
    }

    @Override
    public TrialResult run(Candidate c, long seed, TuningListener listener, int trial) {
        long start = System.nanoTime();
        DpSgdConfig cfg = config(c, seed);
        Model net = network(c, seed);
        trainer().train(net, train, cfg, info -> listener.onTrialStep(trial, info));
        double accuracy = DpSgdTrainer.accuracy(net, validation);
        double score;
        if (b.scoring == Scoring.PRIVATE_VALIDATION) {
            java.util.random.RandomGenerator noise = scoreNoise(seed, b.settings().secureRandom());
            double count = Math.round(accuracy * validation.size());
            // divided by the public expected size f·n, not the realised one: a data-dependent divisor would scale the
            // noise differently on neighbouring datasets, and the charged GaussianEvent assumes one fixed scale
            score = (count + noise.nextGaussian() * scoreNoiseCount()) / publicValidationSize();
        } else {
            score = accuracy;
        }
        return new TrialResult(trial, c, net, Double.isNaN(score) ? Double.NEGATIVE_INFINITY : score, event(c),
                (System.nanoTime() - start) / 1e9, null);
    }

    /**
     * The generator of a trial's score noise: {@link SecureRandom} under secure noise, else the JDK's
     * {@code L64X128MixRandom} seeded with all 64 bits of the trial's seed (as {@code GaussianNoise} draws the gradient
     * noise; a {@link Random} would keep only 48 of them, so that seeds differing in their top 16 bits drew the same
     * noise), on a stream apart from the gradient noise's.
     */
    static java.util.random.RandomGenerator scoreNoise(long seed, boolean secure) {
        return secure ? new SecureRandom()
                : java.util.random.RandomGeneratorFactory.of("L64X128MixRandom").create(seed ^ 0x7C3A1F9E2B5D4086L);
    }

    /**
     * The same mechanism (same splits) with σ = 0 allowed: for trainings that are private by other means
     * or not meant to be (the utility estimates of propose-test, DP-HYPE's local training). Its events are
     * then infinite for σ = 0.
     */
    public DpSgdMechanism nonPrivateCopy() {
        Builder copy = b.copy().nonPrivate(true);
        return new DpSgdMechanism(copy, train, validation);
    }

    /** Settings of {@link DpSgdMechanism}; the defaults follow {@code dpdl4j train}. */
    public static final class Builder extends DpSgdSettings.Setters<Builder> implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        /** The defaults of {@code dpdl4j train}: B = 256, E = 40, the rest {@link DpSgdSettings#DEFAULTS}. */
        static final DpSgdSettings DEFAULTS = DpSgdSettings.builder().expectedBatchSize(256).epochs(40).build();
        private final ExampleSource data;
        private String modelName = "standard-cnn";
        private ModelOptions modelOptions = ModelOptions.mnist();
        private String activation = "tanh";
        private int workers = 1;
        private double validationFraction = 0.1;
        private long splitSeed = 0;
        private Scoring scoring = Scoring.PRIVATE_VALIDATION;
        private double scoreNoise = 0.005;
        private Double scoreNoiseCount;
        private org.dpdl4j.dpsgd.GradientCanaries canaries;
        private transient org.dpdl4j.dpsgd.ClippedSums clippedSums;
        private NetworkFactory factory;

        private Builder(ExampleSource data) {
            super(DEFAULTS);
            this.data = Objects.requireNonNull(data, "data");
        }

        /** Written with its settings, which its superclass (not serializable) holds. */
        private void writeObject(java.io.ObjectOutputStream out) throws java.io.IOException {
            out.defaultWriteObject();
            out.writeObject(settings());
        }

        private void readObject(java.io.ObjectInputStream in) throws java.io.IOException, ClassNotFoundException {
            in.defaultReadObject();
            settings((DpSgdSettings) in.readObject());
        }

        private Builder(Builder other, ExampleSource data) {
            this(data);
            settings(other.settings());
            modelName = other.modelName;
            modelOptions = other.modelOptions;
            factory = other.factory;
            activation = other.activation;
            workers = other.workers;
            validationFraction = other.validationFraction;
            splitSeed = other.splitSeed;
            scoring = other.scoring;
            scoreNoise = other.scoreNoise;
            scoreNoiseCount = other.scoreNoiseCount;
            canaries = other.canaries;
            clippedSums = other.clippedSums;
        }

        /**
         * Audits every run with these white-box canaries in its training set ({@link org.dpdl4j.audit.CanaryAudit});
         * every run then starts from the same weights (the model options' seed), which the auditor knows.
         *
         * @param c the canaries
         * @return this builder
         */
        public Builder gradientCanaries(org.dpdl4j.dpsgd.GradientCanaries c) {
            this.canaries = c;
            return this;
        }

        /**
         * Candidates without {@code sigma} get the smallest σ (to 1e-6, rounded up) for which their
         * DP-SGD run (q, T) is (ε, δ)-DP, δ as set by {@link #delta} (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Section 4.1).
         *
         * @param epsilon each run's ε, finite and &gt; 0
         * @return this builder
         * @throws IllegalArgumentException if ε is not finite and &gt; 0
         */
        public Builder perCandidateEpsilon(double epsilon) {
            if (!(epsilon > 0) || Double.isInfinite(epsilon)) {
                throw new IllegalArgumentException("per-candidate epsilon must be finite and > 0, got " + epsilon);
            }
            return targetEpsilon(epsilon);
        }

        /**
         * Model by name ({@value Models#NAMES}) and its options; the candidate's lr/optimizer/activation override.
         *
         * @param name    a model name of {@link Models#NAMES}
         * @param options its options (input shape, classes, optimiser, activation, weights' seed)
         * @return this builder
         */
        public Builder model(String name, ModelOptions options) {
            this.modelName = Objects.requireNonNull(name, "name");
            this.modelOptions = Objects.requireNonNull(options, "options");
            return this;
        }

        /**
         * The user's own network for each run (in place of {@link #model}): the candidate's {@code lr} and
         * {@code optimizer} reach it as its optimiser; an {@code activation} axis is refused.
         *
         * @param factory builds a run's network from its optimiser and weights' seed
         * @return this builder
         */
        public Builder network(NetworkFactory factory) {
            this.factory = Objects.requireNonNull(factory, "factory");
            return this;
        }

        /**
         * Default optimiser and learning rate: the settings' {@code optimizer} and {@code learning_rate}
         * ({@link DpSgdSettings.Setters#optimizer}, {@link DpSgdSettings.Setters#learningRate}) in one call.
         *
         * @param name         sgd, momentum or adam
         * @param learningRate the learning rate, &gt; 0, or null for the optimiser's default
         * @return this builder
         * @throws IllegalArgumentException for an unknown optimiser or a learning rate not finite and &gt; 0
         */
        public Builder optimizer(String name, Double learningRate) {
            return optimizer(Objects.requireNonNull(name, "name")).learningRate(learningRate == null ? Double.NaN : learningRate);
        }

        /** The settings' optimiser, sgd when unset. */
        String optimizerName() {
            return settings().optimizer() != null ? settings().optimizer() : "sgd";
        }

        /** The settings' learning rate, null for the optimiser's default. */
        Double learningRate() {
            return Double.isNaN(settings().learningRate()) ? null : settings().learningRate();
        }

        /**
         * Default activation.
         *
         * @param name tanh, relu or tempered-sigmoid
         * @return this builder
         * @throws IllegalArgumentException for an unknown activation
         */
        public Builder activation(String name) {
            ModelOptions.activationNamed(name); // validates
            this.activation = name;
            return this;
        }

        /**
         * Every run computes its clipped sums there (for example a Spark cluster's, one job per step) instead of on
         * this JVM's workers; the batches, the noise (drawn on this JVM), the update and the event stay those of a local
         * run. A mechanism with it cannot itself be sent to an executor.
         *
         * @param where where each step's clipped sum is computed, not null
         * @return this builder
         */
        public Builder clippedSums(org.dpdl4j.dpsgd.ClippedSums where) {
            this.clippedSums = Objects.requireNonNull(where, "where");
            return this;
        }

        /**
         * DP-SGD worker threads per run.
         *
         * @param w threads per run, in [1, 256]
         * @return this builder
         * @throws IllegalArgumentException if w is outside [1, 256]
         */
        public Builder workers(int w) {
            if (w < 1 || w > 256) {
                throw new IllegalArgumentException("workers must be in [1, 256], got " + w);
            }
            this.workers = w;
            return this;
        }

        /**
         * The validation split: a fraction of the private data chosen with a (data-independent) seed.
         *
         * @param fraction f, the share of the data in the validation split, in (0, 1)
         * @param seed     the split's seed (data-independent)
         * @return this builder
         * @throws IllegalArgumentException if the fraction is not in (0, 1)
         */
        public Builder validation(double fraction, long seed) {
            if (!(fraction > 0 && fraction < 1)) {
                throw new IllegalArgumentException("validation fraction must be in (0, 1), got " + fraction);
            }
            this.validationFraction = fraction;
            this.splitSeed = seed;
            return this;
        }

        /**
         * How the score is released; {@code noise} is the standard deviation of the noisy accuracy
         * (a fraction, default 0.005) for {@link Scoring#PRIVATE_VALIDATION}.
         *
         * @param mode  how the score is released
         * @param noise the score noise's standard deviation as a fraction of accuracy, finite and &gt; 0 for private scoring
         * @return this builder
         * @throws IllegalArgumentException if the noise is not finite and &gt; 0 for private scoring
         */
        public Builder scoring(Scoring mode, double noise) {
            if (mode == Scoring.PRIVATE_VALIDATION && (!(noise > 0) || Double.isInfinite(noise))) {
                throw new IllegalArgumentException("score noise must be finite and > 0 for private validation, got " + noise);
            }
            this.scoring = Objects.requireNonNull(mode, "mode");
            this.scoreNoise = noise;
            return this;
        }

        /**
         * The mechanism; its splits are made now.
         *
         * @return the mechanism
         * @throws IllegalArgumentException if {@link #augmult} above 1 is combined with {@link #clippedSums}, or data
         *                                  normalisation is set
         */
        public DpSgdMechanism build() {
            if (!Double.isNaN(settings().dataNormalisation())) { // its event is not in a trial's; a tuning would not count it
                throw new IllegalArgumentException("data_normalisation " + settings().dataNormalisation() + " is a setting of "
                        + "one training run (PrivateTraining, train): a tuning's trials do not release feature statistics");
            }
            if (clippedSums != null && settings().augmult() > 1) {
                throw new IllegalArgumentException("augmult k = " + settings().augmult() + " computes its clipped sums on this JVM: not with "
                        + "clippedSums");
            }
            ExampleSource source = settings().trainingData(data); // the splits read through it, as the settings say
            int[][] split = Splits.byRecord(source, validationFraction, splitSeed);
            return new DpSgdMechanism(copy(), source.subset(split[0]), source.subset(split[1]));
        }

        private Builder copy() { // later changes to this builder do not leak into a built mechanism
            return copyFor(data);
        }

        private Builder copyFor(ExampleSource other) {
            return new Builder(this, other);
        }
    }
}
