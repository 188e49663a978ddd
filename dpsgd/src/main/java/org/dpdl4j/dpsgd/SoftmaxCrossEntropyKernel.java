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
    INDArray loss(INDArray labels, INDArray labelMask) {
        INDArray logp = Transforms.log(Transforms.max(probabilities, 1e-30, true), false);
        INDArray loss = logp.muli(labels).sum(1).negi();
        return labelMask == null ? loss : loss.muli(exampleMask(labelMask, loss.size(0), loss).reshape(loss.size(0)));
    }

    /** Starts the backward pass from the labels. */
    @Override
    INDArray backwardFromLabels(INDArray labels, INDArray labelMask, boolean needInputGradient) {
        INDArray delta = probabilities.sub(labels);
        if (labelMask != null) { // an example whose label is masked out adds nothing
            delta.muliColumnVector(exampleMask(labelMask, delta.size(0), delta));
        }
        return dense.backwardFromDelta(delta, needInputGradient);
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
