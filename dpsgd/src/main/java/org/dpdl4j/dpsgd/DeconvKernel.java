package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.DynamicCustomOp;
import org.nd4j.linalg.factory.Nd4j;

/**
 * A transposed convolution (DL4J's {@code Deconvolution2D}, NCHW, Truncate or Strict mode): x [B, iC, H, W] to
 * z [B, oC, H', W'] with H' = s(H − 1) + d(k − 1) + 1 − 2p, a = φ(z), weights W [iC, oC, kH, kW] (DL4J's layout, which
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
    private final Ops.Window window;
    private INDArray input;
    private INDArray kept;
    private INDArray perExampleW; // [B, iC, oC·kH·kW]
    private INDArray perExampleB; // [B, oC]
    private INDArray sumW;
    private INDArray sumB;

    /**
     * @param weights DL4J's [iC, oC, kH, kW]
     * @param bias    [1, oC] or null
     * @param window  kernel, stride, padding and dilation (explicit padding: Truncate or Strict)
     */
    DeconvKernel(INDArray weights, INDArray bias, IActivation activation, Ops.Window window) {
        this.weights = weights;
        this.bias = bias;
        this.derivative = new ActivationDerivative(activation);
        this.window = window;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        long oh = (long) window.sH() * (x.size(2) - 1) + (long) window.dH() * (window.kH() - 1) + 1 - 2L * window.pH();
        long ow = (long) window.sW() * (x.size(3) - 1) + (long) window.dW() * (window.kW() - 1) + 1 - 2L * window.pW();
        INDArray z = Nd4j.create(x.dataType(), x.size(0), weights.size(1), oh, ow);
        INDArray w = weights.permute(2, 3, 1, 0);
        INDArray[] in = bias == null ? new INDArray[]{x, w} : new INDArray[]{x, w, bias.reshape(bias.length())};
        Nd4j.exec(DynamicCustomOp.builder("deconv2d").addInputs(in).addOutputs(z).addIntegerArguments(window.args(0, 0)).build());
        INDArray[] out = derivative.apply(z, keep);
        if (keep) {
            input = x;
            kept = out[1];
        }
        return out[0];
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        INDArray delta = derivative.backprop(kept, gradOutput);
        if (trainable) {
            long b = delta.size(0);
            long positions = input.size(2) * input.size(3);
            INDArray cols = Ops.im2col(delta, window); // [B, oC, kH, kW, H, W]
            INDArray gradients = Nd4j.matmul(input.reshape('c', b, input.size(1), positions),
                    cols.reshape('c', b, weights.length() / weights.size(0), positions), false, true, false); // [B, iC, K']
            INDArray perExampleBias = bias == null ? null : delta.sum(2, 3);
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
        long b = perExampleW.size(0);
        INDArray row = w.castTo(perExampleW.dataType()).reshape(1, b);
        addInto(views.get("W"), row.mmul(perExampleW.reshape('c', b, perExampleW.length() / b)));
        if (perExampleB != null) {
            addInto(views.get("b"), row.mmul(perExampleB));
        }
    }

    @Override
    void addSum(Map<String, INDArray> views) {
        addInto(views.get("W"), sumW);
        if (sumB != null) {
            addInto(views.get("b"), sumB);
        }
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
