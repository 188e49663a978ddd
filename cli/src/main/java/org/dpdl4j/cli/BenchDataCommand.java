package org.dpdl4j.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.ImageFolder;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.PackedShards;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.PoissonBatchSampler;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code dpdl4j bench data}: examples read per second for Poisson batches, from packed shards and from memory. */
@Command(name = "data", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Times reading Poisson batches (sorted random indices, the rows a DP-SGD step reads) from packed shards "
                + "(positional reads, page cache warm: the shards were just written) and from the same images held in memory (up to "
                + "1 GiB of pixels), for each expected batch size; prints examples/second. The random images are packed into a temporary "
                + "directory, removed at the end."})
final class BenchDataCommand implements Callable<Integer> {
    @Option(names = "--records", defaultValue = "50000", description = "Images packed (default ${DEFAULT-VALUE}, CIFAR-10's training set).")
    int records;

    @Option(names = "--image-size", defaultValue = "32x32x3", description = "HxWxC of the images (default ${DEFAULT-VALUE}).")
    String imageSize;

    @Option(names = "--batch-sizes", split = ",", defaultValue = "256,1024,4096", description = "Expected batch sizes B "
            + "(q = B/n) (default ${DEFAULT-VALUE}).")
    List<Integer> batchSizes;

    @Option(names = "--batches", defaultValue = "30", description = "Batches read per batch size and source (default ${DEFAULT-VALUE}).")
    int batches;

    @Option(names = "--train-from", description = {"Instead of timing reads, time DP-SGD (--model, expected batch 256, 2 "
            + "workers, sigma 1, C 1) reading each step's batch from the --records packed images (shards), decoding it from "
            + "--folder's training images (folder), or holding --memory-records random images in memory (memory); prints "
            + "examples/s and peak RSS. One per process, so that peak RSS is that run's. -Ddpdl4j.readAhead=false (in "
            + "DPDL4J_JAVA_OPTS) reads each batch when its step starts instead of during the step before."})
    String trainFrom;

    @Option(names = "--read-cache-mb", paramLabel = "MB", defaultValue = "0", description = "With --train-from shards or folder, "
            + "keep up to MB MiB of the examples read in memory, as train --read-cache-mb does (default ${DEFAULT-VALUE}).")
    int readCacheMb;

    @Option(names = "--cold", description = "Also time the shards with their pages dropped from the page cache before every "
            + "batch (dd iflag=nocache on each shard file, Linux coreutils; not timed), as a first read from disk is.")
    boolean cold;

    @Option(names = "--model", defaultValue = "cifar-cnn", description = "Model of --train-from (default ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--steps", defaultValue = "30", description = "Measured DP-SGD steps of --train-from, after 5 untimed (default ${DEFAULT-VALUE}).")
    int steps;

    @Option(names = "--memory-records", defaultValue = "50000", description = "Images held in memory by --train-from memory "
            + "(default ${DEFAULT-VALUE}).")
    int memoryRecords;

    @Option(names = "--folder", description = "Instead of random shards, time reading Poisson batches from this image folder "
            + "(folder: layout), its training images decoded when read at --image-size, as train reads a folder too large for "
            + "memory.")
    Path folder;

    @Option(names = "--json", description = "Print one JSON object as the last line.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        int[] hwc = TrainingOptions.parseImageSize(imageSize);
        if (records < 1 || records > 50_000_000 || batches < 1) {
            throw new IllegalArgumentException("--records must be in [1, 5e7] and --batches >= 1, got " + records + " and " + batches);
        }
        int d = hwc[0] * hwc[1] * hwc[2];
        if (trainFrom != null) {
            return train(hwc, d);
        }
        if (folder != null) {
            return folder(hwc);
        }
        for (int b : batchSizes) {
            if (b < 1 || b > records) {
                throw new IllegalArgumentException("--batch-sizes must each be in [1, --records = " + records + "], got " + b);
            }
        }
        Path tmp = Files.createTempDirectory("dpdl4j-bench-data");
        try {
            Path dir = tmp.resolve("shards");
            Random r = new Random(1);
            byte[] pixels = new byte[d];
            boolean compare = (long) records * d <= 1L << 30; // the in-memory copy: 4 bytes a pixel as float32
            byte[] all = compare ? new byte[records * d] : null;
            int[] labels = new int[records];
            long start = System.nanoTime();
            try (PackedShards.Writer w = PackedShards.writer(dir, hwc[2], hwc[0], hwc[1], 10, Math.max(1, (1 << 30) / (d + 2)))) {
                for (int i = 0; i < records; i++) {
                    r.nextBytes(pixels);
                    labels[i] = r.nextInt(10);
                    w.add(pixels, labels[i]);
                    if (compare) {
                        System.arraycopy(pixels, 0, all, i * d, d);
                    }
                }
                w.commit();
            }
            double packSeconds = (System.nanoTime() - start) / 1e9;
            start = System.nanoTime();
            PackedShards shards = PackedShards.open(dir);
            double openSeconds = (System.nanoTime() - start) / 1e9;
            LabeledData memory = compare ? LabeledData.fromBytes(all, labels, 10, hwc[2], hwc[0], hwc[1]) : null;
            System.out.printf("%d images of %s (%.1f MB packed): packed in %.2f s, opened (every shard's SHA-256 checked) in %.2f s%n",
                    records, imageSize, records * (d + 2.0) / 1e6, packSeconds, openSeconds);
            List<Map<String, Object>> rows = new ArrayList<>();
            System.out.printf("%8s %22s %22s%s%n", "B", "shards examples/s", "memory examples/s", cold ? String.format(" %22s",
                    "shards cold examples/s") : "");
            double[] warm = new double[batchSizes.size()];
            for (int k = 0; k < warm.length; k++) { // every warm row before the first drop: the shards were just written
                warm[k] = rate(shards, records, batchSizes.get(k), null);
            }
            for (int k = 0; k < warm.length; k++) {
                int b = batchSizes.get(k);
                double fromShards = warm[k];
                double fromMemory = compare ? rate(memory, records, b, null) : Double.NaN; // above 1 GiB of pixels: not held
                double fromCold = cold ? rate(shards, records, b, () -> dropFromPageCache(dir)) : Double.NaN;
                System.out.printf("%8d %22.0f %22.0f%s%n", b, fromShards, fromMemory, cold ? String.format(" %22.0f", fromCold) : "");
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("batch_size", b);
                row.put("shards_examples_per_second", fromShards);
                row.put("memory_examples_per_second", compare ? fromMemory : null);
                row.put("shards_cold_examples_per_second", cold ? fromCold : null);
                rows.add(row);
            }
            if (json) {
                Map<String, Object> j = new LinkedHashMap<>();
                j.put("records", records);
                j.put("image_size", imageSize);
                j.put("pack_seconds", packSeconds);
                j.put("open_seconds", openSeconds);
                j.put("page_cache", cold ? "warm, and cold in shards_cold_examples_per_second" : "warm");
                j.put("rows", rows);
                Cli.printJsonLine(System.out, j);
            }
            return 0;
        } finally {
            deleteTree(tmp);
        }
    }

    /** --train-from: DP-SGD examples/s and peak RSS from shards of --records images or from --memory-records in memory. */
    private Integer train(int[] hwc, int d) throws Exception {
        if (!trainFrom.equals("shards") && !trainFrom.equals("memory") && !trainFrom.equals("folder")) {
            throw new IllegalArgumentException("--train-from must be shards, folder or memory, got '" + trainFrom + "'");
        }
        if (trainFrom.equals("folder") != (folder != null)) {
            throw new IllegalArgumentException("--train-from folder needs --folder, and --folder with --train-from needs folder");
        }
        if (!org.dpdl4j.models.Models.isName(model) || steps < 1 || memoryRecords < 256 || (long) memoryRecords * d > 1L << 30) {
            throw new IllegalArgumentException("--model must be one of " + org.dpdl4j.models.Models.NAMES + ", --steps >= 1 and "
                    + "--memory-records in [256, 2^30 / pixels per image], got " + model + ", " + steps + ", " + memoryRecords);
        }
        Path tmp = trainFrom.equals("shards") ? Files.createTempDirectory("dpdl4j-bench-data") : null;
        try {
            ExampleSource data;
            Random r = new Random(1);
            if (tmp != null) {
                byte[] pixels = new byte[d];
                try (PackedShards.Writer w = PackedShards.writer(tmp.resolve("shards"), hwc[2], hwc[0], hwc[1], 10,
                        Math.max(1, (1 << 30) / (d + 2)))) {
                    for (int i = 0; i < records; i++) {
                        r.nextBytes(pixels);
                        w.add(pixels, r.nextInt(10));
                    }
                    w.commit();
                }
                data = PackedShards.open(tmp.resolve("shards"));
            } else if (folder != null) {
                data = ImageFolder.open(folder, hwc[0], hwc[1], hwc[2], 0, w -> System.err.println("warning: " + w)).trainExamples();
            } else {
                byte[] pixels = new byte[memoryRecords * d];
                r.nextBytes(pixels);
                data = LabeledData.fromBytes(pixels, r.ints(memoryRecords, 0, 10).toArray(), 10, hwc[2], hwc[0], hwc[1]);
            }
            if (readCacheMb < 0 || readCacheMb > 1 << 24) {
                throw new IllegalArgumentException("--read-cache-mb must be in [0, 16777216], got " + readCacheMb);
            }
            if (readCacheMb > 0 && !(data instanceof LabeledData)) {
                data = data.withCache(readCacheMb * 1048576L);
            }
            int n = data.size();
            org.deeplearning4j.nn.api.Model net = org.dpdl4j.models.Models.byName(model, new org.dpdl4j.models.ModelOptions(hwc[0],
                    hwc[1], hwc[2], data.numClasses(), new org.nd4j.linalg.activations.impl.ActivationTanH(),
                    new org.nd4j.linalg.learning.config.Sgd(0.5), 42, org.nd4j.linalg.api.buffer.DataType.FLOAT));
            double q = Math.min(1, 256.0 / n);
            org.dpdl4j.dpsgd.DpSgdConfig.Builder config = org.dpdl4j.dpsgd.DpSgdConfig.builder().samplingRate(q).noiseMultiplier(1)
                    .clipNorm(1).workers(2);
            new org.dpdl4j.dpsgd.DpSgdTrainer().train(net, data, config.steps(5).seed(2).build());
            BenchCommand.MemoryProbe memory = BenchCommand.MemoryProbe.start();
            org.dpdl4j.dpsgd.TrainingResult result = new org.dpdl4j.dpsgd.DpSgdTrainer().train(net, data,
                    config.steps(steps).seed(3).build(), info -> memory.sample());
            memory.sample();
            double rate = result.expectedExamples() / result.seconds();
            System.out.printf("%s DP-SGD from %s (n = %d, B = 256, %d steps%s): %.1f examples/s, peak RSS %.0f MiB%n", model,
                    trainFrom, n, steps, trainFrom.equals("memory") ? "" : ", read-ahead " + (System.getProperty("dpdl4j.readAhead",
                            "true").trim().equals("false") ? "off" : "on") + ", read cache " + readCacheMb + " MiB", rate,
                    memory.peakRss / 1048576.0);
            if (json) {
                Map<String, Object> j = new LinkedHashMap<>();
                j.put("train_from", trainFrom);
                j.put("model", model);
                j.put("n", n);
                j.put("steps", steps);
                j.put("dp_examples_per_second", rate);
                j.put("read_ahead", !System.getProperty("dpdl4j.readAhead", "true").trim().equals("false"));
                j.put("peak_rss_bytes", memory.peakRss);
                Cli.printJsonLine(System.out, j);
            }
            return 0;
        } finally {
            deleteTree(tmp);
        }
    }

    /** --folder: examples/s of Poisson batches decoded from the folder's training images. */
    private int folder(int[] hwc) throws java.io.IOException {
        long start = System.nanoTime();
        TrainTest data = ImageFolder.open(folder, hwc[0], hwc[1], hwc[2], 0, w -> System.err.println("warning: " + w));
        double indexSeconds = (System.nanoTime() - start) / 1e9;
        ExampleSource images = data.trainExamples();
        int n = images.size();
        System.out.printf("%d training images in %s at %s: indexed (every file's SHA-256) in %.2f s%n", n, folder, imageSize,
                indexSeconds);
        System.out.printf("%8s %22s%n", "B", "folder examples/s");
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int b : batchSizes) {
            if (b < 1 || b > n) {
                throw new IllegalArgumentException("--batch-sizes must each be in [1, " + n + "] (the folder's training images), got " + b);
            }
            double rate = rate(images, n, b, null);
            System.out.printf("%8d %22.0f%n", b, rate);
            rows.add(new LinkedHashMap<>(Map.of("batch_size", b, "folder_examples_per_second", rate)));
        }
        if (json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("images", n);
            j.put("image_size", imageSize);
            j.put("index_seconds", indexSeconds);
            j.put("rows", rows);
            Cli.printJsonLine(System.out, j);
        }
        return 0;
    }

    /**
     * Drops the shard files' pages from the page cache (posix_fadvise DONTNEED through GNU dd, which Java cannot call).
     *
     * @throws IllegalStateException naming the file if dd is missing or fails
     */
    private static void dropFromPageCache(Path dir) {
        try (var files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".bin")).sorted().toList()) {
                try (var ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.READ)) {
                    ch.force(true); // written pages are dropped only once they are on disk
                }
                Process p = new ProcessBuilder("dd", "if=" + f, "iflag=nocache", "count=0", "status=none").redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                if (p.waitFor() != 0) {
                    throw new IllegalStateException("--cold: dd iflag=nocache failed on " + f + ": " + out.trim());
                }
            }
        } catch (java.io.IOException e) {
            throw new IllegalStateException("--cold needs GNU dd (coreutils) to drop the shards from the page cache: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while dropping the page cache", e);
        }
    }

    /** Removes the temporary shards (null: nothing). */
    private static void deleteTree(Path tmp) throws java.io.IOException {
        if (tmp != null) {
            PackedShards.deleteTree(tmp);
        }
    }

    /**
     * Examples per second over {@link #batches} Poisson batches of expected size b (after two untimed ones), with
     * {@code before} (untimed; null: nothing) run before each batch.
     */
    private double rate(ExampleSource source, int n, int b, Runnable before) {
        PoissonBatchSampler sampler = new PoissonBatchSampler(n, (double) b / n, 7);
        long rowsRead = 0;
        long nanos = 0;
        for (int t = 1; t <= batches + 2; t++) {
            int[] batch = sampler.batch(t);
            if (before != null) {
                before.run();
            }
            long start = System.nanoTime();
            LabeledData read = source.read(batch);
            long took = System.nanoTime() - start;
            if (t > 2) {
                rowsRead += read.size();
                nanos += took;
            }
        }
        return rowsRead / (nanos / 1e9);
    }
}
