package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.DynamicCustomOp;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * A transposed convolution (DL4J's {@code Deconvolution2D}, NCHW; Truncate, Strict or Same mode): x [B, iC, H, W] to
 * z [B, oC, H', W'] with H' = s(H − 1) + d(k − 1) + 1 − 2p (H' = s·H in Same mode), a = φ(z), weights W [iC, oC, kH, kW] (DL4J's layout, which
 * its layer hands libnd4j's deconv2d op permuted to [kH, kW, oC, iC]). The forward pass is that op, as DL4J runs it. A
 * transposed convolution is the input gradient of the convolution with weights W read as [out = iC, in = oC, kH, kW]
 * and the same window (V. Dumoulin, F. Visin, "A guide to convolution arithmetic for deep learning", arXiv:1603.07285,
 * Section 4), so, with δ = dL/dz: dL/dx = that convolution of δ, and example i's weight gradient is that convolution's
 * weight gradient with the roles of input and output delta exchanged, G_i = x_i · im2col(δ_i)ᵀ
 * ([iC, H·W]·[H·W, oC·kH·kW], W's layout), exact; its bias gradient is δ_i summed over positions. One batched matmul
 * gives every G_i; the norms are theirs (float64 sums). Dilated float32 windows, which libnd4j's oneDNN helper refuses
 * for the input gradient, take it in float64.
 */
final class DeconvKernel extends LayerKernel {
    /** {@inheritDoc} ([B, c, h, w]) */
    @Override
    int inputRank() {
        return 4;
    }

    private final INDArray weights; // [iC, oC, kH, kW]
    private final INDArray bias;    // [1, oC] or null
    private final ActivationDerivative derivative;
    private final Ops.Window window; // explicit padding, or 0 in Same mode
    private final boolean same;
    private INDArray input;
    private INDArray kept;
    private INDArray perExampleW; // [B, iC, oC·kH·kW]
    private INDArray perExampleB; // [B, oC]
    private INDArray sumW;
    private INDArray sumB;

    /**
     * @param weights DL4J's [iC, oC, kH, kW]
     * @param bias    [1, oC] or null
     * @param window  kernel, stride, padding and dilation (explicit padding: Truncate or Strict; 0 in Same mode)
     * @param same    DL4J's Same mode (output H·s × W·s)
     */
    DeconvKernel(INDArray weights, INDArray bias, IActivation activation, Ops.Window window, boolean same) {
        this.same = same;
        this.weights = weights;
        this.bias = bias;
        this.derivative = new ActivationDerivative(activation);
        this.window = window;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        long oh = same ? x.size(2) * window.sH()
                : (long) window.sH() * (x.size(2) - 1) + (long) window.dH() * (window.kH() - 1) + 1 - 2L * window.pH();
        long ow = same ? x.size(3) * window.sW()
                : (long) window.sW() * (x.size(3) - 1) + (long) window.dW() * (window.kW() - 1) + 1 - 2L * window.pW();
        INDArray z = Nd4j.create(x.dataType(), x.size(0), weights.size(1), oh, ow);
        INDArray w = weights.permute(2, 3, 1, 0);
        INDArray[] in = bias == null ? new INDArray[]{x, w} : new INDArray[]{x, w, bias.reshape(bias.length())};
        Ops.Window op = window;
        if (same) { // the top-left padding DL4J's layer hands the op, with libnd4j's Same flag
            int[] pad = org.deeplearning4j.util.ConvolutionUtils.getSameModeTopLeftPadding(new int[]{(int) oh, (int) ow},
                    new int[]{(int) x.size(2), (int) x.size(3)}, new int[]{window.kH(), window.kW()},
                    new int[]{window.sH(), window.sW()}, new int[]{window.dH(), window.dW()});
            op = new Ops.Window(window.kH(), window.kW(), window.sH(), window.sW(), pad[0], pad[1], window.dH(), window.dW(), true);
        }
        Nd4j.exec(DynamicCustomOp.builder("deconv2d").addInputs(in).addOutputs(z).addIntegerArguments(op.args(0, 0)).build());
        INDArray[] out = derivative.apply(z, keep);
        if (keep) {
            input = x;
            kept = out[1];
        }
        return out[0];
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        INDArray raw = derivative.backprop(kept, gradOutput);
        INDArray delta = reach(raw);
        if (trainable) {
            long b = delta.size(0);
            long positions = input.size(2) * input.size(3);
            INDArray cols = Ops.im2col(delta, window); // [B, oC, kH, kW, H, W]
            INDArray gradients = Nd4j.matmul(input.reshape('c', b, input.size(1), positions),
                    cols.reshape('c', b, weights.length() / weights.size(0), positions), false, true, false); // [B, iC, K']
            INDArray perExampleBias = bias == null ? null : raw.sum(2, 3);
            if (perExample) {
                perExampleW = gradients;
                perExampleB = perExampleBias;
            } else {
                sumW = gradients.sum(0);
                sumB = perExampleBias == null ? null : perExampleBias.sum(0);
            }
        }
        if (!needInputGradient) {
            return null;
        }
        boolean widen = delta.dataType() == DataType.FLOAT && (window.dH() > 1 || window.dW() > 1);
        INDArray g = Ops.conv2d(widen ? delta.castTo(DataType.DOUBLE) : delta, widen ? weights.castTo(DataType.DOUBLE) : weights,
                null, window);
        return widen ? g.castTo(DataType.FLOAT) : g;
    }

    /**
     * In Same mode, δ [B, oC, H·s, W·s] laid on the rows and columns the convolution's windows reach, as libnd4j's
     * deconv2d places its output in that mode: output row r is row r + p of the reach, p =
     * ((H − 1)·s + (k − 1)·d + 1 − H·s) / 2 truncated toward zero as C++ divides (negative when the output is longer than the
     * reach); rows outside the reach are 0 there, and δ's rows outside it (read by no window; they reach the bias only) are
     * dropped. Then the convolution with padding 0 maps the reach onto x's H × W positions. Explicit padding: δ itself.
     */
    private INDArray reach(INDArray delta) {
        if (!same) {
            return delta;
        }
        long reachH = (input.size(2) - 1) * window.sH() + (long) (window.kH() - 1) * window.dH() + 1;
        long reachW = (input.size(3) - 1) * window.sW() + (long) (window.kW() - 1) * window.dW() + 1;
        long top = (reachH - delta.size(2)) / 2;
        long left = (reachW - delta.size(3)) / 2;
        INDArray out = Nd4j.zeros(delta.dataType(), delta.size(0), delta.size(1), reachH, reachW);
        long r0 = Math.max(0, top);
        long r1 = Math.min(reachH, top + delta.size(2));
        long c0 = Math.max(0, left);
        long c1 = Math.min(reachW, left + delta.size(3));
        out.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.interval(r0, r1), NDArrayIndex.interval(c0, c1))
                .assign(delta.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.interval(r0 - top, r1 - top),
                        NDArrayIndex.interval(c0 - left, c1 - left)));
        return out;
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        sq.addi(LayerKernel.rowSquaredNorms(perExampleW.reshape('c', perExampleW.size(0), -1)));
        if (perExampleB != null) {
            sq.addi(LayerKernel.rowSquaredNorms(perExampleB));
        }
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return true;
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) {
        sq.addi(LayerKernel.rowSquaredNorms(LayerKernel.groupSums(perExampleW.reshape('c', perExampleW.size(0), -1), k)));
        if (perExampleB != null) {
            sq.addi(LayerKernel.rowSquaredNorms(LayerKernel.groupSums(perExampleB, k)));
        }
    }

    @Override
    void zeroNonFinite() {
        LayerKernel.zeroNonFinite(perExampleW);
        LayerKernel.zeroNonFinite(perExampleB);
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> views) {
        addWeightedRows(w, perExampleW, views.get("W"));
        addWeightedRows(w, perExampleB, views.get("b"));
    }

    @Override
    void addSum(Map<String, INDArray> views) {
        addWeightAndBias(views, sumW, sumB);
    }

    @Override
    void clear() {
        input = null;
        kept = null;
        perExampleW = null;
        perExampleB = null;
        sumW = null;
        sumB = null;
    }
}
