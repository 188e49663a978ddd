package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Dense (fully connected) layer z = xW + b, a = φ(z); W is [nIn, nOut]. Per-example gradients
 * have outer-product structure g_i = x_iᵀδ_i, so ‖g_i‖² = ‖x_i‖²‖δ_i‖² (+ ‖δ_i‖² for the bias)
 * exactly, without materialising g_i ("ghost norm", Goodfellow 2015), and the weighted sum is
 * xᵀ diag(w) δ. The norm of a group's summed gradient Σ_a x_aᵀδ_a is exact too, from the groups' Gram matrices
 * ({@link LayerKernel#groupGram}).
 */
final class DenseKernel extends LayerKernel {
    /** {@inheritDoc} ([B, nIn]) */
    @Override
    int inputRank() {
        return 2;
    }

    private final INDArray weights;
    private final INDArray bias;
    private final ActivationDerivative derivative;
    private INDArray input;
    private INDArray kept; // output a, or z for generic activations
    private INDArray delta;

    DenseKernel(INDArray weights, INDArray bias, IActivation activation) {
        this.weights = weights;
        this.bias = bias;
        this.derivative = new ActivationDerivative(activation);
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        INDArray z = x.mmul(weights);
        if (bias != null) {
            z.addiRowVector(bias);
        }
        INDArray[] out = derivative.apply(z, keep);
        if (keep) {
            input = x;
            kept = out[1];
        }
        return out[0];
    }

    /** Sets the output delta directly (used by the softmax/cross-entropy output layer). */
    INDArray backwardFromDelta(INDArray d, boolean needInputGradient) {
        delta = d;
        return needInputGradient ? d.mmul(weights.transpose()) : null;
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        return backwardFromDelta(derivative.backprop(kept, gradOutput), needInputGradient);
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        INDArray deltaSq = LayerKernel.rowSquaredNorms(delta);
        INDArray inputSq = LayerKernel.rowSquaredNorms(input);
        sq.addi(inputSq.muli(deltaSq));
        if (bias != null) {
            sq.addi(deltaSq);
        }
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return true;
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) { // ‖Σ_a x_aᵀδ_a‖² = Σ_ab (x_a·x_b)(δ_a·δ_b); bias: Σ_ab δ_a·δ_b
        INDArray deltaGram = LayerKernel.groupGram(delta, k);
        sq.addi(LayerKernel.groupGram(input, k).muli(deltaGram).sum(1, 2));
        if (bias != null) {
            sq.addi(deltaGram.sum(1, 2));
        }
    }

    @Override
    void zeroNonFinite() {
        LayerKernel.zeroNonFinite(input);
        LayerKernel.zeroNonFinite(delta);
    }

    @Override
    void addSum(Map<String, INDArray> views) {
        addWeighted(delta, views);
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> views) {
        addWeighted(delta.mulColumnVector(w.castTo(delta.dataType())), views);
    }

    private void addWeighted(INDArray weighted, Map<String, INDArray> views) {
        addInto(views.get("W"), input.transpose().mmul(weighted));
        if (bias != null) {
            addInto(views.get("b"), weighted.sum(true, 0));
        }
    }

    @Override
    void clear() {
        input = null;
        kept = null;
        delta = null;
    }
}
