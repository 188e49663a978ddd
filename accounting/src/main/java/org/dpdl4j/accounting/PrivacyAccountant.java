package org.dpdl4j.accounting;

/**
 * Turns a {@link PrivacyEvent} into (ε, δ). Implementations are stateless and conservative: the ε they report is
 * never below the truth for the events they support. {@link RdpAccountant} supports every event; an accountant
 * that cannot bound an event says so through {@link #supports} and refuses it.
 */
public interface PrivacyAccountant {
    /**
     * A short name for reports, for example "rdp"; the name {@link Accountants#byName} knows it by.
     *
     * @return the name, not null
     */
    String name();

    /**
     * True if this accountant can bound the event (all of its parts).
     *
     * @param event the event to check
     * @return whether {@link #guarantee} and {@link #delta} accept the event
     */
    boolean supports(PrivacyEvent event);

    /**
     * (ε, δ) of the event at δ.
     *
     * @param event the event; it must be {@linkplain #supports supported}
     * @param delta δ, the failure probability: in (0, 1)
     * @return the guarantee: the smallest ε this accountant proves at δ (+∞ if none is finite)
     * @throws IllegalArgumentException if δ ∉ (0, 1), or the event is not {@linkplain #supports supported}
     */
    PrivacyGuarantee guarantee(PrivacyEvent event, double delta);

    /**
     * The smallest δ this accountant proves at ε.
     *
     * @param event   the event; it must be {@linkplain #supports supported}
     * @param epsilon ε, the privacy loss: finite and ≥ 0
     * @return δ in [0, 1]
     * @throws IllegalArgumentException if ε is negative or not finite, or the event is not supported
     */
    double delta(PrivacyEvent event, double epsilon);

    /**
     * ε of the event at δ (convenience for {@link #guarantee}).
     *
     * @param event the event; it must be {@linkplain #supports supported}
     * @param delta δ, the failure probability: in (0, 1)
     * @return ε ≥ 0, possibly +∞
     * @throws IllegalArgumentException as {@link #guarantee} does
     */
    default double epsilon(PrivacyEvent event, double delta) {
        return guarantee(event, delta).epsilon();
    }
}
