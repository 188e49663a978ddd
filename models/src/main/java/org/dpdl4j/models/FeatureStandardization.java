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
 * A network's input standardised channel by channel, (x − μ_c)/√(v_c + 10⁻⁵) (0 where v_c = 0), with fixed statistics
 * μ and v ({@link FeatureStatistics}) that the layer holds and serialises: the place for statistics released by a
 * private mechanism ({@code org.dpdl4j.dpsgd.PrivateNormalisation}, Tramèr &amp; Boneh's data normalisation applied to
 * the raw features), where DL4J's {@code NormalizerStandardize} fitted on the training data would release exact
 * statistics of it. No parameters; without statistics (before they are released) it passes its input on unchanged.
 *
 * <p>Channels follow the input type: images ({@code convolutional} or {@code convolutionalFlat}, NCHW) have one per
 * colour channel over the H·W positions, sequences ({@code recurrent}, [B, f, T]) one per feature over the time steps,
 * vectors ({@code feedForward}) one per entry. The output has the input's shape and type, so the layer stands first in
 * any network. The clipping norms of the release are part of the configuration, fixed before any data are seen: by
 * default those of features in [−R, R] with R = {@link Builder#valueBound} (1: pixels scaled to [0, 1]), C_μ = R·√m and
 * C_s = R²·√m for m channels, which no example exceeds (an example's vector of channel means has m entries each at
 * most R in size).
 */
public class FeatureStandardization extends FeatureStatisticsLayer {
    private long channels;
    private double valueBound = 1;
    private double clipMean;
    private double clipSquares;

    /** For JSON. */
    public FeatureStandardization() {
    }

    /**
     * A layer configuration from its builder.
     *
     * @param b the builder holding R, the optional clipping norms and statistics, and DL4J's layer settings
     */
    protected FeatureStandardization(Builder b) {
        super(b);
        this.valueBound = b.valueBound;
        this.clipMean = b.clipMean;
        this.clipSquares = b.clipSquares;
    }

    /**
     * m, the number of channels statistics are kept for (set from the input type).
     *
     * @return m ≥ 1; 0 before the input type is set
     */
    public long getChannels() {
        return channels;
    }

    /**
     * Sets m (used by JSON deserialisation; normally set from the input type).
     *
     * @param channels m ≥ 1
     */
    public void setChannels(long channels) {
        this.channels = channels;
    }

    /**
     * R, the bound on |x| the default clipping norms assume.
     *
     * @return R &gt; 0 (default 1)
     */
    public double getValueBound() {
        return valueBound;
    }

    /**
     * Sets R (used by JSON deserialisation).
     *
     * @param valueBound R &gt; 0
     */
    public void setValueBound(double valueBound) {
        this.valueBound = valueBound;
    }

    /**
     * C_μ, the clipping norm of an example's vector of channel means in the release.
     *
     * @return C_μ &gt; 0 (R·√m unless given); 0 before the input type is set
     */
    public double getClipMean() {
        return clipMean;
    }

    /**
     * Sets C_μ (used by JSON deserialisation).
     *
     * @param clipMean C_μ &gt; 0
     */
    public void setClipMean(double clipMean) {
        this.clipMean = clipMean;
    }

    /**
     * C_s, the clipping norm of an example's vector of channel means of squares in the release.
     *
     * @return C_s &gt; 0 (R²·√m unless given); 0 before the input type is set
     */
    public double getClipSquares() {
        return clipSquares;
    }

    /**
     * Sets C_s (used by JSON deserialisation).
     *
     * @param clipSquares C_s &gt; 0
     */
    public void setClipSquares(double clipSquares) {
        this.clipSquares = clipSquares;
    }

    /**
     * The input as [B, m, P]: its entries in C order, m channels of P positions each.
     *
     * @param x [B, …] with m·P entries per example, channel-major (NCHW, NCW, or a flat vector)
     * @return a view or copy [B, m, P]
     * @throws IllegalArgumentException if an example's size is not a multiple of m
     */
    public INDArray byChannel(INDArray x) {
        long per = x.length() / Math.max(1, x.size(0));
        if (channels < 1 || per % channels != 0) {
            throw new IllegalArgumentException("FeatureStandardization '" + getLayerName() + "' keeps statistics for " + channels
                    + " channels, got examples of shape " + java.util.Arrays.toString(x.shape()));
        }
        return x.dup('c').reshape('c', x.size(0), channels, per / channels);
    }

    /**
     * The per-channel factor 1/√(v_c + 10⁻⁵) (0 where v_c = 0), or null without statistics.
     *
     * @return m factors, or null
     * @throws IllegalStateException if the layer has only one of μ and v
     * @throws IllegalArgumentException if the statistics do not have one entry per channel
     */
    public double[] scale() {
        FeatureStatistics f = statistics(channels);
        return f == null ? null : f.scale();
    }

    /**
     * The standardised input, a new array of the input's shape and type (the input itself without statistics).
     *
     * @param x [B, …] with m channels (see {@link #byChannel})
     * @return (x − μ_c)·s_c per channel, or {@code x} without statistics
     */
    public INDArray standardise(INDArray x) {
        double[] s = scale();
        if (s == null) {
            return x;
        }
        INDArray mean = Nd4j.createFromArray(getFeatureMean()).castTo(x.dataType()).reshape(1, channels, 1);
        INDArray factor = Nd4j.createFromArray(s).castTo(x.dataType()).reshape(1, channels, 1);
        return byChannel(x).subi(mean).muli(factor).reshape('c', x.shape());
    }

    /**
     * The gradient with respect to the input: the output's gradient times s_c per channel (itself without statistics).
     *
     * @param gradOutput [B, …], the input's shape
     * @return a new array of that shape, or {@code gradOutput} without statistics
     */
    public INDArray inputGradient(INDArray gradOutput) {
        double[] s = scale();
        if (s == null) {
            return gradOutput;
        }
        INDArray factor = Nd4j.createFromArray(s).castTo(gradOutput.dataType()).reshape(1, channels, 1);
        return byChannel(gradOutput).muli(factor).reshape('c', gradOutput.shape());
    }

    @Override
    public org.deeplearning4j.nn.api.Layer instantiate(NeuralNetConfiguration conf, Collection<TrainingListener> listeners,
                                                       int index, INDArray paramsView, boolean initializeParams,
                                                       DataType dataType) {
        return LayerWiring.wire(new FeatureStandardizationLayer(conf, dataType), conf, listeners, index, paramsView,
                initializeParams, initializer());
    }

    /** m for an input type: colour channels of images, features of sequences, entries of vectors. */
    private long channelsOf(InputType t) {
        if (t instanceof InputType.InputTypeConvolutional c) {
            return c.getChannels();
        }
        if (t instanceof InputType.InputTypeConvolutionalFlat f) {
            return f.getDepth();
        }
        if (t instanceof InputType.InputTypeRecurrent r) {
            return r.getSize();
        }
        if (t instanceof InputType.InputTypeFeedForward f) {
            return f.getSize();
        }
        throw new IllegalArgumentException("FeatureStandardization '" + getLayerName() + "': input must be vectors, images or "
                + "sequences, got " + t);
    }

    @Override
    public InputType getOutputType(int layerIndex, InputType inputType) {
        long m = channelsOf(inputType);
        if (getFeatureMean() != null && getFeatureMean().length != m) {
            throw new IllegalArgumentException("FeatureStandardization '" + getLayerName() + "': statistics for " + getFeatureMean().length
                    + " channels, but the input has " + m);
        }
        return inputType;
    }

    @Override
    public void setNIn(InputType inputType, boolean override) {
        if (channels <= 0 || override) {
            channels = channelsOf(inputType);
        }
        if (clipMean <= 0) {
            clipMean = valueBound * Math.sqrt(channels);
        }
        if (clipSquares <= 0) {
            clipSquares = valueBound * valueBound * Math.sqrt(channels);
        }
    }

    /** None: the layer reads its input in any shape and passes it on in that shape. */
    @Override
    public InputPreProcessor getPreProcessorForInputType(InputType inputType) {
        return null;
    }

    @Override
    public LayerMemoryReport getMemoryReport(InputType inputType) {
        return new LayerMemoryReport.Builder(layerName, FeatureStandardization.class, inputType, inputType)
                .standardMemory(0, 0).workingMemory(0, 0, 0, 0).cacheMemory(0, 0).build();
    }

    /** Builds a {@link FeatureStandardization}: {@code new FeatureStandardization.Builder().valueBound(1).build()}. */
    public static class Builder extends FeatureStatisticsLayer.Builder<Builder> {
        private double valueBound = 1;
        private double clipMean;
        private double clipSquares;

        /**
         * Sets R, the bound on |x| from which the default clipping norms follow (C_μ = R·√m, C_s = R²·√m).
         *
         * @param r R &gt; 0, finite (default 1: pixels scaled to [0, 1])
         * @return this builder
         * @throws IllegalArgumentException if R is not finite and &gt; 0
         */
        public Builder valueBound(double r) {
            if (!(r > 0) || Double.isInfinite(r)) {
                throw new IllegalArgumentException("valueBound R must be finite and > 0, got " + r);
            }
            this.valueBound = r;
            return this;
        }

        /**
         * Sets the clipping norms of the release instead of the defaults from R.
         *
         * @param mean    C_μ &gt; 0, finite
         * @param squares C_s &gt; 0, finite
         * @return this builder
         * @throws IllegalArgumentException if either is not finite and &gt; 0
         */
        public Builder clipNorms(double mean, double squares) {
            if (!(mean > 0) || Double.isInfinite(mean) || !(squares > 0) || Double.isInfinite(squares)) {
                throw new IllegalArgumentException("clipping norms C_mu and C_s must be finite and > 0, got " + mean + " and " + squares);
            }
            this.clipMean = mean;
            this.clipSquares = squares;
            return this;
        }

        @Override
        @SuppressWarnings("unchecked")
        public FeatureStandardization build() {
            return new FeatureStandardization(this);
        }
    }
}
