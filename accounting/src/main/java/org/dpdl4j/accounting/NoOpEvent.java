package org.dpdl4j.accounting;

import java.util.Map;

/** A step that touches no private data (costs nothing), e.g. returning a fixed default. */
public record NoOpEvent() implements PrivacyEvent {
    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "no_op");
    }
}
