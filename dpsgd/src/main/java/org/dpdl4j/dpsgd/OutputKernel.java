package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The network's last step: an output layer whose backward pass starts from the labels. Its per-example loss is the
 * example's own term of DL4J's loss (DL4J's batch loss is the sum of these, its gradient the sum of the per-example
 * gradients).
 */
abstract class OutputKernel extends LayerKernel {
    /**
     * Per-example loss [B] of the last forward pass against these labels.
     *
     * @param labelMask DL4J's label mask ([B, 1]: whether each example's label counts; for sequences [B, T]), or null
     */
    abstract INDArray loss(INDArray labels, INDArray labelMask);

    /**
     * Starts the backward pass from the labels: dL/d(input), or null when {@code needInputGradient} is false.
     *
     * @param labelMask as for {@link #loss}
     */
    abstract INDArray backwardFromLabels(INDArray labels, INDArray labelMask, boolean needInputGradient);

    /** A per-example label mask [B, 1] as a column, or an error naming what else was given. */
    static INDArray exampleMask(INDArray labelMask, long examples, INDArray like) {
        if (labelMask.rank() != 2 || labelMask.size(0) != examples || labelMask.size(1) != 1) {
            throw new IllegalArgumentException("the label mask of an output layer with one label per example must be [B, 1], "
                    + "got " + java.util.Arrays.toString(labelMask.shape()));
        }
        return labelMask.castTo(like.dataType());
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        throw new IllegalStateException("the output layer's backward pass starts from the labels");
    }
}
