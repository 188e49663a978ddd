package org.dpdl4j.models;

import java.util.Collection;
import org.deeplearning4j.nn.conf.InputPreProcessor;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.memory.LayerMemoryReport;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The 2-D scattering transform ({@link Scattering2D}) as a DL4J layer: a fixed, data-independent feature extractor with
 * no parameters, as Tramèr &amp; Boneh put it in front of a linear model or a small CNN ("Differentially Private
 * Learning Needs Better Features (or Much More Data)", ICLR 2021, arXiv:2011.11660, Sec. 3). It serialises with
 * {@code ModelSerializer} like any DL4J layer (by class name) and runs in {@code output()}.
 *
 * <p>Input: NCHW images [B, C, H, W], or flattened [B, C·H·W] (the input type's H, W, C), with H, W &gt; 2^J. Output: [B, C·K, ⌊H/2^J⌋, ⌊W/2^J⌋] with K = 1 + JL +
 * L²J(J−1)/2 (81 for the defaults J = 2, L = 8). With {@link FeatureStatistics} (built with
 * {@link Builder#features}) the output is normalised by them channel by channel; statistics computed from private data
 * are a release of their own, to be counted ({@link FeatureStatistics}). It has no input gradient: it must come before every layer with
 * trained parameters (DL4J's backpropagation gets none from it, and dpdl4j's engine refuses a trained layer before it).
 */
public class Scattering extends FeatureStatisticsLayer {
    private int scales = 2;
    private int angles = 8;
    private long inputHeight;
    private long inputWidth;
    private long inputChannels;

    /** For JSON. */
    public Scattering() {
    }

    /**
     * A layer configuration from its builder; the feature statistics, if any, are copied into μ and v arrays (one entry
     * per output channel, C·K).
     *
     * @param b the builder holding J, L, the optional feature statistics and DL4J's layer settings
     */
    protected Scattering(Builder b) {
        super(b);
        this.scales = b.scales;
        this.angles = b.angles;
    }

    /**
     * J, the number of scales.
     *
     * @return J, in [1, 8] when built by {@link Builder} (default 2)
     */
    public int getScales() {
        return scales;
    }

        /**
     * Sets J, the number of scales (used by JSON deserialisation; not validated here, unlike {@link Builder#scales}).
     *
     * @param scales J; should be in [1, 8]
     */
    public void setScales(int scales) {
        this.scales = scales;
    }

    /**
     * L, the number of angles.
     *
     * @return L, in [1, 64] when built by {@link Builder} (default 8)
     */
    public int getAngles() {
        return angles;
    }

        /**
     * Sets L, the number of angles (used by JSON deserialisation; not validated here, unlike {@link Builder#angles}).
     *
     * @param angles L; should be in [1, 64]
     */
    public void setAngles(int angles) {
        this.angles = angles;
    }

    /**
     * H, the input images' height (set from the input type).
     *
     * @return H in pixels; 0 before the input type is set
     */
    public long getInputHeight() {
        return inputHeight;
    }

        /**
     * Sets H, the input images' height (used by JSON deserialisation; normally set from the input type).
     *
     * @param inputHeight H in pixels, ≥ 1
     */
    public void setInputHeight(long inputHeight) {
        this.inputHeight = inputHeight;
    }

    /**
     * W, the input images' width (set from the input type).
     *
     * @return W in pixels; 0 before the input type is set
     */
    public long getInputWidth() {
        return inputWidth;
    }

        /**
     * Sets W, the input images' width (used by JSON deserialisation; normally set from the input type).
     *
     * @param inputWidth W in pixels, ≥ 1
     */
    public void setInputWidth(long inputWidth) {
        this.inputWidth = inputWidth;
    }

    /**
     * C, the input images' channels (set from the input type).
     *
     * @return C, ≥ 1; 0 before the input type is set
     */
    public long getInputChannels() {
        return inputChannels;
    }

        /**
     * Sets C, the input images' channels (used by JSON deserialisation; normally set from the input type).
     *
     * @param inputChannels C, ≥ 1
     */
    public void setInputChannels(long inputChannels) {
        this.inputChannels = inputChannels;
    }

    /**
     * The transform's output normalised in place by the fixed statistics, (x − μ_c)/√(v_c + 10⁻⁵) (0 where v_c = 0), if
     * the layer has them ({@link FeatureStatistics}); otherwise the output unchanged.
     *
     * @param features [B, C·K, H', W'], the transform's output; overwritten when the layer has statistics
     * @return {@code features} itself, normalised in place or unchanged
     * @throws IllegalArgumentException if the statistics do not have one entry per channel, or are invalid for
     *                                  {@link FeatureStatistics}
     * @throws IllegalStateException    if the layer has only one of μ and v
     */
    public INDArray normalise(INDArray features) {
        FeatureStatistics f = statistics(features.size(1));
        if (f == null) {
            return features;
        }
        long c = features.size(1);
        INDArray mean = Nd4j.createFromArray(f.mean()).castTo(features.dataType()).reshape(1, c, 1, 1);
        INDArray scale = Nd4j.createFromArray(f.scale()).castTo(features.dataType()).reshape(1, c, 1, 1);
        return features.subi(mean).muli(scale);
    }

    /**
     * K = 1 + JL + L²J(J−1)/2, the output channels per input channel.
     *
     * @return K, ≥ 1 (81 for J = 2, L = 8)
     */
    public int coefficients() {
        return 1 + scales * angles + angles * angles * scales * (scales - 1) / 2;
    }

    @Override
    public org.deeplearning4j.nn.api.Layer instantiate(NeuralNetConfiguration conf, Collection<TrainingListener> listeners,
                                                       int index, INDArray paramsView, boolean initializeParams,
                                                       DataType dataType) {
        return LayerWiring.wire(new ScatteringLayer(conf, dataType), conf, listeners, index, paramsView, initializeParams,
                initializer());
    }

    /**
     * The input as NCHW images: [B, C, H, W] as it is, [B, C·H·W] reshaped with this layer's input type.
     *
     * @param input [B, C, H, W] images, or [B, C·H·W] flattened images matching this layer's input type
     * @return [B, C, H, W] images (the input itself when it is 4-D, else a reshaped view or copy)
     * @throws IllegalArgumentException for any other shape
     */
    public INDArray images(INDArray input) {
        if (input.rank() == 4) {
            return input;
        }
        long c = inputChannels;
        if (input.rank() == 2 && c > 0 && input.size(1) == c * inputHeight * inputWidth) {
            return input.reshape('c', input.size(0), c, inputHeight, inputWidth);
        }
        throw new IllegalArgumentException("Scattering '" + getLayerName() + "' expects images [B, " + c + ", " + inputHeight + ", "
                + inputWidth + "] or flattened [B, " + c * inputHeight * inputWidth + "], got " + java.util.Arrays.toString(input.shape()));
    }

    /** {H, W, C} of convolutional or flattened convolutional input. */
    private long[] imageShape(InputType inputType) {
        long[] hwc;
        if (inputType instanceof InputType.InputTypeConvolutional c) {
            hwc = new long[]{c.getHeight(), c.getWidth(), c.getChannels()};
        } else if (inputType instanceof InputType.InputTypeConvolutionalFlat f) {
            hwc = new long[]{f.getHeight(), f.getWidth(), f.getDepth()};
        } else {
            throw new IllegalArgumentException("Scattering '" + getLayerName() + "': input must be images (InputType.convolutional "
                    + "or convolutionalFlat), got " + inputType);
        }
        int step = 1 << scales;
        if (hwc[0] <= step || hwc[1] <= step) {
            throw new IllegalArgumentException("Scattering '" + getLayerName() + "' with J = " + scales + " needs images larger than "
                    + step + "x" + step + ", got " + hwc[0] + "x" + hwc[1]);
        }
        return hwc;
    }

    @Override
    public InputType getOutputType(int layerIndex, InputType inputType) {
        long[] hwc = imageShape(inputType);
        if (getFeatureMean() != null && getFeatureMean().length != hwc[2] * coefficients()) {
            throw new IllegalArgumentException("Scattering '" + getLayerName() + "': feature statistics for " + getFeatureMean().length
                    + " channels, but the transform of " + hwc[2] + "-channel images has " + hwc[2] * coefficients());
        }
        int step = 1 << scales;
        return InputType.convolutional(hwc[0] / step, hwc[1] / step, hwc[2] * coefficients());
    }

    @Override
    public void setNIn(InputType inputType, boolean override) {
        long[] hwc = imageShape(inputType);
        if (inputHeight <= 0 || override) {
            inputHeight = hwc[0];
            inputWidth = hwc[1];
            inputChannels = hwc[2];
        }
    }

    /** None: the layer reads flattened images itself, so that no preprocessor stands before it (it has no input gradient). */
    @Override
    public InputPreProcessor getPreProcessorForInputType(InputType inputType) {
        imageShape(inputType);
        return null;
    }

    @Override
    public LayerMemoryReport getMemoryReport(InputType inputType) {
        InputType out = getOutputType(-1, inputType);
        return new LayerMemoryReport.Builder(layerName, Scattering.class, inputType, out)
                .standardMemory(0, 0).workingMemory(0, 0, 0, 0).cacheMemory(0, 0).build();
    }

    /** Builds a {@link Scattering}: {@code new Scattering.Builder().scales(2).angles(8).build()}. */
    public static class Builder extends FeatureStatisticsLayer.Builder<Builder> {
        private int scales = 2;
        private int angles = 8;

        /**
         * Sets J, the number of scales.
         *
         * @param scales J in [1, 8] (default 2)
         * @return this builder
         * @throws IllegalArgumentException if J is outside [1, 8]
         */
        public Builder scales(int scales) {
            if (scales < 1 || scales > 8) {
                throw new IllegalArgumentException("scales J must be in [1, 8], got " + scales);
            }
            this.scales = scales;
            return this;
        }

        /**
         * Sets L, the number of angles.
         *
         * @param angles L in [1, 64] (default 8)
         * @return this builder
         * @throws IllegalArgumentException if L is outside [1, 64]
         */
        public Builder angles(int angles) {
            if (angles < 1 || angles > 64) {
                throw new IllegalArgumentException("angles L must be in [1, 64], got " + angles);
            }
            this.angles = angles;
            return this;
        }

        @Override
        @SuppressWarnings("unchecked")
        public Scattering build() {
            return new Scattering(this);
        }
    }
}
