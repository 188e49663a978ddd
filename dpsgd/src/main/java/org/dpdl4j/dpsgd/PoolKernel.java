package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;

/** Max or average pooling (no parameters). */
final class PoolKernel extends LayerKernel {
    private final Ops.Window window;
    private final boolean max;
    private final int extra;
    private INDArray input;

    PoolKernel(Ops.Window window, boolean max, int extra) {
        this.window = window;
        this.max = max;
        this.extra = extra;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        if (keep) {
            input = x;
        }
        return Ops.pool(x, window, max, extra);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        return needInputGradient ? Ops.poolInputGradient(input, gradOutput, window, max, extra) : null;
    }

    @Override
    void clear() {
        input = null;
    }
}
