package org.dpdl4j.accounting;

import java.util.List;
import java.util.Map;

/**
 * Adaptive composition of several events (their RDP curves add).
 *
 * @param events the composed events, in order; copied, never null elements
 */
public record ComposedEvent(List<PrivacyEvent> events) implements PrivacyEvent {
    /**
     * Creates the event from a copy of the list.
     *
     * @param events the composed events, in order; not null, no null elements (may be empty: no cost)
     * @throws NullPointerException if the list or an element is null
     */
    public ComposedEvent {
        events = List.copyOf(events);
    }

    /**
     * Convenience constructor: the composition of the given events, in order.
     *
     * @param events the composed events; not null, no null elements
     * @return the composed event
     * @throws NullPointerException if the array or an element is null
     */
    public static ComposedEvent of(PrivacyEvent... events) {
        return new ComposedEvent(List.of(events));
    }

    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "composed", "events", events.stream().map(PrivacyEvent::toMap).toList());
    }
}
