package org.dpdl4j.datasets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tuning's and auditing's splits as index sets: the same parts from memory and from packed shards of the same pixels,
 * subsets and appended examples read as the in-memory copies are.
 */
class SplitsTest {
    @Test
    void thePartsOfShardsAreThePartsOfMemory(@TempDir Path tmp) {
        LabeledData data = PackedShardsTest.images(500, 1, 6, 6, 3, 4);
        PackedShards.pack(data, tmp.resolve("s"), 64);
        try (PackedShards shards = PackedShards.open(tmp.resolve("s"))) {
            int[][] byRecord = Splits.byRecord(shards, 0.2, 7);
            assertArrayEquals(byRecord, Splits.byRecord(data, 0.2, 7));
            LabeledData.Split memory = data.splitByRecord(0.2, 7);
            assertEquals(memory.validation().features(), shards.subset(byRecord[1]).read(all(byRecord[1].length)).features(2));
            assertEquals(memory.train().labels(), shards.subset(byRecord[0]).read(all(byRecord[0].length)).labels());
            assertEquals(500, byRecord[0].length + byRecord[1].length);
            assertEquals(100, byRecord[1].length, 4 * Math.sqrt(500 * 0.2 * 0.8), "binomial(500, 0.2)");
            int[][] parts = Splits.partitionByRecord(shards, 3, 9);
            List<LabeledData> memoryParts = data.partitionByRecord(3, 9);
            for (int p = 0; p < 3; p++) {
                assertEquals(memoryParts.get(p).features(), shards.subset(parts[p]).read(all(parts[p].length)).features(2));
            }
            int[][] poisson = Splits.poisson(500, 0.3, new SplittableRandom(2));
            LabeledData.Partition memoryPoisson = data.poissonSubset(0.3, new SplittableRandom(2));
            assertEquals(memoryPoisson.subset().features(), data.subset(poisson[0]).features());
            assertEquals(memoryPoisson.rest().size(), poisson[1].length);
            // a random subset keeps the permutation's order, read back in that order from the shards
            int[] random = Splits.randomSubset(500, 50, 11);
            assertFalse(isAscending(random));
            ExampleSource subset = shards.subset(random);
            assertEquals(data.randomSubset(50, 11).features(), subset.read(all(50)).features(2));
            int[] some = {3, 4, 17, 49};
            assertEquals(data.randomSubset(50, 11).rows(some).labels(), subset.read(some).labels());
            assertEquals(data.randomSubset(50, 11).rows(some).features(), subset.subset(new int[]{3, 4, 17, 49}).read(all(4)).features(2));
            var repeated = assertThrows(IllegalArgumentException.class, () -> shards.subset(new int[]{4, 2, 4}));
            assertTrue(repeated.getMessage().contains("distinct and in [0, 500), got 4 twice"), repeated.getMessage());
        }
    }

    @Test
    void appendedExamplesAreTheLastIndices(@TempDir Path tmp) {
        LabeledData data = PackedShardsTest.images(40, 2, 3, 3, 4, 1);
        LabeledData more = PackedShardsTest.images(5, 2, 3, 3, 4, 2);
        PackedShards.pack(data, tmp.resolve("s"), 16);
        try (PackedShards shards = PackedShards.open(tmp.resolve("s"))) {
            ExampleSource appended = shards.followedBy(more);
            LabeledData inMemory = data.followedBy(more);
            assertEquals(45, appended.size());
            for (int[] rows : new int[][]{{0, 39, 40, 44}, {41, 42}, {1, 2}, all(45), {}}) {
                LabeledData read = appended.read(rows);
                assertEquals(inMemory.rows(rows).features(), read.features(2), Arrays.toString(rows));
                assertEquals(inMemory.rows(rows).labels(), read.labels(), Arrays.toString(rows));
            }
            var wrongSize = assertThrows(IllegalArgumentException.class,
                    () -> shards.followedBy(PackedShardsTest.images(2, 1, 3, 3, 4, 3)));
            assertTrue(wrongSize.getMessage().contains("must have the source's 18 features and 4 classes, got 9 and 4"),
                    wrongSize.getMessage());
            var outside = assertThrows(IllegalArgumentException.class, () -> appended.read(new int[]{39, 45}));
            assertTrue(outside.getMessage().contains("in [0, 45), got 45"), outside.getMessage());
        }
    }

    /**
     * A cache bounded in bytes gives the source's values bit for bit, never holds more than its bound, and serves the
     * examples it holds without reading them again.
     */
    @Test
    void aBoundedCacheReadsEachKeptExampleOnce(@TempDir Path tmp) {
        LabeledData data = PackedShardsTest.images(200, 1, 4, 4, 3, 6);
        PackedShards.pack(data, tmp.resolve("s"), 64);
        try (PackedShards shards = PackedShards.open(tmp.resolve("s"))) {
            long perExample = (16 + 3) * 4L; // float32 features and one-hot labels
            CachedExamples cache = (CachedExamples) shards.withCache(100 * perExample);
            SplittableRandom r = new SplittableRandom(1);
            for (int t = 0; t < 40; t++) {
                int[] batch = java.util.stream.IntStream.range(0, 200).filter(i -> r.nextDouble() < 0.3).toArray();
                LabeledData read = cache.read(batch);
                assertEquals(data.rows(batch).features(), read.features(2), "batch " + t);
                assertEquals(data.rows(batch).labels(), read.labels(), "batch " + t);
                assertTrue(cache.cachedBytes() <= 100 * perExample, "bound kept: " + cache.cachedBytes());
            }
            assertEquals(100 * perExample, cache.cachedBytes(), "full after 40 batches of 30 % of 200");
            long before = cache.readFromParent();
            int[] all = all(200);
            cache.read(all);
            assertEquals(100, cache.readFromParent() - before, "the 100 kept are not read again");
            assertTrue(before < 40 * 200 * 0.3, "fewer reads than rows asked for: " + before);
            assertTrue(data.withCache(5) == data, "memory is its own cache");
            var bad = assertThrows(IllegalArgumentException.class, () -> cache.read(new int[]{5, 3}));
            assertTrue(bad.getMessage().contains("ascending and in [0, 200), got 3"), bad.getMessage());
        }
    }

    private static int[] all(int n) {
        return java.util.stream.IntStream.range(0, n).toArray();
    }

    private static boolean isAscending(int[] a) {
        for (int i = 1; i < a.length; i++) {
            if (a[i] <= a[i - 1]) {
                return false;
            }
        }
        return true;
    }
}
