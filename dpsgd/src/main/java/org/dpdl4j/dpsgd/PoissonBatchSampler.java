package org.dpdl4j.dpsgd;

import java.util.Arrays;
import java.util.random.RandomGenerator;

/**
 * Poisson sampling of batch indices: each of n examples is included independently with
 * probability q, so the batch size is Binomial(n, q) (it can be 0). Implemented by drawing the
 * gaps between included indices from the geometric distribution, which is the same distribution
 * as n independent Bernoulli(q) draws at O(qn) cost per batch.
 */
public final class PoissonBatchSampler {
    private final int n;
    private final double q;
    private final double log1mQ;
    private final RandomGenerator rng;

    /**
     * @param n   dataset size ≥ 1
     * @param q   sampling rate in (0, 1]
     * @param rng the source of randomness (not shared with other users while sampling)
     * @throws IllegalArgumentException if n &lt; 1 or q ∉ (0, 1]
     */
    public PoissonBatchSampler(int n, double q, RandomGenerator rng) {
        if (n < 1) {
            throw new IllegalArgumentException("dataset size n must be >= 1, got " + n);
        }
        if (!(q > 0 && q <= 1)) {
            throw new IllegalArgumentException("sampling rate q must be in (0, 1], got " + q);
        }
        this.n = n;
        this.q = q;
        this.log1mQ = Math.log1p(-q);
        this.rng = rng;
    }

    /** The next batch: sorted distinct indices in [0, n). */
    public int[] next() {
        if (q == 1) {
            int[] all = new int[n];
            Arrays.setAll(all, i -> i);
            return all;
        }
        int[] buf = new int[Math.max(16, (int) (q * n * 1.5) + 16)];
        int count = 0;
        long i = -1;
        while (true) {
            // gap ~ Geometric(q) on {1, 2, ...}: P(gap = k) = (1-q)^(k-1) q
            double u = 1.0 - rng.nextDouble(); // in (0, 1]
            double gap = 1 + Math.floor(Math.log(u) / log1mQ);
            if (gap >= n - i) { // compared in double: huge gaps (tiny q) cannot overflow
                break;
            }
            i += (long) gap;
            if (count == buf.length) {
                buf = Arrays.copyOf(buf, buf.length * 2);
            }
            buf[count++] = (int) i;
        }
        return Arrays.copyOf(buf, count);
    }
}
