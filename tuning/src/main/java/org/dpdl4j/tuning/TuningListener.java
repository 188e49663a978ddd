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

    /** K has been drawn: {@code trials} runs will follow. */
    default void onStart(long trials) {
    }

    /** Trial {@code index} starts with this candidate. */
    default void onTrialStart(int index, Candidate candidate) {
    }

    /** A DP-SGD step of trial {@code index} finished. */
    default void onTrialStep(int index, StepInfo step) {
    }

    /** Trial {@code index} finished (or failed: see {@link TrialResult#failed()}). */
    default void onTrialEnd(TrialResult result) {
    }

    /** A final training run (after tuning) starts with this candidate. */
    default void onFinalRunStart(Candidate candidate) {
    }

    /** A DP-SGD step of the final run finished. */
    default void onFinalRunStep(StepInfo step) {
    }
}
