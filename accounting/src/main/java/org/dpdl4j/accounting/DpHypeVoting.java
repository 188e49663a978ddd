package org.dpdl4j.accounting;


/**
 * The privacy of DP-HYPE's vote (Liebenow, Peinemann &amp; Mohammadi, "DP-HYPE: Distributed Differentially Private
 * Hyperparameter Search", 2025, arXiv:2510.04902):
 * every client votes 1 for its k best of p candidates and adds N(0, σ²/n) per coordinate, and only
 * the sum is revealed, which carries N(0, σ²) noise. Under client-level remove-then-add neighbours the
 * vote vector's L2 sensitivity is √(2k) (Lemma IV.1), so the release is (α, αk/σ²)-RDP (Theorem IV.1):
 * a {@link GaussianEvent} with noise multiplier σ/√(2k). σ for a target (ε, δ) minimises Theorem II.1's
 * conversion over the accountant's orders (Canonne, Kamath &amp; Steinke 2020, arXiv:2004.00010, as
 * {@link RdpConversion} converts).
 *
 * <p>Across real parties the noise must be integer-valued for secure summation: each party encodes its
 * votes as multiples of an integer scale s and adds the discrete Gaussian N_Z(0, σ_c²), and the sum is
 * accounted as a {@link DistributedDiscreteGaussianEvent} ({@link #discreteEvent}); the protocol itself
 * lives in the {@code federated} module.
 */
public final class DpHypeVoting {
    private DpHypeVoting() {
    }

    /**
     * The event of one vote with k votes per client and total noise standard deviation σ.
     *
     * @param votes k, the votes each client casts: ≥ 1
     * @param sigma σ, the standard deviation of the summed noise per coordinate, in votes (a vote is 1): finite and
     *              &gt; 0
     * @return a {@link GaussianEvent} with noise multiplier σ/√(2k)
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

    /**
     * The accountant used for DP-HYPE's calibration (the standard grid plus all integer orders up to 1024).
     *
     * @return the shared {@link RdpAccountant} on that grid
     */
    public static PrivacyAccountant accountant() {
        return FINE;
    }

    /**
     * The smallest σ (to 1e-4, rounded up) for which one vote is (ε, δ)-DP on {@link #accountant()}'s orders.
     *
     * @param votes   k, the votes each client casts: ≥ 1
     * @param epsilon ε, the target privacy loss: finite and &gt; 0
     * @param delta   δ ∈ (0, 1)
     * @return σ, the standard deviation of the summed noise per coordinate, in votes
     * @throws IllegalArgumentException if k &lt; 1, ε is not finite and &gt; 0, δ ∉ (0, 1), or no σ ≤ 10⁶ meets the
     *                                  target
     */
    public static double noiseMultiplier(int votes, double epsilon, double delta) {
        event(votes, 1); // checks k
        return NoiseCalibration.smallestNoise(s -> event(votes, s), epsilon, delta, FINE, 1e-4);
    }

    /**
     * One client's vote (Liebenow et al. 2025, Algorithm 1, client phase): 1 for the k smallest losses (ties to the lower
     * index), 0 elsewhere, plus N(0, σ²/n) on every coordinate.
     *
     * @param losses  the client's loss for each of the p candidates (none NaN)
     * @param votes   k ∈ [1, p]
     * @param sigma   σ of the summed noise (≥ 0; 0 only for simulations without privacy)
     * @param clients n ≥ 1, so that the n clients' noise sums to N(0, σ²)
     * @param random  the source of the Gaussian noise (one {@code nextGaussian()} per candidate)
     * @return a new array of length p: the noisy vote per candidate
     * @throws IllegalArgumentException on a parameter out of range, or if a loss is NaN
     */
    public static double[] clientVote(double[] losses, int votes, double sigma, int clients, java.util.random.RandomGenerator random) {
        if (votes < 1 || votes > losses.length) {
            throw new IllegalArgumentException("votes per client k must be in [1, " + losses.length + "], got " + votes);
        }
        if (!(sigma >= 0) || Double.isInfinite(sigma) || clients < 1) {
            throw new IllegalArgumentException("sigma must be finite and >= 0 and clients >= 1, got " + sigma + " and " + clients);
        }
        double[] v = topK(losses, votes);
        double sd = sigma / Math.sqrt(clients);
        for (int j = 0; j < v.length; j++) {
            v[j] += sd * random.nextGaussian();
        }
        return v;
    }

    /**
     * The event of one vote whose parties each add N_Z(0, σ_c²) to votes encoded as multiples of s:
     * under remove-then-add neighbours k coordinates move by +s and k by −s, so Δ₂ = s√(2k) and
     * Δ₁ = 2ks (Lemma IV.1 on the integer grid).
     *
     * @param votes      k ≥ 1
     * @param scale      s ≥ 1, the integer a vote is encoded as
     * @param localSigma σ_c ≥ 1/2 per party, in grid units (a vote is s units)
     * @param minClients the fewest parties whose noise a revealed sum can contain: ≥ 1
     * @param maxClients the most: ≥ minClients
     * @param candidates p, the vector length: ≥ 1
     * @return the event with Δ₂ = s√(2k) and Δ₁ = 2ks
     * @throws IllegalArgumentException on a parameter out of range
     */
    public static DistributedDiscreteGaussianEvent discreteEvent(int votes, long scale, double localSigma, int minClients,
                                                                 int maxClients, int candidates) {
        event(votes, 1);
        if (scale < 1) {
            throw new IllegalArgumentException("vote scale s must be >= 1, got " + scale);
        }
        return new DistributedDiscreteGaussianEvent(scale * Math.sqrt(2.0 * votes), 2.0 * votes * scale, localSigma,
                minClients, maxClients, candidates);
    }

    /**
     * The smallest per-party σ_c (grid units, to 1e-3, rounded up) for which {@link #discreteEvent} is
     * (ε, δ)-DP on {@link #accountant()}'s orders.
     *
     * @param votes      k ≥ 1
     * @param scale      s ≥ 1, the integer a vote is encoded as
     * @param minClients the fewest parties whose noise a revealed sum can contain: ≥ 1
     * @param maxClients the most: ≥ minClients
     * @param candidates p, the vector length: ≥ 1
     * @param epsilon    ε, the target privacy loss: finite and &gt; 0
     * @param delta      δ ∈ (0, 1)
     * @return σ_c ≥ 1/2, in grid units
     * @throws IllegalArgumentException on a parameter out of range or an unreachable target (σ_c &gt; 10⁶)
     */
    public static double discreteLocalSigma(int votes, long scale, int minClients, int maxClients, int candidates,
                                            double epsilon, double delta) {
        discreteEvent(votes, scale, 1, minClients, maxClients, candidates); // checks the parameters
        return NoiseCalibration.smallestNoise(s -> s < 0.5 ? new NonPrivateEvent()
                : discreteEvent(votes, scale, s, minClients, maxClients, candidates), epsilon, delta, FINE, 1e-3);
    }

    /**
     * 1 at the k smallest losses (ties to the lower index), 0 elsewhere.
     *
     * @param losses the loss for each of the p candidates (none NaN)
     * @param votes  k ∈ [1, p]
     * @return a new array of length p with k ones
     * @throws IllegalArgumentException if k ∉ [1, p] or a loss is NaN
     */
    public static double[] topK(double[] losses, int votes) {
        if (votes < 1 || votes > losses.length) {
            throw new IllegalArgumentException("votes per client k must be in [1, " + losses.length + "], got " + votes);
        }
        for (int j = 0; j < losses.length; j++) {
            if (Double.isNaN(losses[j])) {
                throw new IllegalArgumentException("loss of candidate " + j + " is NaN");
            }
        }
        Integer[] order = new Integer[losses.length];
        for (int j = 0; j < order.length; j++) {
            order[j] = j;
        }
        java.util.Arrays.sort(order, (a, b) -> losses[a] != losses[b] ? Double.compare(losses[a], losses[b]) : Integer.compare(a, b));
        double[] v = new double[losses.length];
        for (int j = 0; j < votes; j++) {
            v[order[j]] = 1;
        }
        return v;
    }

    /**
     * The server's choice: the index of the largest summed vote (the lowest index on ties).
     *
     * @param summed the summed (noisy) votes per candidate; length ≥ 1, no NaN
     * @return the chosen candidate's index
     * @throws IllegalArgumentException if there is no candidate or a sum is NaN (no choice is meaningful)
     */
    public static int argmax(double[] summed) {
        if (summed.length == 0) {
            throw new IllegalArgumentException("summed votes: at least one candidate is needed, got none");
        }
        int best = 0;
        for (int j = 0; j < summed.length; j++) {
            if (Double.isNaN(summed[j])) {
                throw new IllegalArgumentException("summed votes: candidate " + j + "'s sum is NaN");
            }
            if (summed[j] > summed[best]) {
                best = j;
            }
        }
        return best;
    }

    /**
     * Liebenow et al. 2025's Theorem V.1 lower bound on P[a good candidate wins]: 1 − |H_bad|·σ/(γ√π)·exp(−γ²/(4σ²)),
     * γ = min over good of v − max over bad of v for the noise-free summed votes (0 if γ ≤ 0).
     *
     * @param gap   γ, the margin of the good candidates' noise-free summed votes over the bad ones', in votes
     * @param bad   |H_bad|, the number of bad candidates: ≥ 0
     * @param sigma σ, the standard deviation of the summed noise per coordinate, in votes: ≥ 0
     * @return the lower bound, in [0, 1]
     * @throws IllegalArgumentException if γ is NaN, |H_bad| is negative, or σ is negative or not finite
     */
    public static double successBound(double gap, int bad, double sigma) {
        if (Double.isNaN(gap) || bad < 0 || !(sigma >= 0) || Double.isInfinite(sigma)) {
            throw new IllegalArgumentException("successBound needs a gap (not NaN), |H_bad| >= 0 and a finite sigma >= 0, got gap "
                    + gap + ", bad " + bad + ", sigma " + sigma);
        }
        if (gap <= 0) {
            return 0;
        }
        return Math.max(0, 1 - bad * sigma / (gap * Math.sqrt(Math.PI)) * Math.exp(-gap * gap / (4 * sigma * sigma)));
    }
}
