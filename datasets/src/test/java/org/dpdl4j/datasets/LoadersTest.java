package org.dpdl4j.datasets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loaders on the real MNIST / Fashion-MNIST files and on files written here in the real formats. */
class LoadersTest {
    @TempDir
    Path tmp;

    @Test
    void realMnistAndFashionMnistLoadAndVerify() throws IOException {
        TrainTest mnist = Mnist.load(DatasetCache.root().resolve("mnist"));
        assertEquals(60_000, mnist.train().size());
        assertEquals(10_000, mnist.test().size());
        assertEquals(784, mnist.train().features().columns());
        assertEquals(5, mnist.train().classIndices()[0], "the first MNIST training digit is a 5");
        assertEquals(7, mnist.test().classIndices()[0], "the first MNIST test digit is a 7");
        float max = mnist.train().features().maxNumber().floatValue();
        assertEquals(1.0f, max, 0f);
        assertEquals(0.0f, mnist.train().features().minNumber().floatValue(), 0f);
        TrainTest fashion = FashionMnist.load(DatasetCache.root().resolve("fashion-mnist"));
        assertEquals(60_000, fashion.train().size());
        assertEquals(9, fashion.train().classIndices()[0], "the first Fashion-MNIST item is an ankle boot (9)");
    }

    @Test
    void idxRejectsWrongChecksumMagicAndTruncation() throws IOException {
        byte[] good = idx(0x00000801, new int[]{3}, new byte[]{1, 2, 3});
        Path f = tmp.resolve("labels");
        Files.write(f, good);
        assertArrayEquals(new byte[]{1, 2, 3}, IdxReader.read(f, new int[]{3}, Sha256.hex(good)).data());

        var e = assertThrows(InvalidDatasetException.class, () -> IdxReader.read(f, new int[]{3}, "00".repeat(32)));
        assertTrue(e.getMessage().contains(f.toString()) && e.getMessage().contains("SHA-256"), e.getMessage());

        Files.write(f, idx(0x00000803, new int[]{3}, new byte[]{1, 2, 3}));
        e = assertThrows(InvalidDatasetException.class, () -> IdxReader.read(f, new int[]{3}, null));
        assertTrue(e.getMessage().contains("magic number 0x00000803"), e.getMessage());

        Files.write(f, Arrays.copyOf(good, good.length - 1));
        e = assertThrows(InvalidDatasetException.class, () -> IdxReader.read(f, new int[]{3}, null));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());

        Path gz = tmp.resolve("labels.gz");
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        try (OutputStream out = new GZIPOutputStream(bos)) {
            out.write(good);
        }
        byte[] zipped = bos.toByteArray();
        Files.write(gz, zipped);
        assertArrayEquals(new byte[]{1, 2, 3}, IdxReader.read(gz, new int[]{3}, Sha256.hex(good)).data());
        Files.write(gz, Arrays.copyOf(zipped, zipped.length - 6));
        e = assertThrows(InvalidDatasetException.class, () -> IdxReader.read(gz, new int[]{3}, null));
        assertTrue(e.getMessage().contains("gzip"), e.getMessage());

        e = assertThrows(InvalidDatasetException.class, () -> Mnist.load(tmp.resolve("nowhere")));
        assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
    }

    @Test
    void cifarReaderOnFilesInTheRealFormat() throws IOException {
        byte[] batch = new byte[Cifar10.RECORD_BYTES * Cifar10.RECORDS_PER_FILE];
        for (int r = 0; r < Cifar10.RECORDS_PER_FILE; r++) {
            int off = r * Cifar10.RECORD_BYTES;
            batch[off] = (byte) (r % 10);
            batch[off + 1] = (byte) 255;            // red plane, first pixel
            batch[off + 1 + 1024] = (byte) r;       // green plane, first pixel
            batch[off + 1 + 2048 + 1023] = (byte) 51; // blue plane, last pixel
        }
        Path dir = tmp.resolve("cifar10");
        Files.createDirectories(dir);
        for (String name : new String[]{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
                                         "data_batch_5.bin", "test_batch.bin"}) {
            Files.write(dir.resolve(name), batch);
        }
        TrainTest c = Cifar10.load(dir);
        assertEquals(50_000, c.train().size());
        assertEquals(10_000, c.test().size());
        assertEquals(3072, c.test().features().columns());
        assertEquals(3, c.test().channels());
        assertEquals(7, c.test().classIndices()[17]);
        assertEquals(1.0f, c.test().features().getFloat(17, 0), 0f);
        assertEquals(17 / 255f, c.test().features().getFloat(17, 1024), 1e-7f);
        assertEquals(0.2f, c.test().features().getFloat(17, 3071), 1e-7f);

        Files.write(dir.resolve("test_batch.bin"), Arrays.copyOf(batch, batch.length - 1));
        var e = assertThrows(InvalidDatasetException.class, () -> Cifar10.load(dir));
        assertTrue(e.getMessage().contains("test_batch.bin") && e.getMessage().contains("30730000"), e.getMessage());
        batch[0] = 10;
        Files.write(dir.resolve("test_batch.bin"), batch);
        e = assertThrows(InvalidDatasetException.class, () -> Cifar10.load(dir));
        assertTrue(e.getMessage().contains("label 10"), e.getMessage());
        e = assertThrows(InvalidDatasetException.class, () -> Cifar10.load(tmp.resolve("missing")));
        assertTrue(e.getMessage().contains("data_batch_1.bin"), e.getMessage());
    }

    @Test
    void imageFolderLabelsBySubdirectory() throws IOException {
        for (String cls : new String[]{"cat", "dog"}) {
            Files.createDirectories(tmp.resolve("imgs").resolve(cls));
            for (int i = 0; i < 5; i++) {
                writeImage(tmp.resolve("imgs").resolve(cls).resolve(i + ".png"), cls.equals("cat") ? 0 : 255, i);
            }
        }
        TrainTest t = ImageFolder.load(tmp.resolve("imgs"), 4, 6, 1, 1);
        assertEquals(10, t.train().size() + t.test().size(), "each image in one part (the test part's size is binomial)");
        assertEquals(1, t.test().size(), "seed 1 holds out one of the 10");
        assertEquals(24, t.train().features().columns());
        int[] y = t.train().classIndices();
        for (int i = 0; i < y.length; i++) {
            float pixel = t.train().features().getFloat(i, 0);
            assertEquals(y[i] == 0 ? 0f : 1f, pixel, 1e-6f, "cat images are black, dog images white");
        }
        assertEquals(t.digest(), ImageFolder.load(tmp.resolve("imgs"), 4, 6, 1, 1).digest(), "the same folder, the same digest");
        var e = assertThrows(InvalidDatasetException.class, () -> ImageFolder.load(tmp.resolve("imgs/cat"), 4, 6, 1, 1));
        assertTrue(e.getMessage().contains("at least 2 class"), e.getMessage());
        var file = assertThrows(InvalidDatasetException.class, () -> ImageFolder.load(tmp.resolve("imgs/cat/0.png"), 4, 6, 1, 1));
        assertTrue(file.getMessage().contains("is a file"), file.getMessage());
        Path corrupt = tmp.resolve("imgs").resolve("dog").resolve("broken.png");
        Files.write(corrupt, new byte[]{(byte) 0x89, 'P', 'N', 'G', 13, 10, 26, 10, 0, 0, 0, 13, 'I', 'H', 'D', 'R', 1, 2, 3});
        var broken = assertThrows(InvalidDatasetException.class, () -> ImageFolder.load(tmp.resolve("imgs"), 4, 6, 1, 1));
        assertTrue(broken.getMessage().contains("broken.png") && broken.getMessage().contains("cannot be decoded"), broken.getMessage());
    }

    /** A 6x4 grey PNG of value {@code v} whose last pixel is {@code mark}, so that images differ. */
    private static void writeImage(Path file, int v, int mark) throws IOException {
        BufferedImage img = new BufferedImage(6, 4, BufferedImage.TYPE_BYTE_GRAY);
        for (int x = 0; x < 6; x++) {
            for (int y = 0; y < 4; y++) {
                img.getRaster().setSample(x, y, 0, v);
            }
        }
        img.getRaster().setSample(5, 3, 0, mark);
        Files.createDirectories(file.getParent());
        ImageIO.write(img, "png", file.toFile());
    }

    /**
     * Each image counts once (the folder: a link {@code a/up -> ..} made 10 files into 3,608 examples): a directory
     * link that loops or leaves the folder is refused by name; a copy (or a file link) is counted once with a warning
     * naming both; the same bytes under two classes are refused; a test image equal to a training image is left out of
     * the test set; a test class without training images is refused; the digest changes with the content.
     */
    @Test
    void imageFolderCountsEachImageOnce() throws IOException {
        Path loop = tmp.resolve("loop");
        for (int i = 0; i < 5; i++) {
            writeImage(loop.resolve("a").resolve(i + ".png"), 0, i);
            writeImage(loop.resolve("b").resolve(i + ".png"), 255, i);
        }
        Files.createSymbolicLink(loop.resolve("a").resolve("up"), Path.of(".."));
        var e = assertThrows(InvalidDatasetException.class, () -> ImageFolder.load(loop, 4, 6, 1, 1));
        assertTrue(e.getMessage().contains("a/up") && e.getMessage().contains("loop"), e.getMessage());
        Files.delete(loop.resolve("a").resolve("up"));
        Path outside = tmp.resolve("elsewhere");
        writeImage(outside.resolve("x.png"), 128, 1);
        Files.createSymbolicLink(loop.resolve("a").resolve("more"), outside);
        e = assertThrows(InvalidDatasetException.class, () -> ImageFolder.load(loop, 4, 6, 1, 1));
        assertTrue(e.getMessage().contains("a/more") && e.getMessage().contains("outside the folder"), e.getMessage());
        Files.delete(loop.resolve("a").resolve("more"));
        Files.createSymbolicLink(loop.resolve("a").resolve("same"), loop.resolve("a")); // inside, but a loop all the same
        assertThrows(InvalidDatasetException.class, () -> ImageFolder.load(loop, 4, 6, 1, 1));
        Files.delete(loop.resolve("a").resolve("same"));
        String before = ImageFolder.load(loop, 4, 6, 1, 1).digest();

        Files.copy(loop.resolve("a").resolve("0.png"), loop.resolve("a").resolve("copy.png"));
        Files.createSymbolicLink(loop.resolve("a").resolve("link.png"), loop.resolve("a").resolve("1.png"));
        List<String> warnings = new java.util.ArrayList<>();
        TrainTest t = ImageFolder.load(loop, 4, 6, 1, 1, warnings::add);
        assertEquals(10, t.train().size() + t.test().size(), "10 images, each once");
        assertEquals(2, warnings.size(), warnings.toString());
        assertTrue(warnings.stream().anyMatch(w -> w.contains("copy.png") && w.contains("0.png") && w.contains("counted once")), warnings.toString());
        assertEquals(before, t.digest(), "copies add nothing");
        Files.copy(loop.resolve("a").resolve("2.png"), loop.resolve("b").resolve("from-a.png"));
        e = assertThrows(InvalidDatasetException.class, () -> ImageFolder.load(loop, 4, 6, 1, 1));
        assertTrue(e.getMessage().contains("from-a.png") && e.getMessage().contains("two classes"), e.getMessage());
        Files.delete(loop.resolve("b").resolve("from-a.png"));
        writeImage(loop.resolve("b").resolve("5.png"), 255, 5);
        assertTrue(!before.equals(ImageFolder.load(loop, 4, 6, 1, 1).digest()), "a new image, a new digest");

        Path split = tmp.resolve("split");
        for (int i = 0; i < 4; i++) {
            writeImage(split.resolve("train").resolve("a").resolve(i + ".png"), 0, i);
            writeImage(split.resolve("train").resolve("b").resolve(i + ".png"), 255, i);
        }
        writeImage(split.resolve("test").resolve("a").resolve("t.png"), 0, 9);
        writeImage(split.resolve("test").resolve("b").resolve("t.png"), 255, 9);
        Files.copy(split.resolve("train").resolve("b").resolve("0.png"), split.resolve("test").resolve("b").resolve("leak.png"));
        warnings.clear();
        TrainTest s = ImageFolder.load(split, 4, 6, 1, 1, warnings::add);
        assertEquals(8, s.train().size());
        assertEquals(2, s.test().size(), "the test copy of a training image is left out");
        assertTrue(warnings.size() == 1 && warnings.get(0).contains("leak.png") && warnings.get(0).contains("test set"), warnings.toString());
        writeImage(split.resolve("test").resolve("c").resolve("t.png"), 60, 1);
        e = assertThrows(InvalidDatasetException.class, () -> ImageFolder.load(split, 4, 6, 1, 1));
        assertTrue(e.getMessage().contains("class 'c'") && e.getMessage().contains("not in train/"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ImageFolder.load(split, 100000, 100000, 3, 1));
    }

    /**
     * A folder without train/ and test/ is split image by image (the folder of 1,000: one image added at the
     * start, the middle or the end of path order moved 314-334 others between train and test under the seeded
     * permutation). Whether decoded up front, read on demand or packed into shards, the new image is the only one that
     * changes part.
     */
    @Test
    void oneImageAddedToAFolderMovesNoOtherImage() throws IOException {
        Path folder = tmp.resolve("thousand");
        for (int i = 0; i < 1000; i++) {
            writeDistinctImage(folder.resolve(i % 2 == 0 ? "a" : "b").resolve(String.format("%04d.png", i)), i);
        }
        java.util.Map<String, Boolean> before = partOfEachImage(folder, "before");
        assertEquals(1000, before.size());
        long held = before.values().stream().filter(t -> t).count();
        assertEquals(200, held, 4 * Math.sqrt(1000 * 0.2 * 0.8), "about 20 % held out");
        for (String name : new String[]{"0000-new.png", "0500-new.png", "9999-new.png"}) { // start, middle, end of path order
            Path added = folder.resolve("a").resolve(name);
            writeDistinctImage(added, 1000 + name.charAt(0));
            java.util.Map<String, Boolean> after = partOfEachImage(folder, name);
            assertEquals(1001, after.size());
            long moved = before.entrySet().stream().filter(e -> !e.getValue().equals(after.get(e.getKey()))).count();
            assertEquals(0, moved, "images other than " + name + " that changed part");
            Files.delete(added);
        }
    }

    /**
     * Each image's part (true: test) by its pixels and label, the same from the folder decoded up front, read on demand
     * and packed into shards (checked here).
     */
    private java.util.Map<String, Boolean> partOfEachImage(Path folder, String tag) throws IOException {
        TrainTest upFront = ImageFolder.load(folder, 4, 6, 1, 5);
        TrainTest onDemand = ImageFolder.open(folder, 4, 6, 1, 5, w -> { });
        LabeledData readTrain = onDemand.trainExamples().read(java.util.stream.IntStream.range(0, onDemand.trainExamples().size()).toArray());
        assertEquals(upFront.train().features(), readTrain.features(), "on demand: the same training images");
        assertEquals(upFront.test().features(), onDemand.test().features(), "on demand: the same test images");
        Path shards = tmp.resolve("shards-" + tag);
        PackedShards.packTrainTest(upFront.train(), upFront.test(), shards, 97);
        TrainTest packed = PackedShards.loadTrainTest("shards", ShardStorage.local(shards));
        try {
            LabeledData packedTrain = packed.trainExamples().read(java.util.stream.IntStream.range(0, packed.trainExamples().size()).toArray());
            assertEquals(rowsOf(upFront.train()), rowsOf(packedTrain), "shards: the same training images");
            assertEquals(rowsOf(upFront.test()), rowsOf(packed.test()), "shards: the same test images");
        } finally {
            packed.trainExamples().close();
        }
        java.util.Map<String, Boolean> part = new java.util.HashMap<>();
        rowsOf(upFront.train()).forEach(r -> part.put(r, false));
        rowsOf(upFront.test()).forEach(r -> assertEquals(null, part.put(r, true), "an image in both parts"));
        return part;
    }

    /** A 6x4 grey PNG whose first two pixels spell {@code id} (below 65,536) in base 256, so that images differ. */
    private static void writeDistinctImage(Path file, int id) throws IOException {
        BufferedImage img = new BufferedImage(6, 4, BufferedImage.TYPE_BYTE_GRAY);
        img.getRaster().setSample(0, 0, 0, id & 0xFF);
        img.getRaster().setSample(1, 0, 0, id >> 8);
        Files.createDirectories(file.getParent());
        ImageIO.write(img, "png", file.toFile());
    }

    /** Adding one example changes only that example's part: every other example stays where it was. */
    @Test
    void recordSplitMovesOnlyTheAddedExample() throws IOException {
        TrainTest mnist = Mnist.load(DatasetCache.root().resolve("mnist"));
        LabeledData d = mnist.test().randomSubset(2000, 3);
        LabeledData withOneMore = d.rows(java.util.stream.IntStream.range(0, 2001).map(i -> i < 1000 ? i : i == 1000 ? 5 : i - 1)
                .toArray());
        // withOneMore = d with a duplicate of example 5 inserted at position 1000
        LabeledData.Split a = d.splitByRecord(0.2, 11);
        LabeledData.Split b = withOneMore.splitByRecord(0.2, 11);
        assertEquals(a.validation().size() + a.train().size(), 2000);
        assertEquals(400, a.validation().size(), 4 * Math.sqrt(2000 * 0.2 * 0.8));
        java.util.Set<String> va = rowsOf(a.validation());
        java.util.Set<String> vb = rowsOf(b.validation());
        assertEquals(va, vb, "the added example is a duplicate: it joins its twin's part and nothing else moves");
        assertEquals(a.validation().size() + (va.contains(rowsOf(d.rows(new int[]{5})).iterator().next()) ? 1 : 0),
                b.validation().size());
        var e = assertThrows(IllegalArgumentException.class, () -> d.splitByRecord(1.0, 1));
        assertTrue(e.getMessage().contains("validationFraction"), e.getMessage());
    }

    private static java.util.Set<String> rowsOf(LabeledData d) {
        java.util.Set<String> out = new java.util.HashSet<>();
        for (int i = 0; i < d.size(); i++) {
            out.add(java.util.Arrays.toString(d.features().getRow(i).toFloatVector()) + d.classIndices()[i]);
        }
        return out;
    }

    private static byte[] idx(int magic, int[] dims, byte[] data) {
        ByteBuffer b = ByteBuffer.allocate(4 + 4 * dims.length + data.length);
        b.putInt(magic);
        for (int d : dims) {
            b.putInt(d);
        }
        b.put(data);
        return b.array();
    }
}
