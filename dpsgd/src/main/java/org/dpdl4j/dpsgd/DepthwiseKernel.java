package org.dpdl4j.dpsgd;

import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * A depthwise convolution with DL4J's weights: a {@link ConvKernel} with one group per input channel on the weights
 * reordered to [iC·m, 1, kH, kW] (output channel c·m + j: filter j of input channel c, libnd4j's order, which DL4J's
 * bias follows), its per-example weight gradients reordered back into DL4J's layout (a permutation: norms unchanged).
 * Two layouts of DL4J 1.0.0-M2.1 ({@code DepthwiseConvolutionParamInitializer},
 * {@code SeparableConvolutionParamInitializer}): {@code DepthwiseConvolution2D}'s "W" [kH, kW, iC, m] (libnd4j's
 * depthwise_conv2d format) and {@code SeparableConvolution2D}'s depthwise "W" [m, iC, kH, kW] (which
 * {@code SeparableConvolution2DLayer} permutes to the former for libnd4j's sconv2d).
 */
final class DepthwiseKernel extends DerivedWeightsConvKernel {
    /** How DL4J stores a depthwise convolution's weights. */
    enum Layout {
        /** DepthwiseConvolution2D: [kH, kW, iC, m]. */
        KH_KW_IC_M,
        /** SeparableConvolution2D's depthwise part: [m, iC, kH, kW]. */
        M_IC_KH_KW
    }

    private final Layout layout;
    private final long channels;
    private final long multiplier;
    private final long kh;
    private final long kw;

    DepthwiseKernel(INDArray weights, Layout layout, INDArray bias, IActivation activation, Ops.Window window) {
        super(weights, groupedShape(weights, layout), bias, activation, window, (int) channels(weights, layout));
        this.layout = layout;
        this.channels = channels(weights, layout);
        this.multiplier = multiplier(weights, layout);
        this.kh = window.kH();
        this.kw = window.kW();
    }

    private static long channels(INDArray w, Layout layout) {
        return layout == Layout.KH_KW_IC_M ? w.size(2) : w.size(1);
    }

    private static long multiplier(INDArray w, Layout layout) {
        return layout == Layout.KH_KW_IC_M ? w.size(3) : w.size(0);
    }

    private static long[] groupedShape(INDArray w, Layout layout) {
        long kh = layout == Layout.KH_KW_IC_M ? w.size(0) : w.size(2);
        long kw = layout == Layout.KH_KW_IC_M ? w.size(1) : w.size(3);
        return new long[]{channels(w, layout) * multiplier(w, layout), 1, kh, kw};
    }

    /** DL4J's weights as [iC, m, kH, kW] (a view). */
    private INDArray asChannelsMultiplier(INDArray w) {
        return layout == Layout.KH_KW_IC_M ? w.permute(2, 3, 0, 1) : w.permute(1, 0, 2, 3);
    }

    @Override
    boolean permutes() {
        return true;
    }

    @Override
    void derive(INDArray into) {
        into.reshape('c', channels, multiplier, kh, kw).assign(asChannelsMultiplier(parameter));
    }

    @Override
    INDArray parameterGradient(INDArray d) { // [N, iC·m, kH·kW] → DL4J's order
        long n = d.size(0);
        if (layout == Layout.M_IC_KH_KW && multiplier == 1) {
            return d; // [1, iC, kH, kW] is [iC, 1, kH, kW] in memory
        }
        INDArray five = d.reshape('c', n, channels, multiplier, kh, kw);
        INDArray reordered = layout == Layout.KH_KW_IC_M ? five.permute(0, 3, 4, 1, 2) : five.permute(0, 2, 1, 3, 4);
        return reordered.dup('c').reshape('c', n, d.size(1), d.size(2));
    }
}
