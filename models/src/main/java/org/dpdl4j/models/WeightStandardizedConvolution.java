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

    /**
     * A layer configuration from its builder.
     *
     * @param b the builder holding ε and DL4J's convolution settings
     */
    protected WeightStandardizedConvolution(Builder b) {
        super(b);
        this.eps = b.eps;
    }

    /**
     * ε added to each output channel's weight variance.
     *
     * @return ε, &gt; 0 (default 1e-5)
     */
    public double getEps() {
        return eps;
    }

    /**
     * Sets ε, added to each output channel's weight variance (used by JSON deserialisation; not validated here,
     * unlike {@link Builder#eps}).
     *
     * @param eps ε; should be &gt; 0
     */
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

        /**
         * A builder with the given kernel size, as DL4J's {@code ConvolutionLayer.Builder(int...)}.
         *
         * @param kernelSize the kernel's height and width in pixels, each ≥ 1
         */
        public Builder(int... kernelSize) {
            super(kernelSize);
        }

        /**
         * Sets ε, added to each output channel's weight variance.
         *
         * @param eps ε &gt; 0 (default 1e-5)
         * @return this builder
         * @throws IllegalArgumentException if {@code eps} is not &gt; 0 (NaN included)
         */
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
