package org.dpdl4j.dpsgd;

import static org.dpdl4j.dpsgd.PerExampleGradients.rowsOf;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * A step's sums over its rows on a {@link PerExampleGradients} engine: in physical chunks (at most {@link ChunkRows} rows
 * for DP-SGD), each example's gradient clipped to C, or with augmentation multiplicity the mean of its copies' gradients
 * clipped as a whole, or (C = ∞, the non-private mode) summed unclipped. The engine's public sums
 * ({@link PerExampleGradients#clippedSum}, {@link PerExampleGradients#addClippedSum},
 * {@link PerExampleGradients#addBatchGradient}) are these; one instance per engine (one per thread).
 */
final class StepSums {
    private final PerExampleGradients g;
    /** The rows of the current call's largest chunk (its scratch is sized for up to these at once), 0 outside a call. */
    private int chunkRowsCap;
    /** The rows of a DP-SGD chunk from the estimate, 0 until the first clipped sum computes it (and after the input changes). */
    private int dpRows;
    /** The chunks the last clipped sum was computed in. */
    int lastChunks;

    StepSums(PerExampleGradients engine) {
        this.g = engine;
    }

    /** One physical batch's clipped sum, added into {@code target}: {@link PerExampleGradients#addClippedSum}. */
    double addClippedSum(INDArray features, INDArray labels, INDArray featureMask, INDArray labelMask, int[] rows, double clipNorm,
                         INDArray target) {
        if (g.oneAtATime && rows.length > 1) { // a step mixed the examples of a real batch: each example alone
            double loss = 0;
            for (int r : rows) {
                loss += addClippedSum(features, labels, featureMask, labelMask, new int[]{r}, clipNorm, target);
            }
            return loss;
        }
        int[] again = null; // the rows to compute again, once this pass is cleared
        try (MemoryWorkspace ws = g.scratch.open(rows.length, chunkRowsCap)) {
            try {
                g.compute(rowsOf(features, rows), rowsOf(labels, rows), rowsOf(featureMask, rows), rowsOf(labelMask, rows));
            } catch (MixingCheck.Mixed mixed) {
                if (rows.length == 1) {
                    throw mixed; // one example alone cannot be mixed with others: a step that fails on it fails
                }
                g.computeOneAtATime(mixed);
                again = rows;
            }
            if (again == null) {
                INDArray factors = g.clipFactors(clipNorm);
                double[] sq = g.hasUserKernels() ? g.squaredNorms.toDoubleVector() : null;
                int[] ok = sq == null ? rows
                        : java.util.stream.IntStream.range(0, rows.length).filter(i -> Double.isFinite(sq[i])).map(i -> rows[i]).toArray();
                if (ok.length == rows.length) {
                    g.addWeightedSum(factors, target);
                    return g.losses.sumNumber().doubleValue();
                }
                // a user's kernel keeps what it keeps: its non-finite values are not zeroed, and 0·NaN is NaN; so the chunk
                // again without those examples: each example's gradient is its own, so the others' are unchanged, and the
                // bad ones add nothing (factor 0, as on the engine's own kernels)
                again = ok;
            }
        } finally {
            g.clear();
        }
        return again.length == 0 ? 0 : addClippedSum(features, labels, featureMask, labelMask, again, clipNorm, target);
    }

    /** {@link PerExampleGradients#clippedSum(INDArray, INDArray, INDArray, INDArray, int[], double, int, INDArray)}. */
    double clippedSum(INDArray features, INDArray labels, INDArray featureMask, INDArray labelMask, int[] rows, double clipNorm,
                      int physicalBatchSize, INDArray target) {
        target.assign(0);
        double loss = 0;
        int rowsAtOnce = Double.isInfinite(clipNorm) ? physicalBatchSize : dpChunkRows(features, physicalBatchSize);
        lastChunks = 0;
        chunkRowsCap = rowsAtOnce;
        try {
            for (int at = 0; at < rows.length; at += rowsAtOnce, lastChunks++) {
                int[] chunk = java.util.Arrays.copyOfRange(rows, at, Math.min(rows.length, at + rowsAtOnce));
                loss += Double.isInfinite(clipNorm) ? addBatchGradient(features, labels, featureMask, labelMask, chunk, target)
                        : addClippedSum(features, labels, featureMask, labelMask, chunk, clipNorm, target);
            }
        } finally {
            chunkRowsCap = 0;
        }
        return loss;
    }

    /** {@link PerExampleGradients#clippedSum(INDArray, INDArray, int[], double, int, INDArray, int)}. */
    double clippedSum(INDArray features, INDArray labels, int[] rows, double clipNorm, int physicalBatchSize, INDArray target,
                      int copies) {
        if (copies < 1) {
            throw new IllegalArgumentException("copies k must be >= 1, got " + copies);
        }
        if (copies == 1) {
            return clippedSum(features, labels, null, null, rows, clipNorm, physicalBatchSize, target);
        }
        if (!(clipNorm > 0) || Double.isInfinite(clipNorm)) {
            throw new IllegalArgumentException("augmentation multiplicity needs a finite clip norm C > 0, got " + clipNorm);
        }
        if (features.size(0) != labels.size(0) * copies) {
            throw new IllegalArgumentException("features must hold k = " + copies + " rows per label, got " + features.size(0)
                    + " rows for " + labels.size(0) + " labels");
        }
        target.assign(0);
        boolean grouped = g.steps.stream().filter(NetworkPlan.Step::trainable).allMatch(s -> s.kernel().hasGroupSquaredNorms());
        int examplesAtOnce = grouped ? Math.max(1, dpChunkRows(features, physicalBatchSize) / copies) : 1;
        double loss = 0;
        lastChunks = 0;
        chunkRowsCap = examplesAtOnce * copies;
        try {
            for (int at = 0; at < rows.length; at += examplesAtOnce, lastChunks++) {
                int[] chunk = java.util.Arrays.copyOfRange(rows, at, Math.min(rows.length, at + examplesAtOnce));
                loss += addClippedMeanOfCopies(features, labels, chunk, copies, clipNorm, grouped, target);
            }
        } finally {
            chunkRowsCap = 0;
        }
        return loss;
    }

    /** One chunk of {@link #clippedSum(INDArray, INDArray, int[], double, int, INDArray, int)}; one example if not grouped. */
    private double addClippedMeanOfCopies(INDArray features, INDArray labels, int[] examples, int k, double clipNorm, boolean grouped,
                                          INDArray target) {
        int[] copyRows = new int[examples.length * k];
        int[] labelRows = new int[copyRows.length];
        for (int i = 0; i < examples.length; i++) {
            for (int j = 0; j < k; j++) {
                copyRows[i * k + j] = examples[i] * k + j;
                labelRows[i * k + j] = examples[i];
            }
        }
        try (MemoryWorkspace ws = g.scratch.open(copyRows.length, chunkRowsCap)) {
            g.passes(rowsOf(features, copyRows), rowsOf(labels, labelRows), true);
            INDArray sq = Nd4j.zeros(DataType.DOUBLE, examples.length); // ‖Σ_j g_ij‖² per example
            INDArray summed = null;
            if (grouped) {
                for (NetworkPlan.Step step : g.steps) {
                    if (step.trainable()) {
                        step.kernel().addGroupSquaredNorms(sq, k);
                    }
                }
            } else { // one example: its summed gradient itself
                summed = Nd4j.zeros(target.dataType(), target.shape());
                g.forEachKernelWithViews(summed, (kernel, views) -> kernel.addWeightedSum(Nd4j.ones(g.dataType, k, 1), views));
                sq.putScalar(0, summed.castTo(DataType.DOUBLE).norm2Number().doubleValue());
                sq.muli(sq);
            }
            g.squaredNorms = sq; // the pass is computed (for the checks of addWeightedSum)
            double[] factors = g.clipFactors(sq.toDoubleVector(), clipNorm, 1.0 / k); // ‖ḡ_i‖ = ‖Σ_j g_ij‖ / k
            if (grouped) {
                double[] w = new double[copyRows.length];
                for (int r = 0; r < w.length; r++) {
                    w[r] = factors[r / k] / k;
                }
                g.addWeightedSum(Nd4j.createFromArray(w), target);
            } else if (factors[0] > 0) {
                target.addi(summed.muli(factors[0] / k));
            }
            return g.losses.sumNumber().doubleValue() / k;
        } finally {
            g.clear();
        }
    }

    /** The rows of this instance's DP-SGD chunks for these features (network inputs, or the fixed prefix's output). */
    int dpChunkRows(INDArray features, int physicalBatchSize) {
        if (dpRows == 0) { // a fixed prefix's output is not the network's input, which the estimate needs: no cap then
            dpRows = g.prefix.read ? Integer.MAX_VALUE : ChunkRows.of(g.network(), java.util.Arrays.copyOfRange(features.shape(), 1,
                    features.rank()), g.dataType, Integer.MAX_VALUE);
        }
        return Math.min(physicalBatchSize, dpRows);
    }

    /** Forgets the rows of a DP-SGD chunk: they depend on what the sums read (network inputs or the fixed prefix's output). */
    void forgetChunkRows() {
        dpRows = 0;
    }

    /** One physical batch's unclipped sum, added into {@code target}: {@link PerExampleGradients#addBatchGradient}. */
    double addBatchGradient(INDArray features, INDArray labels, INDArray featureMask, INDArray labelMask, int[] rows,
                            INDArray target) {
        try (MemoryWorkspace ws = g.scratch.open(rows.length, chunkRowsCap)) {
            g.passes(rowsOf(features, rows), rowsOf(labels, rows), featureMask == null ? null : rowsOf(featureMask, rows),
                    labelMask == null ? null : rowsOf(labelMask, rows), false, false);
            g.forEachKernelWithViews(target, LayerKernel::addSum);
            return g.losses.sumNumber().doubleValue();
        } finally {
            g.clear();
        }
    }
}
