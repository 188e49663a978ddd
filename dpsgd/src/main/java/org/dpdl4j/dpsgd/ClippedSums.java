package org.dpdl4j.dpsgd;

import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.datasets.LabeledData;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Where the clipped sums of a DP-SGD run are computed: this JVM's worker threads ({@link #local()}) or a cluster (the
 * {@code spark} module). Whatever computes them, step t's sum is over the batch that
 * {@code sampler.batch(t)} names and at the network's parameters as they are when {@link Session#step} is called; the
 * trainer adds the noise, the canaries and the update itself, so that the run's event does not depend on where the sums
 * were computed.
 */
public interface ClippedSums {
    /**
     * Prepares for one run (the trainer calls it once, from its own thread, and closes the session before returning).
     *
     * @param network the network being trained (its parameters change between steps)
     * @param train   the training data, n examples
     * @param config  the run's settings (C, the physical batch size, the workers)
     * @param sampler the run's Poisson sampler over [0, n)
     */
    Session open(Model network, LabeledData train, DpSgdConfig config, PoissonBatchSampler sampler);

    /** One run's sums. */
    interface Session extends AutoCloseable {
        /**
         * Writes Σ_{i ∈ B_t} min(1, C/‖g_i‖)·g_i (with C = ∞: Σ g_i) at the network's current parameters into
         * {@code target}, the flattened gradient of the network (overwritten), where B_t = {@code sampler.batch(t)}.
         *
         * @throws IllegalStateException if the sum cannot be computed (then nothing may be applied for this step)
         */
        Sum step(long t, INDArray target);

        /** Releases the threads or cluster resources of the run. */
        @Override
        void close();
    }

    /**
     * What a step's sum leaves to the trainer's listeners (never released).
     *
     * @param batchSize the realised batch size |B_t|
     * @param lossSum   the summed loss of the batch's examples
     */
    record Sum(int batchSize, double lossSum) {
    }

    /** The calling JVM's threads: {@link DpSgdConfig#workers()} workers, each on a contiguous part of the batch. */
    static ClippedSums local() {
        return LocalClippedSums.INSTANCE;
    }
}
