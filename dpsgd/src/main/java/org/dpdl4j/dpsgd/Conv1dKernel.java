package org.dpdl4j.dpsgd;

import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * DL4J's 1-D convolution ({@code Convolution1DLayer} and {@code Convolution1D}, NCW) on sequences [B, iC, T]: the 2-D
 * convolution kernel ({@link ConvKernel}, with {@link SamePaddingKernel} in Same and Causal modes) on [B, iC, T, 1] with
 * a k × 1 window; its output [B, oC, T', 1] is returned as [B, oC, T']. DL4J 1.0.0-M2.1's layer hands libnd4j's conv1d a
 * permuted view of its weights "W" [oC, iC, k, 1], and the op reads the view's buffer as [k, iC, oC]: the filter that
 * DL4J's layer applies is w[o, c, j] = W's entry j·iC·oC + c·oC + o in 'c' order (measured against DL4J's output,
 * {@code Conv1dKernelTest}). {@link Weights} derives that filter for the 2-D kernel and reorders its gradients back (a
 * permutation). Per-example gradients, norms and sums are the 2-D kernel's.
 *
 * <p>A feature mask [B, T], as DL4J's network uses it ({@code MultiLayerNetwork.feedForwardMaskArray}, which the layer's
 * {@code feedForwardMaskArray} answers without keeping the mask): the convolution reads and writes every step, masked or
 * not, and the mask of its output is the input mask reduced over each window (DL4J's
 * {@code ConvolutionUtils.cnn1dMaskReduction}, a max pooling) for the layers after it. That reduction is computed on the
 * mask in float32, where DL4J's own fails for float64 masks (it writes a float32 array); masks hold 0s and 1s, which
 * float32 keeps exactly.
 */
final class Conv1dKernel extends WrappingKernel {
    private final LayerKernel convolution; // on [B, iC, T, 1]
    private final int k;
    private final int s;
    private final int p;
    private final int d;
    private final ConvolutionMode mode;

    /**
     * @param convolution the 2-D kernel of the layer on [B, iC, T, 1]
     * @param layer       the layer's configuration (its window and mode, for the output mask)
     */
    Conv1dKernel(LayerKernel convolution, org.deeplearning4j.nn.conf.layers.Convolution1DLayer layer) {
        this.convolution = convolution;
        this.k = layer.getKernelSize()[0];
        this.s = layer.getStride()[0];
        this.p = layer.getPadding()[0];
        this.d = layer.getDilation()[0];
        this.mode = layer.getConvolutionMode();
    }

    /** The 2-D kernel this one runs on [B, iC, T, 1] (tests put it on either per-example path). */
    LayerKernel convolution() {
        return convolution;
    }

    @Override
    LayerKernel current() {
        return convolution;
    }

    @Override
    int inputRank() {
        return 3;
    }

    @Override
    boolean acceptsMask() {
        return true;
    }

    @Override
    INDArray outputMask() {
        if (mask == null) {
            return null;
        }
        INDArray reduced = org.deeplearning4j.util.ConvolutionUtils.cnn1dMaskReduction(mask.castTo(DataType.FLOAT), k, s, p, d, mode);
        return reduced.castTo(mask.dataType());
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        passSettingsTo(convolution);
        INDArray out = convolution.forward(x.reshape('c', x.size(0), x.size(1), x.size(2), 1), keep);
        return out.reshape('c', out.size(0), out.size(1), out.size(2));
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        passSettingsTo(convolution);
        INDArray g = convolution.backward(gradOutput.reshape('c', gradOutput.size(0), gradOutput.size(1), gradOutput.size(2), 1),
                needInputGradient);
        return g == null ? null : g.reshape('c', g.size(0), g.size(1), g.size(2));
    }

    /** The 2-D convolution on the filter DL4J's 1-D layer applies, derived from its weights "W" [oC, iC, k, 1]. */
    static final class Weights extends DerivedWeightsConvKernel {
        private final long oc;
        private final long ic;
        private final long k;

        Weights(INDArray w, INDArray bias, IActivation activation, Ops.Window window) {
            super(w, w.shape(), bias, activation, window, 1);
            this.oc = w.size(0);
            this.ic = w.size(1);
            this.k = w.size(2);
        }

        @Override
        boolean permutes() {
            return true;
        }

        @Override
        void derive(INDArray into) { // into[o, c, j] = W's 'c'-order entry (j, c, o)
            into.reshape('c', oc, ic, k).assign(parameter.reshape('c', k, ic, oc).permute(2, 1, 0));
        }

        @Override
        INDArray parameterGradient(INDArray d) { // [N, oC, iC·k] → W's 'c' order, entry (j, c, o)
            long n = d.size(0);
            return d.reshape('c', n, oc, ic, k).permute(0, 3, 2, 1).dup('c').reshape('c', n, d.size(1), d.size(2));
        }
    }
}
