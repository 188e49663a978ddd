package org.dpdl4j.federated;

import org.dpdl4j.accounting.DistributedDiscreteGaussianEvent;
import org.dpdl4j.accounting.DpHypeVoting;

/**
 * The public parameters of a DP-HYPE session, agreed by the coordinator and every client.
 *
 * <p>Fixed-point encoding: a vote is the integer s (the {@code scale}), so the vote vector and the
 * discrete Gaussian noise are integers and the sum is exact modulo 2^64; there is no rounding. The
 * summed votes are Σ/s, at a resolution of 1/s votes. The sum cannot wrap while
 * |Σ_j| &lt; 2^63; with honest clients |Σ_j| ≤ n·s plus noise of standard deviation √n·σ_c, far below
 * 2^63 for every n ≤ 2^20 and s ≤ 2^24 that this class accepts.
 *
 * @param candidates p ≥ 2, the number of public candidates (the vector length)
 * @param votes      k ∈ [1, p − 1] votes per client
 * @param scale      s ∈ [1, 2^24]
 * @param localSigma σ_c ∈ [1/2, 10^12]: each client's discrete Gaussian standard deviation, in grid units (a vote
 *                   is s units)
 * @param minClients n_min ≥ 1: a round completes only with at least this many participants, so the
 *                   sum always carries at least n_min clients' noise
 * @param maxClients n ∈ [n_min, 2^20]: the roster size
 */
public record DpHypeParameters(int candidates, int votes, long scale, double localSigma, int minClients, int maxClients) {
    /** The default scale s = 2^16: with it, τ of the distributed discrete Gaussian is negligible for σ/√n ≥ 1/2^12. */
    public static final long DEFAULT_SCALE = 1L << 16;

    /**
     * Validates the parameters.
     *
     * @param candidates p ≥ 2, the number of public candidates (the vector length)
     * @param votes      k ∈ [1, p − 1] votes per client
     * @param scale      s ∈ [1, 2^24], the integer one vote is encoded as
     * @param localSigma σ_c ∈ [1/2, 10^12], each client's discrete Gaussian standard deviation, in grid units (a
     *                   vote is s units)
     * @param minClients n_min ≥ 1, the fewest participants with which a round completes
     * @param maxClients n ∈ [n_min, 2^20], the roster size
     * @throws IllegalArgumentException on a parameter outside the ranges above
     */
    public DpHypeParameters {
        if (candidates < 2) {
            throw new IllegalArgumentException("candidates p must be >= 2, got " + candidates);
        }
        if (votes < 1 || votes >= candidates) {
            throw new IllegalArgumentException("votes per client k must be in [1, " + (candidates - 1) + "], got " + votes);
        }
        if (scale < 1 || scale > (1L << 24)) {
            throw new IllegalArgumentException("vote scale s must be in [1, 2^24], got " + scale);
        }
        if (!(localSigma >= 0.5) || Double.isInfinite(localSigma) || localSigma > 1e12) {
            throw new IllegalArgumentException("local sigma must be in [0.5, 1e12] grid units, got " + localSigma);
        }
        if (minClients < 1 || maxClients < minClients || maxClients > (1 << 20)) {
            throw new IllegalArgumentException("clients must satisfy 1 <= minClients <= maxClients <= 2^20, got "
                    + minClients + " and " + maxClients);
        }
    }

    /**
     * Parameters whose vote is (ε, δ)-DP at client level, with σ_c from
     * {@link DpHypeVoting#discreteLocalSigma}.
     *
     * @param candidates p ≥ 2, the number of public candidates
     * @param votes      k ∈ [1, p − 1] votes per client
     * @param clients    n ∈ [n_min, 2^20], the roster size
     * @param minClients n_min ≥ 1 and ≤ n; n_min &lt; n tolerates n − n_min dropouts at the price of more noise
     * @param scale      s ∈ [1, 2^24], the integer one vote is encoded as (e.g. {@link #DEFAULT_SCALE})
     * @param epsilon    the target privacy loss ε, finite and &gt; 0
     * @param delta      the target failure probability δ ∈ (0, 1)
     * @return the parameters with the smallest σ_c (grid units, to 10⁻³, rounded up) that meets (ε, δ)
     * @throws IllegalArgumentException on a parameter out of range, or a target no σ_c ≤ 10⁶ meets
     */
    public static DpHypeParameters calibrate(int candidates, int votes, int clients, int minClients, long scale,
                                             double epsilon, double delta) {
        new DpHypeParameters(candidates, votes, scale, 1, minClients, clients); // checks the ranges
        double sigma = DpHypeVoting.discreteLocalSigma(votes, scale, minClients, clients, candidates, epsilon, delta);
        return new DpHypeParameters(candidates, votes, scale, sigma, minClients, clients);
    }

    /**
     * The privacy event of one completed vote (client-level, remove-then-add neighbours).
     *
     * @return the distributed discrete Gaussian event of {@link DpHypeVoting#discreteEvent} for these parameters
     */
    public DistributedDiscreteGaussianEvent event() {
        return DpHypeVoting.discreteEvent(votes, scale, localSigma, minClients, maxClients, candidates);
    }

    /**
     * The standard deviation of the summed noise in votes, for at least n_min participants: √n_min·σ_c/s.
     *
     * @return √n_min·σ_c/s, in votes, &gt; 0
     */
    public double summedNoiseInVotes() {
        return Math.sqrt(minClients) * localSigma / scale;
    }
}
