package org.dpdl4j.accounting;

import java.util.Map;

/**
 * A description of a randomised mechanism, precise enough for an accountant to bound its privacy
 * loss. Events are immutable values: comparable with {@code equals}, printable with
 * {@code toString}, and serialisable through {@link #toMap()} / {@link PrivacyEvents#fromMap(Map)}
 * (the form written to {@code privacy.json} and ledgers).
 *
 * <p>Neighbouring datasets differ by adding or removing one example (or, for client-level events,
 * one client). Sensitivities are 1 unless the event says otherwise; a mechanism with L2 sensitivity
 * Δ and noise standard deviation s is a {@link GaussianEvent} with noise multiplier s/Δ.
 *
 * <p>The algebra follows Google's dp_accounting {@code DpEvent} family so numbers can be compared.
 */
public sealed interface PrivacyEvent
        permits GaussianEvent, LaplaceEvent, PoissonSampledEvent, SelfComposedEvent, ComposedEvent,
                PureDpEvent, ZcdpEvent, NonPrivateEvent, NoOpEvent, RepeatAndSelectEvent,
                PointwiseMaxEvent, SubsampledTuningEvent, AdaptiveRepeatAndSelectEvent,
                DistributedDiscreteGaussianEvent {

    /**
     * A JSON-ready view of this event: a {@code "type"} key plus the event's parameters (nested events as maps);
     * {@link PrivacyEvents#fromMap(Map)} reads it back.
     *
     * @return the map, keyed by strings, with numbers, strings, maps and lists of maps as values
     */
    Map<String, Object> toMap();
}
