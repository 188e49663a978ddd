package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
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
        PoissonBatchSampler s = new PoissonBatchSampler(n, q, new SplittableRandom(5));
        double sum = 0;
        double sumSq = 0;
        int[] hits = new int[n];
        for (int b = 0; b < batches; b++) {
            int[] idx = s.next();
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
        assertArrayEquals(IntStream.range(0, 7).toArray(), new PoissonBatchSampler(7, 1.0, new SplittableRandom(1)).next());
        PoissonBatchSampler tiny = new PoissonBatchSampler(10, 1e-6, new SplittableRandom(1));
        int empty = 0;
        for (int i = 0; i < 100; i++) {
            empty += tiny.next().length == 0 ? 1 : 0;
        }
        assertTrue(empty > 95, "with q = 1e-6 almost every batch is empty");
        PoissonBatchSampler minute = new PoissonBatchSampler(1000, 1e-300, new SplittableRandom(1));
        for (int i = 0; i < 100; i++) {
            assertEquals(0, minute.next().length, "a vanishing rate must not overflow into a bogus index");
        }
    }

    @Test
    void rejectsBadArguments() {
        var e = assertThrows(IllegalArgumentException.class, () -> new PoissonBatchSampler(10, 0, new SplittableRandom(1)));
        assertTrue(e.getMessage().contains("sampling rate q") && e.getMessage().contains("0.0"));
        assertThrows(IllegalArgumentException.class, () -> new PoissonBatchSampler(0, 0.5, new SplittableRandom(1)));
    }
}
