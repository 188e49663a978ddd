package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * DL4J's {@code GlobalPoolingLayer} on NCHW activations [B, C, H, W] or sequences [B, C, T] → [B, C]: average, sum or
 * max over the positions of each channel (the gradient of max goes to the first position holding the maximum). A
 * sequence's feature mask [B, T] leaves its padded steps out, as DL4J's masked pooling does: the average is over the
 * example's own steps, the maximum over them alone. No parameters.
 */
final class GlobalPoolingKernel extends LayerKernel {
    /** {@inheritDoc} (a sequence's steps are masked out of the pooling) */
    @Override
    boolean acceptsMask() {
        return true;
    }

    /** {@inheritDoc} (the time steps are pooled away) */
    @Override
    INDArray outputMask() {
        return null;
    }

    private INDArray keptMask; // [B·C, P] of the pass, or null

    enum Kind { AVG, SUM, MAX }

    private final Kind kind;
    private long[] inShape;
    private INDArray argmax; // [B·C] flat position of each maximum (MAX)

    GlobalPoolingKernel(Kind kind) {
        this.kind = kind;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        if (x.rank() != 4 && x.rank() != 3) {
            throw new IllegalArgumentException("global pooling expects NCHW activations [B, C, H, W] or sequences [B, C, T], "
                    + "got shape " + java.util.Arrays.toString(x.shape()));
        }
        if (mask != null && x.rank() != 3) {
            throw new IllegalArgumentException("a feature mask reaches global pooling over images; masks are for sequences");
        }
        inShape = x.shape();
        long positions = x.length() / (inShape[0] * inShape[1]);
        INDArray rows = x.dup('c').reshape('c', inShape[0] * inShape[1], positions);
        INDArray m = mask == null ? null : rowMask(mask.castTo(x.dataType()), inShape[1]); // [B·C, T]
        INDArray out = switch (kind) {
            case AVG -> m == null ? rows.mean(1) : rows.mul(m).sum(1).divi(m.sum(1));
            case SUM -> m == null ? rows.sum(1) : rows.mul(m).sum(1);
            case MAX -> {
                INDArray r = m == null ? rows : rows.add(m.rsub(1.0).muli(-Double.MAX_VALUE)); // a masked step never wins
                if (keep) {
                    argmax = r.argMax(1);
                }
                yield r.max(1);
            }
        };
        keptMask = keep ? m : null;
        return out.reshape('c', inShape[0], inShape[1]);
    }

    /** Each example's mask [B, T] repeated for its C channels: [B·C, T]. */
    private static INDArray rowMask(INDArray mask, long channels) {
        long b = mask.size(0);
        long t = mask.size(1);
        return mask.reshape('c', b, 1, t).repeat(1, channels).reshape('c', b * channels, t);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        if (!needInputGradient) {
            return null;
        }
        long bc = inShape[0] * inShape[1];
        long positions = inShape.length == 4 ? inShape[2] * inShape[3] : inShape[2];
        INDArray g = gradOutput.dup('c').reshape('c', bc, 1);
        INDArray rows;
        if (kind == Kind.MAX) {
            rows = Nd4j.zeros(gradOutput.dataType(), bc, positions);
            long[] at = argmax.toLongVector();
            for (int r = 0; r < bc; r++) {
                rows.putScalar(r, at[r], g.getDouble(r, 0));
            }
        } else if (keptMask != null) { // the masked steps get no gradient; the average is over the unmasked ones
            rows = keptMask.mulColumnVector(kind == Kind.AVG ? g.div(keptMask.sum(1).reshape(bc, 1)) : g);
        } else {
            rows = Nd4j.zeros(gradOutput.dataType(), bc, positions).addiColumnVector(
                    kind == Kind.AVG ? g.divi(positions) : g);
        }
        return rows.reshape('c', inShape);
    }

    @Override
    void clear() {
        argmax = null;
        keptMask = null;
    }
}
