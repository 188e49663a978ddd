package org.dpdl4j.dpsgd;

import java.util.Map;
import org.dpdl4j.dpsgd.spi.PerExampleKernel;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** A user's {@link PerExampleKernel} as the engine runs kernels. */
final class ExternalKernel extends LayerKernel {
    private final PerExampleKernel kernel;
    private long rows;

    ExternalKernel(PerExampleKernel kernel) {
        this.kernel = kernel;
    }

    @Override
    boolean zeroesNonFinite() {
        return false; // the user's kernel keeps its own caches
    }

    @Override
    int inputRank() {
        return kernel.inputRank();
    }

    /** {@inheritDoc} (code the engine does not know: checked by {@link MixingCheck}) */
    @Override
    boolean mayMixExamples() {
        return true;
    }

    @Override
    boolean deterministic() {
        return false; // it may draw random numbers
    }

    @Override
    INDArray forward(INDArray input, boolean keep) {
        rows = input.size(0);
        return kernel.forward(input, training, keep);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        return kernel.backward(gradOutput, needInputGradient);
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        kernel.addSquaredNorms(sq);
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> gradientViews) {
        kernel.addWeightedSum(w, gradientViews);
    }

    @Override
    void addSum(Map<String, INDArray> gradientViews) { // the non-private mode: every example's weight 1
        kernel.addWeightedSum(Nd4j.ones(gradientViews.values().iterator().next().dataType(), rows, 1), gradientViews);
    }

    @Override
    void clear() {
        kernel.clear();
    }
}
