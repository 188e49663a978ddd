package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * One DL4J layer executed on ND4J kernels, keeping what per-example gradients need ("book-keeping":
 * the layer's input from the forward pass and its per-example output delta from the backward pass).
 * Not thread-safe; one instance per network.
 */
abstract class LayerKernel {
    /** Forward pass; when {@code keep}, caches what {@link #backward} needs. */
    abstract INDArray forward(INDArray input, boolean keep);

    /**
     * Backward pass from dL/d(output) of this layer (per example, un-averaged).
     *
     * @return dL/d(input), or null when {@code needInputGradient} is false
     */
    abstract INDArray backward(INDArray gradOutput, boolean needInputGradient);

    /** Adds each example's squared gradient norm over this layer's parameters to {@code sq} [B]. */
    void addSquaredNorms(INDArray sq) {
    }

    /**
     * Adds Σ_i w_i g_i (this layer's per-example gradients weighted by {@code w} [B, 1]) into the
     * named parameter-gradient views.
     */
    void addWeightedSum(INDArray w, Map<String, INDArray> gradientViews) {
    }

    /** Σ_j m_ij² per row of a 2-D matrix, as a vector [rows] (one reduction op). */
    static INDArray rowSquaredNorms(INDArray m) {
        INDArray out = org.nd4j.linalg.factory.Nd4j.createUninitialized(m.dataType(), m.size(0));
        org.nd4j.linalg.factory.Nd4j.exec(org.nd4j.linalg.api.ops.DynamicCustomOp.builder("reduce_sqnorm")
                .addInputs(m).addOutputs(out).addIntegerArguments(1).build());
        return out;
    }

    /** view += value, where value has the view's elements in another (compatible) shape. */
    static void addInto(INDArray view, INDArray value) {
        view.addi(value.reshape(view.ordering(), view.shape()));
    }

    /** Drops cached activations. */
    void clear() {
    }
}
