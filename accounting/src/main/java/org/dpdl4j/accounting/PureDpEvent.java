package org.dpdl4j.accounting;

import java.util.Map;

/**
 * A mechanism known only to be ε-DP (pure differential privacy).
 *
 * @param epsilon ε ≥ 0, finite
 */
public record PureDpEvent(double epsilon) implements PrivacyEvent {
    /**
     * Creates the event after checking ε.
     *
     * @param epsilon ε, the pure-DP privacy loss: finite and ≥ 0
     * @throws IllegalArgumentException if ε is negative or not finite
     */
    public PureDpEvent {
        Checks.finiteNonNegative("epsilon", epsilon);
    }

    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "pure_dp", "epsilon", epsilon);
    }
}
