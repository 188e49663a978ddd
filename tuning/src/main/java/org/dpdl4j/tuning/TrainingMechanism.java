package org.dpdl4j.tuning;

import org.dpdl4j.accounting.PrivacyEvent;

/**
 * The base algorithm Q of a tuner: one whole training run (plus the release of its score) for one
 * candidate. Implementations must be safe to call from several threads at once, each call with
 * its own candidate and seed.
 */
public interface TrainingMechanism {
    /**
     * What one run with this candidate costs, known before it runs (it may depend on the
     * candidate's σ, q or T, never on the data).
     *
     * @param candidate the hyperparameters of the run
     * @return the privacy event of one run with this candidate (training plus the released score)
     * @throws IllegalArgumentException if the candidate sets a hyperparameter this mechanism does not know
     */
    PrivacyEvent event(Candidate candidate);

    /**
     * Runs Q once: trains with this candidate and releases the run's score.
     *
     * @param candidate the hyperparameters
     * @param seed      the run's seed (sampling, noise, weights); any value
     * @param listener  progress of the run (never null; {@link TuningListener#NONE} for none)
     * @param trial     the trial's index, passed back to the listener (0-based, &gt;= 0)
     * @return the run's model, score (higher is better) and event
     */
    TrialResult run(Candidate candidate, long seed, TuningListener listener, int trial);
}
