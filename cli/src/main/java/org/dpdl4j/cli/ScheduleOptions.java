package org.dpdl4j.cli;

import picocli.CommandLine.Option;

/**
 * How a DP-SGD run is described to the accountant: either the sampling rate q and steps T, or the
 * dataset size n, expected batch size B and epochs E, with q = B/n and T = ceil(E·n/B).
 */
final class ScheduleOptions {
    @Option(names = "--sampling-rate", paramLabel = "q", description = "Poisson sampling rate q in (0, 1].")
    Double samplingRate;

    @Option(names = "--steps", paramLabel = "T", description = "Number of DP-SGD steps T >= 1.")
    Long steps;

    @Option(names = "--dataset-size", paramLabel = "n", description = "Training set size n (with --batch-size and --epochs).")
    Integer datasetSize;

    @Option(names = "--batch-size", paramLabel = "B", description = "Expected batch size B (q = B/n).")
    Integer batchSize;

    @Option(names = "--epochs", paramLabel = "E", description = "Epochs E (T = ceil(E*n/B)).")
    Double epochs;

    /** (q, T) from whichever description was given. */
    double[] resolve() {
        boolean direct = samplingRate != null || steps != null;
        boolean viaEpochs = datasetSize != null || batchSize != null || epochs != null;
        if (direct == viaEpochs) {
            throw new IllegalArgumentException("give either --sampling-rate and --steps, or --dataset-size, --batch-size and --epochs");
        }
        if (direct) {
            if (samplingRate == null || steps == null) {
                throw new IllegalArgumentException("--sampling-rate and --steps must be given together");
            }
            if (!(samplingRate > 0 && samplingRate <= 1)) {
                throw new IllegalArgumentException("--sampling-rate must be in (0, 1], got " + samplingRate);
            }
            if (steps < 1) {
                throw new IllegalArgumentException("--steps must be >= 1, got " + steps);
            }
            return new double[]{samplingRate, steps};
        }
        if (datasetSize == null || batchSize == null || epochs == null) {
            throw new IllegalArgumentException("--dataset-size, --batch-size and --epochs must be given together");
        }
        if (datasetSize < 1) {
            throw new IllegalArgumentException("--dataset-size must be >= 1, got " + datasetSize);
        }
        if (batchSize < 1 || batchSize > datasetSize) {
            throw new IllegalArgumentException("--batch-size must be in [1, " + datasetSize + "], got " + batchSize);
        }
        if (!(epochs > 0) || epochs.isInfinite()) {
            throw new IllegalArgumentException("--epochs must be finite and > 0, got " + epochs);
        }
        double steps = Math.ceil(epochs * datasetSize / batchSize - 1e-9);
        if (!(steps <= 1e15)) { // a long would saturate and the event would not be the schedule's
            throw new IllegalArgumentException("--epochs " + epochs + " is " + steps + " steps at this batch size; at most 10^15 are accounted");
        }
        return new double[]{(double) batchSize / datasetSize, steps};
    }
}
