package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Max or average pooling (no parameters). On the CPU in float32, max pooling's training pass keeps
 * each window's arg-max ({@link HostKernels#maxPoolForward}) so that the backward pass does not recompute the forward
 * pass.
 */
final class PoolKernel extends LayerKernel {
    /** {@inheritDoc} ([B, c, h, w]) */
    @Override
    int inputRank() {
        return 4;
    }

    private final Ops.Window window;
    private final boolean max;
    private final int extra;
    private INDArray input;
    private HostKernels.MaxPool pooled; // the kept forward pass's output and arg-maxes (float32 on the CPU), or null
    private final HostKernels host = new HostKernels();

    PoolKernel(Ops.Window window, boolean max, int extra) {
        this.window = window;
        this.max = max;
        this.extra = extra;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        if (!keep) {
            return Ops.pool(x, window, max, extra);
        }
        input = x;
        if (max && HostKernels.enabled(x.dataType()) && x.dataType() == DataType.FLOAT
                && HostKernels.maxPoolSupported(window, x.size(2), x.size(3))) {
            pooled = host.maxPoolForward(x, window);
            return pooled.output();
        }
        pooled = null;
        return Ops.pool(x, window, max, extra);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        if (!needInputGradient) {
            return null;
        }
        return pooled != null ? host.maxPoolBackward(gradOutput, pooled, input.shape())
                : Ops.poolInputGradient(input, gradOutput, window, max, extra);
    }

    @Override
    void clear() {
        input = null;
        pooled = null;
    }
}
