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
     *
     * @return the private data X, training and validation splits together
     */
    ExampleSource privateData();

    /**
     * The training split.
     *
     * @return the examples a run trains on
     */
    ExampleSource train();

    /**
     * The validation split the score is computed on.
     *
     * @return the examples a run is scored on
     */
    ExampleSource validation();

    /**
     * The fraction f of X held out for validation.
     *
     * @return f, in [0, 1)
     */
    double validationFraction();

    /**
     * The standard deviation s of the noise on the released correct-count.
     *
     * @return s, in correct validation examples, &gt;= 0 (0 when the score is free)
     */
    double scoreNoiseCount();

    /**
     * The same mechanism with score noise s.
     *
     * @param s the standard deviation of the noise on the released correct-count, in correct validation examples;
     *          finite ({@link DpSgdMechanism} requires s &gt; 0 under private scoring and ignores it for a public holdout)
     * @return a copy with the same splits and score noise s
     * @throws IllegalArgumentException if s is negative or not finite
     */
    RetrainableMechanism withScoreNoiseCount(double s);

    /**
     * The same mechanism on other private data (split as this one), with score noise s.
     *
     * @param privateData     the new private data X (for example a subset to tune on)
     * @param scoreNoiseCount s, the standard deviation of the noise on the released correct-count, in correct
     *                        validation examples (fixed, so that the event does not depend on the new data's size)
     * @return a mechanism with the same settings over {@code privateData}
     * @throws IllegalArgumentException if the data is too small to split, or s is invalid
     */
    RetrainableMechanism withData(ExampleSource privateData, double scoreNoiseCount);

    /**
     * The same mechanism without privacy (σ = 0, no clipping to speak of): for data-independent-cost estimates only.
     *
     * @return a non-private copy (σ = 0): nothing it trains may be released as it is
     */
    RetrainableMechanism nonPrivateCopy();

    /**
     * Whether the DP-SGD sampling rate q is fixed (it does not follow the data's size).
     *
     * @return true if runs cost the same on data of any size
     */
    boolean hasFixedSamplingRate();

    /**
     * The candidate with every setting this mechanism would default made explicit.
     *
     * @param c a candidate
     * @return {@code c} with the defaulted settings added ({@link DpSgdMechanism}: optimiser and learning rate)
     */
    Candidate explicit(Candidate c);

    /**
     * The cost of training alone with this candidate (no score released).
     *
     * @param c a candidate
     * @return the privacy event of one training run on the training split (DP-SGD with the candidate's q, σ and T)
     */
    PrivacyEvent trainingEvent(Candidate c);

    /**
     * Expected per-example gradient evaluations of one run on the training split: q·|train|·T.
     *
     * @param c a candidate
     * @return the expected number of per-example gradient evaluations, &gt;= 0 (the realised batch sizes are private)
     */
    double expectedGradients(Candidate c);

    /**
     * Trains on the given data, with no validation and no score.
     *
     * @param c        the candidate to train with
     * @param data     the examples to train on (for example a final run's data)
     * @param seed     the run's seed (sampling, noise, weights)
     * @param init     a network to start from (warm start), or null for fresh weights
     * @param listener progress of the run, called after every step
     * @return the trained network, with the event it actually cost
     */
    TrainingResult train(Candidate c, ExampleSource data, long seed, Model init, TrainingListener listener);

    /**
     * {@link #train} on the training split, from fresh weights: a final model after a selection, trained with exactly
     * {@link #trainingEvent}'s q, σ and T.
     *
     * @param c        the candidate to train with
     * @param seed     the run's seed (sampling, noise, weights)
     * @param listener progress of the run, called after every step
     * @return the trained network, with the event it actually cost
     */
    TrainingResult trainOnTrainingSplit(Candidate c, long seed, TrainingListener listener);
}
