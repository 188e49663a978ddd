package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * DL4J's {@code LastTimeStep} wrapper around a recurrent layer that has a kernel: the layer's output [B, H, T] at the
 * last step, [B, H]; its gradient goes to that step alone. A batch with a feature mask (where each example's last step
 * is its last unmasked one) runs on the exact fallback of the whole wrapper.
 */
final class LastTimeStepKernel extends WrappingKernel {
    private final LayerKernel inner;
    private final FallbackKernel masked;
    private boolean onFallback;
    private long[] innerShape;

    LastTimeStepKernel(LayerKernel inner, FallbackKernel masked) {
        this.inner = inner;
        this.masked = masked;
    }

    @Override
    int inputRank() {
        return inner.inputRank();
    }

    @Override
    boolean acceptsMask() {
        return true;
    }

    @Override
    INDArray outputMask() {
        return null; // the steps are gone
    }

    private void share(LayerKernel k) {
        passSettingsTo(k);
        k.mask = onFallback ? mask : null;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        onFallback = mask != null;
        if (onFallback) {
            share(masked);
            return masked.forward(x, keep);
        }
        share(inner);
        INDArray out = inner.forward(x, keep);
        innerShape = out.shape();
        return out.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.point(out.size(2) - 1)).dup('c');
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        share(current());
        if (onFallback) {
            return masked.backward(gradOutput, needInputGradient);
        }
        INDArray g = Nd4j.zeros(gradOutput.dataType(), innerShape);
        g.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.point(innerShape[2] - 1)).assign(gradOutput);
        return inner.backward(g, needInputGradient);
    }

    @Override
    LayerKernel current() {
        return onFallback ? masked : inner;
    }

    @Override
    boolean deterministic() {
        return inner.deterministic();
    }

    @Override
    boolean hasInputGradient() {
        return inner.hasInputGradient();
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return inner.hasGroupSquaredNorms();
    }

    @Override
    void clear() {
        inner.clear();
        masked.clear();
    }
}
