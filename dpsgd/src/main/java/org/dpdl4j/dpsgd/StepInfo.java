package org.dpdl4j.dpsgd;

/**
 * Progress of a DP-SGD run after one step.
 *
 * @param step           steps done so far, 1-based
 * @param totalSteps     T, the planned number of steps
 * @param epoch          step · q, the number of epochs done (in expectation)
 * @param batchSize      the realised Poisson batch size of this step — private: for monitoring, not for release
 * @param meanLoss       mean per-example training loss of this step's batch (NaN for an empty batch) —
 *                       computed on private data without noise: for monitoring, not for release
 * @param epsilonSoFar   ε at the configured δ of the steps done so far, or (between the 100 evenly spaced steps where the
 *                       trainer asks its accountant) of the next such step: never below the ε spent
 * @param examplesPerSecond expected examples (q·n per step) per second since the run started
 */
public record StepInfo(long step, long totalSteps, double epoch, int batchSize, double meanLoss,
                       double epsilonSoFar, double examplesPerSecond) {
}
