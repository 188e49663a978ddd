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

    /** The default accountant ({@value #DEFAULT}: {@link RdpAccountant#standard()}). */
    public static PrivacyAccountant standard() {
        return byName(DEFAULT);
    }

    /**
     * The accountant registered under a name.
     *
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

    /** The registered names, in registration order. */
    public static Set<String> names() {
        return java.util.Collections.unmodifiableSet(REGISTRY.keySet());
    }
}
