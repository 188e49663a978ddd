package org.dpdl4j.models;

import java.util.Collection;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * A 2-D convolution with weight standardisation ({@link WeightStandardization}; Qiao et al., arXiv:1903.10520): the
 * layer stores W and convolves with Ŵ, each output channel's kernel standardised to mean 0 and variance 1 over its
 * fan-in. De et al. (arXiv:2204.13650, Sec. 3) pair it with group normalisation for DP-SGD. Everything else (kernel,
 * stride, padding, bias, activation, NCHW) is DL4J's {@link ConvolutionLayer}; it serialises with
 * {@code ModelSerializer} and runs in {@code output()}.
 */
public class WeightStandardizedConvolution extends ConvolutionLayer {
    private double eps = 1e-5;

    /** For JSON. */
    public WeightStandardizedConvolution() {
    }

    protected WeightStandardizedConvolution(Builder b) {
        super(b);
        this.eps = b.eps;
    }

    /** ε added to each output channel's weight variance. */
    public double getEps() {
        return eps;
    }

    public void setEps(double eps) {
        this.eps = eps;
    }

    @Override
    public org.deeplearning4j.nn.api.Layer instantiate(NeuralNetConfiguration conf, Collection<TrainingListener> listeners,
                                                       int index, INDArray paramsView, boolean initializeParams,
                                                       DataType dataType) {
        return LayerWiring.wire(new WeightStandardizedConvolutionLayer(conf, dataType), conf, listeners, index, paramsView, initializeParams,
                initializer());
    }

    /** Builds a {@link WeightStandardizedConvolution} like DL4J's {@code ConvolutionLayer.Builder}. */
    public static class Builder extends ConvolutionLayer.Builder {
        private double eps = 1e-5;

        public Builder(int... kernelSize) {
            super(kernelSize);
        }

        /** @param eps ε &gt; 0 (default 1e-5) */
        public Builder eps(double eps) {
            if (!(eps > 0)) {
                throw new IllegalArgumentException("eps must be > 0, got " + eps);
            }
            this.eps = eps;
            return this;
        }

        @Override
        @SuppressWarnings("unchecked")
        public WeightStandardizedConvolution build() {
            super.build(); // DL4J's checks of the kernel, stride and padding
            return new WeightStandardizedConvolution(this);
        }
    }
}
