package org.dpdl4j.accounting;

import java.util.Map;

/**
 * A mechanism known to be ρ-zCDP (Bun &amp; Steinke, "Concentrated Differential Privacy: Simplifications, Extensions,
 * and Lower Bounds", TCC 2016, arXiv:1605.02065): (α, ρα)-RDP for every α &gt; 1.
 *
 * @param rho ρ ≥ 0, finite
 */
public record ZcdpEvent(double rho) implements PrivacyEvent {
    /**
     * Creates the event after checking ρ.
     *
     * @param rho ρ, the zCDP parameter: finite and ≥ 0
     * @throws IllegalArgumentException if ρ is negative or not finite
     */
    public ZcdpEvent {
        Checks.finiteNonNegative("rho", rho);
    }

    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "zcdp", "rho", rho);
    }
}
