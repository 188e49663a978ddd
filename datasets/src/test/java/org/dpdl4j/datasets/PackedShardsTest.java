package org.dpdl4j.datasets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Packed shards hold exactly the pixels and labels they were given, are read by index, and refuse what changed. */
class PackedShardsTest {
    static LabeledData images(int n, int c, int h, int w, int classes, long seed) {
        Random r = new Random(seed);
        byte[] pixels = new byte[n * c * h * w];
        r.nextBytes(pixels);
        int[] labels = r.ints(n, 0, classes).toArray();
        return LabeledData.fromBytes(pixels, labels, classes, c, h, w);
    }

    @Test
    void readsBackExactlyTheRowsAsked(@TempDir Path tmp) {
        LabeledData data = images(103, 3, 5, 4, 7, 1);
        Path dir = tmp.resolve("shards");
        PackedShards.pack(data, dir, 10); // 11 shards, the last of 3 records
        assertFalse(Files.exists(tmp.resolve("shards.partial")));
        try (PackedShards shards = PackedShards.open(dir)) {
            assertEquals(103, shards.size());
            assertEquals(7, shards.numClasses());
            assertArrayEquals(data.exampleShape(), shards.exampleShape());
            int[] rows = {0, 9, 10, 11, 57, 99, 100, 102};
            LabeledData read = shards.read(rows);
            LabeledData expected = data.rows(rows);
            assertEquals(expected.features(), read.features()); // bit for bit: p / 255 in float32 both ways
            assertEquals(expected.labels(), read.labels());
            assertEquals(3, read.channels());
            assertEquals(0, shards.read(new int[0]).size());
            for (int[] bad : new int[][]{{-1}, {103}, {5, 5}, {6, 2}}) {
                var e = assertThrows(IllegalArgumentException.class, () -> shards.read(bad));
                assertTrue(e.getMessage().contains("ascending and in [0, 103)"), e.getMessage());
            }
        }
    }

    @Test
    void refusesChangedTruncatedOrMismatchedShards(@TempDir Path tmp) throws Exception {
        LabeledData data = images(30, 1, 4, 4, 3, 2);
        Path dir = tmp.resolve("s");
        PackedShards.pack(data, dir, 8);
        Path shard1 = dir.resolve("shard-00001.bin");
        byte[] original = Files.readAllBytes(shard1);

        byte[] changed = original.clone();
        changed[5] ^= 1;
        Files.write(shard1, changed);
        var e = assertThrows(IllegalArgumentException.class, () -> PackedShards.open(dir));
        assertTrue(e.getMessage().startsWith(shard1.toString()) && e.getMessage().contains("SHA-256"), e.getMessage());

        Files.write(shard1, java.util.Arrays.copyOf(original, original.length - 1));
        e = assertThrows(IllegalArgumentException.class, () -> PackedShards.open(dir));
        assertTrue(e.getMessage().contains(shard1 + ": " + (original.length - 1) + " bytes, expected " + original.length
                + " (8 records of 18 bytes)"), e.getMessage());
        Files.write(shard1, original);

        Path manifest = dir.resolve(PackedShards.MANIFEST);
        String text = Files.readString(manifest);
        Files.writeString(manifest, text.replace("\"record_bytes\" : 18", "\"record_bytes\" : 19"));
        e = assertThrows(IllegalArgumentException.class, () -> PackedShards.open(dir));
        assertTrue(e.getMessage().contains("record_bytes 19 is not 2 + c*h*w = 18 for 1x4x4 images"), e.getMessage());
        Files.writeString(manifest, text.replace("\"version\" : 1", "\"version\" : 2"));
        e = assertThrows(IllegalArgumentException.class, () -> PackedShards.open(dir));
        assertTrue(e.getMessage().contains("version 2 is not dpdl4j-shards version 1"), e.getMessage());
        Files.writeString(manifest, text.replace("\"count\" : 30", "\"count\" : 40"));
        e = assertThrows(IllegalArgumentException.class, () -> PackedShards.open(dir));
        assertTrue(e.getMessage().contains("shards must list 5 shards for 40 records"), e.getMessage());
        Files.writeString(manifest, text);
        assertEquals(30, PackedShards.open(dir).size());

        // a record whose label is out of range, in a shard that matches its manifest (the issue: record 6,250 of label 200
        // was charged, then refused mid-run): refused when the shards are opened, naming the record
        byte[] relabelled = original.clone();
        relabelled[3 * 18] = (byte) 200; // record 3 of shard 1: record 11 of the set
        Files.write(shard1, relabelled);
        Files.writeString(manifest, text.replace(Sha256.hex(original), Sha256.hex(relabelled)));
        e = assertThrows(IllegalArgumentException.class, () -> PackedShards.open(dir));
        assertTrue(e.getMessage().contains("record 11 has label 200, expected [0, 3)") && e.getMessage().contains("before anything"),
                e.getMessage());
        Files.write(shard1, original);
        Files.writeString(manifest, text);

        e = assertThrows(IllegalArgumentException.class, () -> PackedShards.open(tmp.resolve("none")));
        assertTrue(e.getMessage().contains("manifest.json does not exist"), e.getMessage());
    }

    /** A pack that fails part-way leaves nothing: no directory, no partial one; a killed one is started again. */
    @Test
    void aFailedPackLeavesNothingAndBadInputIsNamed(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("s");
        try (PackedShards.Writer w = PackedShards.writer(dir, 1, 2, 2, 3, 2)) {
            w.add(new byte[4], 1);
            w.add(new byte[4], 2);
            w.add(new byte[4], 0);
            var e = assertThrows(IllegalArgumentException.class, () -> w.add(new byte[4], 3));
            assertTrue(e.getMessage().contains("record 3") && e.getMessage().contains("label 3 (expected [0, 3))"), e.getMessage());
        } // closed without commit
        assertFalse(Files.exists(dir));
        try (var left = Files.list(tmp)) {
            assertEquals(List.of(), left.toList(), "nothing left beside it");
        }
        // a directory of the user's named s.partial, with a file in it, is not ours: it stays (the issue: it was deleted);
        // what a killed pack left (its staging directory, marked) is removed first
        Files.createDirectories(tmp.resolve("s.partial"));
        Files.write(tmp.resolve("s.partial").resolve("mine.txt"), new byte[7], StandardOpenOption.CREATE);
        Path killed = tmp.resolve(".s.partial-killed");
        Files.createDirectories(killed);
        Files.write(killed.resolve(".dpdl4j-staging"), new byte[0]);
        Files.write(killed.resolve("shard-00000.bin"), new byte[7]);
        try (PackedShards.Writer w = PackedShards.writer(dir, 1, 2, 2, 3, 2)) {
            w.add(new byte[]{1, 2, 3, 4}, 2);
            w.commit();
        }
        assertTrue(Files.exists(tmp.resolve("s.partial").resolve("mine.txt")), "the user's directory is left alone");
        assertFalse(Files.exists(killed), "a killed pack's staging is removed");
        assertFalse(Files.exists(dir.resolve(".dpdl4j-staging")), "no mark in the shards");
        try (PackedShards s = PackedShards.open(dir)) {
            assertEquals(1, s.size());
            assertEquals(4f / 255f, s.read(new int[]{0}).features().getFloat(0, 3), 0f);
        }
        var e = assertThrows(IllegalArgumentException.class, () -> PackedShards.writer(dir, 1, 2, 2, 3, 2));
        assertTrue(e.getMessage().contains("exists"), e.getMessage());
        LabeledData notBytes = LabeledData.of(org.nd4j.linalg.factory.Nd4j.createFromArray(new float[][]{{0.5f}}),
                org.nd4j.linalg.factory.Nd4j.createFromArray(new float[][]{{1f, 0f}}));
        e = assertThrows(IllegalArgumentException.class, () -> PackedShards.pack(notBytes, tmp.resolve("x"), 4));
        assertTrue(e.getMessage().contains("0.5, not p/255"), e.getMessage());
        assertFalse(Files.exists(tmp.resolve("x")) || Files.exists(tmp.resolve("x.partial")));
    }

    /**
     * Serialized (as for a cluster's executors), shards and their subsets travel as a reference and read back the same
     * rows; two copies read back share one opened set; a manifest changed since the driver opened it is refused when a
     * copy is read back; a location names the storage it is opened with.
     */
    @Test
    void travelByReferenceAndLocationsNameTheirStorage(@TempDir Path tmp) throws Exception {
        LabeledData data = images(40, 1, 3, 3, 4, 2);
        Path dir = tmp.resolve("shards");
        PackedShards.pack(data, dir, 16);
        try (PackedShards shards = PackedShards.open(ShardStorage.of(dir.toUri().toString()))) { // file: URI, a local directory
            ExampleSource split = shards.subset(new int[]{30, 2, 17, 5});
            byte[] bytes = serialize(split);
            assertTrue(bytes.length < 2000, "no records travel: " + bytes.length + " bytes");
            ExampleSource back = (ExampleSource) deserialize(bytes);
            ExampleSource again = (ExampleSource) deserialize(serialize(shards));
            assertEquals(data.rows(new int[]{30, 2, 17, 5}).features(), back.read(new int[]{0, 1, 2, 3}).features());
            assertTrue(again == deserialize(serialize(shards)), "one opened set per JVM");
            // a cached source's split travels as the reference and the bound, not the rows it has cached
            ExampleSource cachedSplit = shards.withCache(1 << 20).subset(new int[]{30, 2, 17, 5});
            cachedSplit.read(new int[]{0, 1, 2, 3}); // fills the cache
            byte[] cachedBytes = serialize(cachedSplit);
            assertTrue(cachedBytes.length < 2000, "no cached rows travel: " + cachedBytes.length + " bytes");
            assertEquals(data.rows(new int[]{30, 2, 17, 5}).features(),
                    ((ExampleSource) deserialize(cachedBytes)).read(new int[]{0, 1, 2, 3}).features());
            Path elsewhere = Files.createDirectories(tmp.resolve("x")).resolve("..").resolve("shards"); // not yet opened here
            byte[] planned = serialize(PackedShards.open(elsewhere));
            Files.writeString(dir.resolve(PackedShards.MANIFEST), Files.readString(dir.resolve(PackedShards.MANIFEST)) + " ");
            var changed = assertThrows(IllegalArgumentException.class, () -> deserialize(planned));
            assertTrue(changed.getMessage().contains("not the shards the run was planned on"), changed.getMessage());
        }
        assertEquals(new ShardStorage.Local(tmp.toAbsolutePath().toString()), ShardStorage.of(tmp.toString()));
        var unknown = assertThrows(IllegalArgumentException.class, () -> ShardStorage.of("nosuchfs://host/data"));
        assertTrue(unknown.getMessage().contains("nosuchfs://host/data") && unknown.getMessage().contains("'nosuchfs'")
                && unknown.getMessage().contains("dpdl4j-spark"), unknown.getMessage());
    }

    private static byte[] serialize(Object o) throws java.io.IOException {
        var bytes = new java.io.ByteArrayOutputStream();
        try (var out = new java.io.ObjectOutputStream(bytes)) {
            out.writeObject(o);
        }
        return bytes.toByteArray();
    }

    private static Object deserialize(byte[] b) throws Exception {
        try (var in = new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(b))) {
            return in.readObject();
        }
    }
}
