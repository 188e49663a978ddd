package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Batch sizes of Poisson sampling are Binomial(n, q): mean qn, variance q(1−q)n. Fixed seeds;
 * the bounds are 5 standard errors (false-alarm rate below 1e-6 per check for the mean).
 */
class PoissonBatchSamplerTest {
    @Test
    void batchSizesHaveBinomialMoments() {
        int n = 10_000;
        double q = 0.03;
        int batches = 4000;
        PoissonBatchSampler s = new PoissonBatchSampler(n, q, 5);
        double sum = 0;
        double sumSq = 0;
        int[] hits = new int[n];
        for (int b = 0; b < batches; b++) {
            int[] idx = s.batch(b);
            for (int k = 0; k < idx.length; k++) {
                assertTrue(idx[k] >= 0 && idx[k] < n);
                assertTrue(k == 0 || idx[k] > idx[k - 1], "indices sorted and distinct");
                hits[idx[k]]++;
            }
            sum += idx.length;
            sumSq += (double) idx.length * idx.length;
        }
        double mean = sum / batches;
        double var = sumSq / batches - mean * mean;
        double expectedVar = q * (1 - q) * n;
        assertEquals(q * n, mean, 5 * Math.sqrt(expectedVar / batches), "mean batch size");
        // the sample variance of a near-normal variable has relative s.e. sqrt(2/batches) = 2.2%
        assertEquals(expectedVar, var, 5 * Math.sqrt(2.0 / batches) * expectedVar, "batch size variance");
        // every index is included with probability q: first and last indices are not special
        double first = hits[0] / (double) batches;
        double last = hits[n - 1] / (double) batches;
        double se = Math.sqrt(q * (1 - q) / batches);
        assertEquals(q, first, 5 * se);
        assertEquals(q, last, 5 * se);
    }

    @Test
    void fullRateTakesEveryoneAndTinyRateCanBeEmpty() {
        assertArrayEquals(IntStream.range(0, 7).toArray(), new PoissonBatchSampler(7, 1.0, 1).batch(1));
        PoissonBatchSampler tiny = new PoissonBatchSampler(10, 1e-6, 1);
        int empty = 0;
        for (int i = 0; i < 100; i++) {
            empty += tiny.batch(i).length == 0 ? 1 : 0;
        }
        assertTrue(empty > 95, "with q = 1e-6 almost every batch is empty");
        PoissonBatchSampler minute = new PoissonBatchSampler(1000, 1e-300, 1);
        for (int i = 0; i < 100; i++) {
            assertEquals(0, minute.batch(i).length, "a vanishing rate must not overflow into a bogus index");
        }
    }

    /**
     * A step's batch is the union of its block-aligned parts, drawn in any order and again (what a Spark executor holding
     * [from, to) draws); the same (seed, step) gives the same batch, another step another one.
     */
    @Test
    void aStepsBatchIsTheUnionOfItsPartsWhereverAndHoweverOftenTheyAreDrawn() {
        int n = 10 * PoissonBatchSampler.BLOCK + 321;
        PoissonBatchSampler s = new PoissonBatchSampler(n, 0.01, 77);
        for (int parts : new int[]{1, 2, 3, 7, 11, 50}) {
            int[] bounds = PoissonBatchSampler.partitionBounds(n, parts);
            assertEquals(Math.min(parts, 11), bounds.length - 1, "11 blocks at most");
            assertEquals(0, bounds[0]);
            assertEquals(n, bounds[bounds.length - 1]);
            for (long step = 1; step <= 20; step++) {
                java.util.List<Integer> union = new java.util.ArrayList<>();
                for (int p = bounds.length - 2; p >= 0; p--) { // last part first
                    assertTrue(bounds[p] < bounds[p + 1] && bounds[p] % PoissonBatchSampler.BLOCK == 0, java.util.Arrays.toString(bounds));
                    int[] part = s.batch(step, bounds[p], bounds[p + 1]);
                    assertArrayEquals(part, s.batch(step, bounds[p], bounds[p + 1]), "drawn again");
                    for (int k = part.length - 1; k >= 0; k--) {
                        assertTrue(part[k] >= bounds[p] && part[k] < bounds[p + 1]);
                        union.add(0, part[k]);
                    }
                }
                assertArrayEquals(s.batch(step), union.stream().mapToInt(Integer::intValue).toArray(), "step " + step);
            }
        }
        assertArrayEquals(s.batch(3), new PoissonBatchSampler(n, 0.01, 77).batch(3));
        assertTrue(!java.util.Arrays.equals(s.batch(3), s.batch(4)) && !java.util.Arrays.equals(s.batch(3),
                new PoissonBatchSampler(n, 0.01, 78).batch(3)));
        var e = assertThrows(IllegalArgumentException.class, () -> s.batch(1, 100, n));
        assertTrue(e.getMessage().contains("[100, " + n + ")") && e.getMessage().contains("multiples of 1024"), e.getMessage());
    }

    /**
     * Inclusions are independent across the blocks' seams and across steps: for pairs of indices in neighbouring blocks
     * (1023, 1024), in the same block, and the same index at steps t and t + 1, the joint inclusion rate is q² within 5
     * standard errors (each pair over 40,000 steps).
     */
    @Test
    void inclusionsAreIndependentAcrossBlocksAndSteps() {
        int n = 3 * PoissonBatchSampler.BLOCK;
        double q = 0.2;
        PoissonBatchSampler s = new PoissonBatchSampler(n, q, 9);
        int steps = 40_000;
        int[][] pairs = {{1023, 1024}, {2047, 2048}, {0, 1}, {5, 1029}};
        long[] both = new long[pairs.length];
        long sameIndexNextStep = 0;
        boolean[] previous = null;
        for (int t = 1; t <= steps; t++) {
            boolean[] in = new boolean[n];
            for (int i : s.batch(t)) {
                in[i] = true;
            }
            for (int k = 0; k < pairs.length; k++) {
                both[k] += in[pairs[k][0]] && in[pairs[k][1]] ? 1 : 0;
            }
            if (previous != null && previous[1024] && in[1024]) {
                sameIndexNextStep++;
            }
            previous = in;
        }
        double se = Math.sqrt(q * q * (1 - q * q) / steps);
        for (int k = 0; k < pairs.length; k++) {
            assertEquals(q * q, both[k] / (double) steps, 5 * se, java.util.Arrays.toString(pairs[k]));
        }
        assertEquals(q * q, sameIndexNextStep / (double) (steps - 1), 5 * se, "index 1024 at consecutive steps");
    }

    @Test
    void rejectsBadArguments() {
        var e = assertThrows(IllegalArgumentException.class, () -> new PoissonBatchSampler(10, 0, 1));
        assertTrue(e.getMessage().contains("sampling rate q") && e.getMessage().contains("0.0"));
        assertThrows(IllegalArgumentException.class, () -> new PoissonBatchSampler(0, 0.5, 1));
    }
}
