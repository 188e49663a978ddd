package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * DL4J's CNN↔feed-forward preprocessors: a C-order reshape between [B, c·h·w] and [B, c, h, w] (or [B, c, d, h, w]).
 */
final class ReshapeKernel extends LayerKernel {
    private final long[] outShapeTail;
    private final int inRank;
    private long[] inShape;

    /** @param outShapeTail the output shape without the batch dimension (from [B, d] for a tail of 3, else to [B, d]) */
    ReshapeKernel(long... outShapeTail) {
        this(outShapeTail.length == 3 ? 2 : 4, outShapeTail);
    }

    /**
     * @param inRank       the rank of the input it reads
     * @param outShapeTail the output shape without the batch dimension
     */
    ReshapeKernel(int inRank, long... outShapeTail) {
        this.inRank = inRank;
        this.outShapeTail = outShapeTail;
    }

    /** [B, d] into an image, [B, c, h, w] (or a volume) out of one. */
    @Override
    int inputRank() {
        return inRank;
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
