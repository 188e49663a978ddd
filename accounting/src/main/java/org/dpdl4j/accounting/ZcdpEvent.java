package org.dpdl4j.accounting;

import java.util.Map;

/**
 * A mechanism known to be ρ-zCDP (Bun &amp; Steinke 2016): (α, ρα)-RDP for every α &gt; 1.
 *
 * @param rho ρ ≥ 0, finite
 */
public record ZcdpEvent(double rho) implements PrivacyEvent {
    /** @throws IllegalArgumentException if ρ is negative or not finite */
    public ZcdpEvent {
        Checks.finiteNonNegative("rho", rho);
    }

    @Override
    public Map<String, Object> toMap() {
        return Map.of("type", "zcdp", "rho", rho);
    }
}
