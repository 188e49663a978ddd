package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.lossfunctions.ILossFunction;

/**
 * An output layer with any DL4J loss whose score is a sum of per-example terms: {@code OutputLayer} (a dense head) or
 * {@code LossLayer} (no parameters), with its own activation and {@link ILossFunction}, e.g. MCXENT or
 * NEGATIVELOGLIKELIHOOD with class weights, XENT with sigmoid (multi-label), MSE or L1 (regression). DL4J's own loss
 * computes both the per-example loss ({@link ILossFunction#computeScoreArray}, [B]) and dL/dz of each example
 * ({@link ILossFunction#computeGradient}, un-averaged, row i a function of example i alone), so the per-example
 * gradients are exact by construction; the head's are those of {@link DenseKernel}.
 */
final class LossKernel extends OutputKernel {
    private final DenseKernel head; // z = xW + b (identity activation), or null for a LossLayer: z = x
    private final IActivation activation;
    private final ILossFunction loss;
    private INDArray preOutput;

    /**
     * @param head       the dense head computing the pre-activation z with the identity activation, or null (z = input)
     * @param activation the layer's activation (applied to z by the loss, as DL4J does)
     * @param loss       the layer's loss
     */
    LossKernel(DenseKernel head, IActivation activation, ILossFunction loss) {
        this.head = head;
        this.activation = activation;
        this.loss = loss;
    }

    @Override
    int inputRank() {
        return head != null ? 2 : 0;
    }

    @Override
    boolean passesShape() {
        return head == null;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        share();
        INDArray z = head != null ? head.forward(x, keep) : x;
        if (keep) {
            preOutput = z;
        }
        return activation.getActivation(z.dup(), training);
    }

    private void share() {
        if (head != null) {
            passSettingsTo(head);
        }
    }

    @Override
    INDArray loss(INDArray labels, INDArray labelMask) {
        return loss.computeScoreArray(labels, preOutput.dup(), activation, labelMask).reshape(labels.size(0));
    }

    @Override
    INDArray backwardFromLabels(INDArray labels, INDArray labelMask, boolean needInputGradient) {
        share();
        INDArray dLdz = loss.computeGradient(labels, preOutput.dup(), activation, labelMask);
        if (head == null) {
            return needInputGradient ? dLdz : null;
        }
        return head.backwardFromDelta(dLdz, needInputGradient);
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        if (head != null) {
            head.addSquaredNorms(sq);
        }
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return true;
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) {
        if (head != null) {
            head.addGroupSquaredNorms(sq, k);
        }
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> views) {
        if (head != null) {
            head.addWeightedSum(w, views);
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
