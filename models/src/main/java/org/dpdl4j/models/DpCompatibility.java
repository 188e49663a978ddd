package org.dpdl4j.models;

import java.util.Map;
import org.deeplearning4j.nn.conf.CNN2DFormat;
import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.GradientNormalization;
import org.deeplearning4j.nn.conf.InputPreProcessor;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.layers.BaseLayer;
import org.deeplearning4j.nn.conf.layers.BatchNormalization;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.Layer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;
import org.deeplearning4j.nn.conf.preprocessor.CnnToFeedForwardPreProcessor;
import org.deeplearning4j.nn.conf.preprocessor.FeedForwardToCnnPreProcessor;
import org.nd4j.linalg.activations.impl.ActivationSoftmax;
import org.nd4j.linalg.lossfunctions.impl.LossMCXENT;
import org.nd4j.linalg.lossfunctions.impl.LossNegativeLogLikelihood;

/**
 * Checks that a network is one whose per-example gradients the DP-SGD engine computes exactly.
 * Supported: {@link ConvolutionLayer} (2-D, NCHW, Truncate/Strict mode with explicit padding),
 * {@link SubsamplingLayer} (2-D max or average pooling), {@link DenseLayer}, and a final
 * {@link OutputLayer} with softmax and cross-entropy (MCXENT / negative log-likelihood); the
 * preprocessors between them. Layers that mix examples (batch normalisation) or that the engine
 * does not execute (dropout, weight noise, constraints, DL4J's own gradient normalisation) are
 * rejected with the layer's index and what to use instead.
 */
public final class DpCompatibility {
    private DpCompatibility() {
    }

    /**
     * @throws IllegalArgumentException naming the first unsupported layer, setting or preprocessor
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
            if (layer instanceof BatchNormalization) {
                throw new IllegalArgumentException(where + ": batch normalisation mixes the examples of a batch, so "
                        + "per-example gradients (and DP-SGD's guarantee) are not defined; remove it (tempered-sigmoid "
                        + "activations are the usual replacement in DP training)");
            }
            if (layer.getClass() == ConvolutionLayer.class) {
                ConvolutionLayer c = (ConvolutionLayer) layer;
                if (c.getCnn2dDataFormat() != CNN2DFormat.NCHW) {
                    throw new IllegalArgumentException(where + ": data format " + c.getCnn2dDataFormat() + " is not supported; use NCHW");
                }
                requireExplicitPadding(where, c.getConvolutionMode());
            } else if (layer.getClass() == SubsamplingLayer.class) {
                SubsamplingLayer s = (SubsamplingLayer) layer;
                if (s.getPoolingType() != org.deeplearning4j.nn.conf.layers.PoolingType.MAX && s.getPoolingType() != org.deeplearning4j.nn.conf.layers.PoolingType.AVG) {
                    throw new IllegalArgumentException(where + ": pooling type " + s.getPoolingType() + " is not supported; use MAX or AVG");
                }
                if (s.getCnn2dDataFormat() != CNN2DFormat.NCHW) {
                    throw new IllegalArgumentException(where + ": data format " + s.getCnn2dDataFormat() + " is not supported; use NCHW");
                }
                requireExplicitPadding(where, s.getConvolutionMode());
            } else if (layer.getClass() == DenseLayer.class) {
                if (((DenseLayer) layer).hasLayerNorm()) {
                    throw new IllegalArgumentException(where + ": layer normalisation (hasLayerNorm) is not supported by "
                            + "the DP-SGD engine; remove it");
                }
                if (last) {
                    throw new IllegalArgumentException(where + ": the last layer must be an OutputLayer with softmax and MCXENT loss");
                }
            } else if (layer.getClass() == OutputLayer.class) {
                OutputLayer o = (OutputLayer) layer;
                if (!last) {
                    throw new IllegalArgumentException(where + ": an OutputLayer must be the last layer");
                }
                if (!(o.getActivationFn() instanceof ActivationSoftmax)
                        || !(o.getLossFn() instanceof LossMCXENT || o.getLossFn() instanceof LossNegativeLogLikelihood)
                        || ((LossMCXENT) o.getLossFn()).getWeights() != null) {
                    throw new IllegalArgumentException(where + ": the output layer must use softmax activation with "
                            + "unweighted MCXENT or NEGATIVELOGLIKELIHOOD loss, got " + o.getActivationFn() + " / " + o.getLossFn());
                }
            } else {
                throw new IllegalArgumentException(where + ": this layer type is not supported by the DP-SGD engine; supported "
                        + "are ConvolutionLayer, SubsamplingLayer, DenseLayer and a final OutputLayer");
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
            InputPreProcessor p = e.getValue();
            if (!(p instanceof CnnToFeedForwardPreProcessor || p instanceof FeedForwardToCnnPreProcessor)) {
                throw new IllegalArgumentException("input preprocessor of layer " + e.getKey() + " ("
                        + p.getClass().getSimpleName() + ") is not supported by the DP-SGD engine");
            }
            if (p instanceof CnnToFeedForwardPreProcessor c && c.getFormat() != CNN2DFormat.NCHW) {
                throw new IllegalArgumentException("input preprocessor of layer " + e.getKey() + " must use NCHW");
            }
        }
    }

    private static void requireExplicitPadding(String where, ConvolutionMode mode) {
        if (mode != ConvolutionMode.Truncate && mode != ConvolutionMode.Strict) {
            throw new IllegalArgumentException(where + ": convolution mode " + mode
                    + " is not supported; use explicit padding with ConvolutionMode.Truncate");
        }
    }
}
