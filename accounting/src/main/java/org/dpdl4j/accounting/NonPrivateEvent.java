package org.dpdl4j.accounting;

import java.util.Map;

/** A release with no privacy guarantee: ε = ∞ at every order and every δ &lt; 1. */
public record NonPrivateEvent() implements PrivacyEvent {
    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "non_private");
    }
}
