package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Max or average pooling (no parameters). On the CPU in float32, max pooling's training pass keeps
 * oneDNN's arg-max workspace so that the backward pass does not recompute the forward pass.
 */
final class PoolKernel extends LayerKernel {
    private final Ops.Window window;
    private final boolean max;
    private final int extra;
    private INDArray input;
    private INDArray argmax; // oneDNN's max-pooling workspace of the kept forward pass, or null

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
        if (max && Dnnl.enabled(x) && Dnnl.poolingSupported(window, x.size(2), x.size(3))) {
            INDArray[] outAndArgmax = Dnnl.maxPoolForward(x, window);
            argmax = outAndArgmax[1];
            return outAndArgmax[0];
        }
        argmax = null;
        return Ops.pool(x, window, max, extra);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        if (!needInputGradient) {
            return null;
        }
        return argmax != null ? Dnnl.maxPoolBackward(gradOutput, argmax, input.shape(), window)
                : Ops.poolInputGradient(input, gradOutput, window, max, extra);
    }

    @Override
    void clear() {
        input = null;
        argmax = null;
    }
}
