package org.dpdl4j.cli;

import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Option;

/**
 * How a DP-SGD run is described to the accountant: either the sampling rate q and steps T, or the
 * dataset size n, expected batch size B and epochs E, with q = B/n and T = ceil(E·n/B). One of the two is
 * required, which the usage line shows as {@code (--sampling-rate=q --steps=T | --dataset-size=n --batch-size=B --epochs=E)}.
 * Used as {@code @ArgGroup(exclusive = true, multiplicity = "1")}.
 */
final class ScheduleOptions {
    @ArgGroup(exclusive = false, multiplicity = "1", order = 1)
    Direct direct;

    @ArgGroup(exclusive = false, multiplicity = "1", order = 2)
    ViaEpochs viaEpochs;

    /** q and T given directly. */
    static final class Direct {
        @Option(names = "--sampling-rate", paramLabel = "q", required = true, description = "Poisson sampling rate q in (0, 1].")
        double samplingRate;

        @Option(names = "--steps", paramLabel = "T", required = true, description = "Number of DP-SGD steps T >= 1.")
        long steps;
    }

    /** q = B/n and T = ceil(E·n/B). */
    static final class ViaEpochs {
        @Option(names = "--dataset-size", paramLabel = "n", required = true, description = "Training set size n.")
        int datasetSize;

        @Option(names = "--batch-size", paramLabel = "B", required = true, description = "Expected batch size B (q = B/n).")
        int batchSize;

        @Option(names = "--epochs", paramLabel = "E", required = true, description = "Epochs E (T = ceil(E*n/B)).")
        double epochs;
    }

    /** (q, T) from whichever description was given. */
    double[] resolve() {
        if (direct != null) {
            if (!(direct.samplingRate > 0 && direct.samplingRate <= 1)) {
                throw new IllegalArgumentException("--sampling-rate must be in (0, 1], got " + direct.samplingRate);
            }
            if (direct.steps < 1 || direct.steps > 1e15) { // above 2^53 the double below would round T down
                throw new IllegalArgumentException("--steps must be in [1, 10^15], got " + direct.steps);
            }
            return new double[]{direct.samplingRate, direct.steps};
        }
        int datasetSize = viaEpochs.datasetSize;
        int batchSize = viaEpochs.batchSize;
        double epochs = viaEpochs.epochs;
        if (datasetSize < 1) {
            throw new IllegalArgumentException("--dataset-size must be >= 1, got " + datasetSize);
        }
        if (batchSize < 1 || batchSize > datasetSize) {
            throw new IllegalArgumentException("--batch-size must be in [1, " + datasetSize + "], got " + batchSize);
        }
        if (!(epochs > 0) || Double.isInfinite(epochs)) {
            throw new IllegalArgumentException("--epochs must be finite and > 0, got " + epochs);
        }
        double steps = Math.ceil(epochs * datasetSize / batchSize - 1e-9);
        if (!(steps <= 1e15)) { // a long would saturate and the event would not be the schedule's
            throw new IllegalArgumentException("--epochs " + epochs + " is " + steps + " steps at this batch size; at most 10^15 are accounted");
        }
        return new double[]{(double) batchSize / datasetSize, steps};
    }
}
