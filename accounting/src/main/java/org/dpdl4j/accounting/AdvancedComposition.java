package org.dpdl4j.accounting;

/**
 * The advanced composition theorem for pure-DP steps: Dwork, Rothblum &amp; Vadhan, "Boosting and Differential
 * Privacy", FOCS 2010, doi:10.1109/FOCS.2010.12, Theorem III.3. Propose-test tuning (Ding &amp; Wu, "Revisiting Hyperparameter Tuning with Differential
 * Privacy", 2022, arXiv:2211.01852) may charge its
 * loop this way when it is smaller than the RDP composition.
 */
public final class AdvancedComposition {
    private AdvancedComposition() {
    }

    /**
     * ε of the adaptive composition of {@code steps} ε₀-DP mechanisms at extra failure probability δ′:
     * √(2T·ln(1/δ′))·ε₀ + T·ε₀·(e^{ε₀} − 1), so the composition is (ε, δ′)-DP.
     *
     * @param steps      T, the number of composed mechanisms (steps): ≥ 1
     * @param epsilon0   ε₀ of each step, finite and ≥ 0
     * @param deltaPrime δ′ in (0, 1)
     * @return ε ≥ 0 of the composition (+∞ if the computation overflows)
     * @throws IllegalArgumentException naming the parameter when a value is outside its range
     */
    public static double epsilon(int steps, double epsilon0, double deltaPrime) {
        if (steps < 1) {
            throw new IllegalArgumentException("steps must be >= 1, got " + steps);
        }
        if (!(epsilon0 >= 0) || Double.isInfinite(epsilon0)) {
            throw new IllegalArgumentException("epsilon0 must be finite and >= 0, got " + epsilon0);
        }
        if (!(deltaPrime > 0 && deltaPrime < 1)) {
            throw new IllegalArgumentException("deltaPrime must be in (0, 1), got " + deltaPrime);
        }
        return Math.sqrt(2.0 * steps * Math.log(1 / deltaPrime)) * epsilon0 + steps * epsilon0 * Math.expm1(epsilon0);
    }
}
