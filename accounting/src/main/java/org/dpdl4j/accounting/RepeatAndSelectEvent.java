package org.dpdl4j.accounting;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Papernot–Steinke random search (Papernot &amp; Steinke, "Hyperparameter Tuning with Rényi Differential
 * Privacy", ICLR 2022, arXiv:2110.03620): run the base mechanism Q a random
 * number K of times and release only the best outcome. How {@link RdpAccountant} bounds it depends
 * on the distribution of K: Theorem 6 for Poisson, Theorem 2 for the truncated negative binomial,
 * composition for a point mass, and Lemma 22 on top of these for a truncated distribution.
 *
 * <p>Only the best outcome is covered: releasing the other K − 1 outcomes (their scores, say) is a
 * K-fold composition instead.
 *
 * @param event        the base mechanism Q (one whole training run, say)
 * @param distribution the distribution of K
 */
public record RepeatAndSelectEvent(PrivacyEvent event, RepetitionDistribution distribution) implements PrivacyEvent {
    /**
     * Creates the event after checking its parts.
     *
     * @param event        the base mechanism Q, not null
     * @param distribution the distribution of K, not null
     * @throws NullPointerException if an argument is null
     */
    public RepeatAndSelectEvent {
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(distribution, "distribution");
    }

    /**
     * dp_accounting's {@code RepeatAndSelectDpEvent(event, mean, shape)}: Poisson(mean) when shape
     * is +∞, otherwise D_{η,γ} with η = shape and γ chosen so that E[K] ≥ mean (the safe side); see
     * {@link RepetitionDistribution#fromMeanAndShape}.
     *
     * @param event the base mechanism Q, not null
     * @param mean  the (least) expected number of runs E[K]: finite and &gt; 0 for Poisson, finite and &gt; 1 otherwise
     * @param shape η &gt; −1 for the truncated negative binomial, or +∞ for Poisson
     * @throws IllegalArgumentException if shape ≤ −1 or NaN, or mean is not finite and &gt; 0 (Poisson) or &gt; 1, or
     *                                  mean is too large to reach with this shape
     * @throws NullPointerException     if event is null
     */
    public RepeatAndSelectEvent(PrivacyEvent event, double mean, double shape) {
        this(event, RepetitionDistribution.fromMeanAndShape(mean, shape));
    }

    @Override
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "repeat_and_select");
        m.put("distribution", distribution.toMap());
        m.put("event", event.toMap());
        return m;
    }
}
