package org.dpdl4j.examples;

import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RepeatAndSelectEvent;

/** ε of a DP-SGD run and of a random search over such runs, with dpdl4j-accounting alone (no ND4J needed). */
public final class AccountOnly {
    private AccountOnly() {
    }

    /** Prints ε for q = 256/60000, σ = 1.1, 3 epochs, δ = 1e-5, and for the best of K ~ Poisson(10) such runs. */
    public static void main(String[] args) {
        double q = 256.0 / 60000;
        long steps = (long) Math.ceil(3 / q);
        PrivacyEvent run = NoiseCalibration.dpSgd(q, 1.1, steps);
        PrivacyEvent search = new RepeatAndSelectEvent(run, 10, Double.POSITIVE_INFINITY); // K ~ Poisson(10)
        for (String accountant : Accountants.names()) {
            System.out.printf(java.util.Locale.ROOT, "%s: one run epsilon %.4f%n", accountant, Accountants.byName(accountant).epsilon(run, 1e-5));
        }
        System.out.printf(java.util.Locale.ROOT, "random search, K ~ Poisson(10): epsilon %.4f%n", Accountants.standard().epsilon(search, 1e-5));
    }
}
