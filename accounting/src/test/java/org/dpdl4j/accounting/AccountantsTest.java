package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link Accountants#tightest}: the smallest of the valid bounds, never below the exact value. */
class AccountantsTest {
    @Test
    void tightestIsTheSmallerValidBoundAndNeverBelowTheExactValue() {
        // two Gaussian mechanisms with σ = 3 compose to one with μ = √2 / 3, whose ε is known exactly (Balle & Wang 2018)
        PrivacyEvent two = ComposedEvent.of(new GaussianEvent(3), new GaussianEvent(3));
        double exact = PldAccountantTest.analyticGaussianEpsilon(Math.sqrt(2) / 3, 1e-5);
        double rdp = Accountants.byName("rdp").epsilon(two, 1e-5);
        double pld = Accountants.byName("pld").epsilon(two, 1e-5);
        PrivacyGuarantee g = Accountants.tightest(two, 1e-5);
        assertEquals(Math.min(rdp, pld), g.epsilon(), 0);
        assertEquals("pld", g.accountant(), "RDP's conversion is the looser here: " + rdp + " vs " + pld);
        assertTrue(g.epsilon() >= exact && g.epsilon() < exact * 1.01, g.epsilon() + " vs exact " + exact);

        // best of K runs: only RDP has the theorem, so RDP answers
        PrivacyEvent dpsgd = NoiseCalibration.dpSgd(0.01, 1.0, 100);
        PrivacyEvent tuning = new RepeatAndSelectEvent(dpsgd, RepetitionDistribution.poisson(5));
        assertTrue(!Accountants.byName("pld").supports(tuning));
        PrivacyGuarantee t = Accountants.tightest(ComposedEvent.of(tuning, dpsgd), 1e-5);
        assertEquals("rdp", t.accountant());
        assertEquals(Accountants.byName("rdp").epsilon(ComposedEvent.of(tuning, dpsgd), 1e-5), t.epsilon(), 0);
    }
}
