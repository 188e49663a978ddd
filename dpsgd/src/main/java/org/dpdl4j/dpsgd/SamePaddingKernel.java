package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.INDArrayIndex;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * DL4J's {@code ConvolutionMode.Same} for a convolution: the input is zero-padded as DL4J pads it, then a kernel that
 * pads nothing ({@code Truncate}) runs on it, and dL/dx is the padded input's gradient cropped back. DL4J's Same mode
 * (M2.1 {@code ConvolutionUtils.getSameModeTopLeftPadding}): output o = ⌈in/s⌉, total padding
 * max(0, (o − 1)·s + (k − 1)·d + 1 − in) per dimension, of which ⌊total/2⌋ at the top (left) and the rest, the odd row
 * (column), at the bottom (right). The padding depends on the input's height and width, so it is found at each forward
 * pass. Exact on every path of the inner kernel (oneDNN, im2col, libnd4j), at the cost of one padded copy of the input.
 * The same kernel pads a 1-D convolution's {@code Causal} mode (on [B, c, T, 1]): (k − 1)·d zeros before the first
 * step and none after, as libnd4j's conv1d pads in that mode.
 */
final class SamePaddingKernel extends WrappingKernel {
    private final LayerKernel inner;
    private final Ops.Window window; // of the inner kernel (no padding)
    private final boolean causal;
    private long[] inShape;
    private int top;
    private int left;

    /**
     * @param inner  the convolution's kernel with padding 0
     * @param window its window (kernel size, stride, dilation; padding 0)
     */
    SamePaddingKernel(LayerKernel inner, Ops.Window window) {
        this(inner, window, false);
    }

    /**
     * @param inner  the convolution's kernel with padding 0
     * @param window its window (kernel size, stride, dilation; padding 0)
     * @param causal pad (kH − 1)·dH rows at the top only (a 1-D convolution's Causal mode) instead of DL4J's Same padding
     */
    SamePaddingKernel(LayerKernel inner, Ops.Window window, boolean causal) {
        this.inner = inner;
        this.window = window;
        this.causal = causal;
    }

    /** The kernel this one pads for. */
    LayerKernel inner() {
        return inner;
    }

    /** The top and left padding DL4J's Same mode adds to an input of this size, and the bottom and right. */
    static int[] padding(Ops.Window g, long h, long w) {
        long totalH = Math.max(0, ((h + g.sH() - 1) / g.sH() - 1) * g.sH() + (long) (g.kH() - 1) * g.dH() + 1 - h);
        long totalW = Math.max(0, ((w + g.sW() - 1) / g.sW() - 1) * g.sW() + (long) (g.kW() - 1) * g.dW() + 1 - w);
        return new int[]{(int) (totalH / 2), (int) (totalH - totalH / 2), (int) (totalW / 2), (int) (totalW - totalW / 2)};
    }

    @Override
    int inputRank() {
        return 4;
    }

    @Override
    LayerKernel current() {
        return inner;
    }

    private void share() {
        passSettingsTo(inner);
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        share();
        int[] p = causal ? new int[]{(window.kH() - 1) * window.dH(), 0, 0, 0} : padding(window, x.size(2), x.size(3));
        inShape = x.shape();
        top = p[0];
        left = p[2];
        INDArray padded = x;
        if (p[0] + p[1] + p[2] + p[3] > 0) {
            padded = Nd4j.zeros(x.dataType(), x.size(0), x.size(1), x.size(2) + p[0] + p[1], x.size(3) + p[2] + p[3]);
            padded.get(interior()).assign(x);
        }
        return inner.forward(padded, keep);
    }

    private INDArrayIndex[] interior() {
        return new INDArrayIndex[]{NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.interval(top, top + inShape[2]),
                NDArrayIndex.interval(left, left + inShape[3])};
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        share();
        INDArray g = inner.backward(gradOutput, needInputGradient);
        if (g == null || g.size(2) == inShape[2] && g.size(3) == inShape[3]) {
            return g;
        }
        return g.get(interior()).dup('c');
    }
}
