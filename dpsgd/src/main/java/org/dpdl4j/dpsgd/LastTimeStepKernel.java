package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * DL4J's {@code LastTimeStep} wrapper around a recurrent layer that has a kernel: the layer's output [B, H, T] at
 * each example's last step, [B, H]; its gradient goes to that step alone. With a feature mask the last step is the
 * example's last unmasked one (DL4J's {@code TimeSeriesUtils.pullLastTimeSteps}), and the wrapper hands the mask to the
 * layer itself, which DL4J's LSTM then applies in its forward pass but not in its backward pass. When every example's
 * steps come first and its padding after (a mask row of 1s then 0s, as the engine's stored sequences are read), steps
 * after the last one change neither the output nor the gradient, and the layer's kernel computes it exactly; any other
 * mask (padding before the steps, holes, values other than 0 and 1) runs on the exact fallback of the whole wrapper.
 */
final class LastTimeStepKernel extends WrappingKernel {
    private final LayerKernel inner;
    private final FallbackKernel masked;
    private boolean onFallback;
    private long[] innerShape;
    private int[] lastStep; // each example's last step, with a mask; null without one

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
        k.mask = mask;
    }

    /** Each example's last step, for a mask whose every row is 1s then 0s with at least one 1; null for any other. */
    private static int[] lastStepsOfPrefixMask(INDArray mask) {
        double[][] m = mask.castTo(org.nd4j.linalg.api.buffer.DataType.DOUBLE).toDoubleMatrix();
        int[] last = new int[m.length];
        for (int i = 0; i < m.length; i++) {
            int steps = 0;
            while (steps < m[i].length && m[i][steps] == 1.0) {
                steps++;
            }
            for (int t = steps; t < m[i].length; t++) {
                if (m[i][t] != 0.0) {
                    return null;
                }
            }
            if (steps == 0) {
                return null; // DL4J refuses an example with no step; its own layer says so
            }
            last[i] = steps - 1;
        }
        return last;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        lastStep = mask == null ? null : lastStepsOfPrefixMask(mask);
        onFallback = mask != null && lastStep == null;
        if (onFallback) {
            share(masked);
            return masked.forward(x, keep);
        }
        share(inner);
        INDArray out = inner.forward(x, keep);
        innerShape = out.shape();
        if (lastStep == null) {
            return out.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.point(out.size(2) - 1)).dup('c');
        }
        // rows i·T + last(i) of the steps' rows [B·T, H]: a gather, exact whatever the padded steps hold
        long t = out.size(2);
        INDArray rows = out.permute(0, 2, 1).dup('c').reshape('c', out.size(0) * t, out.size(1));
        int[] pick = new int[lastStep.length];
        for (int i = 0; i < pick.length; i++) {
            pick[i] = (int) (i * t + lastStep[i]);
        }
        return Nd4j.pullRows(rows, 1, pick);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        share(current());
        if (onFallback) {
            return masked.backward(gradOutput, needInputGradient);
        }
        INDArray g = Nd4j.zeros(gradOutput.dataType(), innerShape);
        if (lastStep == null) {
            g.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.point(innerShape[2] - 1)).assign(gradOutput);
        } else { // dL/dout[i, :, t] = dL/dy_i where t is example i's last step, 0 elsewhere
            for (int i = 0; i < lastStep.length; i++) {
                g.get(NDArrayIndex.point(i), NDArrayIndex.all(), NDArrayIndex.point(lastStep[i])).assign(gradOutput.getRow(i));
            }
        }
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
        lastStep = null;
        inner.clear();
        masked.clear();
    }
}
