package org.dpdl4j.accounting;

import java.util.Map;

/**
 * The same event run {@code count} times (adaptively), e.g. T steps of DP-SGD.
 *
 * @param event the repeated mechanism
 * @param count number of repetitions, ≥ 0
 */
public record SelfComposedEvent(PrivacyEvent event, long count) implements PrivacyEvent {
    /**
     * Creates the event after checking its parts.
     *
     * @param event the repeated mechanism, not null
     * @param count the number of repetitions (for DP-SGD the steps T): ≥ 0 (0 costs nothing)
     * @throws IllegalArgumentException if count &lt; 0
     * @throws NullPointerException     if event is null
     */
    public SelfComposedEvent {
        java.util.Objects.requireNonNull(event, "event");
        if (count < 0) {
            throw new IllegalArgumentException("count must be >= 0, got " + count);
        }
    }

    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "self_composed", "count", count, "event", event.toMap());
    }
}
