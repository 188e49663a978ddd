package org.dpdl4j.tuning;

import org.dpdl4j.dpsgd.StepInfo;

/**
 * Progress of a tuning run. Trials may run on several threads, so implementations must be
 * thread-safe. Library code never prints; the CLI renders these calls as progress bars.
 */
public interface TuningListener {
    /** A listener that ignores everything. */
    TuningListener NONE = new TuningListener() {
    };

    /**
     * K has been drawn: {@code trials} runs will follow.
     *
     * @param trials the number of trials that will run, &gt;= 0
     */
    default void onStart(long trials) {
    }

    /**
     * Trial {@code index} starts with this candidate.
     *
     * @param index     the trial's index, 0-based
     * @param candidate the trial's hyperparameters
     */
    default void onTrialStart(int index, Candidate candidate) {
    }

    /**
     * A DP-SGD step of trial {@code index} finished (called on the trial's thread).
     *
     * @param index the trial's index, 0-based
     * @param step  what the step did
     */
    default void onTrialStep(int index, StepInfo step) {
    }

    /**
     * A trial finished (or failed: see {@link TrialResult#failed()}).
     *
     * @param result the trial's outcome, with its index
     */
    default void onTrialEnd(TrialResult result) {
    }

    /**
     * A final training run (after tuning) starts with this candidate.
     *
     * @param candidate the final run's hyperparameters
     */
    default void onFinalRunStart(Candidate candidate) {
    }

    /**
     * A DP-SGD step of the final run finished.
     *
     * @param step what the step did
     */
    default void onFinalRunStep(StepInfo step) {
    }
}
