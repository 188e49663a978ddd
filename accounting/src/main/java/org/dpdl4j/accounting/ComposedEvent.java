package org.dpdl4j.accounting;

import java.util.List;
import java.util.Map;

/**
 * Adaptive composition of several events (their RDP curves add).
 *
 * @param events the composed events, in order; copied, never null elements
 */
public record ComposedEvent(List<PrivacyEvent> events) implements PrivacyEvent {
    /** @throws NullPointerException if the list or an element is null */
    public ComposedEvent {
        events = List.copyOf(events);
    }

    /** Convenience constructor. */
    public static ComposedEvent of(PrivacyEvent... events) {
        return new ComposedEvent(List.of(events));
    }

    @Override
    public Map<String, Object> toMap() {
        return Map.of("type", "composed", "events", events.stream().map(PrivacyEvent::toMap).toList());
    }
}
