package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.random.impl.BernoulliDistribution;
import org.nd4j.linalg.factory.Nd4j;

/**
 * DL4J's (inverted) {@code Dropout} on a layer's input in training (for the layers on which DL4J applies it, see
 * {@link NetworkPlan#appliesDropout}): x·m/p with m ~ Bernoulli(p) drawn for every element,
 * p the retain probability; the identity at inference. Every example has its own mask, and its gradient is taken with
 * that mask (the backward pass multiplies by the same m/p), so each per-example gradient is the gradient of that
 * example's own loss under the randomness the step drew. Clipping bounds each example's contribution whatever its
 * mask, so the step's privacy event is unchanged.
 */
final class DropoutKernel extends LayerKernel {
    /** {@inheritDoc} (element-wise: a masked step stays masked downstream) */
    @Override
    boolean acceptsMask() {
        return true;
    }

    /** {@inheritDoc} */
    @Override
    boolean passesShape() {
        return true;
    }

    /** Draws a mask per pass. */
    @Override
    boolean deterministic() {
        return false;
    }

    private final double p;
    private INDArray scale; // m/p of the last training pass
    /** A mask to use instead of a random one (tests only): the same shape as the input, values m/p. */
    INDArray fixedScale;

    DropoutKernel(double p) {
        if (!(p > 0 && p <= 1)) {
            throw new IllegalArgumentException("dropout retain probability must be in (0, 1], got " + p);
        }
        this.p = p;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        if (!training || p == 1) {
            scale = null;
            return x;
        }
        if (fixedScale != null) {
            scale = fixedScale.castTo(x.dataType());
        } else {
            scale = Nd4j.createUninitialized(x.dataType(), x.shape(), 'c');
            Nd4j.getExecutioner().exec(new BernoulliDistribution(scale, p));
            scale.divi(p);
        }
        return x.mul(scale);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        if (!needInputGradient) {
            return null;
        }
        return scale == null ? gradOutput : gradOutput.mul(scale);
    }

    @Override
    void clear() {
        scale = null;
    }
}
