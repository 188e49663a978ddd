package org.dpdl4j.dpsgd;

/**
 * The engine's configuration of one DP-SGD run: the user's {@link DpSgdSettings} (C, physical batch, δ, β, …; the one
 * record of settings, which the engine reads from here) resolved for the data into q, σ and T, with the run's seed and
 * workers (the learning rate and optimiser live in the DL4J network's updater, as for any DL4J model). Build with
 * {@link #builder()} or {@link DpSgdSettings#config}; values are validated with messages naming the parameter, its
 * value and the allowed range.
 *
 * @param samplingRate    q ∈ (0, 1]: each step includes each example independently with probability q
 * @param noiseMultiplier σ ≥ 0: the noise on the clipped sum is N(0, σ²C² I); σ = 0 needs {@code settings.nonPrivate()}
 * @param steps           T ≥ 1 noisy steps
 * @param seed            seed of the sampler and the noise (ignored when {@code secureRandom}). Anyone who knows it can
 *                        regenerate the noise and remove it: keep it secret; the builder draws a fresh one from
 *                        {@link java.security.SecureRandom} unless one is set
 * @param epsilonBudget   stop before the step that would exceed this ε (at {@code delta}); +∞ = never
 * @param workers         threads that compute the clipped sum of each batch in parallel, each on a part of the batch (1 =
 *                        the calling thread only). The trainer starts them for the run and stops them at its end. With W
 *                        workers on the CPU the trainer gives each worker's native ops min(ND4J's op threads, cores/W)
 *                        threads, so that they do not oversubscribe the cores; ND4J's op threads
 *                        ({@code Nd4j.getEnvironment().setMaxMasterThreads}) are where a caller running several trainings
 *                        at once gives each its share
 * @param settings        the run's settings: C ({@link #clipNorm()}), the physical batch, δ, β of the moving average, and
 *                        {@code nonPrivate} and {@code secureRandom}. C = +∞ (only with σ = 0 and {@code nonPrivate}) is
 *                        the engine's non-private mode: no clipping and no per-example state, each layer's batch gradient
 *                        (the baseline that {@code bench dpsgd} measures DP-SGD against)
 */
public record DpSgdConfig(double samplingRate, double noiseMultiplier, long steps, long seed, double epsilonBudget, int workers,
                          DpSgdSettings settings) {

    /**
     * Checks the run's values; the settings checked their own.
     *
     * @param samplingRate    q ∈ (0, 1]
     * @param noiseMultiplier σ ≥ 0, finite (0 only with {@code settings.nonPrivate()})
     * @param steps           T ≥ 1
     * @param seed            the seed of the sampler and the noise
     * @param epsilonBudget   the ε to stop before, &gt; 0 (+∞: none)
     * @param workers         threads in [1, 256]
     * @param settings        the run's settings, not null (C = +∞ only with σ = 0)
     * @throws IllegalArgumentException on any invalid value, naming it
     */
    public DpSgdConfig {
        java.util.Objects.requireNonNull(settings, "settings");
        if (!(samplingRate > 0 && samplingRate <= 1)) {
            throw new IllegalArgumentException("sampling rate q must be in (0, 1], got " + samplingRate);
        }
        if (!(noiseMultiplier >= 0) || Double.isInfinite(noiseMultiplier)) {
            throw new IllegalArgumentException("noise multiplier sigma must be finite and >= 0, got " + noiseMultiplier);
        }
        if (noiseMultiplier == 0 && !settings.nonPrivate()) {
            throw new IllegalArgumentException("noise multiplier sigma = 0 gives no privacy: allow it explicitly with nonPrivate(true) (command line: --non-private)");
        }
        if (Double.isInfinite(settings.clipNorm()) && noiseMultiplier != 0) {
            throw new IllegalArgumentException("clip norm C must be > 0, and finite unless sigma = 0 (non-private), got C = "
                    + settings.clipNorm() + " with sigma = " + noiseMultiplier);
        }
        if (steps < 1) {
            throw new IllegalArgumentException("steps T must be >= 1, got " + steps);
        }
        if (!(epsilonBudget > 0)) {
            throw new IllegalArgumentException("epsilonBudget must be > 0 (or infinite for none), got " + epsilonBudget);
        }
        if (workers < 1 || workers > 256) {
            throw new IllegalArgumentException("workers must be in [1, 256], got " + workers);
        }
    }

    /**
     * The clipping norm C.
     *
     * @return C &gt; 0: per-example gradients (over all parameters) are clipped to L2 norm C (+∞: no clipping, non-private) */
    public double clipNorm() {
        return settings.clipNorm();
    }

    /**
     * The physical batch size.
     *
     * @return the largest number of examples pushed through the network at once (a larger Poisson batch is processed in
     *         chunks whose clipped sums are added before the noise); DP-SGD's chunks may be smaller, see
     *         {@link ChunkRows#of(org.deeplearning4j.nn.api.Model, long[], org.nd4j.linalg.api.buffer.DataType, int)}
     */
    public int physicalBatchSize() {
        return settings.physicalBatchSize();
    }

    /**
     * Whether the randomness is secure.
     *
     * @return whether the sampler and the noise generator are seeded from {@link java.security.SecureRandom}
     */
    public boolean secureRandom() {
        return settings.secureRandom();
    }

    /**
     * Whether the run may be non-private.
     *
     * @return whether σ = 0 is allowed (the run then reports ε = ∞)
     */
    public boolean nonPrivate() {
        return settings.nonPrivate();
    }

    /**
     * δ of the run.
     *
     * @return δ ∈ (0, 1) for the budget and the ε reported to listeners
     */
    public double delta() {
        return settings.delta();
    }

    /**
     * The moving average's decay β.
     *
     * @return β ∈ [0, 1): with β &gt; 0 the trained network's parameters are, at the end, replaced by their exponential
     *         moving average over the steps, θ̄_t = β_t·θ̄_{t−1} + (1 − β_t)·θ_t with β_t = min(β, (1 + t)/(10 + t)) and θ̄_0
     *         the initial parameters (the warm-up of TensorFlow's {@code ExponentialMovingAverage}; De et al. 2022,
     *         arXiv:2204.13650, Section 3.1, use β = 0.9999). Post-processing of the iterates that DP-SGD's event
     *         already covers: the event does not change. 0 (the default) releases the last iterate
     */
    public double emaDecay() {
        return settings.emaDecay();
    }

    /**
     * The moving-average weight β_t of step t (see {@link #emaDecay()}).
     *
     * @param step t ≥ 1
     * @return β_t = min(β, (1 + t)/(10 + t)), in [0, 1); 0 when the average is off
     */
    public double emaDecayAt(long step) {
        return Math.min(emaDecay(), (1.0 + step) / (10.0 + step));
    }

    /**
     * A builder with defaults C = 1, physical batch 512, a random seed, no budget, δ = 1e-5, 1 worker, no moving average.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Steps for a number of epochs: T = ⌈E/q⌉ (one epoch = 1/q expected batches).
     *
     * @param epochs       E, finite and &gt; 0
     * @param samplingRate q ∈ (0, 1]
     * @return T ≥ 1
     * @throws IllegalArgumentException if E is not finite and &gt; 0, or T would exceed 10^15
     */
    public static long stepsForEpochs(double epochs, double samplingRate) {
        if (!(epochs > 0) || Double.isInfinite(epochs)) {
            throw new IllegalArgumentException("epochs must be finite and > 0, got " + epochs);
        }
        double steps = Math.ceil(epochs / samplingRate - 1e-9);
        if (!(steps <= 1e15)) { // beyond, the cast would saturate and the event would not be the run's
            throw new IllegalArgumentException("epochs " + epochs + " at sampling rate " + samplingRate + " is " + steps
                    + " steps, more than 10^15");
        }
        return (long) steps;
    }

    /**
     * Builder of a {@link DpSgdConfig}: the settings' setters ({@link DpSgdSettings.Setters}: q, σ, C, the physical
     * batch, the seed, δ, β, …, each checked when set) and the engine's own (T, the budget, the workers).
     */
    public static final class Builder extends DpSgdSettings.Setters<Builder> {
        private long steps = -1;
        private double epsilonBudget = Double.POSITIVE_INFINITY;
        private int workers = 1;

        private Builder() {
            super(DpSgdSettings.DEFAULTS);
        }

        /**
         * Sets the number of steps T.
         *
         * @param t T ≥ 1
         * @return this builder
         */
        public Builder steps(long t) {
            this.steps = t;
            return this;
        }

        /**
         * Stops the run before the step that would take ε (at δ) above this budget.
         *
         * @param epsilon the budget, &gt; 0 (+∞: none, the default)
         * @return this builder
         */
        public Builder epsilonBudget(double epsilon) {
            this.epsilonBudget = epsilon;
            return this;
        }

        /**
         * Sets the threads computing each batch's clipped sum in parallel.
         *
         * @param w workers in [1, 256] (default 1)
         * @return this builder
         */
        public Builder workers(int w) {
            this.workers = w;
            return this;
        }

        /**
         * The configuration: q and σ from the settings, the seed from the settings or, if none, drawn from SecureRandom.
         *
         * @return the run's configuration
         * @throws IllegalArgumentException if a value is missing or invalid (the message names it)
         */
        public DpSgdConfig build() {
            DpSgdSettings s = settings();
            return new DpSgdConfig(s.samplingRate(), s.noiseMultiplier(), steps,
                    s.seed() != null ? s.seed() : new java.security.SecureRandom().nextLong(), epsilonBudget, workers, s);
        }
    }
}
