package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.INDArrayIndex;
import org.nd4j.linalg.indexing.NDArrayIndex;

/** DL4J's {@code ZeroPaddingLayer} on NCHW activations: zeros added top, bottom, left and right; no parameters. */
final class ZeroPaddingKernel extends LayerKernel {
    /** {@inheritDoc} ([B, c, h, w]) */
    @Override
    int inputRank() {
        return 4;
    }

    private final int top;
    private final int bottom;
    private final int left;
    private final int right;
    private long[] inShape;

    /** @param padding top, bottom, left, right (as {@code ZeroPaddingLayer.getPadding()}) */
    ZeroPaddingKernel(int[] padding) {
        this.top = padding[0];
        this.bottom = padding[1];
        this.left = padding[2];
        this.right = padding[3];
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        inShape = x.shape();
        INDArray out = Nd4j.zeros(x.dataType(), inShape[0], inShape[1], inShape[2] + top + bottom, inShape[3] + left + right);
        out.get(inner()).assign(x);
        return out;
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        return needInputGradient ? gradOutput.get(inner()).dup('c') : null;
    }

    private INDArrayIndex[] inner() {
        return new INDArrayIndex[]{NDArrayIndex.all(), NDArrayIndex.all(),
                NDArrayIndex.interval(top, top + inShape[2]), NDArrayIndex.interval(left, left + inShape[3])};
    }
}
