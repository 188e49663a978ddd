package org.dpdl4j.models;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Broadcast;
import org.nd4j.linalg.ops.transforms.Transforms;

/**
 * The arithmetic of weight standardisation (S. Qiao, H. Wang, C. Liu, W. Shen, A. Yuille, "Micro-Batch Training with
 * Batch-Channel Normalization and Weight Standardization", arXiv:1903.10520, Eq. 5): each output channel o of a
 * convolution kernel W [oC, iC, kH, kW] is standardised over its K = iC·kH·kW fan-in,
 * Ŵ_o = (W_o − mean(W_o)) / √(var(W_o) + ε) with the biased variance, and the convolution uses Ŵ. Shared by the DL4J
 * layer ({@link WeightStandardizedConvolution}) and the DP-SGD engine's kernel, and checked against finite differences
 * in the tests.
 */
public final class WeightStandardization {
    private WeightStandardization() {
    }

    /**
     * Standardises each output channel's kernel over its fan-in K (Eq. 5 above), on a copy: {@code w} is not modified.
     *
     * @param w   [oC, iC, kH, kW] (any shape whose first dimension is oC)
     * @param eps ε &gt; 0 added to each channel's variance (not validated here)
     * @return {Ŵ [oC, K] (C-ordered), 1/√(var + ε) [oC, 1]}
     */
    public static INDArray[] standardise(INDArray w, double eps) {
        long oc = w.size(0);
        INDArray rows = w.dup('c').reshape('c', oc, w.length() / oc);
        INDArray centred = rows.subiColumnVector(rows.mean(true, 1));
        INDArray invStd = Transforms.pow(centred.mul(centred).mean(true, 1).addi(eps), -0.5, false);
        return new INDArray[]{centred.muliColumnVector(invStd), invStd};
    }

    /**
     * dL/dW from dL/dŴ, for a stack of gradients (one per example, or one for the batch): per output channel,
     * dW_o = (dŴ_o − mean(dŴ_o) − Ŵ_o·mean(dŴ_o ∘ Ŵ_o)) / √(var(W_o) + ε). Linear in dŴ, so it maps per-example gradients
     * to per-example gradients.
     *
     * @param gradWHat dL/dŴ [N, oC, K], C-ordered (not modified)
     * @param wHat     Ŵ [oC, K] of {@link #standardise}
     * @param invStd   [oC, 1] of {@link #standardise}
     * @return dL/dW [N, oC, K]
     */
    public static INDArray weightGradient(INDArray gradWHat, INDArray wHat, INDArray invStd) {
        INDArray g = gradWHat.dup('c');
        INDArray meanG = g.mean(2); // [N, oC]
        INDArray gw = Broadcast.mul(g, wHat, g.ulike(), 1, 2);
        INDArray meanGW = gw.mean(2); // [N, oC]
        INDArray t = Broadcast.mul(Broadcast.copy(g.ulike(), wHat, g.ulike(), 1, 2), meanGW, gw, 0, 1); // Ŵ_o·mean(dŴ∘Ŵ)
        Broadcast.sub(g, meanG, g, 0, 1).subi(t);
        return Broadcast.mul(g, invStd.reshape(invStd.length()), g, 1);
    }
}
