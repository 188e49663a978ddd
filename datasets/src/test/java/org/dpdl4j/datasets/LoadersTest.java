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
                BufferedImage img = new BufferedImage(6, 4, BufferedImage.TYPE_BYTE_GRAY);
                int v = cls.equals("cat") ? 0 : 255;
                for (int x = 0; x < 6; x++) {
                    for (int y = 0; y < 4; y++) {
                        img.getRaster().setSample(x, y, 0, v);
                    }
                }
                ImageIO.write(img, "png", tmp.resolve("imgs").resolve(cls).resolve(i + ".png").toFile());
            }
        }
        TrainTest t = ImageFolder.load(tmp.resolve("imgs"), 4, 6, 1, 1);
        assertEquals(8, t.train().size());
        assertEquals(2, t.test().size());
        assertEquals(24, t.train().features().columns());
        int[] y = t.train().classIndices();
        for (int i = 0; i < y.length; i++) {
            float pixel = t.train().features().getFloat(i, 0);
            assertEquals(y[i] == 0 ? 0f : 1f, pixel, 1e-6f, "cat images are black, dog images white");
        }
        var e = assertThrows(InvalidDatasetException.class, () -> ImageFolder.load(tmp.resolve("imgs/cat"), 4, 6, 1, 1));
        assertTrue(e.getMessage().contains("at least 2 class"), e.getMessage());
        var file = assertThrows(InvalidDatasetException.class, () -> ImageFolder.load(tmp.resolve("imgs/cat/0.png"), 4, 6, 1, 1));
        assertTrue(file.getMessage().contains("is a file"), file.getMessage());
        Path corrupt = tmp.resolve("imgs").resolve("dog").resolve("broken.png");
        Files.write(corrupt, new byte[]{(byte) 0x89, 'P', 'N', 'G', 13, 10, 26, 10, 0, 0, 0, 13, 'I', 'H', 'D', 'R', 1, 2, 3});
        var broken = assertThrows(InvalidDatasetException.class, () -> ImageFolder.load(tmp.resolve("imgs"), 4, 6, 1, 1));
        assertTrue(broken.getMessage().contains("broken.png") && broken.getMessage().contains("cannot be decoded"), broken.getMessage());
    }

    @Test
    void splitsAreSeededWithTheRequestedSizes() throws IOException {
        TrainTest mnist = Mnist.load(DatasetCache.root().resolve("mnist"));
        LabeledData small = mnist.test().randomSubset(1000, 3);
        LabeledData.Split s1 = small.split(0.1, 7);
        LabeledData.Split s2 = small.split(0.1, 7);
        assertEquals(100, s1.validation().size());
        assertEquals(900, s1.train().size());
        assertEquals(s1.validation().features(), s2.validation().features());
        var e = assertThrows(IllegalArgumentException.class, () -> small.split(1.0, 1));
        assertTrue(e.getMessage().contains("validationFraction"), e.getMessage());
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
