package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.ops.transforms.Transforms;

/**
 * The output layer: dense + softmax with cross-entropy loss ℓ_i = −Σ_k y_ik log p_ik. Its
 * per-example delta is p_i − y_i (as DL4J's LossMCXENT computes it for softmax).
 */
final class SoftmaxCrossEntropyKernel extends OutputKernel {
    /** {@inheritDoc} ([B, nIn]) */
    @Override
    int inputRank() {
        return 2;
    }

    private final DenseKernel dense;
    private INDArray probabilities;

    SoftmaxCrossEntropyKernel(DenseKernel dense) {
        this.dense = dense;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        probabilities = dense.forward(x, keep);
        return probabilities;
    }

    /** Per-example loss [B] of the last forward pass against one-hot labels. */
    @Override
    INDArray loss(INDArray labels) {
        INDArray logp = Transforms.log(Transforms.max(probabilities, 1e-30, true), false);
        return logp.muli(labels).sum(1).negi();
    }

    /** Starts the backward pass from the labels. */
    @Override
    INDArray backwardFromLabels(INDArray labels, boolean needInputGradient) {
        return dense.backwardFromDelta(probabilities.sub(labels), needInputGradient);
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        dense.addSquaredNorms(sq);
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return true;
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) {
        dense.addGroupSquaredNorms(sq, k);
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> views) {
        dense.addWeightedSum(w, views);
    }

    @Override
    void addSum(Map<String, INDArray> views) {
        dense.addSum(views);
    }

    @Override
    void zeroNonFinite() {
        dense.zeroNonFinite();
    }

    @Override
    void clear() {
        dense.clear();
        probabilities = null;
    }
}
