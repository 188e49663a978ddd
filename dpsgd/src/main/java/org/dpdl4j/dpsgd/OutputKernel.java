package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The network's last step: an output layer whose backward pass starts from the labels. Its per-example loss is the
 * example's own term of DL4J's loss (DL4J's batch loss is the sum of these, its gradient the sum of the per-example
 * gradients).
 */
abstract class OutputKernel extends LayerKernel {
    /** Per-example loss [B] of the last forward pass against these labels. */
    abstract INDArray loss(INDArray labels);

    /** Starts the backward pass from the labels: dL/d(input), or null when {@code needInputGradient} is false. */
    abstract INDArray backwardFromLabels(INDArray labels, boolean needInputGradient);

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        throw new IllegalStateException("the output layer's backward pass starts from the labels");
    }
}
