package org.dpdl4j.dpsgd;

/** Receives progress from a DP-SGD run (library code never prints; the CLI draws a progress bar). */
@FunctionalInterface
public interface TrainingListener {
    /**
     * Called after every step, on the training thread.
     *
     * @param info the run's progress after that step, not null
     */
    void onStep(StepInfo info);

    /**
     * Called once when a run with data normalisation has released its feature statistics (after the ledger's charge),
     * on the training thread. Its clipped count is the operator's, not covered by ε (default: nothing).
     *
     * @param release the released statistics, their σ_norm and clipping norms, and how many examples were clipped
     */
    default void onStatisticsReleased(PrivateNormalisation.Release release) {
    }
}
