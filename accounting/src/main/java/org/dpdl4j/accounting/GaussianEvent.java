package org.dpdl4j.accounting;

import java.util.Map;

/**
 * The Gaussian mechanism with L2 sensitivity 1 and noise N(0, σ²).
 *
 * @param noiseMultiplier σ, the noise standard deviation divided by the sensitivity; finite, ≥ 0
 *                        (σ = 0 is a non-private release: infinite RDP at every order)
 */
public record GaussianEvent(double noiseMultiplier) implements PrivacyEvent {
    /**
     * Creates the event after checking σ.
     *
     * @param noiseMultiplier σ, the noise standard deviation divided by the L2 sensitivity: finite and ≥ 0
     *                        (0 is a non-private release)
     * @throws IllegalArgumentException if σ is negative, NaN or infinite
     */
    public GaussianEvent {
        Checks.finiteNonNegative("noise multiplier sigma", noiseMultiplier);
    }

    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "gaussian", "noise_multiplier", noiseMultiplier);
    }
}
