package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.DynamicCustomOp;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.BooleanIndexing;
import org.nd4j.linalg.indexing.conditions.Conditions;

/**
 * One DL4J layer executed on ND4J kernels, keeping what per-example gradients need ("book-keeping":
 * the layer's input from the forward pass and its per-example output delta from the backward pass).
 * Not thread-safe; one instance per network.
 */
abstract class LayerKernel {
    /**
     * Whether the next backward pass keeps per-example state (DP-SGD) or only the gradient summed
     * over the batch (the non-private mode, read by {@link #addSum}).
     */
    boolean perExample = true;

    /**
     * Whether the layer's parameters are trained (false for frozen layers: the engine then reads no per-example state of
     * it, and a kernel may skip computing it).
     */
    boolean trainable = true;

    /** Whether the current pass is a training pass (dropout applies) rather than inference. */
    boolean training;

    /**
     * Whether the forward pass is a function of its input alone (no random draws, no state carried between calls), so
     * that its output may be computed once per example and reused (see {@link PerExampleGradients#fixedPrefixOutput}).
     */
    boolean deterministic() {
        return true;
    }

    /** Whether {@link #backward} can return the gradient with respect to the input (false: the layer must come first). */
    boolean hasInputGradient() {
        return true;
    }

    /** Forward pass; when {@code keep}, caches what {@link #backward} needs. */
    abstract INDArray forward(INDArray input, boolean keep);

    /** Forward pass of a vertex with several inputs (graph vertices override it; a layer reads its one input). */
    INDArray forward(INDArray[] inputs, boolean keep) {
        return forward(inputs[0], keep);
    }

    /**
     * Backward pass of a vertex with several inputs: dL/d(input j) for each input, or null when
     * {@code needInputGradient} is false.
     */
    INDArray[] backwardInputs(INDArray gradOutput, boolean needInputGradient) {
        INDArray g = backward(gradOutput, needInputGradient);
        return g == null ? null : new INDArray[]{g};
    }

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

    /**
     * Σ_j m_ij² per row of a 2-D matrix, as a float64 vector [rows]: float32 inputs are widened
     * first so that the norms used for clipping carry no float32 summation error.
     */
    static INDArray rowSquaredNorms(INDArray m) {
        if (m.dataType() == DataType.FLOAT && HostKernels.enabled(DataType.FLOAT)) {
            return HostKernels.rowSquaredNorms(m);
        }
        INDArray wide = m.castTo(DataType.DOUBLE);
        INDArray out = Nd4j.createUninitialized(DataType.DOUBLE, m.size(0));
        Nd4j.exec(DynamicCustomOp.builder("reduce_sqnorm").addInputs(wide).addOutputs(out).addIntegerArguments(1).build());
        return out;
    }

    /** Adds this layer's gradient summed over the batch (after a backward pass with {@code perExample} false). */
    void addSum(Map<String, INDArray> gradientViews) {
    }

    /** Replaces NaN and infinite values in an array by 0, in place. */
    static void zeroNonFinite(INDArray a) {
        if (a != null) {
            BooleanIndexing.replaceWhere(a, 0.0, Conditions.isNan());
            BooleanIndexing.replaceWhere(a, 0.0, Conditions.isInfinite());
        }
    }

    /** view += value, where value has the view's elements in another (compatible) shape. */
    static void addInto(INDArray view, INDArray value) {
        view.addi(value.reshape(view.ordering(), view.shape()));
    }

    /** Zeroes non-finite values in what {@link #addWeightedSum} reads (examples given factor 0). */
    void zeroNonFinite() {
    }

    /** Drops cached activations. */
    void clear() {
    }
}
