package org.dpdl4j.dpsgd;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.ImageAugmentation;
import org.dpdl4j.models.ModelOptions;

/**
 * The settings of a DP-SGD run as a user gives them, declared once: {@link PrivateTraining}, the tuning mechanism's
 * builder (both extend {@link Setters}), the command line's options and the run's plan and privacy sidecar
 * ({@link #toMap}, {@link #fromMap}) all read this record. Each value is checked here, with a message that names the
 * setting by its key in files ({@link #KEYS}), its value and what is allowed. Settings left unset are resolved by the
 * caller for the data: q = B/n ({@link #samplingRate(int)}), T = ⌈E/q⌉ ({@link #steps}), σ from a target ε.
 *
 * <p>A new setting is a component here (its check, its setter in {@link Setters}, its key in {@link #toMap} and
 * {@link #fromMap}), its effect where it acts (the engine, which reads it from {@link DpSgdConfig#settings()}, or
 * {@link #trainingData} for the data), and its option in the command line's {@code TrainingOptions}: three main files. Settings that change what the run is (its event or its
 * release) are in {@link #toMap} and so in the run's plan, which a resume cannot change; settings that change only how
 * it is computed (such as {@link #readCacheMb}) are not.
 *
 * @param clipNorm          C &gt; 0, finite: per-example gradients are clipped to L2 norm C (default 1); +∞ only with
 *                          {@code nonPrivate}, the engine's mode without clipping
 * @param noiseMultiplier   σ ≥ 0, finite, or NaN when unset (then calibrated from {@code targetEpsilon}); σ = 0 needs
 *                          {@code nonPrivate}
 * @param targetEpsilon     ε &gt; 0, finite, that σ is calibrated to meet at {@code delta}; NaN when unset
 * @param expectedBatchSize B ≥ 1, the expected Poisson batch (q = B/n); 0 when unset
 * @param samplingRate      q ∈ (0, 1] given directly, instead of B (then the event does not depend on n); NaN when unset
 * @param epochs            E &gt; 0, finite: T = ⌈E/q⌉ steps; NaN when unset
 * @param delta             δ ∈ (0, 1) (default 1e-5)
 * @param accountant        a registered accountant's name ({@code Accountants.names()}), or null for the caller's default
 * @param physicalBatchSize the most examples pushed through the network at once, ≥ 1 (default 512); does not change the
 *                          result
 * @param emaDecay          β ∈ [0, 1) of the released moving average of the parameters (default 0: the last iterate; see
 *                          {@link DpSgdConfig#emaDecay()})
 * @param augmult           augmentation multiplicity k ∈ [1, 64] (De et al. 2022, arXiv:2204.13650, Section 3.2; default 1)
 * @param augmentation      the transformation of the k copies (needed when k &gt; 1; not part of the plan)
 * @param nonPrivate        allow σ = 0 (ε = ∞)
 * @param secureRandom      seed the sampler and the noise from {@link java.security.SecureRandom}
 * @param seed              a fixed seed for the sampler and the noise of one run, or null (secret: never in the plan)
 * @param readCacheMb       MiB in [0, 16777216] of examples read by index kept in memory ({@link ExampleSource#withCache}),
 *                          so that later steps (and a tuning's later trials) neither read nor decode them again (default 0:
 *                          none); how the run is computed, not what it is: not in the plan
 * @param dataNormalisation σ_norm &gt; 0, finite: before DP-SGD, release the per-channel mean and variance of the
 *                          scattering features with Tramèr &amp; Boneh's private data normalisation ({@link PrivateNormalisation},
 *                          "Differentially Private Learning Needs Better Features (or Much More Data)", ICLR 2021,
 *                          arXiv:2011.11660, Sec. 3; theirs: 8), whose two Gaussian mechanisms come first in the run's
 *                          event ({@link #event}); needs a network with a {@code Scattering} layer; NaN when unset
 * @param optimizer         the optimiser by name, one of {@value ModelOptions#OPTIMIZERS}
 *                          ({@link ModelOptions#updaterNamed}), for the networks a run or a tuning builds; null for the
 *                          caller's own (a network's own updater; sgd for networks built by name)
 * @param learningRate      η &gt; 0, finite, the optimiser's learning rate; NaN for its default (the network's own, or the
 *                          named optimiser's)
 */
public record DpSgdSettings(double clipNorm, double noiseMultiplier, double targetEpsilon, int expectedBatchSize,
                            double samplingRate, double epochs, double delta, String accountant, int physicalBatchSize,
                            double emaDecay, int augmult, ImageAugmentation augmentation, boolean nonPrivate,
                            boolean secureRandom, Long seed, int readCacheMb, double dataNormalisation,
                            String optimizer, double learningRate) implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    /** Nothing set but the defaults: C = 1, δ = 1e-5, physical batch 512, k = 1. */
    public static final DpSgdSettings DEFAULTS = new DpSgdSettings(1.0, Double.NaN, Double.NaN, 0, Double.NaN, Double.NaN,
            1e-5, null, 512, 0, 1, null, false, false, null, 0, Double.NaN, null, Double.NaN);

    /** The keys of {@link #toMap}: the settings that define a run, in files (plans, sidecars) and error messages. */
    public static final List<String> KEYS = List.of("clip_norm", "noise_multiplier", "target_epsilon", "batch_size",
            "sampling_rate", "epochs", "optimizer", "learning_rate", "delta", "accountant", "physical_batch_size", "ema_decay", "augmult", "non_private",
            "secure_noise", "data_normalisation");

    /**
     * Checks each value on its own (what needs two settings, such as σ = 0 without {@code nonPrivate}, is checked where
     * the run is resolved: {@link #config}).
     *
     * @param clipNorm see the record's clipNorm
     * @param noiseMultiplier see the record's noiseMultiplier
     * @param targetEpsilon see the record's targetEpsilon
     * @param expectedBatchSize see the record's expectedBatchSize
     * @param samplingRate see the record's samplingRate
     * @param epochs see the record's epochs
     * @param delta see the record's delta
     * @param accountant see the record's accountant
     * @param physicalBatchSize see the record's physicalBatchSize
     * @param emaDecay see the record's emaDecay
     * @param augmult see the record's augmult
     * @param augmentation see the record's augmentation
     * @param nonPrivate see the record's nonPrivate
     * @param secureRandom see the record's secureRandom
     * @param seed see the record's seed
     * @param readCacheMb see the record's readCacheMb
     * @param dataNormalisation see the record's dataNormalisation
     * @param optimizer see the record's optimizer
     * @param learningRate see the record's learningRate
     * @throws IllegalArgumentException naming the setting's key, its value and the allowed range
     */
    public DpSgdSettings {
        if (!(clipNorm > 0) || Double.isInfinite(clipNorm) && !nonPrivate) {
            throw invalid("clip_norm", "must be finite and > 0", clipNorm); // +∞: the engine's non-private mode
        }
        if (!Double.isNaN(noiseMultiplier) && !(noiseMultiplier >= 0 && Double.isFinite(noiseMultiplier))) {
            throw invalid("noise_multiplier", "must be finite and >= 0", noiseMultiplier);
        }
        if (!Double.isNaN(targetEpsilon) && !(targetEpsilon > 0 && Double.isFinite(targetEpsilon))) {
            throw invalid("target_epsilon", "must be finite and > 0", targetEpsilon);
        }
        if (expectedBatchSize < 0) {
            throw invalid("batch_size", "must be >= 1", expectedBatchSize);
        }
        if (!Double.isNaN(samplingRate) && !(samplingRate > 0 && samplingRate <= 1)) {
            throw invalid("sampling_rate", "must be in (0, 1]", samplingRate);
        }
        if (!Double.isNaN(epochs) && !(epochs > 0 && Double.isFinite(epochs))) {
            throw invalid("epochs", "must be finite and > 0", epochs);
        }
        if (!(delta > 0 && delta < 1)) {
            throw invalid("delta", "must be in (0, 1)", delta);
        }
        if (accountant != null) {
            try {
                Accountants.byName(accountant);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("accountant: " + e.getMessage(), e);
            }
        }
        if (physicalBatchSize < 1) {
            throw invalid("physical_batch_size", "must be >= 1", physicalBatchSize);
        }
        if (!(emaDecay >= 0 && emaDecay < 1)) {
            throw invalid("ema_decay", "must be in [0, 1) (0 = no moving average)", emaDecay);
        }
        if (augmult < 1 || augmult > 64) {
            throw invalid("augmult", "must be in [1, 64]", augmult);
        }
        if (readCacheMb < 0 || readCacheMb > 1 << 24) {
            throw invalid("read_cache_mb", "must be in [0, 16777216]", readCacheMb);
        }
        if (!Double.isNaN(dataNormalisation) && !(dataNormalisation > 0 && Double.isFinite(dataNormalisation))) {
            throw invalid("data_normalisation", "must be a finite noise multiplier > 0", dataNormalisation);
        }
        if (!Double.isNaN(dataNormalisation) && nonPrivate) {
            throw new IllegalArgumentException("data_normalisation releases private statistics: not in a non-private run (non_private)");
        }
        if (optimizer != null) {
            ModelOptions.updaterNamed(optimizer, null); // "optimizer must be one of …"
        }
        if (!Double.isNaN(learningRate) && !(learningRate > 0 && Double.isFinite(learningRate))) {
            throw invalid("learning_rate", "must be finite and > 0", learningRate);
        }
    }

    private static IllegalArgumentException invalid(String key, String rule, Object value) {
        return new IllegalArgumentException(key + " " + rule + ", got " + value);
    }

    /**
     * A builder from {@link #DEFAULTS}.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * q for n examples: {@link #samplingRate} if set, else B/n.
     *
     * @param n the training data's size, ≥ 1
     * @return q ∈ (0, 1]
     * @throws IllegalArgumentException if neither is set, or B is outside [1, n]
     */
    public double samplingRate(int n) {
        if (!Double.isNaN(samplingRate)) {
            return samplingRate;
        }
        if (expectedBatchSize < 1 || expectedBatchSize > n) {
            throw new IllegalArgumentException("batch_size must be in [1, n = " + n + "], got " + (expectedBatchSize == 0
                    ? "none (set the expected batch size)" : expectedBatchSize));
        }
        return (double) expectedBatchSize / n;
    }

    /**
     * T = ⌈E/q⌉ ({@link DpSgdConfig#stepsForEpochs}).
     *
     * @param q the sampling rate
     * @return T ≥ 1
     * @throws IllegalArgumentException if the epochs are not set
     */
    public long steps(double q) {
        if (Double.isNaN(epochs)) {
            throw new IllegalArgumentException("epochs must be set (> 0)");
        }
        return DpSgdConfig.stepsForEpochs(epochs, q);
    }

    /**
     * The whole event of a run with these settings for the resolved q, σ and T: DP-SGD's
     * ({@link DpSgdTrainer#event}), preceded, with {@link #dataNormalisation}, by the statistics' two Gaussian
     * mechanisms ({@link PrivateNormalisation#event}; Tramèr &amp; Boneh, arXiv:2011.11660, Sec. 3).
     *
     * @param q     the sampling rate, in (0, 1]
     * @param sigma DP-SGD's noise multiplier σ ≥ 0
     * @param steps T ≥ 0
     * @return the event the run releases in all
     */
    public PrivacyEvent event(double q, double sigma, long steps) {
        return event(DpSgdTrainer.event(q, sigma, steps));
    }

    /**
     * The whole event of a run with these settings whose DP-SGD steps released {@code dpSgd} (the steps as taken):
     * {@code dpSgd}, preceded with {@link #dataNormalisation} by the statistics' release.
     *
     * @param dpSgd DP-SGD's event
     * @return the event the run releases in all
     */
    public PrivacyEvent event(PrivacyEvent dpSgd) {
        return Double.isNaN(dataNormalisation) ? dpSgd : ComposedEvent.of(PrivateNormalisation.event(dataNormalisation), dpSgd);
    }

    /**
     * DP-SGD's smallest σ (within 10⁻⁴, rounded up: {@link NoiseCalibration#smallestNoise}) such that {@link #event} is
     * ({@link #targetEpsilon}, {@link #delta})-DP by {@code accountant}.
     *
     * @param q          the sampling rate, in (0, 1]
     * @param steps      T ≥ 1
     * @param accountant the accountant that defines ε
     * @return σ &gt; 0
     * @throws IllegalArgumentException naming target_epsilon when it is unset or no σ meets it, or naming
     *                                  data_normalisation when the statistics alone spend the target
     */
    public double calibrateNoise(double q, long steps, PrivacyAccountant accountant) {
        return calibrateNoise(q, steps, accountant, null);
    }

    /**
     * {@link #calibrateNoise(double, long, PrivacyAccountant)} for a network whose weights already carry a claim: the
     * smallest σ such that the composition of {@code earlier} and {@link #event} meets the target.
     *
     * @param q          the sampling rate, in (0, 1]
     * @param steps      T ≥ 1
     * @param accountant the accountant that defines ε
     * @param earlier    the claim the network carries before this run, or null for none
     * @return σ &gt; 0
     * @throws IllegalArgumentException as that method, or naming target_epsilon when the earlier claim alone spends it
     */
    public double calibrateNoise(double q, long steps, PrivacyAccountant accountant, PrivacyEvent earlier) {
        if (earlier != null && !Double.isNaN(targetEpsilon)) {
            double before = accountant.epsilon(earlier, delta);
            if (!(before < targetEpsilon)) {
                throw new IllegalArgumentException("target_epsilon " + targetEpsilon + ": what the run releases besides DP-SGD "
                        + "(the network's earlier claim: its weights carry every run that trained them; the validation's noisy "
                        + "scores) alone costs epsilon " + before + " at delta " + delta + ": a larger target, more score noise "
                        + "or fewer evaluations, or a fresh network");
            }
        }
        if (Double.isNaN(targetEpsilon)) {
            throw new IllegalArgumentException("target_epsilon must be set (finite and > 0) to calibrate noise_multiplier");
        }
        if (!Double.isNaN(dataNormalisation)) {
            double alone = accountant.epsilon(PrivateNormalisation.event(dataNormalisation), delta);
            if (!(alone < targetEpsilon)) {
                throw new IllegalArgumentException("data_normalisation " + dataNormalisation + " alone costs epsilon " + alone
                        + " at delta " + delta + ", not below target_epsilon " + targetEpsilon + ": use a larger noise multiplier "
                        + "there or a larger target");
            }
        }
        try {
            return NoiseCalibration.smallestNoise(x -> earlier == null ? event(q, x, steps)
                    : ComposedEvent.of(earlier, event(q, x, steps)), targetEpsilon, delta, accountant, 1e-4);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("target_epsilon " + targetEpsilon + ": " + e.getMessage(), e);
        }
    }

    /**
     * The engine's configuration of one run with these settings, for the resolved q, σ and T.
     *
     * @param q       the sampling rate
     * @param sigma   the noise multiplier σ (0 only with {@code nonPrivate})
     * @param steps   T
     * @param workers threads computing each batch, in [1, 256]
     * @return the run's configuration (seeded with {@link #seed} unless {@link #secureRandom})
     * @throws IllegalArgumentException as {@link DpSgdConfig}'s checks, e.g. σ = 0 without {@code nonPrivate}
     */
    public DpSgdConfig config(double q, double sigma, long steps, int workers) {
        return new DpSgdConfig(q, sigma, steps, seed != null && !secureRandom ? seed : new java.security.SecureRandom().nextLong(),
                Double.POSITIVE_INFINITY, workers, this);
    }

    /**
     * Per-example clipped sums with augmentation multiplicity k, or null for plain DP-SGD (k = 1).
     *
     * @return {@link ClippedSums#augmented} of the augmentation and k, or null
     * @throws IllegalArgumentException if k &gt; 1 without an augmentation
     */
    public ClippedSums clippedSums() {
        if (augmult == 1) {
            return null;
        }
        if (augmentation == null) {
            throw new IllegalArgumentException("augmult k = " + augmult + " needs an augmentation (the copies' transformation)");
        }
        return ClippedSums.augmented(augmentation, augmult);
    }

    /**
     * The examples a run trains on, as these settings read them: with {@link #readCacheMb} &gt; 0, the examples read by
     * index are kept in memory up to that bound.
     *
     * @param data the training data
     * @return data to train on: the same examples, read bit for bit as from {@code data}
     */
    public ExampleSource trainingData(ExampleSource data) {
        return readCacheMb > 0 ? data.withCache(readCacheMb * 1048576L) : data;
    }

    /**
     * The settings that define a run, by {@link #KEYS}: the plan of a checkpoint and the sidecar's {@code configuration}.
     * Unset values are null; the seed, the augmentation and how the run is computed are not included.
     *
     * @return a new, mutable map in {@link #KEYS}' order
     */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("clip_norm", clipNorm);
        m.put("noise_multiplier", Double.isNaN(noiseMultiplier) ? null : noiseMultiplier);
        m.put("target_epsilon", Double.isNaN(targetEpsilon) ? null : targetEpsilon);
        m.put("batch_size", expectedBatchSize == 0 ? null : expectedBatchSize);
        m.put("sampling_rate", Double.isNaN(samplingRate) ? null : samplingRate);
        m.put("epochs", Double.isNaN(epochs) ? null : epochs);
        m.put("optimizer", optimizer);
        m.put("learning_rate", Double.isNaN(learningRate) ? null : learningRate);
        m.put("delta", delta);
        m.put("accountant", accountant);
        m.put("physical_batch_size", physicalBatchSize);
        m.put("ema_decay", emaDecay);
        m.put("augmult", augmult);
        m.put("non_private", nonPrivate);
        m.put("secure_noise", secureRandom);
        m.put("data_normalisation", Double.isNaN(dataNormalisation) ? null : dataNormalisation);
        return m;
    }

    /**
     * The released sidecar's {@code configuration} of a run with these settings (σ and q as they ran): n, the settings'
     * keys ({@link #toMap}), the data normalisation's clipping norms when it is on, and T as taken. Nothing in it depends on the data but n, which the claim's q already uses;
     * the seed is never in it.
     *
     * @param n          the number of training examples, ≥ 0
     * @param stepsTaken T, the steps the run took, ≥ 0
     * @return a new map, in the order n, the settings, {@code steps}
     */
    public Map<String, Object> configuration(int n, long stepsTaken) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("n", n);
        m.putAll(toMap());
        if (!Double.isNaN(dataNormalisation)) {
            m.put("data_normalisation_clip_mean", PrivateNormalisation.DEFAULT_CLIP_MEAN);
            m.put("data_normalisation_clip_squares", PrivateNormalisation.DEFAULT_CLIP_SQUARES);
        }
        m.put("steps", stepsTaken);
        return m;
    }

    /**
     * Settings read back from {@link #toMap}'s keys (a plan or a sidecar); a key that is absent (a file written before the
     * setting existed) or null keeps its {@link #DEFAULTS} value.
     *
     * @param m the map
     * @return the settings, checked
     * @throws IllegalArgumentException if a value is of the wrong type or out of range, naming its key
     */
    public static DpSgdSettings fromMap(Map<String, ?> m) {
        return fromMap(m, DEFAULTS);
    }

    /**
     * The settings that define a run from {@code m} ({@link #fromMap(Map)}), and those that the map does not hold (the
     * seed, the augmentation, how the run is computed) from {@code rest}: a run resumed from its plan, computed as the
     * caller says.
     *
     * @param m    the map
     * @param rest the settings to take what is not in the plan from
     * @return the settings, checked
     * @throws IllegalArgumentException if a value is of the wrong type or out of range, naming its key
     */
    public static DpSgdSettings fromMap(Map<String, ?> m, DpSgdSettings rest) {
        DpSgdSettings d = DEFAULTS;
        return new DpSgdSettings(number(m, "clip_norm", d.clipNorm), number(m, "noise_multiplier", d.noiseMultiplier),
                number(m, "target_epsilon", d.targetEpsilon), (int) number(m, "batch_size", d.expectedBatchSize),
                number(m, "sampling_rate", d.samplingRate), number(m, "epochs", d.epochs), number(m, "delta", d.delta),
                m.get("accountant") instanceof String a ? a : d.accountant,
                (int) number(m, "physical_batch_size", d.physicalBatchSize), number(m, "ema_decay", d.emaDecay),
                (int) number(m, "augmult", d.augmult), rest.augmentation, Boolean.TRUE.equals(m.get("non_private")),
                Boolean.TRUE.equals(m.get("secure_noise")), rest.seed, rest.readCacheMb, number(m, "data_normalisation", d.dataNormalisation),
                // "the network's own": PrivateTraining's plans before the optimiser was a setting (now null)
                m.get("optimizer") instanceof String o && !o.equals("the network's own") ? o : d.optimizer,
                number(m, "learning_rate", d.learningRate));
    }

    private static double number(Map<String, ?> m, String key, double fallback) {
        Object v = m.get(key);
        if (v == null) {
            return fallback;
        }
        if (!(v instanceof Number n)) {
            throw new IllegalArgumentException(key + " must be a number, got " + v);
        }
        return n.doubleValue();
    }

    /**
     * The keys whose values differ between these settings and {@code other} (by {@link #toMap}).
     *
     * @param other settings to compare with
     * @return the differing keys in {@link #KEYS}' order
     */
    public List<String> differences(DpSgdSettings other) {
        Map<String, Object> a = toMap();
        Map<String, Object> b = other.toMap();
        return KEYS.stream().filter(k -> !java.util.Objects.equals(a.get(k), b.get(k))).toList();
    }

    /**
     * The fluent setters of {@link DpSgdSettings}, shared by every builder of a DP-SGD run ({@link PrivateTraining}, the
     * tuning mechanism's builder, {@link Builder}). Each setter checks its value at once (the message names the setting).
     *
     * @param <B> the builder's own type, returned by each setter
     */
    public abstract static class Setters<B extends Setters<B>> {
        private DpSgdSettings settings;

        /** A builder that starts from {@link DpSgdSettings#DEFAULTS} (and the constructor a serializable subclass is read back with). */
        protected Setters() {
            this(DEFAULTS);
        }

        /**
         * A builder that starts from {@code defaults}.
         *
         * @param defaults the settings a new builder starts from
         */
        protected Setters(DpSgdSettings defaults) {
            this.settings = java.util.Objects.requireNonNull(defaults, "defaults");
        }

        @SuppressWarnings("unchecked")
        private B self() {
            return (B) this;
        }

        /**
         * The settings as set so far.
         *
         * @return the settings
         */
        public DpSgdSettings settings() {
            return settings;
        }

        /**
         * Replaces every setting.
         *
         * @param s the settings
         * @return this builder
         */
        public B settings(DpSgdSettings s) {
            this.settings = java.util.Objects.requireNonNull(s, "settings");
            return self();
        }

        private B set(java.util.function.Consumer<Values> change) {
            Values v = new Values(settings);
            change.accept(v);
            this.settings = v.build(); // checks the new value
            return self();
        }

        /**
         * Sets the clipping norm C.
         *
         * @param c clipping norm C &gt; 0, finite (default 1)
         * @return this builder
         */
        public B clipNorm(double c) {
            return set(v -> v.clipNorm = c);
        }

        /**
         * Sets the noise multiplier σ.
         *
         * @param sigma noise multiplier σ ≥ 0, finite (0 needs {@link #nonPrivate})
         * @return this builder
         */
        public B noiseMultiplier(double sigma) {
            return set(v -> v.noiseMultiplier = sigma);
        }

        /**
         * Sets the target ε.
         *
         * @param epsilon target ε &gt; 0, finite, that σ is calibrated to meet
         * @return this builder
         */
        public B targetEpsilon(double epsilon) {
            return set(v -> v.targetEpsilon = epsilon);
        }

        /**
         * Sets the expected batch size B.
         *
         * @param b expected batch size B ≥ 1 (≤ n when the run starts): q = B/n
         * @return this builder
         */
        public B expectedBatchSize(int b) {
            if (b < 1) {
                throw invalid("batch_size", "must be >= 1", b);
            }
            return set(v -> v.expectedBatchSize = b);
        }

        /**
         * Sets the sampling rate q.
         *
         * @param q sampling rate q ∈ (0, 1], used instead of B/n
         * @return this builder
         */
        public B samplingRate(double q) {
            if (Double.isNaN(q)) {
                throw invalid("sampling_rate", "must be in (0, 1]", q);
            }
            return set(v -> v.samplingRate = q);
        }

        /**
         * Sets the epochs E.
         *
         * @param e epochs E &gt; 0, finite: T = ⌈E/q⌉
         * @return this builder
         */
        public B epochs(double e) {
            if (Double.isNaN(e)) {
                throw invalid("epochs", "must be finite and > 0", e);
            }
            return set(v -> v.epochs = e);
        }

        /**
         * Sets δ.
         *
         * @param d δ ∈ (0, 1) (default 1e-5; choose it well below 1/n)
         * @return this builder
         */
        public B delta(double d) {
            return set(v -> v.delta = d);
        }

        /**
         * Sets the accountant.
         *
         * @param name a registered accountant ({@code Accountants.names()})
         * @return this builder
         */
        public B accountant(String name) {
            java.util.Objects.requireNonNull(name, "accountant");
            return set(v -> v.accountant = name);
        }

        /**
         * Sets the physical batch size.
         *
         * @param b examples pushed through the network at once, ≥ 1 (default 512; no effect on the result)
         * @return this builder
         */
        public B physicalBatchSize(int b) {
            return set(v -> v.physicalBatchSize = b);
        }

        /**
         * @param beta decay β ∈ [0, 1) of the released exponential moving average of the parameters (0: off);
         *             post-processing, no privacy cost
         * @return this builder
         */
        public B emaDecay(double beta) {
            return set(v -> v.emaDecay = beta);
        }

        /**
         * Augmentation multiplicity (De et al. 2022, arXiv:2204.13650, Section 3.2; {@link ClippedSums#augmented}): each
         * sampled example's gradient is the mean over k augmented copies, clipped to C as a whole; no privacy cost.
         *
         * @param augmentation the copies' transformation (may be null when k = 1)
         * @param k            copies per example, in [1, 64]
         * @return this builder
         * @throws IllegalArgumentException if k is outside [1, 64], or k &gt; 1 without an augmentation
         */
        public B augmult(ImageAugmentation augmentation, int k) {
            if (k > 1 && augmentation == null) {
                throw invalid("augmult", "above 1 needs an augmentation", k);
            }
            return set(v -> {
                v.augmult = k;
                v.augmentation = augmentation;
            });
        }

        /**
         * Sets whether σ = 0 is allowed.
         *
         * @param allow allow σ = 0, a run without privacy (ε = ∞)
         * @return this builder
         */
        public B nonPrivate(boolean allow) {
            return set(v -> v.nonPrivate = allow);
        }

        /**
         * Sets whether the randomness comes from SecureRandom.
         *
         * @param secure seed the sampler and the noise from SecureRandom (runs are then not reproducible)
         * @return this builder
         */
        public B secureRandom(boolean secure) {
            return set(v -> v.secureRandom = secure);
        }

        /**
         * Sets the seed.
         *
         * @param seed a fixed seed of one run's sampler and noise (default: drawn from SecureRandom); keep it secret
         * @return this builder
         */
        public B seed(long seed) {
            return set(v -> v.seed = seed);
        }

        /**
         * @param mb MiB in [0, 16777216] of examples read by index kept in memory, so that later steps neither read nor
         *           decode them again (default 0: none); no effect on the result
         * @return this builder
         */
        public B readCacheMb(int mb) {
            return set(v -> v.readCacheMb = mb);
        }

        /**
         * Tramèr &amp; Boneh's private data normalisation before DP-SGD (arXiv:2011.11660, Sec. 3;
         * {@link PrivateNormalisation}): the scattering features' per-channel mean and variance are released with two
         * Gaussian mechanisms of noise multiplier σ_norm, composed into the run's event, and set into the network's
         * {@code Scattering} layer.
         *
         * @param sigmaNorm σ_norm &gt; 0, finite (theirs: 8); NaN turns it off
         * @return this builder
         * @throws IllegalArgumentException naming data_normalisation if σ_norm is not finite and &gt; 0, or the run is non-private
         */
        public B dataNormalisation(double sigmaNorm) {
            return set(v -> v.dataNormalisation = sigmaNorm);
        }

        /**
         * Sets the optimiser of the networks a run or a tuning builds ({@link ModelOptions#updaterNamed}).
         *
         * @param name one of {@value ModelOptions#OPTIMIZERS} (sgd; momentum: Nesterov, 0.9; adam), or null for the caller's own
         * @return this builder
         * @throws IllegalArgumentException naming optimizer and the value, on another name
         */
        public B optimizer(String name) {
            return set(v -> v.optimizer = name);
        }

        /**
         * Sets the optimiser's learning rate.
         *
         * @param eta η &gt; 0, finite; NaN for the optimiser's default (the network's own)
         * @return this builder
         * @throws IllegalArgumentException naming learning_rate and the value, if it is not finite and &gt; 0
         */
        public B learningRate(double eta) {
            return set(v -> v.learningRate = eta);
        }
    }

    /** The components as mutable fields: each setter changes one and builds the record again, which checks it. */
    private static final class Values {
        double clipNorm;
        double noiseMultiplier;
        double targetEpsilon;
        int expectedBatchSize;
        double samplingRate;
        double epochs;
        double delta;
        String accountant;
        int physicalBatchSize;
        double emaDecay;
        int augmult;
        ImageAugmentation augmentation;
        boolean nonPrivate;
        boolean secureRandom;
        Long seed;
        int readCacheMb;
        double dataNormalisation;
        String optimizer;
        double learningRate;

        Values(DpSgdSettings s) {
            clipNorm = s.clipNorm;
            noiseMultiplier = s.noiseMultiplier;
            targetEpsilon = s.targetEpsilon;
            expectedBatchSize = s.expectedBatchSize;
            samplingRate = s.samplingRate;
            epochs = s.epochs;
            delta = s.delta;
            accountant = s.accountant;
            physicalBatchSize = s.physicalBatchSize;
            emaDecay = s.emaDecay;
            augmult = s.augmult;
            augmentation = s.augmentation;
            nonPrivate = s.nonPrivate;
            secureRandom = s.secureRandom;
            seed = s.seed;
            readCacheMb = s.readCacheMb;
            dataNormalisation = s.dataNormalisation;
            optimizer = s.optimizer;
            learningRate = s.learningRate;
        }

        DpSgdSettings build() {
            return new DpSgdSettings(clipNorm, noiseMultiplier, targetEpsilon, expectedBatchSize, samplingRate, epochs, delta,
                    accountant, physicalBatchSize, emaDecay, augmult, augmentation, nonPrivate, secureRandom, seed, readCacheMb,
                    dataNormalisation, optimizer, learningRate);
        }
    }

    /** A builder of {@link DpSgdSettings} alone. */
    public static final class Builder extends Setters<Builder> {
        private Builder() {
            super(DEFAULTS);
        }

        /**
         * The settings as set.
         *
         * @return the settings
         */
        public DpSgdSettings build() {
            return settings();
        }
    }
}
