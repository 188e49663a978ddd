package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.DynamicCustomOp;
import org.nd4j.linalg.factory.Nd4j;

/**
 * ND4J declarable ops used by the engine (libnd4j argument layouts of DL4J 1.0.0-M2.1; each is
 * checked against DL4J's own layers by the per-example gradient tests). All tensors are NCHW;
 * convolution weights are [oC, iC, kH, kW] (libnd4j weight format 1).
 */
final class Ops {
    private Ops() {
    }

    /**
     * Spatial geometry of a convolution or pooling window: explicit padding (DL4J's {@code Truncate} and {@code Strict}
     * modes), or DL4J's {@code Same} mode ({@code same}: output ⌈in/s⌉, padding computed by libnd4j from the input's
     * size, the odd row or column at the bottom or right), which the engine uses for pooling only.
     */
    record Window(int kH, int kW, int sH, int sW, int pH, int pW, int dH, int dW, boolean same) {
        Window(int kH, int kW, int sH, int sW, int pH, int pW, int dH, int dW) {
            this(kH, kW, sH, sW, pH, pW, dH, dW, false);
        }

        long outH(long h) {
            return same ? (h + sH - 1) / sH : (h + 2L * pH - ((long) dH * (kH - 1) + 1)) / sH + 1;
        }

        long outW(long w) {
            return same ? (w + sW - 1) / sW : (w + 2L * pW - ((long) dW * (kW - 1) + 1)) / sW + 1;
        }

        /**
         * kH, kW, sH, sW, pH, pW, dH, dW followed by the op's further arguments, the first of which is libnd4j's
         * isSameMode (set from this window).
         */
        int[] args(int... tail) {
            int[] a = java.util.Arrays.copyOf(new int[]{kH, kW, sH, sW, pH, pW, dH, dW}, 8 + tail.length);
            System.arraycopy(tail, 0, a, 8, tail.length);
            if (tail.length > 0) {
                a[8] = same ? 1 : 0;
            }
            return a;
        }
    }

    static INDArray conv2d(INDArray x, INDArray w, INDArray b, Window g) {
        INDArray out = Nd4j.create(x.dataType(), x.size(0), w.size(0), g.outH(x.size(2)), g.outW(x.size(3)));
        INDArray[] in = b == null ? new INDArray[]{x, w} : new INDArray[]{x, w, b.reshape(b.length())};
        Nd4j.exec(DynamicCustomOp.builder("conv2d").addInputs(in).addOutputs(out)
                .addIntegerArguments(g.args(0, 0, 1)).build());
        return out;
    }

    /** dL/dx of a convolution (the op also computes weight/bias gradients, which are discarded). */
    static INDArray conv2dInputGradient(INDArray x, INDArray w, INDArray b, INDArray gradOut, Window g) {
        return conv2dBackprop(x, w, b, gradOut, g)[0];
    }

    /**
     * A convolution's backward pass summed over the batch: {dL/dx, dL/dW, dL/db} (dL/db null
     * without bias), shaped as x, w and [oC].
     */
    static INDArray[] conv2dBackprop(INDArray x, INDArray w, INDArray b, INDArray gradOut, Window g) {
        INDArray gradIn = Nd4j.create(x.dataType(), x.shape());
        INDArray gradW = Nd4j.create(w.dataType(), w.shape());
        INDArray gradB = b == null ? null : Nd4j.create(b.dataType(), b.length());
        INDArray[] in = b == null ? new INDArray[]{x, w, gradOut} : new INDArray[]{x, w, b.reshape(b.length()), gradOut};
        INDArray[] out = b == null ? new INDArray[]{gradIn, gradW} : new INDArray[]{gradIn, gradW, gradB};
        Nd4j.exec(DynamicCustomOp.builder("conv2d_bp").addInputs(in).addOutputs(out)
                .addIntegerArguments(g.args(0, 0, 1)).build());
        return new INDArray[]{gradIn, gradW, gradB};
    }

    /**
     * A depthwise convolution (DL4J's DepthwiseConvolution2D): x [B, iC, H, W], w [kH, kW, iC, m] (libnd4j's weight
     * format 0), bias [iC·m] or null; output [B, iC·m, oH, oW], channel c·m + j from input channel c and filter j.
     */
    static INDArray depthwiseConv2d(INDArray x, INDArray w, INDArray b, Window g) {
        if (helperRejects(x, g)) {
            return depthwiseConv2d(x.castTo(DataType.DOUBLE), w.castTo(DataType.DOUBLE), b == null ? null : b.castTo(DataType.DOUBLE), g)
                    .castTo(x.dataType());
        }
        INDArray out = Nd4j.create(x.dataType(), x.size(0), w.size(2) * w.size(3), g.outH(x.size(2)), g.outW(x.size(3)));
        INDArray[] in = b == null ? new INDArray[]{x, w} : new INDArray[]{x, w, b.reshape(b.length())};
        Nd4j.exec(DynamicCustomOp.builder("depthwise_conv2d").addInputs(in).addOutputs(out)
                .addIntegerArguments(g.args(0, 0)).build());
        return out;
    }

    /**
     * A depthwise convolution's backward pass summed over the batch: {dL/dx, dL/dw, dL/db} (dL/db null without bias),
     * shaped as x, w [kH, kW, iC, m] and [iC·m].
     */
    static INDArray[] depthwiseConv2dBackprop(INDArray x, INDArray w, INDArray b, INDArray gradOut, Window g) {
        if (helperRejects(x, g)) {
            INDArray[] d = depthwiseConv2dBackprop(x.castTo(DataType.DOUBLE), w.castTo(DataType.DOUBLE),
                    b == null ? null : b.castTo(DataType.DOUBLE), gradOut.castTo(DataType.DOUBLE), g);
            return new INDArray[]{d[0].castTo(x.dataType()), d[1].castTo(x.dataType()), b == null ? null : d[2].castTo(x.dataType())};
        }
        INDArray gradIn = Nd4j.create(x.dataType(), x.shape());
        INDArray gradW = Nd4j.create(w.dataType(), w.shape());
        INDArray gradB = b == null ? null : Nd4j.create(b.dataType(), b.length());
        INDArray[] in = b == null ? new INDArray[]{x, w, gradOut} : new INDArray[]{x, w, b.reshape(b.length()), gradOut};
        INDArray[] out = b == null ? new INDArray[]{gradIn, gradW} : new INDArray[]{gradIn, gradW, gradB};
        Nd4j.exec(DynamicCustomOp.builder("depthwise_conv2d_bp").addInputs(in).addOutputs(out)
                .addIntegerArguments(g.args(0, 0)).build());
        return new INDArray[]{gradIn, gradW, gradB};
    }

    /**
     * Whether libnd4j's oneDNN helper may refuse this depthwise convolution: dilated float32 windows ("could not create a
     * descriptor for a dilated convolution forward propagation primitive", e.g. 3×3 dilation 2 on 13×13, DL4J's own
     * layer too). Those run in float64 on libnd4j's own loops (no helper), the result rounded to float32.
     */
    private static boolean helperRejects(INDArray x, Window g) {
        return x.dataType() == DataType.FLOAT && (g.dH() > 1 || g.dW() > 1);
    }

    /** im2col: [B, iC, H, W] → [B, iC, kH, kW, oH, oW] (zero padding). */
    static INDArray im2col(INDArray x, Window g) {
        INDArray cols = Nd4j.create(x.dataType(), x.size(0), x.size(1), g.kH(), g.kW(), g.outH(x.size(2)), g.outW(x.size(3)));
        Nd4j.exec(DynamicCustomOp.builder("im2col").addInputs(x).addOutputs(cols)
                .addIntegerArguments(g.args(0)).addFloatingPointArguments(0.0).build());
        return cols;
    }

    /**
     * Max or average pooling. {@code extra} is libnd4j's extraParam0, set as DL4J's
     * SubsamplingLayer sets it.
     */
    static INDArray pool(INDArray x, Window g, boolean max, int extra) {
        INDArray out = Nd4j.create(x.dataType(), x.size(0), x.size(1), g.outH(x.size(2)), g.outW(x.size(3)));
        Nd4j.exec(DynamicCustomOp.builder(max ? "maxpool2d" : "avgpool2d").addInputs(x).addOutputs(out)
                .addIntegerArguments(g.args(0, extra, 0)).build());
        return out;
    }

    static INDArray poolInputGradient(INDArray x, INDArray gradOut, Window g, boolean max, int extra) {
        INDArray gradIn = Nd4j.create(x.dataType(), x.shape());
        Nd4j.exec(DynamicCustomOp.builder(max ? "maxpool2d_bp" : "avgpool2d_bp").addInputs(x, gradOut).addOutputs(gradIn)
                .addIntegerArguments(g.args(0, extra, 0)).build());
        return gradIn;
    }
}
