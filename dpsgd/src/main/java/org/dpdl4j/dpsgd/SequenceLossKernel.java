package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.lossfunctions.ILossFunction;

/**
 * DL4J's {@code RnnOutputLayer} (a dense head on every time step) and {@code RnnLossLayer} (none): input [B, C, T],
 * labels [B, outputs, T] in NCW, an optional label mask [B, T]. As DL4J computes them, the steps become rows (example i's
 * in rows iT … iT + T − 1), DL4J's own loss gives each row's score and dL/dz (a masked step scores 0 and passes no
 * gradient), and an example's loss is the sum over its steps. Its gradient is the sum of its T rows' gradients,
 * Σ_t x_itᵀδ_it, whose norm the dense head's grouped norms give exactly. Only the label mask masks the loss: with a
 * feature mask and no label mask, DL4J 1.0.0-M2.1 scores every step, padded ones included (checked against its gradient
 * in {@code SimpleRnnKernelTest}); the feature mask still reaches the layers below.
 */
final class SequenceLossKernel extends OutputKernel {
    private final DenseKernel head; // or null for an RnnLossLayer
    private final IActivation activation;
    private final ILossFunction loss;
    private INDArray preOutput; // [B·T, outputs]
    private long steps;
    private long[] inShape;

    SequenceLossKernel(DenseKernel head, IActivation activation, ILossFunction loss) {
        this.head = head;
        this.activation = activation;
        this.loss = loss;
    }

    @Override
    int inputRank() {
        return 3;
    }

    @Override
    boolean acceptsMask() {
        return true;
    }

    private void share() {
        if (head != null) {
            head.perExample = perExample;
            head.trainable = trainable;
            head.training = training;
        }
    }

    /** [B, C, T] → [B·T, C], example-major. */
    private static INDArray rows(INDArray x) {
        return x.permute(0, 2, 1).dup('c').reshape('c', x.size(0) * x.size(2), x.size(1));
    }

    /** [B·T, C] → [B, C, T]. */
    private INDArray sequences(INDArray r) {
        return r.reshape('c', r.size(0) / steps, steps, r.size(1)).permute(0, 2, 1).dup('c');
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        if (x.rank() != 3) {
            throw new IllegalArgumentException("an RnnOutputLayer reads sequences [B, C, T], got " + java.util.Arrays.toString(x.shape()));
        }
        share();
        inShape = x.shape();
        steps = x.size(2);
        INDArray z = head != null ? head.forward(rows(x), keep) : rows(x);
        if (keep) {
            preOutput = z;
        }
        return sequences(activation.getActivation(z.dup(), training));
    }

    /** The label mask of the steps as a column [B·T, 1], or null. */
    private INDArray stepMask(INDArray labelMask) {
        INDArray m = labelMask;
        if (m == null) {
            return null;
        }
        if (m.rank() != 2 || m.size(1) != steps) {
            throw new IllegalArgumentException("the label mask of an RnnOutputLayer must be [B, T] = [" + inShape[0] + ", " + steps
                    + "], got " + java.util.Arrays.toString(m.shape()));
        }
        return m.castTo(preOutput.dataType()).dup('c').reshape('c', m.length(), 1);
    }

    private void requireSequenceLabels(INDArray labels) {
        if (labels.rank() != 3 || labels.size(2) != steps) {
            throw new IllegalArgumentException("an RnnOutputLayer's labels are [B, outputs, T] with T = " + steps + " (a label per "
                    + "time step), got " + java.util.Arrays.toString(labels.shape()));
        }
    }

    @Override
    INDArray loss(INDArray labels, INDArray labelMask) {
        requireSequenceLabels(labels);
        INDArray scores = loss.computeScoreArray(rows(labels), preOutput.dup(), activation, stepMask(labelMask));
        return scores.reshape('c', scores.length() / steps, steps).sum(1);
    }

    @Override
    INDArray backwardFromLabels(INDArray labels, INDArray labelMask, boolean needInputGradient) {
        requireSequenceLabels(labels);
        share();
        INDArray dLdz = loss.computeGradient(rows(labels), preOutput.dup(), activation, stepMask(labelMask));
        INDArray g = head != null ? head.backwardFromDelta(dLdz, needInputGradient) : (needInputGradient ? dLdz : null);
        return g == null ? null : sequences(g);
    }

    @Override
    INDArray outputMask() {
        return mask;
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        if (head != null) {
            head.addGroupSquaredNorms(sq, (int) steps);
        }
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return true;
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) {
        if (head != null) {
            head.addGroupSquaredNorms(sq, (int) (k * steps));
        }
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> views) {
        if (head != null) {
            head.addWeightedSum(w.reshape('c', w.length(), 1).repeat(1, steps).reshape('c', w.length() * steps, 1), views);
        }
    }

    @Override
    void addSum(Map<String, INDArray> views) {
        if (head != null) {
            head.addSum(views);
        }
    }

    @Override
    void zeroNonFinite() {
        if (head != null) {
            head.zeroNonFinite();
        }
    }

    @Override
    void clear() {
        if (head != null) {
            head.clear();
        }
        preOutput = null;
    }
}
