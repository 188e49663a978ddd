package org.dpdl4j.accounting;

/**
 * Turns a {@link PrivacyEvent} into (ε, δ). Implementations are stateless and conservative: the ε they report is
 * never below the truth for the events they support. {@link RdpAccountant} supports every event; an accountant
 * that cannot bound an event says so through {@link #supports} and refuses it.
 */
public interface PrivacyAccountant {
    /** A short name for reports, for example "rdp". */
    String name();

    /** True if this accountant can bound the event (all of its parts). */
    boolean supports(PrivacyEvent event);

    /**
     * (ε, δ) of the event at δ.
     *
     * @throws IllegalArgumentException if δ ∉ (0, 1), or the event is not {@linkplain #supports supported}
     */
    PrivacyGuarantee guarantee(PrivacyEvent event, double delta);

    /**
     * The smallest δ this accountant proves at ε.
     *
     * @throws IllegalArgumentException if ε is negative or not finite, or the event is not supported
     */
    double delta(PrivacyEvent event, double epsilon);

    /** ε of the event at δ (convenience for {@link #guarantee}). */
    default double epsilon(PrivacyEvent event, double delta) {
        return guarantee(event, delta).epsilon();
    }
}
