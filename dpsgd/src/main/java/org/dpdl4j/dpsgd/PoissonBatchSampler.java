package org.dpdl4j.dpsgd;

import java.util.Arrays;

/**
 * Poisson sampling of batch indices: at every step each of n examples is included independently with probability q,
 * so the batch size is Binomial(n, q) (it can be 0).
 *
 * <p>The indices are cut into blocks of {@value #BLOCK}; step t's choices in block b come from their own stream of
 * uniforms, the i-th of which is SplitMix64's finaliser of k₀ ⊕ mix(k₁ + i·γ) with (k₀, k₁) the first 128 bits of
 * SHA-256(seed, t, b). The stream draws the gaps between included indices from the geometric distribution (the same
 * distribution as {@value #BLOCK} independent Bernoulli(q) draws, at O(q·{@value #BLOCK}) cost). Keying each stream
 * with 128 bits of a hash of the whole (seed, t, b), instead of one 64-bit seed per stream, keeps two streams from
 * being shifted copies of each other even over the 10⁹ and more (step, block) pairs of a long run on a large set. So any block-aligned range of a step's batch can be drawn on its own, in any order and again: a Spark executor
 * that holds examples [from, to) draws exactly the part of the batch that a local run draws there, and a retried task
 * draws it again identically.
 */
public final class PoissonBatchSampler implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    /** Examples per independently seeded block; partitions of the data must start at multiples of it. */
    public static final int BLOCK = 1024;

    private final int n;
    private final double q;
    private final double log1mQ;
    private final long seed;

    /**
     * A sampler over n examples with rate q.
     *
     * @param n    dataset size ≥ 1, in examples
     * @param q    sampling rate in (0, 1]
     * @param seed the run's sampling seed (the streams of every step and block derive from it)
     * @throws IllegalArgumentException if n &lt; 1 or q ∉ (0, 1]
     */
    public PoissonBatchSampler(int n, double q, long seed) {
        if (n < 1) {
            throw new IllegalArgumentException("dataset size n must be >= 1, got " + n);
        }
        if (!(q > 0 && q <= 1)) {
            throw new IllegalArgumentException("sampling rate q must be in (0, 1], got " + q);
        }
        this.n = n;
        this.q = q;
        this.log1mQ = Math.log1p(-q);
        this.seed = seed;
    }

    /**
     * Step t's batch: sorted distinct indices in [0, n).
     *
     * @param step the step t (the trainer's steps are 1-based); any value keys its own stream
     * @return the batch's indices, sorted and distinct, possibly none
     */
    public int[] batch(long step) {
        return batch(step, 0, n);
    }

    /**
     * The part of step t's batch in [from, to): sorted distinct indices.
     *
     * @param step the step t (the trainer's steps are 1-based); any value keys its own stream
     * @param from a multiple of {@value #BLOCK} in [0, n]
     * @param to   a multiple of {@value #BLOCK}, or n, in [from, n]
     * @return the indices of step t's batch in [from, to), sorted and distinct, possibly none; the same as the part of
     *         {@link #batch(long)} in that range
     * @throws IllegalArgumentException if the range is not block-aligned or not within [0, n]
     */
    public int[] batch(long step, int from, int to) {
        if (from < 0 || to > n || from > to || from % BLOCK != 0 || to % BLOCK != 0 && to != n) {
            throw new IllegalArgumentException("the range [" + from + ", " + to + ") must lie in [0, " + n + "] with both ends "
                    + "multiples of " + BLOCK + " (or the end n)");
        }
        if (q == 1) {
            int[] all = new int[to - from];
            Arrays.setAll(all, i -> from + i);
            return all;
        }
        int[] buf = new int[Math.max(16, (int) (q * (to - from) * 1.5) + 16)];
        int count = 0;
        for (int start = from; start < to; start += BLOCK) {
            int end = Math.min(to, start + BLOCK);
            long[] key = streamKey(step, start / BLOCK);
            long draw = 0;
            long i = start - 1L;
            while (true) {
                // gap ~ Geometric(q) on {1, 2, ...}: P(gap = k) = (1-q)^(k-1) q
                long z = mix64(key[0] ^ mix64(key[1] + ++draw * 0x9E3779B97F4A7C15L));
                double u = 1.0 - (z >>> 11) * 0x1.0p-53; // in (0, 1]
                double gap = 1 + Math.floor(Math.log(u) / log1mQ);
                if (gap >= end - i) { // compared in double: huge gaps (tiny q) cannot overflow
                    break;
                }
                i += (long) gap;
                if (count == buf.length) {
                    buf = Arrays.copyOf(buf, buf.length * 2);
                }
                buf[count++] = (int) i;
            }
        }
        return Arrays.copyOf(buf, count);
    }

    /**
     * P block-aligned parts of [0, n) of nearly equal size: bounds[p] to bounds[p + 1] for p in [0, P); fewer parts when n
     * has fewer blocks than P.
     *
     * @param n     dataset size, in examples, &gt;= 0
     * @param parts P, the number of parts wanted, &gt;= 1
     * @return the bounds, of length (number of parts + 1): 0 first, n last, the inner ones multiples of {@value #BLOCK}
     * @throws IllegalArgumentException if parts &lt; 1
     */
    public static int[] partitionBounds(int n, int parts) {
        if (parts < 1) {
            throw new IllegalArgumentException("the number of partitions must be >= 1, got " + parts);
        }
        int blocks = (n + BLOCK - 1) / BLOCK;
        int p = Math.max(1, Math.min(parts, blocks));
        int[] bounds = new int[p + 1];
        for (int k = 1; k <= p; k++) {
            bounds[k] = (int) Math.min(n, (long) blocks * k / p * BLOCK);
        }
        bounds[p] = n;
        return bounds;
    }

    private static final ThreadLocal<java.security.MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return java.security.MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    });

    /** The 128-bit key of step t's stream in block b: the first 16 bytes of SHA-256(seed, t, b). */
    private long[] streamKey(long step, long block) {
        java.security.MessageDigest md = SHA256.get();
        byte[] digest = md.digest(java.nio.ByteBuffer.allocate(24).putLong(seed).putLong(step).putLong(block).array());
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(digest);
        return new long[]{b.getLong(), b.getLong()};
    }

    private static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
