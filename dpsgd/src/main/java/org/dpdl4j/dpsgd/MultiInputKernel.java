package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;

/** A graph vertex with any number of inputs and no parameters: the one-input methods are the case of one input. */
abstract class MultiInputKernel extends LayerKernel {
    /** {@inheritDoc} */
    @Override
    boolean passesShape() {
        return true;
    }

    /** {@inheritDoc} (the first input's mask is passed on) */
    @Override
    boolean acceptsMask() {
        return true;
    }

    @Override
    final INDArray forward(INDArray x, boolean keep) {
        return forward(new INDArray[]{x}, keep);
    }

    @Override
    abstract INDArray forward(INDArray[] x, boolean keep);

    @Override
    final INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        INDArray[] g = backwardInputs(gradOutput, needInputGradient);
        return g == null ? null : g[0];
    }

    @Override
    abstract INDArray[] backwardInputs(INDArray gradOutput, boolean needInputGradient);
}
