package org.dpdl4j.accounting;

import java.util.Map;

/**
 * The Laplace mechanism with L1 sensitivity 1 and noise Lap(b).
 *
 * @param scale b &gt; 0, finite; the mechanism is (1/b)-DP
 */
public record LaplaceEvent(double scale) implements PrivacyEvent {
    /**
     * Creates the event after checking the scale.
     *
     * @param scale b, the Laplace scale (noise divided by the L1 sensitivity): finite and &gt; 0
     * @throws IllegalArgumentException if b is not finite and positive
     */
    public LaplaceEvent {
        Checks.finitePositive("scale", scale);
    }

    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "laplace", "scale", scale);
    }
}
