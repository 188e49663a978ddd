package org.dpdl4j.tuning;

import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.dpsgd.TrainingListener;
import org.dpdl4j.dpsgd.TrainingResult;

/**
 * A base mechanism Q that owns its private data and can be re-aimed at other data, other score noise, or no
 * privacy at all: what the tuners that handle data themselves need beyond {@link TrainingMechanism}
 * ({@link SubsampledTuner} trains on a subset and then on the rest; {@link ProposeTestTuner} trains
 * non-privately on parts and privately on the whole). {@link DpSgdMechanism} is the implementation.
 *
 * <p>Every method must keep the cost data-independent: the events may depend on a candidate's σ, q or T and on
 * public sizes, never on the data.
 */
public interface RetrainableMechanism extends TrainingMechanism {
    /**
     * All the private data X this mechanism owns (its training and validation splits are carved from it): in memory, or
     * read by index, when the splits are index sets of it ({@link ExampleSource#subset}).
     */
    ExampleSource privateData();

    /** The training split. */
    ExampleSource train();

    /** The validation split the score is computed on. */
    ExampleSource validation();

    /** The fraction f of X held out for validation, in [0, 1). */
    double validationFraction();

    /** The standard deviation s of the released correct-count (0 when the score is free). */
    double scoreNoiseCount();

    /**
     * The same mechanism with score noise s.
     *
     * @throws IllegalArgumentException if s is negative or not finite
     */
    RetrainableMechanism withScoreNoiseCount(double s);

    /**
     * The same mechanism on other private data (split as this one), with score noise s.
     *
     * @throws IllegalArgumentException if the data is too small to split, or s is invalid
     */
    RetrainableMechanism withData(ExampleSource privateData, double scoreNoiseCount);

    /** The same mechanism without privacy (σ = 0, no clipping to speak of): for data-independent-cost estimates only. */
    RetrainableMechanism nonPrivateCopy();

    /** True if the DP-SGD sampling rate q is fixed (it does not follow the data's size). */
    boolean hasFixedSamplingRate();

    /** The candidate with every setting this mechanism would default made explicit. */
    Candidate explicit(Candidate c);

    /** The cost of training alone with this candidate (no score released). */
    PrivacyEvent trainingEvent(Candidate c);

    /** Expected per-example gradient evaluations of one run on the training split: q·|train|·T. */
    double expectedGradients(Candidate c);

    /**
     * Trains on the given data.
     *
     * @param init a network to start from (warm start), or null for fresh weights
     * @return the trained network, with the event it actually cost
     */
    TrainingResult train(Candidate c, ExampleSource data, long seed, Model init, TrainingListener listener);

    /** {@link #train} on the training split, from fresh weights. */
    TrainingResult trainOnTrainingSplit(Candidate c, long seed, TrainingListener listener);
}
