package org.dpdl4j.dpsgd;

/**
 * The privacy-relevant settings of one DP-SGD run (the learning rate and optimiser live in the
 * DL4J network's updater, as for any DL4J model). Build with {@link #builder()}; values are
 * validated in {@link Builder#build()} with messages naming the parameter, its value and the
 * allowed range.
 *
 * @param samplingRate      q ∈ (0, 1]: each step includes each example independently with probability q
 * @param noiseMultiplier   σ ≥ 0: the noise on the clipped sum is N(0, σ²C² I); σ = 0 needs {@code nonPrivate}
 * @param clipNorm          C &gt; 0: per-example gradients (over all parameters) are clipped to L2 norm C.
 *                          C = +∞ (only with σ = 0 and {@code nonPrivate}) is the engine's non-private mode: no
 *                          clipping and no per-example state, each layer's batch gradient (the baseline that
 *                          {@code bench dpsgd} measures DP-SGD against)
 * @param steps             T ≥ 1 noisy steps
 * @param physicalBatchSize the largest number of examples pushed through the network at once (a larger
 *                          Poisson batch is processed in chunks whose clipped sums are added before the noise);
 *                          DP-SGD's chunks may be smaller, see {@link PerExampleGradients#dpChunkRows}
 * @param seed              seed of the sampler and the noise (ignored when {@code secureRandom}). Anyone who
 *                          knows it can regenerate the noise and remove it: keep it secret; the builder draws
 *                          a fresh one from {@link java.security.SecureRandom} unless one is set
 * @param secureRandom      seed the sampler and the noise generator from {@link java.security.SecureRandom}
 * @param nonPrivate        allow σ = 0 (the run then reports ε = ∞)
 * @param epsilonBudget     stop before the step that would exceed this ε (at {@code delta}); +∞ = never
 * @param delta             δ ∈ (0, 1) for the budget and the ε reported to listeners
 * @param workers           threads that compute the clipped sum of each batch in parallel, each on a part
 *                          of the batch (1 = the calling thread only). The trainer starts them for the run and
 *                          stops them at its end. With W workers on the CPU the trainer gives each worker's
 *                          native ops min(ND4J's op threads, cores/W) threads, so that they do not oversubscribe
 *                          the cores; ND4J's op threads ({@code Nd4j.getEnvironment().setMaxMasterThreads}) are where
 *                          a caller running several trainings at once gives each its share
 * @param emaDecay          β ∈ [0, 1): with β &gt; 0 the trained network's parameters are, at the end, replaced by
 *                          their exponential moving average over the steps, θ̄_t = β_t·θ̄_{t−1} + (1 − β_t)·θ_t with
 *                          β_t = min(β, (1 + t)/(10 + t)) and θ̄_0 the initial parameters (the warm-up of
 *                          TensorFlow's {@code ExponentialMovingAverage}; De et al. 2022, arXiv:2204.13650,
 *                          Section 3.1, use β = 0.9999). Post-processing of the iterates that DP-SGD's event
 *                          already covers: the event does not change. 0 (the default) releases the last iterate
 */
public record DpSgdConfig(double samplingRate, double noiseMultiplier, double clipNorm, long steps,
                          int physicalBatchSize, long seed, boolean secureRandom, boolean nonPrivate,
                          double epsilonBudget, double delta, int workers, double emaDecay) {

    /** @throws IllegalArgumentException on any invalid value */
    public DpSgdConfig {
        if (!(samplingRate > 0 && samplingRate <= 1)) {
            throw new IllegalArgumentException("sampling rate q must be in (0, 1], got " + samplingRate);
        }
        if (!(noiseMultiplier >= 0) || Double.isInfinite(noiseMultiplier)) {
            throw new IllegalArgumentException("noise multiplier sigma must be finite and >= 0, got " + noiseMultiplier);
        }
        if (noiseMultiplier == 0 && !nonPrivate) {
            throw new IllegalArgumentException("noise multiplier sigma = 0 gives no privacy: allow it explicitly with nonPrivate(true) (command line: --non-private)");
        }
        if (!(clipNorm > 0) || Double.isInfinite(clipNorm) && noiseMultiplier != 0) {
            throw new IllegalArgumentException("clip norm C must be > 0, and finite unless sigma = 0 (non-private), got C = "
                    + clipNorm + " with sigma = " + noiseMultiplier);
        }
        if (steps < 1) {
            throw new IllegalArgumentException("steps T must be >= 1, got " + steps);
        }
        if (physicalBatchSize < 1) {
            throw new IllegalArgumentException("physicalBatchSize must be >= 1, got " + physicalBatchSize);
        }
        if (!(epsilonBudget > 0)) {
            throw new IllegalArgumentException("epsilonBudget must be > 0 (or infinite for none), got " + epsilonBudget);
        }
        if (!(delta > 0 && delta < 1)) {
            throw new IllegalArgumentException("delta must be in (0, 1), got " + delta);
        }
        if (workers < 1 || workers > 256) {
            throw new IllegalArgumentException("workers must be in [1, 256], got " + workers);
        }
        if (!(emaDecay >= 0 && emaDecay < 1)) {
            throw new IllegalArgumentException("emaDecay beta must be in [0, 1) (0 = no moving average), got " + emaDecay);
        }
    }

    /** The moving-average weight β_t of step t ≥ 1 (see {@code emaDecay}); 0 when the average is off. */
    public double emaDecayAt(long step) {
        return Math.min(emaDecay, (1.0 + step) / (10.0 + step));
    }

    /**
     * The run's settings as a privacy sidecar records them for people ({@code configuration}): n, q, σ, C, the steps
     * taken and β. Not used by any check; the claim is the run's event.
     *
     * @param n          the training-set size
     * @param stepsTaken T actually run
     */
    public java.util.Map<String, Object> describe(int n, long stepsTaken) {
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("n", n);
        m.put("sampling_rate", samplingRate);
        m.put("noise_multiplier", noiseMultiplier);
        m.put("clip_norm", clipNorm);
        m.put("ema_decay", emaDecay);
        m.put("steps", stepsTaken);
        return m;
    }

    /** A builder with defaults C = 1, physical batch 512, a random seed, no budget, δ = 1e-5, 1 worker, no moving average. */
    public static Builder builder() {
        return new Builder();
    }

    /** Steps for a number of epochs: T = ceil(epochs / q) (one epoch = 1/q expected batches). */
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

    /** Mutable builder for {@link DpSgdConfig}. */
    public static final class Builder {
        private double samplingRate = Double.NaN;
        private double noiseMultiplier = Double.NaN;
        private double clipNorm = 1.0;
        private long steps = -1;
        private int physicalBatchSize = 512;
        private long seed = new java.security.SecureRandom().nextLong();
        private boolean secureRandom;
        private boolean nonPrivate;
        private double epsilonBudget = Double.POSITIVE_INFINITY;
        private double delta = 1e-5;
        private int workers = 1;
        private double emaDecay;

        public Builder samplingRate(double q) {
            this.samplingRate = q;
            return this;
        }

        public Builder noiseMultiplier(double sigma) {
            this.noiseMultiplier = sigma;
            return this;
        }

        public Builder clipNorm(double c) {
            this.clipNorm = c;
            return this;
        }

        public Builder steps(long t) {
            this.steps = t;
            return this;
        }

        public Builder physicalBatchSize(int b) {
            this.physicalBatchSize = b;
            return this;
        }

        /** A fixed seed for reproducible runs; keep it secret, since it determines the noise. */
        public Builder seed(long s) {
            this.seed = s;
            return this;
        }

        public Builder secureRandom(boolean secure) {
            this.secureRandom = secure;
            return this;
        }

        public Builder nonPrivate(boolean allow) {
            this.nonPrivate = allow;
            return this;
        }

        /** Stop before the step that would take ε (at {@link #delta}) above this budget. */
        public Builder epsilonBudget(double epsilon) {
            this.epsilonBudget = epsilon;
            return this;
        }

        public Builder delta(double d) {
            this.delta = d;
            return this;
        }

        /** Threads computing each batch's clipped sum in parallel (default 1). */
        public Builder workers(int w) {
            this.workers = w;
            return this;
        }

        /** Release the exponential moving average of the parameters with decay β ∈ [0, 1) (default 0: off). */
        public Builder emaDecay(double beta) {
            this.emaDecay = beta;
            return this;
        }

        /** @throws IllegalArgumentException if a value is missing or invalid */
        public DpSgdConfig build() {
            return new DpSgdConfig(samplingRate, noiseMultiplier, clipNorm, steps, physicalBatchSize, seed, secureRandom,
                    nonPrivate, epsilonBudget, delta, workers, emaDecay);
        }
    }
}
