package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * DL4J's {@code GlobalPoolingLayer} on NCHW activations [B, C, H, W] → [B, C]: average, sum or max over the H·W
 * positions of each channel (the gradient of max goes to the first position holding the maximum). No parameters.
 */
final class GlobalPoolingKernel extends LayerKernel {
    /** {@inheritDoc} ([B, c, h, w]) */
    @Override
    int inputRank() {
        return 4;
    }

    enum Kind { AVG, SUM, MAX }

    private final Kind kind;
    private long[] inShape;
    private INDArray argmax; // [B·C] flat position of each maximum (MAX)

    GlobalPoolingKernel(Kind kind) {
        this.kind = kind;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        if (x.rank() != 4) {
            throw new IllegalArgumentException("global pooling expects NCHW activations [B, C, H, W], got shape "
                    + java.util.Arrays.toString(x.shape()));
        }
        inShape = x.shape();
        INDArray rows = x.dup('c').reshape('c', inShape[0] * inShape[1], inShape[2] * inShape[3]);
        INDArray out = switch (kind) {
            case AVG -> rows.mean(1);
            case SUM -> rows.sum(1);
            case MAX -> {
                if (keep) {
                    argmax = rows.argMax(1);
                }
                yield rows.max(1);
            }
        };
        return out.reshape('c', inShape[0], inShape[1]);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        if (!needInputGradient) {
            return null;
        }
        long bc = inShape[0] * inShape[1];
        long positions = inShape[2] * inShape[3];
        INDArray g = gradOutput.dup('c').reshape('c', bc, 1);
        INDArray rows;
        if (kind == Kind.MAX) {
            rows = Nd4j.zeros(gradOutput.dataType(), bc, positions);
            long[] at = argmax.toLongVector();
            for (int r = 0; r < bc; r++) {
                rows.putScalar(r, at[r], g.getDouble(r, 0));
            }
        } else {
            rows = Nd4j.zeros(gradOutput.dataType(), bc, positions).addiColumnVector(
                    kind == Kind.AVG ? g.divi(positions) : g);
        }
        return rows.reshape('c', inShape);
    }

    @Override
    void clear() {
        argmax = null;
    }
}
