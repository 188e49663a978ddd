package org.dpdl4j.dpsgd;

import org.dpdl4j.models.FeatureStandardization;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * {@link FeatureStandardization}: each example's input standardised by the layer's fixed per-channel statistics; no
 * parameters, an input gradient of its own (the factor per channel), deterministic (part of a run's fixed prefix when
 * it stands first). A mask passes through: the padding is standardised too and stays masked where it is used.
 */
final class FeatureStandardizationKernel extends LayerKernel {
    private final FeatureStandardization conf;

    FeatureStandardizationKernel(FeatureStandardization conf) {
        this.conf = conf;
    }

    @Override
    boolean passesShape() {
        return true;
    }

    @Override
    boolean acceptsMask() {
        return true;
    }

    @Override
    INDArray forward(INDArray input, boolean keep) {
        return conf.standardise(input);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        return needInputGradient ? conf.inputGradient(gradOutput) : null;
    }
}
