package org.dpdl4j.dpsgd;

import org.dpdl4j.models.Scattering;
import org.dpdl4j.models.Scattering2D;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * {@link org.dpdl4j.models.Scattering}: the scattering transform of each example, no parameters and no input gradient
 * (the engine refuses a network that trains a layer before it). Being deterministic it is usually part of a run's fixed
 * prefix, computed once per example ({@link PerExampleGradients#fixedPrefixOutput}).
 */
final class ScatteringKernel extends LayerKernel {
    private final Scattering conf;
    private Scattering2D transform;

    ScatteringKernel(Scattering conf) {
        this.conf = conf;
    }

    @Override
    INDArray forward(INDArray input, boolean keep) {
        INDArray x = conf.images(input);
        int h = (int) x.size(2);
        int w = (int) x.size(3);
        if (transform == null || transform.inputHeight() != h || transform.inputWidth() != w) {
            transform = new Scattering2D(h, w, conf.getScales(), conf.getAngles());
        }
        return conf.normalise(transform.transform(x, 1)); // the DP-SGD workers are this run's threads
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        if (needInputGradient) {
            throw new IllegalStateException("the scattering transform has no input gradient");
        }
        return null;
    }

    @Override
    boolean hasInputGradient() {
        return false;
    }
}
