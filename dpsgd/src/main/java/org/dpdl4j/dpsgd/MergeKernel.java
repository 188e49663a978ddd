package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.INDArrayIndex;
import org.nd4j.linalg.indexing.NDArrayIndex;

/** DL4J's {@code MergeVertex}: the inputs concatenated along one axis (1: features or channels); no parameters. */
final class MergeKernel extends MultiInputKernel {
    private final int axis;
    private long[] sizes;

    MergeKernel(int axis) {
        this.axis = axis;
    }

    @Override
    INDArray forward(INDArray[] x, boolean keep) {
        sizes = new long[x.length];
        for (int j = 0; j < x.length; j++) {
            sizes[j] = x[j].size(axis);
        }
        return x.length == 1 ? x[0] : Nd4j.concat(axis, x);
    }

    @Override
    INDArray[] backwardInputs(INDArray grad, boolean needInputGradient) {
        if (!needInputGradient) {
            return null;
        }
        INDArray[] out = new INDArray[sizes.length];
        long from = 0;
        for (int j = 0; j < sizes.length; j++) {
            INDArrayIndex[] index = NDArrayIndex.allFor(grad);
            index[axis] = NDArrayIndex.interval(from, from + sizes[j]);
            out[j] = grad.get(index).dup('c');
            from += sizes[j];
        }
        return out;
    }
}
