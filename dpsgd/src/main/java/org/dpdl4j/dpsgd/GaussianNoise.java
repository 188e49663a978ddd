package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.random.impl.GaussianDistribution;
import org.nd4j.linalg.api.rng.Random;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Gaussian noise N(0, s²) per coordinate from an ND4J generator owned by this object (not the
 * global one), seeded explicitly — from a user seed for reproducible runs, or from
 * {@link java.security.SecureRandom} when asked. The generator itself is ND4J's native PRNG, not a
 * cryptographic one, and the noise is floating-point (see Mironov 2012 on floating-point attacks):
 * both are the usual trade-offs of DP-SGD libraries and are stated, not hidden.
 */
public final class GaussianNoise implements AutoCloseable {
    private final Random rng;

    /** @param seed generator seed */
    public GaussianNoise(long seed) {
        this.rng = Nd4j.getRandomFactory().getNewRandomInstance(seed);
    }

    /**
     * Adds N(0, std²) independently to every element of {@code target}, in place.
     *
     * @param std standard deviation ≥ 0 (0 leaves the target unchanged)
     */
    public void addTo(INDArray target, double std) {
        if (!(std >= 0) || Double.isInfinite(std)) {
            throw new IllegalArgumentException("noise standard deviation must be finite and >= 0, got " + std);
        }
        if (std == 0) {
            return;
        }
        INDArray noise = Nd4j.createUninitialized(target.dataType(), target.shape(), target.ordering());
        Nd4j.getExecutioner().exec(new GaussianDistribution(noise, 0.0, std), rng);
        target.addi(noise);
    }

    @Override
    public void close() {
        try {
            rng.close();
        } catch (Exception e) {
            throw new IllegalStateException("could not release the noise generator", e);
        }
    }
}
