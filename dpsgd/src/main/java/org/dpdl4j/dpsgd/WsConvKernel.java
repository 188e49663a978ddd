package org.dpdl4j.dpsgd;

import java.util.Map;
import org.dpdl4j.models.WeightStandardization;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * {@link org.dpdl4j.models.WeightStandardizedConvolution}: a {@link ConvKernel} run on Ŵ (recomputed from W at every
 * forward pass), whose per-example gradients with respect to Ŵ are mapped to gradients with respect to W by the chain
 * rule ({@link WeightStandardization#weightGradient}, linear per example), before norms and sums are taken.
 */
final class WsConvKernel extends LayerKernel {
    /** {@inheritDoc} ([B, c, h, w]) */
    @Override
    int inputRank() {
        return 4;
    }

    private final INDArray weights; // the network's W, read
    private final double eps;
    private final INDArray standardised; // Ŵ, the buffer the convolution reads (outside any workspace)
    private final ConvKernel conv;
    private INDArray wHat;
    private INDArray invStd;

    WsConvKernel(INDArray weights, INDArray bias, IActivation activation, Ops.Window window, double eps) {
        this.weights = weights;
        this.eps = eps;
        try (var outside = Nd4j.getWorkspaceManager().scopeOutOfWorkspaces()) {
            this.standardised = Nd4j.createUninitializedDetached(weights.dataType(), weights.shape());
        }
        this.conv = new ConvKernel(standardised, bias, activation, window);
        this.conv.weightGradientMap = d -> WeightStandardization.weightGradient(d, wHat, invStd);
    }

    /** The convolution this kernel runs on Ŵ (tests put it on either per-example path). */
    ConvKernel convolution() {
        return conv;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        INDArray[] s = WeightStandardization.standardise(weights, eps);
        standardised.assign(s[0].reshape('c', weights.shape()));
        wHat = s[0];
        invStd = s[1];
        conv.trainable = trainable;
        conv.perExample = perExample;
        conv.training = training;
        return conv.forward(x, keep);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        conv.perExample = perExample;
        return conv.backward(gradOutput, needInputGradient);
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        conv.addSquaredNorms(sq);
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return true;
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) {
        conv.addGroupSquaredNorms(sq, k);
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> views) {
        conv.addWeightedSum(w, views);
    }

    @Override
    void addSum(Map<String, INDArray> views) {
        conv.addSum(views);
    }

    @Override
    void zeroNonFinite() {
        conv.zeroNonFinite();
    }

    @Override
    void clear() {
        conv.clear();
        wHat = null;
        invStd = null;
    }
}
