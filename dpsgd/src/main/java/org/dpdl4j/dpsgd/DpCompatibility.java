package org.dpdl4j.dpsgd;

import java.util.Map;
import org.deeplearning4j.nn.conf.GradientNormalization;
import org.deeplearning4j.nn.conf.InputPreProcessor;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.layers.BaseLayer;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.Layer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;

/**
 * Checks that a network is one whose per-example gradients the DP-SGD engine computes exactly: every layer's
 * configuration class has a kernel in the registry ({@link LayerKernels}: today {@link ConvolutionLayer} (2-D, NCHW,
 * Truncate/Strict mode with explicit padding), {@link SubsamplingLayer} (2-D max or average pooling),
 * {@link DenseLayer}, and a final {@link OutputLayer} with softmax and cross-entropy) and settings it accepts; the
 * preprocessors between layers are reshapes. Layers that mix examples (batch normalisation) or that the engine does
 * not execute (dropout, weight noise, constraints, DL4J's own gradient normalisation) are rejected with the layer's
 * index and what to use instead.
 */
public final class DpCompatibility {
    private DpCompatibility() {
    }

    /**
     * @param conf a DL4J network configuration
     * @throws IllegalArgumentException naming the first unsupported layer, setting or preprocessor, and what to use instead
     */
    public static void check(MultiLayerConfiguration conf) {
        int n = conf.getConfs().size();
        if (n == 0) {
            throw new IllegalArgumentException("the network has no layers");
        }
        for (int i = 0; i < n; i++) {
            Layer layer = conf.getConf(i).getLayer();
            String where = "layer " + i + " (" + layer.getClass().getSimpleName()
                    + (layer.getLayerName() != null ? " '" + layer.getLayerName() + "'" : "") + ")";
            boolean last = i == n - 1;
            LayerKernels.of(layer, where).check(layer, where);
            if (layer.getClass() == OutputLayer.class && !last) {
                throw new IllegalArgumentException(where + ": an OutputLayer must be the last layer");
            }
            if (last && layer.getClass() != OutputLayer.class) {
                throw new IllegalArgumentException(where + ": the last layer must be an OutputLayer with softmax and MCXENT loss");
            }
            if (layer.getIDropout() != null) {
                throw new IllegalArgumentException(where + ": dropout is not supported by the DP-SGD engine; remove dropOut()");
            }
            if (layer instanceof BaseLayer b) {
                if (b.getWeightNoise() != null) {
                    throw new IllegalArgumentException(where + ": weight noise is not supported by the DP-SGD engine");
                }
                if (b.getGradientNormalization() != null && b.getGradientNormalization() != GradientNormalization.None) {
                    throw new IllegalArgumentException(where + ": DL4J gradient normalisation " + b.getGradientNormalization()
                            + " would act on the noisy gradient; use DP-SGD's clipping norm C instead");
                }
                if (b.getConstraints() != null && !b.getConstraints().isEmpty()) {
                    throw new IllegalArgumentException(where + ": parameter constraints are not supported by the DP-SGD engine");
                }
            }
        }
        for (Map.Entry<Integer, InputPreProcessor> e : conf.getInputPreProcessors().entrySet()) {
            LayerKernels.preprocessor(e.getValue(), "layer " + e.getKey()); // throws for one the engine cannot run
        }
    }
}
