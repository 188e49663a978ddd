package org.dpdl4j.dpsgd;

import java.util.function.DoubleSupplier;

/**
 * Progress of a DP-SGD run after one step. ε so far is asked of the accountant only when a listener reads it (a PLD
 * evaluation takes about half a second; a listener that never reads it costs the run nothing).
 */
public final class StepInfo {
    private final long step;
    private final long totalSteps;
    private final double epoch;
    private final int batchSize;
    private final double meanLoss;
    private final DoubleSupplier epsilonSoFar;
    private final double examplesPerSecond;

    /**
     * @param step              steps done so far, 1-based
     * @param totalSteps        T, the planned number of steps
     * @param epoch             step · q, the number of epochs done (in expectation)
     * @param batchSize         the realised Poisson batch size of this step — private: for monitoring, not for release
     * @param meanLoss          mean per-example training loss of this step's batch (NaN for an empty batch) — computed on
     *                          private data without noise: for monitoring, not for release
     * @param epsilonSoFar      gives ε so far when asked (see {@link #epsilonSoFar()})
     * @param examplesPerSecond expected examples (q·n per step) per second since the run started
     */
    public StepInfo(long step, long totalSteps, double epoch, int batchSize, double meanLoss, DoubleSupplier epsilonSoFar,
                    double examplesPerSecond) {
        this.step = step;
        this.totalSteps = totalSteps;
        this.epoch = epoch;
        this.batchSize = batchSize;
        this.meanLoss = meanLoss;
        this.epsilonSoFar = java.util.Objects.requireNonNull(epsilonSoFar, "epsilonSoFar");
        this.examplesPerSecond = examplesPerSecond;
    }

    /** Steps done so far, 1-based. */
    public long step() {
        return step;
    }

    /** T, the planned number of steps. */
    public long totalSteps() {
        return totalSteps;
    }

    /** step · q, the number of epochs done (in expectation). */
    public double epoch() {
        return epoch;
    }

    /** The realised Poisson batch size of this step — private: for monitoring, not for release. */
    public int batchSize() {
        return batchSize;
    }

    /** Mean per-example training loss of this step's batch (NaN if empty) — private, without noise: not for release. */
    public double meanLoss() {
        return meanLoss;
    }

    /**
     * ε at the configured δ of the steps done so far, or (between the 100 evenly spaced steps where the trainer asks its
     * accountant) of the next such step: never below the ε spent. Computed on the first call for each of those steps.
     */
    public double epsilonSoFar() {
        return epsilonSoFar.getAsDouble();
    }

    /** Expected examples (q·n per step) per second since the run started. */
    public double examplesPerSecond() {
        return examplesPerSecond;
    }
}
