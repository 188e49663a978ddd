package org.dpdl4j.dpsgd;

import java.util.Objects;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.accounting.PrivacyEvent;

/**
 * A DP-SGD run stopped after {@code stepsDone} of its planned {@code config.steps()} steps: the network
 * (parameters and updater state, as {@code ModelSerializer} saves them with the updater) and the run's
 * settings. {@link DpSgdTrainer#resume} continues it to the planned T.
 *
 * @param network   the network after {@code stepsDone} steps (the trainer hands over its live network: save it
 *                  before returning from {@link Sink#save})
 * @param config    the run's settings, the planned T among them
 * @param stepsDone steps completed, in [0, T]
 */
public record Checkpoint(MultiLayerNetwork network, DpSgdConfig config, long stepsDone) {
    /** @throws IllegalArgumentException if stepsDone is outside [0, T] */
    public Checkpoint {
        Objects.requireNonNull(network, "network");
        Objects.requireNonNull(config, "config");
        if (stepsDone < 0 || stepsDone > config.steps()) {
            throw new IllegalArgumentException("stepsDone must be in [0, " + config.steps() + "], got " + stepsDone);
        }
    }

    /** What the steps done so far cost: {@code stepsDone} self-composed Poisson-sampled Gaussians. */
    public PrivacyEvent eventSoFar() {
        return DpSgdTrainer.event(config.samplingRate(), config.noiseMultiplier(), stepsDone);
    }

    /** Receives checkpoints during a run; a failure to save stops the run (nothing trains unsaved past a failed save). */
    @FunctionalInterface
    public interface Sink {
        /**
         * Saves the checkpoint before returning (the network keeps training afterwards).
         *
         * @throws java.io.UncheckedIOException if it cannot be saved
         */
        void save(Checkpoint checkpoint);
    }
}
