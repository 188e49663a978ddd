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
     * Progress after one step, as the trainer reports it.
     *
     * @param step              steps done so far, 1-based
     * @param totalSteps        T, the planned number of steps
     * @param epoch             step · q, the number of epochs done (in expectation)
     * @param batchSize         the realised Poisson batch size of this step — private: for monitoring, not for release
     * @param meanLoss          mean per-example training loss of this step's batch (NaN for an empty batch) — computed on
     *                          private data without noise: for monitoring, not for release
     * @param epsilonSoFar      gives ε so far when asked (see {@link #epsilonSoFar()}); not null
     * @throws NullPointerException if {@code epsilonSoFar} is null
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

    /**
     * Steps done so far, 1-based.
     *
     * @return the step just done, &gt;= 1
     */
    public long step() {
        return step;
    }

    /**
     * T, the planned number of steps.
     *
     * @return T, in steps, &gt;= 1
     */
    public long totalSteps() {
        return totalSteps;
    }

    /**
     * step · q, the number of epochs done (in expectation).
     *
     * @return epochs, &gt;= 0
     */
    public double epoch() {
        return epoch;
    }

    /**
     * The realised Poisson batch size of this step — private: for monitoring, not for release.
     *
     * @return the number of examples in this step's batch, &gt;= 0
     */
    public int batchSize() {
        return batchSize;
    }

    /**
     * Mean per-example training loss of this step's batch (NaN if empty) — private, without noise: not for release.
     *
     * @return the mean loss, or NaN for an empty batch
     */
    public double meanLoss() {
        return meanLoss;
    }

    /**
     * ε at the configured δ of the steps done so far, or (between the 100 evenly spaced steps where the trainer asks its
     * accountant) of the next such step: never below the ε spent. Computed on the first call for each of those steps.
     *
     * @return ε so far, &gt;= 0 (infinite for a non-private run)
     */
    public double epsilonSoFar() {
        return epsilonSoFar.getAsDouble();
    }

    /**
     * Expected examples (q·n per step) per second since the run started.
     *
     * @return examples per second, &gt;= 0
     */
    public double examplesPerSecond() {
        return examplesPerSecond;
    }
}
