package org.dpdl4j.models;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.deeplearning4j.nn.api.ParamInitializer;
import org.deeplearning4j.nn.conf.InputPreProcessor;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.FeedForwardLayer;
import org.deeplearning4j.nn.conf.layers.Layer;
import org.deeplearning4j.nn.conf.memory.LayerMemoryReport;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * Group normalisation as a DL4J layer (Y. Wu, K. He, "Group Normalization", ECCV 2018, arXiv:1803.08494): the C
 * channels of each example are split into G groups, each normalised by its own mean and variance (over its channels
 * and positions), then scaled and shifted per channel, y = φ(γ_c·x̂ + β_c). LayerNorm is G = 1 and InstanceNorm G = C.
 * Unlike batch normalisation it never mixes examples, so DP-SGD's per-example gradients are defined; De et al.
 * ("Unlocking High-Accuracy Differentially Private Image Classification through Scale", arXiv:2204.13650, Sec. 3) use
 * it with 16 groups in place of batch normalisation.
 *
 * <p>Input and output: NCHW activations [B, C, H, W] or feed-forward [B, C]; nIn = nOut = C (set from the input type).
 * Parameters: γ ("gamma", initialised to 1) and β ("beta", 0), C values each. It serialises with
 * {@code ModelSerializer} like any DL4J layer (by class name) and runs in {@code output()}.
 */
public class GroupNormalization extends FeedForwardLayer {
    private int groups = 16;
    private double eps = 1e-5;

    /** For JSON. */
    public GroupNormalization() {
    }

    /**
     * A layer configuration from its builder; nIn and nOut are both the channel count C (nIn if set, else nOut).
     *
     * @param b the builder holding G, ε, the activation and the other layer settings
     */
    protected GroupNormalization(Builder b) {
        super(b);
        this.groups = b.groups;
        this.eps = b.eps;
        this.nOut = nIn > 0 ? nIn : nOut; // one channel count: C in, C out
        this.nIn = this.nOut;
    }

    /**
     * G, the number of groups (divides the channel count).
     *
     * @return G, ≥ 1
     */
    public int getGroups() {
        return groups;
    }

    /**
     * Sets G, the number of groups (used by JSON deserialisation; not validated here, unlike {@link Builder#groups}).
     *
     * @param groups G; should be ≥ 1 and divide the channel count, which {@link #setNIn} checks
     */
    public void setGroups(int groups) {
        this.groups = groups;
    }

    /**
     * ε added to each group's variance.
     *
     * @return ε, &gt; 0 (default 1e-5)
     */
    public double getEps() {
        return eps;
    }

    /**
     * Sets ε, added to each group's variance (used by JSON deserialisation; not validated here, unlike
     * {@link Builder#eps}).
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
        return LayerWiring.wire(new GroupNormalizationLayer(conf, dataType), conf, listeners, index, paramsView, initializeParams,
                initializer());
    }

    @Override
    public ParamInitializer initializer() {
        return Params.INSTANCE;
    }

    @Override
    public InputType getOutputType(int layerIndex, InputType inputType) {
        return inputType;
    }

    @Override
    public void setNIn(InputType inputType, boolean override) {
        long c = inputType instanceof InputType.InputTypeConvolutional conv ? conv.getChannels()
                : inputType instanceof InputType.InputTypeFeedForward ff ? ff.getSize() : -1;
        if (c <= 0) {
            throw new IllegalArgumentException("GroupNormalization '" + getLayerName() + "': input must be convolutional (NCHW) "
                    + "or feed-forward, got " + inputType);
        }
        if (nIn <= 0 || override) {
            nIn = c;
            nOut = c;
        }
        if (c % groups != 0) {
            throw new IllegalArgumentException("GroupNormalization '" + getLayerName() + "': groups (" + groups
                    + ") must divide the number of channels (" + c + ")");
        }
    }

    @Override
    public InputPreProcessor getPreProcessorForInputType(InputType inputType) {
        return null;
    }

    @Override
    public LayerMemoryReport getMemoryReport(InputType inputType) {
        return new LayerMemoryReport.Builder(layerName, GroupNormalization.class, inputType, inputType)
                .standardMemory(2 * nOut, 0).workingMemory(0, 0, 0, 0).cacheMemory(0, 0).build();
    }

    @Override
    public boolean isPretrainParam(String paramName) {
        return false;
    }

    /**
     * The group normalisation that replaces a batch normalisation over the same C channels: G = the largest divisor of
     * C that is at most 32 (Opacus's {@code ModuleValidator.fix} uses min(32, C) groups), the batch normalisation's
     * activation, name and updaters; γ = 1 and β = 0 when initialised.
     *
     * @param bn a batch normalisation layer configuration with nOut = C ≥ 1
     * @return a new group normalisation configuration with nIn = nOut = C
     */
    public static GroupNormalization replacing(org.deeplearning4j.nn.conf.layers.BatchNormalization bn) {
        long channels = bn.getNOut();
        int groups = 1;
        for (int g = 1; g <= Math.min(32, channels); g++) {
            if (channels % g == 0) {
                groups = g;
            }
        }
        GroupNormalization gn = new GroupNormalization.Builder().groups(groups).nIn(channels).nOut(channels)
                .activation(bn.getActivationFn()).name(bn.getLayerName()).build();
        gn.setIUpdater(bn.getIUpdater());
        gn.setBiasUpdater(bn.getBiasUpdater());
        return gn;
    }

    /** Builds a {@link GroupNormalization}: {@code new GroupNormalization.Builder().groups(16).build()}. */
    public static class Builder extends FeedForwardLayer.Builder<Builder> {
        private int groups = 16;
        private double eps = 1e-5;

        /**
         * Sets G, the number of groups.
         *
         * @param groups G ≥ 1 (default 16); must divide the number of channels (checked when the input type is set)
         * @return this builder
         * @throws IllegalArgumentException if {@code groups} &lt; 1
         */
        public Builder groups(int groups) {
            if (groups < 1) {
                throw new IllegalArgumentException("groups must be >= 1, got " + groups);
            }
            this.groups = groups;
            return this;
        }

        /**
         * Sets ε, added to each group's variance.
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
        public GroupNormalization build() {
            return new GroupNormalization(this);
        }
    }

    /** γ then β, C values each, in one flat view. */
    static final class Params implements ParamInitializer {
        static final Params INSTANCE = new Params();
        static final String GAMMA = "gamma";
        static final String BETA = "beta";

        @Override
        public long numParams(NeuralNetConfiguration conf) {
            return numParams(conf.getLayer());
        }

        @Override
        public long numParams(Layer layer) {
            return 2 * ((GroupNormalization) layer).getNOut();
        }

        @Override
        public List<String> paramKeys(Layer layer) {
            return List.of(GAMMA, BETA);
        }

        @Override
        public List<String> weightKeys(Layer layer) {
            return List.of();
        }

        @Override
        public List<String> biasKeys(Layer layer) {
            return List.of();
        }

        @Override
        public boolean isWeightParam(Layer layer, String key) {
            return false;
        }

        @Override
        public boolean isBiasParam(Layer layer, String key) {
            return false;
        }

        @Override
        public Map<String, INDArray> init(NeuralNetConfiguration conf, INDArray paramsView, boolean initializeParams) {
            Map<String, INDArray> m = getGradientsFromFlattened(conf, paramsView);
            if (initializeParams) {
                m.get(GAMMA).assign(1);
                m.get(BETA).assign(0);
            }
            return m;
        }

        @Override
        public Map<String, INDArray> getGradientsFromFlattened(NeuralNetConfiguration conf, INDArray view) {
            long c = ((GroupNormalization) conf.getLayer()).getNOut();
            INDArray flat = view.reshape(1, view.length());
            Map<String, INDArray> m = new java.util.LinkedHashMap<>();
            m.put(GAMMA, flat.get(NDArrayIndex.point(0), NDArrayIndex.interval(0, c)).reshape(1, c));
            m.put(BETA, flat.get(NDArrayIndex.point(0), NDArrayIndex.interval(c, 2 * c)).reshape(1, c));
            return m;
        }
    }
}
