package org.dpdl4j.dpsgd;

/** Receives progress from a DP-SGD run (library code never prints; the CLI draws a progress bar). */
@FunctionalInterface
public interface TrainingListener {
    /** Called after every step, on the training thread. */
    void onStep(StepInfo info);
}
