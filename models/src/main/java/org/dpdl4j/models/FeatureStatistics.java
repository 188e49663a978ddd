package org.dpdl4j.models;

import java.util.Arrays;

/**
 * Per-channel mean μ and variance v of a ScatterNet's features, with which the {@link Scattering} layer normalises its
 * output to (x − μ_c)/√(v_c + 10⁻⁵), and to 0 in a channel whose variance is 0 (typically noise pushed below 0 and
 * clamped), as Tramèr &amp; Boneh's data normalisation does ("Differentially Private Learning
 * Needs Better Features (or Much More Data)", ICLR 2021, arXiv:2011.11660, Sec. 3). Computed from private data they are
 * a release: use those of a private mechanism ({@code org.dpdl4j.dpsgd.PrivateNormalisation}) and compose its event.
 *
 * @param mean     μ, one entry per output channel of the transform (C·K), finite
 * @param variance v, as many entries, finite and ≥ 0
 */
public record FeatureStatistics(double[] mean, double[] variance) implements java.io.Serializable {
    /** The ε that keeps the division finite, as in Tramèr &amp; Boneh's code. */
    public static final double EPSILON = 1e-5;

    /**
     * Validates the statistics and keeps copies of both arrays.
     *
     * @param mean     μ, one entry per output channel of the transform (C·K), finite; copied
     * @param variance v, as many entries, finite and ≥ 0; copied
     * @throws IllegalArgumentException on different lengths, no entries, or a non-finite or negative entry
     */
    public FeatureStatistics {
        if (mean.length == 0 || mean.length != variance.length) {
            throw new IllegalArgumentException("mean and variance must have the same positive length, got " + mean.length + " and "
                    + variance.length);
        }
        for (int c = 0; c < mean.length; c++) {
            if (!Double.isFinite(mean[c]) || !(variance[c] >= 0) || Double.isInfinite(variance[c])) {
                throw new IllegalArgumentException("channel " + c + ": mean must be finite and variance finite and >= 0, got "
                        + mean[c] + " and " + variance[c]);
            }
        }
        mean = mean.clone();
        variance = variance.clone();
    }

    /**
     * μ, the per-channel means.
     *
     * @return a copy of μ, one finite entry per channel
     */
    @Override
    public double[] mean() {
        return mean.clone();
    }

    /**
     * v, the per-channel variances.
     *
     * @return a copy of v, one finite entry ≥ 0 per channel
     */
    @Override
    public double[] variance() {
        return variance.clone();
    }

    /**
     * The per-channel factor of the normalisation: 1/√(v_c + 10⁻⁵), and 0 where v_c = 0.
     *
     * @return a new array with one entry per channel, each finite and ≥ 0
     */
    public double[] scale() {
        double[] s = new double[variance.length];
        for (int c = 0; c < s.length; c++) {
            s[c] = variance[c] == 0 ? 0 : 1 / Math.sqrt(variance[c] + EPSILON);
        }
        return s;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FeatureStatistics f && Arrays.equals(mean, f.mean) && Arrays.equals(variance, f.variance);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(mean) + Arrays.hashCode(variance);
    }

    @Override
    public String toString() {
        return "FeatureStatistics[" + mean.length + " channels]";
    }
}
