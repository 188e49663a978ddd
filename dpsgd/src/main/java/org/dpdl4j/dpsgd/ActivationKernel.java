package org.dpdl4j.dpsgd;

import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.ndarray.INDArray;

/** DL4J's {@code ActivationLayer}: a = φ(x), element-wise, any shape; no parameters. */
final class ActivationKernel extends LayerKernel {
    /** {@inheritDoc} (element-wise: a masked step stays masked downstream) */
    @Override
    boolean acceptsMask() {
        return true;
    }

    /** {@inheritDoc} */
    @Override
    boolean passesShape() {
        return true;
    }

    private final ActivationDerivative derivative;
    private INDArray kept;

    ActivationKernel(IActivation activation) {
        this.derivative = new ActivationDerivative(activation);
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        INDArray[] out = derivative.apply(x.dup(), keep); // φ works in place; the input may be read by another vertex
        kept = out[1];
        return out[0];
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        return needInputGradient ? derivative.backprop(kept, gradOutput) : null;
    }

    @Override
    void clear() {
        kept = null;
    }
}
