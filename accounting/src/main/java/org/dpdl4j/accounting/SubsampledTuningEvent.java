package org.dpdl4j.accounting;

import java.util.Map;
import java.util.Objects;

/**
 * Tuning on a Poisson subset X₁ of the data, then a final run (Koskela &amp; Kulkarni 2023, arXiv:2301.11989,
 * Section 3.1): each record joins X₁ independently with probability
 * q_tune; {@code tuning} runs on X₁; {@code finalRun} then runs, adaptively on the tuning output,
 * on X \ X₁ ({@link Variant#DISJOINT}, the paper's variant 1, eq. 3.1) or on all of X
 * ({@link Variant#FULL}, variant 2, eq. 3.2). Add/remove neighbours.
 *
 * <p>{@code finalRun}'s curve must hold whatever the tuning output is: if the tuned candidate can
 * change the final run's σ, q or T, pass the pointwise maximum over candidates (Lemma 9).
 *
 * @param tuning       the tuning procedure run on X₁ (for example a {@link RepeatAndSelectEvent})
 * @param finalRun     the final training run
 * @param tuneFraction q_tune ∈ [0, 1], the probability that a record is in X₁
 * @param variant      which data the final run uses
 */
public record SubsampledTuningEvent(PrivacyEvent tuning, PrivacyEvent finalRun, double tuneFraction, Variant variant)
        implements PrivacyEvent {

    /** Which data the final run trains on. */
    public enum Variant {
        /** Variant 1: X \ X₁. Accounted by Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Theorem 6, eqs. (3.6)–(3.7). */
        DISJOINT,
        /** Variant 2: all of X. Accounted as Zhu–Wang-subsampled tuning (Theorem 4) composed with the final run. */
        FULL;

        /**
         * The paper's number of this variant.
         *
         * @return 1 for {@link #DISJOINT}, 2 for {@link #FULL}
         */
        public int number() {
            return this == DISJOINT ? 1 : 2;
        }

        /**
         * The variant with the paper's number.
         *
         * @param n the paper's variant number: 1 or 2
         * @return {@link #DISJOINT} for 1, {@link #FULL} for 2
         * @throws IllegalArgumentException unless n is 1 or 2
         */
        public static Variant of(int n) {
            return switch (n) {
                case 1 -> DISJOINT;
                case 2 -> FULL;
                default -> throw new IllegalArgumentException("variant must be 1 (final run on X \\ X1) or 2 (on X), got " + n);
            };
        }
    }

    /**
     * Creates the event after checking its parts.
     *
     * @param tuning       the tuning procedure run on X₁, not null
     * @param finalRun     the final training run, not null
     * @param tuneFraction q_tune, the probability that a record is in X₁: in [0, 1]
     * @param variant      which data the final run uses, not null
     * @throws IllegalArgumentException if q_tune ∉ [0, 1]
     * @throws NullPointerException     on a null part
     */
    public SubsampledTuningEvent {
        Objects.requireNonNull(tuning, "tuning");
        Objects.requireNonNull(finalRun, "finalRun");
        Objects.requireNonNull(variant, "variant");
        Checks.probability("tune fraction q_tune", tuneFraction);
    }

    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "subsampled_tuning", "tune_fraction", tuneFraction, "variant", variant.number(),
                "tuning", tuning.toMap(), "final_run", finalRun.toMap());
    }
}
