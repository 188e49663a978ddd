package org.dpdl4j.accounting;

import java.util.List;
import java.util.Map;

/**
 * A mechanism that runs one of several mechanisms, chosen independently of the data (for example a
 * training run whose σ, q or T is a hyperparameter drawn from a data-independent prior). Its RDP
 * curve is bounded by the pointwise maximum of theirs (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Lemma 9:
 * Rényi divergence is quasi-convex, so a data-independent mixture is no worse than its worst part).
 *
 * @param events the possible mechanisms (at least one); copied
 */
public record PointwiseMaxEvent(List<PrivacyEvent> events) implements PrivacyEvent {
    /**
     * Creates the event from a copy of the list.
     *
     * @param events the possible mechanisms: at least one, not null, no null elements
     * @throws IllegalArgumentException if the list is empty
     * @throws NullPointerException     if the list or an element is null
     */
    public PointwiseMaxEvent {
        events = List.copyOf(events);
        if (events.isEmpty()) {
            throw new IllegalArgumentException("a pointwise maximum needs at least one event");
        }
    }

    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "pointwise_max", "events", events.stream().map(PrivacyEvent::toMap).toList());
    }
}
