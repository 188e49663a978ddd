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
}
