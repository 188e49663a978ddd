package org.dpdl4j.accounting;

import java.util.Map;

/**
 * Papernot–Steinke random search (seed 004_4fd64be5e0b6d74d.txt): run the base mechanism a random
 * number K of times and release only the best outcome. K is Poisson(μ) when {@code shape} is +∞
 * (Theorem 6), and otherwise the truncated negative binomial D_{η,γ} of Definition 1 with η =
 * {@code shape} and γ chosen so that E[K] = {@code mean} (Theorem 2; η = 0 is the logarithmic,
 * η = 1 the geometric distribution). Same parameters as dp_accounting's {@code RepeatAndSelectDpEvent}.
 *
 * @param event the base mechanism Q (one whole training run, say)
 * @param mean  E[K]: μ &gt; 0 for Poisson; ≥ 1 (strictly &gt; 1) for the truncated negative binomial
 * @param shape η ∈ (−1, ∞), or {@code Double.POSITIVE_INFINITY} for Poisson
 */
public record RepeatAndSelectEvent(PrivacyEvent event, double mean, double shape) implements PrivacyEvent {
    /** @throws IllegalArgumentException on an invalid mean or shape */
    public RepeatAndSelectEvent {
        java.util.Objects.requireNonNull(event, "event");
        if (!(shape > -1)) {
            throw new IllegalArgumentException("shape eta must be > -1 (or infinite for Poisson), got " + shape);
        }
        if (Double.isInfinite(shape) ? !(mean > 0) || Double.isInfinite(mean) : !(mean > 1) || Double.isInfinite(mean)) {
            throw new IllegalArgumentException("mean must be finite and " + (Double.isInfinite(shape) ? "> 0" : "> 1")
                    + " for this distribution, got " + mean);
        }
    }

    /** True for Poisson K (shape = +∞). */
    public boolean poisson() {
        return Double.isInfinite(shape);
    }

    @Override
    public Map<String, Object> toMap() {
        return Map.of("type", "repeat_and_select", "mean", mean, "shape", poisson() ? "inf" : (Object) shape,
                "event", event.toMap());
    }
}
