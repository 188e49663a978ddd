package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * DL4J's {@code RnnToFeedForwardPreProcessor} ([B, C, T] → [B·T, C], example i's steps in rows iT … iT + T − 1; a
 * matrix passes unchanged) and {@code FeedForwardToRnnPreProcessor} (back: [B·T, C] → [B, C, T], T = rows / B), in
 * NCW. The feature mask [B, T] is carried through unchanged, for the layers after the steps are folded back.
 */
final class SequenceReshapeKernel extends LayerKernel {
    private final boolean unfold; // true: sequence to rows, false: rows to sequence
    private long[] inShape;

    SequenceReshapeKernel(boolean unfold) {
        this.unfold = unfold;
    }

    /** Whether it turns a sequence into rows (else rows back into a sequence). */
    boolean unfolds() {
        return unfold;
    }

    @Override
    boolean acceptsMask() {
        return true;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        inShape = x.shape();
        if (unfold) {
            if (x.rank() == 2) {
                return x;
            }
            return x.permute(0, 2, 1).dup('c').reshape('c', x.size(0) * x.size(2), x.size(1));
        }
        if (x.rank() == 3) {
            return x;
        }
        long t = x.size(0) / examples;
        return x.reshape('c', examples, t, x.size(1)).permute(0, 2, 1).dup('c');
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        if (!needInputGradient) {
            return null;
        }
        if (unfold) {
            if (inShape.length == 2) {
                return gradOutput;
            }
            return gradOutput.reshape('c', inShape[0], inShape[2], inShape[1]).permute(0, 2, 1).dup('c');
        }
        if (inShape.length == 3) {
            return gradOutput;
        }
        return gradOutput.permute(0, 2, 1).dup('c').reshape('c', inShape);
    }
}
