package org.dpdl4j.accounting;

import java.util.Map;

/**
 * An event applied to a Poisson subsample: each record is included independently with probability
 * q (add/remove neighbours).
 *
 * @param event        the mechanism run on the subsample
 * @param samplingRate q ∈ [0, 1]
 */
public record PoissonSampledEvent(PrivacyEvent event, double samplingRate) implements PrivacyEvent {
    /**
     * Creates the event after checking its parts.
     *
     * @param event        the mechanism run on the subsample, not null
     * @param samplingRate q, the probability that a record is in the subsample: in [0, 1]
     * @throws IllegalArgumentException if q ∉ [0, 1]
     * @throws NullPointerException     if event is null
     */
    public PoissonSampledEvent {
        java.util.Objects.requireNonNull(event, "event");
        Checks.probability("sampling rate q", samplingRate);
    }

    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "poisson_sampled", "sampling_rate", samplingRate, "event", event.toMap());
    }
}
