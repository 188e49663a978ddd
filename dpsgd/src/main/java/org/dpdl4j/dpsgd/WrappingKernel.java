package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * A kernel that runs another one inside it ({@link #current()}, which may change from batch to batch): the per-example
 * norms, the sums and the cached state are that kernel's; the subclass adapts the forward and backward passes.
 */
abstract class WrappingKernel extends LayerKernel {
    /** The kernel that holds the current batch's per-example state. */
    abstract LayerKernel current();

    @Override
    boolean deterministic() {
        return current().deterministic();
    }

    @Override
    boolean hasInputGradient() {
        return current().hasInputGradient();
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        current().addSquaredNorms(sq);
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return current().hasGroupSquaredNorms();
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) {
        current().addGroupSquaredNorms(sq, k);
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> gradientViews) {
        current().addWeightedSum(w, gradientViews);
    }

    @Override
    void addSum(Map<String, INDArray> gradientViews) {
        current().addSum(gradientViews);
    }

    @Override
    boolean addsFlatGradients() {
        return current().addsFlatGradients();
    }

    @Override
    void zeroNonFinite() {
        current().zeroNonFinite();
    }

    @Override
    void clear() {
        current().clear();
    }
}
