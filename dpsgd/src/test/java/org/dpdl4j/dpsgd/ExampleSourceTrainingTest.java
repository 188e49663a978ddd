package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.PackedShards;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Training that reads each step's Poisson batch by index: the same run as from memory, and data beyond the heap. */
class ExampleSourceTrainingTest {
    /** MNIST-shaped random 8-bit images. */
    static LabeledData images(int n, long seed) {
        Random r = new Random(seed);
        byte[] pixels = new byte[n * 784];
        r.nextBytes(pixels);
        return LabeledData.fromBytes(pixels, r.ints(n, 0, 10).toArray(), 10, 1, 28, 28);
    }

    /**
     * Shards changed in place during a run (issue 69, item 5: every training pixel inverted after the first checkpoint,
     * and the run released with the digest of the data it planned on): the run stops at its next checkpoint, naming the
     * shard; no checkpoint of the changed data is saved.
     */
    @Test
    void shardsChangedDuringARunStopItBeforeTheNextCheckpoint(@TempDir Path tmp) throws Exception {
        LabeledData data = images(300, 2);
        PackedShards.pack(data, tmp.resolve("shards"), 100);
        DpSgdConfig config = DpSgdConfig.builder().samplingRate(0.1).noiseMultiplier(1.1).clipNorm(1.0).steps(12).seed(9).build();
        java.util.List<Long> saved = new java.util.ArrayList<>();
        Path shard1 = tmp.resolve("shards").resolve("shard-00001.bin");
        try (PackedShards shards = PackedShards.open(tmp.resolve("shards"))) {
            var e = assertThrows(IllegalArgumentException.class, () -> new DpSgdTrainer().train(Models.mlp(ModelOptions.mnist()), shards,
                    config, 4, c -> saved.add(c.stepsDone()), step -> {
                        if (step.step() == 5) { // after the first checkpoint: every pixel of shard 1 inverted, in place
                            try (var f = new java.io.RandomAccessFile(shard1.toFile(), "rw")) {
                                byte[] b = new byte[(int) f.length()];
                                f.readFully(b);
                                for (int i = 0; i < b.length; i++) {
                                    if (i % 786 >= 2) {
                                        b[i] = (byte) ~b[i];
                                    }
                                }
                                f.seek(0);
                                f.write(b);
                            } catch (java.io.IOException io) {
                                throw new java.io.UncheckedIOException(io);
                            }
                        }
                    }));
            assertTrue(e.getMessage().contains("shard-00001.bin changed during the run"), e.getMessage());
            assertEquals(java.util.List.of(4L), saved, "the checkpoint of step 8 is not saved");
        }
    }

    /**
     * The standard CNN in float32, 24 steps on two workers: from memory and from packed shards of the same pixels the
     * parameters end bit for bit equal, and the shards were asked for exactly the rows of the batches.
     */
    @Test
    void shardsTrainBitIdenticallyToMemoryAndReadOnlyTheBatches(@TempDir Path tmp) {
        LabeledData data = images(600, 1);
        PackedShards.pack(data, tmp.resolve("shards"), 128);
        DpSgdConfig config = DpSgdConfig.builder().samplingRate(0.05).noiseMultiplier(1.1).clipNorm(1.0).steps(24).seed(9)
                .workers(2).build();
        MultiLayerNetwork fromMemory = Models.standardCnn(ModelOptions.mnist());
        AtomicLong sampled = new AtomicLong();
        new DpSgdTrainer().train(fromMemory, data, config, s -> sampled.addAndGet(s.batchSize()));
        MultiLayerNetwork fromShards = Models.standardCnn(ModelOptions.mnist());
        AtomicLong read = new AtomicLong();
        try (PackedShards shards = PackedShards.open(tmp.resolve("shards"))) {
            ExampleSource counting = new ExampleSource() {
                public int size() {
                    return shards.size();
                }

                public int numClasses() {
                    return shards.numClasses();
                }

                public long[] exampleShape() {
                    return shards.exampleShape();
                }

                public LabeledData read(int[] sortedIndices) {
                    read.addAndGet(sortedIndices.length);
                    return shards.read(sortedIndices);
                }

                public void close() {
                }
            };
            TrainingResult r = new DpSgdTrainer().train(fromShards, counting, config);
            assertEquals(24, r.stepsTaken());
            assertEquals(DpSgdTrainer.event(0.05, 1.1, 24), r.event());
        }
        assertEquals(fromMemory.params(), fromShards.params(), "bit-identical parameters");
        assertTrue(sampled.get() > 600 * 0.05 * 24 / 2, "batches were drawn: " + sampled);
        // and the check before the run: the first 3 examples (shape, values) and the first 2 (labels against the output)
        assertEquals(sampled.get() + 5, read.get(), "only the sampled rows were read (and the first 3 and 2 by the check)");
    }

    /**
     * A folder of lossless PNGs of the same pixels: its images decode to exactly those pixels, and training from the
     * folder's images decoded when read (each step's batch only, read ahead) ends bit for bit where training from the
     * same folder decoded up front does (the standard CNN in float32, 24 steps, two workers).
     */
    @Test
    void aFolderOfPngsDecodedWhenReadTrainsBitIdenticallyToMemory(@TempDir Path tmp) throws Exception {
        LabeledData data = images(500, 3);
        int[] label = data.labels().argMax(1).toIntVector();
        for (int i = 0; i < data.size(); i++) {
            String split = i < 480 ? "train" : "test";
            java.awt.image.BufferedImage png = new java.awt.image.BufferedImage(28, 28, java.awt.image.BufferedImage.TYPE_BYTE_GRAY);
            for (int p = 0; p < 784; p++) {
                png.getRaster().setSample(p % 28, p / 28, 0, Math.round(data.features().getFloat(i, p) * 255));
            }
            Path file = tmp.resolve("folder").resolve(split).resolve("c" + label[i]).resolve(String.format("%04d.png", i));
            Files.createDirectories(file.getParent());
            javax.imageio.ImageIO.write(png, "png", file.toFile());
        }
        org.dpdl4j.datasets.TrainTest upFront = org.dpdl4j.datasets.ImageFolder.load(tmp.resolve("folder"), 28, 28, 1, 0);
        org.dpdl4j.datasets.TrainTest whenRead = org.dpdl4j.datasets.ImageFolder.open(tmp.resolve("folder"), 28, 28, 1, 0, w -> { });
        int[] order = java.util.stream.IntStream.range(0, 480).boxed()
                .sorted(java.util.Comparator.<Integer>comparingInt(i -> label[i]).thenComparingInt(i -> i)).mapToInt(i -> i).toArray();
        assertEquals(data.rows(order).features(), upFront.train().features(), "the PNGs hold exactly the pixels, in class order");
        assertEquals(upFront.digest(), whenRead.digest(), "the same data set");
        assertEquals(upFront.test().features(), whenRead.test().features());
        assertTrue(whenRead.train() == null && whenRead.trainExamples().size() == 480, "the training images stay on disk");
        DpSgdConfig config = DpSgdConfig.builder().samplingRate(0.05).noiseMultiplier(1.1).clipNorm(1.0).steps(24).seed(9)
                .workers(2).build();
        MultiLayerNetwork fromMemory = Models.standardCnn(ModelOptions.mnist());
        new DpSgdTrainer().train(fromMemory, upFront.train(), config);
        MultiLayerNetwork fromFolder = Models.standardCnn(ModelOptions.mnist());
        new DpSgdTrainer().train(fromFolder, whenRead.trainExamples(), config);
        assertEquals(fromMemory.params(), fromFolder.params(), "bit-identical parameters");
        Path first = tmp.resolve("folder/train/c" + label[order[0]]).resolve(String.format("%04d.png", order[0]));
        Files.write(first, new byte[]{1, 2, 3}, java.nio.file.StandardOpenOption.APPEND); // the folder changes after indexing
        var changed = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> whenRead.trainExamples().read(new int[]{0, 1}));
        assertTrue(changed.getMessage().contains(first.toString()) && changed.getMessage().contains("changed since the folder was "
                + "indexed"), changed.getMessage());
    }

    /**
     * A network with a fixed prefix (the ScatterNet's scattering transform) trained from shards reads the prefix's output,
     * computed once and written to a temporary file that the run deletes, and ends where the run from memory (whose
     * prefix output is cached in memory) does.
     */
    @Test
    void aFixedPrefixOverShardsIsComputedOnceIntoAFile(@TempDir Path tmp) {
        LabeledData data = images(300, 4);
        PackedShards.pack(data, tmp.resolve("shards"), 128);
        DpSgdConfig config = DpSgdConfig.builder().samplingRate(0.1).noiseMultiplier(1.1).clipNorm(1.0).steps(12).seed(9)
                .workers(2).build(); // q T = 1.2: each example expected to pass more than once
        MultiLayerNetwork fromMemory = Models.scatterNetLinear(ModelOptions.mnist().withSeed(5));
        new DpSgdTrainer().train(fromMemory, data, config);
        MultiLayerNetwork fromShards = Models.scatterNetLinear(ModelOptions.mnist().withSeed(5));
        try (PackedShards shards = PackedShards.open(tmp.resolve("shards"))) {
            Path spill;
            try (ClippedSums.Session session = ((LocalClippedSums) ClippedSums.local()).open(fromShards, shards, config,
                    new PoissonBatchSampler(300, 0.1, 1))) {
                LocalClippedSums.LocalSession local = (LocalClippedSums.LocalSession) session;
                assertTrue(local.readsFixedPrefix(), "the prefix's output is read, not recomputed at each step");
                spill = local.prefixFile();
                assertTrue(Files.exists(spill));
            }
            assertTrue(!Files.exists(spill), "the file is deleted when the session closes");
            new DpSgdTrainer().train(fromShards, shards, config);
        }
        double rel = fromMemory.params().sub(fromShards.params()).norm2Number().doubleValue() / fromMemory.params().norm2Number().doubleValue();
        assertTrue(rel <= 1e-6, "the same run as from memory: relative difference " + rel);
        // in memory, a prefix output larger than the cache goes to a file too, and the run is the same
        MultiLayerNetwork spilled = Models.scatterNetLinear(ModelOptions.mnist().withSeed(5));
        System.setProperty("dpdl4j.prefixCacheBytes", "1");
        try {
            try (ClippedSums.Session session = ClippedSums.local().open(spilled, data, config, new PoissonBatchSampler(300, 0.1, 1))) {
                assertTrue(((LocalClippedSums.LocalSession) session).prefixFile() != null, "over the cache: a file");
            }
            new DpSgdTrainer().train(spilled, data, config);
        } finally {
            System.clearProperty("dpdl4j.prefixCacheBytes");
        }
        assertEquals(fromShards.params(), spilled.params(), "the same run as from shards, bit for bit");
    }

    /** The one-call trainer takes shards too: the same model as from memory, with the images' shape recorded. */
    @Test
    void privateTrainingFromShardsIsPrivateTrainingFromMemory(@TempDir Path tmp) {
        LabeledData data = images(400, 2);
        PackedShards.pack(data, tmp.resolve("s"), 100);
        org.dpdl4j.release.PrivateModel fromMemory = org.dpdl4j.dpsgd.PrivateTraining.of(Models.mlp(ModelOptions.mnist()), data)
                .targetEpsilon(3).epochs(0.5).expectedBatchSize(40).seed(5).accountant("rdp").train();
        try (PackedShards shards = PackedShards.open(tmp.resolve("s"))) {
            org.dpdl4j.release.PrivateModel fromShards = org.dpdl4j.dpsgd.PrivateTraining.of(Models.mlp(ModelOptions.mnist()), shards)
                    .targetEpsilon(3).epochs(0.5).expectedBatchSize(40).seed(5).accountant("rdp").train();
            assertEquals(fromMemory.network().params(), fromShards.network().params());
            assertEquals(new org.dpdl4j.release.InputSpec(1, 28, 28, 255), fromShards.input());
        }
    }

    /**
     * 1 GiB of packed records (1,366,084 MNIST-shaped images) train in a child JVM whose heap, and so ND4J's off-heap limit,
     * is 256 MiB: four times less than the data.
     */
    @Test
    void dataFourTimesTheHeapTrains(@TempDir Path tmp) throws Exception {
        String javaBinary = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(javaBinary, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                BeyondTheHeap.class.getName(), tmp.resolve("big").toString())
                .redirectError(tmp.resolve("child.err").toFile()).start();
        String said;
        try {
            said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            assertTrue(p.waitFor(600, TimeUnit.SECONDS));
        } finally {
            p.destroyForcibly();
        }
        String err = Files.readString(tmp.resolve("child.err"));
        assertEquals(0, p.exitValue(), said + " / " + err);
        long records = (1L << 30) / (PackedShards.LABEL_BYTES + 784) + 1;
        assertTrue(said.startsWith("trained 3 steps on " + records + " records, heap max 268435456 bytes"), said + " / " + err);
        assertTrue(records * (PackedShards.LABEL_BYTES + 784) > 4L * 268435456, "the data is four times the heap");
    }

    /** The child of {@link #dataFourTimesTheHeapTrains}: packs 1 GiB of random records, then trains an MLP 3 steps on them. */
    public static final class BeyondTheHeap {
        public static void main(String[] args) {
            Path dir = Path.of(args[0]);
            int n = (int) ((1L << 30) / (PackedShards.LABEL_BYTES + 784)) + 1;
            Random r = new Random(3);
            byte[] pixels = new byte[784];
            try (PackedShards.Writer w = PackedShards.writer(dir, 1, 28, 28, 10, 1 << 18)) {
                for (int i = 0; i < n; i++) {
                    r.nextBytes(pixels);
                    w.add(pixels, r.nextInt(10));
                }
                w.commit();
            }
            try (PackedShards shards = PackedShards.open(dir)) {
                MultiLayerNetwork net = Models.mlp(ModelOptions.mnist());
                DpSgdConfig config = DpSgdConfig.builder().samplingRate(64.0 / n).noiseMultiplier(1.0).clipNorm(1.0).steps(3)
                        .seed(1).build();
                TrainingResult result = new DpSgdTrainer().train(net, shards, config);
                System.out.println("trained " + result.stepsTaken() + " steps on " + shards.size() + " records, heap max "
                        + Runtime.getRuntime().maxMemory() + " bytes");
            }
        }
    }
}
