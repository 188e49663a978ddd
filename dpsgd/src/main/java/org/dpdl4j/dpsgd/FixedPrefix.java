package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * A network's fixed prefix: the leading steps 0..k−1 whose output is a function of each input row alone (nothing trained
 * at or before them, every kernel deterministic), of which later steps read only step k−1's output, and which do more
 * than reshape (k = 0: none; found by {@link NetworkPlan#fixedPrefix}). Its output is computed once per example
 * ({@link #output}); an engine that {@link #read}s it starts its passes after the prefix ({@link #enter}). One per
 * {@link PerExampleGradients} engine.
 */
final class FixedPrefix {
    /** k, the number of steps in the prefix; 0 if the network has none. */
    final int length;
    /** Whether the engine's passes and sums read rows of the prefix's output rather than network inputs. */
    boolean read;
    /** The shape [1, ...] of one example's prefix output (for reading rows of {@link #output}), or null. */
    long[] exampleShape;

    FixedPrefix(int length) {
        this.length = length;
    }

    /** {@link PerExampleGradients#fixedPrefixOutput}, on the engine's steps and scratch memory. */
    INDArray output(PerExampleGradients g, INDArray features, int from, int to, int chunk) {
        if (length == 0) {
            throw new IllegalStateException("the network has no fixed prefix");
        }
        INDArray out = null;
        for (NetworkPlan.Step step : g.steps) {
            step.kernel().training = true; // as in a training pass (the prefix's kernels are deterministic either way)
        }
        for (int at = from; at < to; at += chunk) {
            int end = Math.min(to, at + chunk);
            try (MemoryWorkspace ws = g.scratch.open()) {
                INDArray x = features.get(NDArrayIndex.interval(at, end)).castTo(g.dataType);
                INDArray[] outputs = new INDArray[length];
                for (int s = 0; s < length; s++) {
                    outputs[s] = g.steps.get(s).kernel().forward(PerExampleGradients.inputsOf(g.steps.get(s), x, outputs), false);
                }
                INDArray y = outputs[length - 1];
                if (y.size(0) != end - at) { // never assign rows of another count into the cache (native memory)
                    throw new IllegalStateException("the fixed prefix's output has " + y.size(0) + " rows for " + (end - at)
                            + " examples: it must be one row per example");
                }
                if (out == null) {
                    long d = y.length() / y.size(0);
                    try (var outside = Nd4j.getWorkspaceManager().scopeOutOfWorkspaces()) {
                        out = Nd4j.create(g.dataType, to - from, d);
                    }
                    long[] shape = y.shape().clone();
                    shape[0] = 1;
                    exampleShape = shape;
                }
                out.get(NDArrayIndex.interval(at - from, end - from)).assign(y.reshape('c', y.size(0), out.size(1)));
            } finally {
                g.clear();
            }
        }
        return out;
    }

    /** {@link PerExampleGradients#readFixedPrefixOutput}: whether to read the prefix's output, and its per-example shape. */
    void read(boolean yes, long[] shape) {
        if (yes && (length == 0 || shape == null)) {
            throw new IllegalStateException("readFixedPrefixOutput needs a fixed prefix and its output's per-example shape");
        }
        read = yes;
        exampleShape = shape == null ? null : shape.clone();
    }

    /**
     * Starts a pass after the prefix: rows of its output become step k−1's output.
     *
     * @return k, the first step the pass runs
     */
    int enter(INDArray rows, INDArray[] outputs) {
        long[] shape = exampleShape.clone();
        shape[0] = rows.size(0);
        outputs[length - 1] = rows.reshape('c', shape);
        return length;
    }
}
