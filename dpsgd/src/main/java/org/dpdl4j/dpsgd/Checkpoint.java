package org.dpdl4j.dpsgd;

import java.util.Objects;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.accounting.PrivacyEvent;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * A DP-SGD run stopped after {@code stepsDone} of its planned {@code config.steps()} steps: the network
 * (parameters and updater state, as {@code ModelSerializer} saves them with the updater) and the run's
 * settings. {@link DpSgdTrainer#resume} continues it to the planned T.
 *
 * @param network   the network after {@code stepsDone} steps (the trainer hands over its live network: save it
 *                  before returning from {@link Sink#save})
 * @param config    the run's settings, the planned T among them
 * @param stepsDone steps completed, in [0, T] (T = {@code config.steps()})
 * @param ema       the moving average of the parameters after {@code stepsDone} steps, as a vector of
 *                  {@code network.numParams()} values (a live buffer: save it before returning from
 *                  {@link Sink#save}); null when {@code config.emaDecay()} is 0. Resuming a run with a moving average
 *                  but without it restarts the average from the checkpoint's parameters
 */
public record Checkpoint(Model network, DpSgdConfig config, long stepsDone, INDArray ema) {
    /**
     * Checks and creates a checkpoint.
     *
     * @param network   the network after {@code stepsDone} steps, not null
     * @param config    the run's settings, not null
     * @param stepsDone steps completed, in [0, T] (T = {@code config.steps()})
     * @param ema       the moving average of the parameters, {@code network.numParams()} values; may be null
     * @throws IllegalArgumentException if stepsDone is outside [0, T] or ema is not one value per parameter
     * @throws NullPointerException     if network or config is null
     */
    public Checkpoint {
        Objects.requireNonNull(network, "network");
        Objects.requireNonNull(config, "config");
        if (stepsDone < 0 || stepsDone > config.steps()) {
            throw new IllegalArgumentException("stepsDone must be in [0, " + config.steps() + "], got " + stepsDone);
        }
        if (ema != null && ema.length() != network.numParams()) {
            throw new IllegalArgumentException("ema must hold one value per parameter (" + network.numParams() + "), got "
                    + ema.length());
        }
    }

    /**
     * A checkpoint without a moving average ({@code ema} null).
     *
     * @param network   the network after {@code stepsDone} steps, not null
     * @param config    the run's settings, not null
     * @param stepsDone steps completed, in [0, T] (T = {@code config.steps()})
     * @throws IllegalArgumentException if stepsDone is outside [0, T]
     * @throws NullPointerException     if network or config is null
     */
    public Checkpoint(Model network, DpSgdConfig config, long stepsDone) {
        this(network, config, stepsDone, null);
    }

    /**
     * What the steps done so far cost: {@code stepsDone} self-composed Poisson-sampled Gaussians.
     *
     * @return the event of {@code stepsDone} steps with the config's q and σ
     */
    public PrivacyEvent eventSoFar() {
        return DpSgdTrainer.event(config.samplingRate(), config.noiseMultiplier(), stepsDone);
    }

    /** Receives checkpoints during a run; a failure to save stops the run (nothing trains unsaved past a failed save). */
    @FunctionalInterface
    public interface Sink {
        /**
         * Saves the checkpoint before returning (the network keeps training afterwards).
         *
         * @param checkpoint the checkpoint to save; its network and ema are live objects of the run
         * @throws java.io.UncheckedIOException if it cannot be saved
         */
        void save(Checkpoint checkpoint);
    }
}
