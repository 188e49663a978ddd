package org.dpdl4j.accounting;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * DP-HyPO (Wang, Gao, Zhang, Su &amp; Shen, "DP-HyPO: An Adaptive Private Hyperparameter Optimization Framework",
 * NeurIPS 2023, arXiv:2306.05734, Framework 1): K runs of the base
 * mechanism, K random, where run j draws its candidate from a density π⁽ʲ⁾ that may depend on the
 * earlier runs but stays within c·π⁽⁰⁾ ≤ π⁽ʲ⁾ ≤ C·π⁽⁰⁾ of the prior; only the best outcome is released.
 * {@link RdpAccountant} bounds it by Theorem 1 (truncated negative binomial K), by Theorem 2 for a
 * pure-DP base, and as documented there for Poisson, fixed and truncated K. With C = c it is
 * {@link RepeatAndSelectEvent} exactly (no adaptivity).
 *
 * @param event        the base mechanism (its curve must hold for every candidate: the pointwise maximum)
 * @param distribution the distribution of K
 * @param lowerBound   c ∈ (0, 1], the smallest ratio π⁽ʲ⁾/π⁽⁰⁾
 * @param upperBound   C ∈ [1, ∞), the largest ratio π⁽ʲ⁾/π⁽⁰⁾
 */
public record AdaptiveRepeatAndSelectEvent(PrivacyEvent event, RepetitionDistribution distribution, double lowerBound,
                                           double upperBound) implements PrivacyEvent {
    /**
     * Creates the event after checking its parts.
     *
     * @param event        the base mechanism, not null
     * @param distribution the distribution of K, not null
     * @param lowerBound   c, the smallest density ratio: in (0, 1]
     * @param upperBound   C, the largest density ratio: finite and ≥ 1
     * @throws IllegalArgumentException unless 0 &lt; c ≤ 1 ≤ C &lt; ∞ (otherwise no density lies within the bounds)
     * @throws NullPointerException     if the event or distribution is null
     */
    public AdaptiveRepeatAndSelectEvent {
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(distribution, "distribution");
        if (!(lowerBound > 0 && lowerBound <= 1)) {
            throw new IllegalArgumentException("density lower bound c must be in (0, 1], got " + lowerBound);
        }
        if (!(upperBound >= 1) || Double.isInfinite(upperBound)) {
            throw new IllegalArgumentException("density upper bound C must be finite and >= 1, got " + upperBound);
        }
    }

    /**
     * log(C/c), the price of adaptivity per unit in Theorem 1.
     *
     * @return log(C/c) ≥ 0 (0 means no adaptivity)
     */
    public double logRatio() {
        return Math.log(upperBound) - Math.log(lowerBound);
    }

    @Override
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "adaptive_repeat_and_select");
        m.put("lower_bound", lowerBound);
        m.put("upper_bound", upperBound);
        m.put("distribution", distribution.toMap());
        m.put("event", event.toMap());
        return m;
    }
}
