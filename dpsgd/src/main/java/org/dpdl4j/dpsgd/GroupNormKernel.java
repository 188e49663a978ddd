package org.dpdl4j.dpsgd;

import java.util.Map;
import org.dpdl4j.models.GroupNormMath;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * {@link org.dpdl4j.models.GroupNormalization}: y = φ(γ_c·x̂ + β_c) with x̂ normalised per example and group. Its
 * per-example gradients are exact and cheap: dγ_i = Σ_positions δ_i ∘ x̂_i and dβ_i = Σ_positions δ_i, [B, C] each.
 */
final class GroupNormKernel extends LayerKernel {
    /** {@inheritDoc} */
    @Override
    boolean passesShape() {
        return true;
    }

    private final INDArray gamma;
    private final INDArray beta;
    private final int groups;
    private final double eps;
    private final ActivationDerivative derivative;
    private long[] inShape;
    private INDArray xHat; // [B, C, S]
    private INDArray invStd;
    private INDArray kept;
    private INDArray perGamma; // [B, C]
    private INDArray perBeta;
    private INDArray sumGamma; // non-private mode: [1, C]
    private INDArray sumBeta;

    GroupNormKernel(INDArray gamma, INDArray beta, int groups, double eps, IActivation activation) {
        this.gamma = gamma;
        this.beta = beta;
        this.groups = groups;
        this.eps = eps;
        this.derivative = new ActivationDerivative(activation);
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        INDArray[] n = GroupNormMath.normalise(GroupNormMath.asChannels(x), groups, eps);
        INDArray z = GroupNormMath.affine(n[0], gamma, beta).reshape('c', x.shape());
        INDArray[] out = derivative.apply(z, keep);
        if (keep) {
            inShape = x.shape();
            xHat = n[0];
            invStd = n[1];
            kept = out[1];
        }
        return out[0];
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        INDArray delta = GroupNormMath.asChannels(derivative.backprop(kept, gradOutput)); // [B, C, S]
        if (trainable) {
            INDArray g = delta.mul(xHat).sum(2);
            INDArray b = delta.sum(2);
            if (perExample) {
                perGamma = g;
                perBeta = b;
            } else {
                sumGamma = g.sum(true, 0);
                sumBeta = b.sum(true, 0);
            }
        }
        if (!needInputGradient) {
            return null;
        }
        INDArray dxHat = GroupNormMath.affine(delta, gamma, null);
        return GroupNormMath.inputGradient(dxHat, xHat, invStd, groups).reshape('c', inShape);
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        sq.addi(LayerKernel.rowSquaredNorms(perGamma)).addi(LayerKernel.rowSquaredNorms(perBeta));
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return true;
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) {
        sq.addi(LayerKernel.rowSquaredNorms(LayerKernel.groupSums(perGamma, k)))
                .addi(LayerKernel.rowSquaredNorms(LayerKernel.groupSums(perBeta, k)));
    }

    @Override
    void zeroNonFinite() {
        LayerKernel.zeroNonFinite(perGamma);
        LayerKernel.zeroNonFinite(perBeta);
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> views) {
        INDArray row = w.castTo(perGamma.dataType()).reshape(1, w.length());
        addInto(views.get("gamma"), row.mmul(perGamma));
        addInto(views.get("beta"), row.mmul(perBeta));
    }

    @Override
    void addSum(Map<String, INDArray> views) {
        addInto(views.get("gamma"), sumGamma);
        addInto(views.get("beta"), sumBeta);
    }

    @Override
    void clear() {
        xHat = null;
        invStd = null;
        kept = null;
        perGamma = null;
        perBeta = null;
        sumGamma = null;
        sumBeta = null;
    }
}
