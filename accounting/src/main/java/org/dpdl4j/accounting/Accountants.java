package org.dpdl4j.accounting;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The registry of accountants, by {@link PrivacyAccountant#name() name}: the one place the rest of dpdl4j (the
 * trainer, the tuners, the ledger, the CLI) gets an accountant from. Adding an accountant is its class plus
 * one entry here.
 */
public final class Accountants {
    /** The name of the accountant dpdl4j uses unless told otherwise. */
    public static final String DEFAULT = "rdp";

    private static final Map<String, Supplier<PrivacyAccountant>> REGISTRY = new LinkedHashMap<>();

    static {
        REGISTRY.put("rdp", RdpAccountant::standard);
        REGISTRY.put("pld", PldAccountant::standard);
    }

    private Accountants() {
    }

    /**
     * The default accountant ({@value #DEFAULT}: {@link RdpAccountant#standard()}).
     *
     * @return the accountant registered under {@link #DEFAULT}
     */
    public static PrivacyAccountant standard() {
        return byName(DEFAULT);
    }

    /**
     * The accountant registered under a name.
     *
     * @param name the accountant's {@link PrivacyAccountant#name() name}, one of {@link #names()} ("rdp" or "pld")
     * @return the accountant (the standard instance of its class)
     * @throws IllegalArgumentException if no accountant has that name (the message lists the names)
     */
    public static PrivacyAccountant byName(String name) {
        Supplier<PrivacyAccountant> s = REGISTRY.get(name);
        if (s == null) {
            throw new IllegalArgumentException("accountant must be one of " + String.join(", ", REGISTRY.keySet()) + ", got '"
                    + name + "'");
        }
        return s.get();
    }

    /**
     * The smallest ε at δ among the registered accountants that support the event. Each accountant's ε is an upper
     * bound on the event's true ε (none reports below the truth), so their minimum is one too; ties go to the earlier
     * registered accountant.
     *
     * @param event the event (any; at least the RDP accountant supports every permitted event)
     * @param delta δ ∈ (0, 1)
     * @return the winning accountant's guarantee ({@link PrivacyGuarantee#accountant()} names it)
     * @throws IllegalArgumentException if no registered accountant supports the event, or δ is out of range
     */
    public static PrivacyGuarantee tightest(PrivacyEvent event, double delta) {
        PrivacyGuarantee best = null;
        for (String name : REGISTRY.keySet()) {
            PrivacyAccountant a = byName(name);
            if (a.supports(event)) {
                PrivacyGuarantee g = a.guarantee(event, delta);
                if (best == null || g.epsilon() < best.epsilon()) {
                    best = g;
                }
            }
        }
        if (best == null) {
            throw new IllegalArgumentException("no registered accountant (" + String.join(", ", REGISTRY.keySet()) + ") supports "
                    + event);
        }
        return best;
    }

    /**
     * The registered names, in registration order.
     *
     * @return an unmodifiable view of the names
     */
    public static Set<String> names() {
        return java.util.Collections.unmodifiableSet(REGISTRY.keySet());
    }
}
