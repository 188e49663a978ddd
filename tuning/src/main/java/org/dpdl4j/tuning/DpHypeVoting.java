package org.dpdl4j.tuning;

import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RdpAccountant;

/**
 * The privacy of DP-HYPE's vote (Liebenow et al., seed 002_6e86e99464f1122f.txt; ../shared/SPEC.md §6):
 * every client votes 1 for its k best of p candidates and adds N(0, σ²/n) per coordinate, and only
 * the sum is revealed, which carries N(0, σ²) noise. Under client-level remove-then-add neighbours the
 * vote vector's L2 sensitivity is √(2k) (Lemma IV.1), so the release is (α, αk/σ²)-RDP (Theorem IV.1):
 * a {@link GaussianEvent} with noise multiplier σ/√(2k). σ for a target (ε, δ) minimises Theorem II.1's
 * conversion over the accountant's orders (Canonne et al. 2020, as {@link RdpAccountant} converts).
 * The voting protocol and secure summation are not part of this class.
 */
public final class DpHypeVoting {
    private DpHypeVoting() {
    }

    /**
     * The event of one vote with k votes per client and total noise standard deviation σ.
     *
     * @throws IllegalArgumentException if k &lt; 1 or σ is not finite and &gt; 0
     */
    public static PrivacyEvent event(int votes, double sigma) {
        if (votes < 1) {
            throw new IllegalArgumentException("votes per client k must be >= 1, got " + votes);
        }
        if (!(sigma > 0) || Double.isInfinite(sigma)) {
            throw new IllegalArgumentException("noise sigma must be finite and > 0, got " + sigma);
        }
        return new GaussianEvent(sigma / Math.sqrt(2.0 * votes));
    }

    /** The standard orders plus every integer 2..1024: the Gaussian's optimum for small ε lies between 64 and 128. */
    private static final RdpAccountant FINE = fineAccountant();

    private static RdpAccountant fineAccountant() {
        double[] std = RdpAccountant.defaultOrders();
        double[] all = java.util.Arrays.copyOf(std, std.length + 1023);
        for (int a = 2; a <= 1024; a++) {
            all[std.length + a - 2] = a;
        }
        return new RdpAccountant(all);
    }

    /** The accountant used for DP-HYPE's calibration (the standard grid plus all integer orders up to 1024). */
    public static RdpAccountant accountant() {
        return FINE;
    }

    /**
     * The smallest σ (to 1e-4, rounded up) for which one vote is (ε, δ)-DP on {@link #accountant()}'s orders.
     *
     * @throws IllegalArgumentException if k &lt; 1, ε is not finite and &gt; 0, or δ ∉ (0, 1)
     */
    public static double noiseMultiplier(int votes, double epsilon, double delta) {
        event(votes, 1); // checks k
        return NoiseCalibration.smallestNoise(s -> event(votes, s), epsilon, delta, FINE, 1e-4);
    }
}
