package org.dpdl4j.datasets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ClientPartitionTest {
    private static int[] labels(int n, int classes) {
        int[] l = new int[n];
        for (int i = 0; i < n; i++) {
            l[i] = i % classes;
        }
        return l;
    }

    private static void assertExactCover(int[][] parts, int size) {
        int[] all = Arrays.stream(parts).flatMapToInt(Arrays::stream).sorted().toArray();
        assertArrayEquals(java.util.stream.IntStream.range(0, size).toArray(), all);
    }

    @Test
    void iidShardsCoverEveryExampleOnceWithEqualSizesAndLabelMix() {
        int[] l = labels(10_000, 10);
        int[][] parts = ClientPartition.iid(l.length, 7, 3);
        assertExactCover(parts, l.length);
        for (int[] p : parts) {
            assertTrue(p.length == 1428 || p.length == 1429, "size " + p.length);
            long zeros = Arrays.stream(p).filter(i -> l[i] == 0).count();
            assertEquals(p.length / 10.0, zeros, 5 * Math.sqrt(p.length * 0.09), "label 0 share of a shard");
        }
        assertArrayEquals(parts[2], ClientPartition.iid(l.length, 7, 3)[2], "seeded");
    }

    /** Monte Carlo against the Dirichlet(α·1_n) moments: E p_i = 1/n, Var p_i = (1/n)(1 − 1/n)/(nα + 1). */
    @Test
    void dirichletSharesHaveTheDirichletMeanAndVariance() {
        int n = 5;
        int perLabel = 2000;
        int[] l = labels(perLabel * 2, 2);
        for (double alpha : new double[] {0.5, 5}) {
            int draws = 400;
            double sum = 0;
            double sumSq = 0;
            for (int seed = 0; seed < draws; seed++) {
                int[][] parts = ClientPartition.dirichlet(l, n, alpha, seed);
                assertExactCover(parts, l.length);
                double share = Arrays.stream(parts[1]).filter(i -> l[i] == 0).count() / (double) perLabel;
                sum += share;
                sumSq += share * share;
            }
            double mean = sum / draws;
            double var = sumSq / draws - mean * mean;
            double expectedVar = (1.0 / n) * (1 - 1.0 / n) / (n * alpha + 1);
            assertEquals(1.0 / n, mean, 5 * Math.sqrt(expectedVar / draws), "mean share, alpha " + alpha);
            assertEquals(expectedVar, var, 0.25 * expectedVar, "share variance, alpha " + alpha);
        }
    }

    @Test
    void smallAlphaConcentratesLabelsAndLargeAlphaIsNearlyIid() {
        int[] l = labels(20_000, 10);
        int[][] skewed = ClientPartition.dirichlet(l, 10, 0.05, 1);
        int[][] flat = ClientPartition.dirichlet(l, 10, 1000, 1);
        double skewMax = 0;
        double flatMax = 0;
        for (int label = 0; label < 10; label++) {
            final int lab = label;
            for (int c = 0; c < 10; c++) {
                double s = Arrays.stream(skewed[c]).filter(i -> l[i] == lab).count() / 2000.0;
                double f = Arrays.stream(flat[c]).filter(i -> l[i] == lab).count() / 2000.0;
                skewMax = Math.max(skewMax, s);
                flatMax = Math.max(flatMax, f);
            }
        }
        assertTrue(skewMax > 0.5, "alpha 0.05: some client holds most of a label, got max share " + skewMax);
        assertTrue(flatMax < 0.13, "alpha 1000: every share near 0.1, got max " + flatMax);
    }

    @Test
    void badArgumentsAreRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ClientPartition.iid(5, 6, 1));
        assertTrue(e.getMessage().contains("clients"));
        e = assertThrows(IllegalArgumentException.class, () -> ClientPartition.dirichlet(new int[10], 2, 0, 1));
        assertTrue(e.getMessage().contains("alpha"));
    }
}
