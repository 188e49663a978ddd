package org.dpdl4j.models;

import org.deeplearning4j.nn.conf.layers.NoParamLayer;

/**
 * A layer configuration without parameters that holds fixed per-channel statistics μ and v ({@link FeatureStatistics})
 * and serialises them with the network: {@link Scattering} normalises its output's channels by them,
 * {@link FeatureStandardization} its input's. Statistics computed from private data are a release of their own, to be
 * counted ({@code org.dpdl4j.dpsgd.PrivateNormalisation} releases them by a private mechanism).
 */
public abstract class FeatureStatisticsLayer extends NoParamLayer {
    private double[] featureMean;
    private double[] featureVariance;

    /** For JSON. */
    protected FeatureStatisticsLayer() {
    }

    /**
     * A layer configuration from its builder; the statistics, if any, are copied into μ and v arrays.
     *
     * @param b the builder holding the optional statistics and DL4J's layer settings
     */
    protected FeatureStatisticsLayer(Builder<?> b) {
        super(b);
        if (b.features != null) {
            this.featureMean = b.features.mean();
            this.featureVariance = b.features.variance();
        }
    }

    /**
     * μ, or null (none).
     *
     * @return the layer's own μ array (not a copy), one entry per channel the layer normalises, or null
     */
    public double[] getFeatureMean() {
        return featureMean;
    }

    /**
     * Sets μ (used by JSON deserialisation and by a release; kept as given, not copied).
     *
     * @param featureMean μ, one finite entry per channel; may be null (no normalisation, with a null v)
     */
    public void setFeatureMean(double[] featureMean) {
        this.featureMean = featureMean;
    }

    /**
     * v, or null (none).
     *
     * @return the layer's own v array (not a copy), one entry per channel the layer normalises, or null
     */
    public double[] getFeatureVariance() {
        return featureVariance;
    }

    /**
     * Sets v (used by JSON deserialisation and by a release; kept as given, not copied).
     *
     * @param featureVariance v, one finite entry ≥ 0 per channel; may be null (no normalisation, with a null μ)
     */
    public void setFeatureVariance(double[] featureVariance) {
        this.featureVariance = featureVariance;
    }

    /**
     * The statistics, checked, or null when the layer has none.
     *
     * @param channels the channels the layer normalises, ≥ 1
     * @return μ and v, or null
     * @throws IllegalStateException    if the layer has only one of μ and v
     * @throws IllegalArgumentException if they do not have {@code channels} entries, or are invalid for
     *                                  {@link FeatureStatistics}
     */
    public FeatureStatistics statistics(long channels) {
        if (featureMean == null && featureVariance == null) {
            return null;
        }
        if (featureMean == null || featureVariance == null) {
            throw new IllegalStateException(getClass().getSimpleName() + " '" + getLayerName() + "' has a feature "
                    + (featureMean == null ? "variance" : "mean") + " but no feature " + (featureMean == null ? "mean" : "variance"));
        }
        if (featureMean.length != channels) {
            throw new IllegalArgumentException(getClass().getSimpleName() + " '" + getLayerName() + "': feature statistics for "
                    + featureMean.length + " channels, but it normalises " + channels);
        }
        return new FeatureStatistics(featureMean, featureVariance);
    }

    /** Removes the statistics (pending a release). */
    public void clearStatistics() {
        featureMean = null;
        featureVariance = null;
    }

    /**
     * A builder of a layer with optional fixed statistics.
     *
     * @param <T> the concrete builder
     */
    public abstract static class Builder<T extends Builder<T>> extends org.deeplearning4j.nn.conf.layers.Layer.Builder<T> {
        private FeatureStatistics features;

        /**
         * Sets fixed statistics, one entry per channel the layer normalises (checked when the input type is set).
         *
         * @param features μ and v (from a private release, or public ones); null for none, the default
         * @return this builder
         */
        @SuppressWarnings("unchecked")
        public T features(FeatureStatistics features) {
            this.features = features;
            return (T) this;
        }
    }
}
