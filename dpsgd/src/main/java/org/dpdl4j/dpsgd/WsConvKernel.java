package org.dpdl4j.dpsgd;

import org.dpdl4j.models.WeightStandardization;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * {@link org.dpdl4j.models.WeightStandardizedConvolution}: a {@link ConvKernel} run on Ŵ (recomputed from W at every
 * forward pass), whose per-example gradients with respect to Ŵ are mapped to gradients with respect to W by the chain
 * rule ({@link WeightStandardization#weightGradient}, linear per example), before norms and sums are taken.
 */
final class WsConvKernel extends DerivedWeightsConvKernel {
    private final double eps;
    private INDArray wHat;
    private INDArray invStd;

    WsConvKernel(INDArray weights, INDArray bias, IActivation activation, Ops.Window window, double eps) {
        super(weights, weights.shape(), bias, activation, window, 1);
        this.eps = eps;
    }

    @Override
    void derive(INDArray into) {
        INDArray[] s = WeightStandardization.standardise(parameter, eps);
        into.assign(s[0].reshape('c', parameter.shape()));
        wHat = s[0];
        invStd = s[1];
    }

    @Override
    INDArray parameterGradient(INDArray d) {
        return WeightStandardization.weightGradient(d, wHat, invStd);
    }

    @Override
    void clear() {
        super.clear();
        wHat = null;
        invStd = null;
    }
}
