package org.dpdl4j.dpsgd;

import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.datasets.ExampleSource;
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
     * @return the run's session, to be closed by the caller
     */
    Session open(Model network, LabeledData train, DpSgdConfig config, PoissonBatchSampler sampler);

    /**
     * Prepares for one run on examples read by index, each step reading only the rows of its Poisson batch ({@link
     * ExampleSource#read}). This default takes a {@link LabeledData} as {@link #open(Model, LabeledData, DpSgdConfig,
     * PoissonBatchSampler)} does and refuses other sources; this JVM's workers and a Spark cluster's executors (over
     * packed shards on a path every executor reads) read them.
     *
     * @param network the network being trained (its parameters change between steps)
     * @param train   the training examples, n of them
     * @param config  the run's settings (C, the physical batch size, the workers)
     * @param sampler the run's Poisson sampler over [0, n)
     * @return the run's session, to be closed by the caller
     * @throws IllegalArgumentException if these sums cannot read {@code train} by index
     */
    default Session open(Model network, ExampleSource train, DpSgdConfig config, PoissonBatchSampler sampler) {
        if (train instanceof LabeledData inMemory) {
            return open(network, inMemory, config, sampler);
        }
        throw new IllegalArgumentException(this + " computes its sums from data in memory, not from " + train);
    }

    /** One run's sums. */
    interface Session extends AutoCloseable {
        /**
         * Writes Σ_{i ∈ B_t} min(1, C/‖g_i‖)·g_i (with C = ∞: Σ g_i) at the network's current parameters into
         * {@code target}, the flattened gradient of the network (overwritten), where B_t = {@code sampler.batch(t)}.
         *
         * @param t      the step, 1-based (&gt;= 1): the batch is {@code sampler.batch(t)}
         * @param target the network's flattened gradient, one value per parameter; overwritten with the sum
         * @return the realised batch size and summed loss of step t, for listeners only
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
     * @param batchSize the realised batch size |B_t|, in examples, &gt;= 0
     * @param lossSum   the summed loss of the batch's examples (0 for an empty batch)
     */
    record Sum(int batchSize, double lossSum) {
    }

    /**
     * The calling JVM's threads: {@link DpSgdConfig#workers()} workers, each on a contiguous part of the batch.
     *
     * @return the local sums (one shared instance)
     */
    static ClippedSums local() {
        return LocalClippedSums.INSTANCE;
    }

    /**
     * The calling JVM's threads with augmentation multiplicity (De et al., "Unlocking High-Accuracy Differentially
     * Private Image Classification through Scale", arXiv:2204.13650, Sec. 3.2): when the run starts, k augmented copies
     * of every training example are drawn once (from the run's seed) and stored (through the network's fixed prefix, such
     * as the scattering transform, when it has one); at each step an example's gradient is the mean of its k copies'
     * gradients, clipped to C as a whole (see {@link PerExampleGradients#clippedSum(INDArray, INDArray, int[], double, int, INDArray, int)}).
     * One example still adds at most C to a step's sum, so the run's event is unchanged by k. Unlike De et al., who
     * draw fresh copies at every step, the copies are kept for the whole run: a fresh scattering transform of every copy
     * at every step would cost more than the training. Memory: k times the stored inputs (or prefix outputs).
     *
     * @param augmentation the copies' random transformation (it must fit the training images)
     * @param k            copies per example, in [1, 64] (1: {@link #local()}, the augmentation unused)
     * @return the sums with k augmented copies per example ({@link #local()} when k = 1)
     * @throws IllegalArgumentException if k is outside [1, 64] or the augmentation is null with k &gt; 1
     */
    static ClippedSums augmented(org.dpdl4j.datasets.ImageAugmentation augmentation, int k) {
        return k == 1 ? local() : new LocalClippedSums(augmentation, k);
    }
}
