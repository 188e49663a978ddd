package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;

/** DL4J's CNN↔feed-forward preprocessors: a C-order reshape between [B, c·h·w] and [B, c, h, w]. */
final class ReshapeKernel extends LayerKernel {
    private final long[] outShapeTail;
    private long[] inShape;

    /** @param outShapeTail the output shape without the batch dimension */
    ReshapeKernel(long... outShapeTail) {
        this.outShapeTail = outShapeTail;
    }

    /** [B, d] into an image, [B, c, h, w] out of one. */
    @Override
    int inputRank() {
        return outShapeTail.length == 3 ? 2 : 4;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        inShape = x.shape();
        long[] shape = new long[outShapeTail.length + 1];
        shape[0] = x.size(0);
        System.arraycopy(outShapeTail, 0, shape, 1, outShapeTail.length);
        return (x.ordering() == 'c' ? x : x.dup('c')).reshape('c', shape);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        return needInputGradient ? gradOutput.dup('c').reshape('c', inShape) : null;
    }
}
