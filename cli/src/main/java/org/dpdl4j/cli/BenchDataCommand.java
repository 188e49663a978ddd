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
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.PackedShards;
import org.dpdl4j.dpsgd.PoissonBatchSampler;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code dpdl4j bench data}: examples read per second for Poisson batches, from packed shards and from memory. */
@Command(name = "data", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Times reading Poisson batches (sorted random indices, the rows a DP-SGD step reads) from packed shards "
                + "(memory-mapped, page cache warm: the shards were just written) and from the same images held in memory (up to "
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

    @Option(names = "--json", description = "Print one JSON object as the last line.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        int[] hwc = TrainingOptions.parseImageSize(imageSize);
        if (records < 1 || records > 50_000_000 || batches < 1) {
            throw new IllegalArgumentException("--records must be in [1, 5e7] and --batches >= 1, got " + records + " and " + batches);
        }
        for (int b : batchSizes) {
            if (b < 1 || b > records) {
                throw new IllegalArgumentException("--batch-sizes must each be in [1, --records = " + records + "], got " + b);
            }
        }
        int d = hwc[0] * hwc[1] * hwc[2];
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
            System.out.printf("%8s %22s %22s%n", "B", "shards examples/s", "memory examples/s");
            for (int b : batchSizes) {
                double fromShards = rate(shards, records, b);
                double fromMemory = compare ? rate(memory, records, b) : Double.NaN; // above 1 GiB of pixels: not held
                System.out.printf("%8d %22.0f %22.0f%n", b, fromShards, fromMemory);
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("batch_size", b);
                row.put("shards_examples_per_second", fromShards);
                row.put("memory_examples_per_second", compare ? fromMemory : null);
                rows.add(row);
            }
            if (json) {
                Map<String, Object> j = new LinkedHashMap<>();
                j.put("records", records);
                j.put("image_size", imageSize);
                j.put("pack_seconds", packSeconds);
                j.put("open_seconds", openSeconds);
                j.put("page_cache", "warm");
                j.put("rows", rows);
                Cli.printJsonLine(System.out, j);
            }
            return 0;
        } finally {
            try (var walk = Files.walk(tmp)) {
                for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** Examples per second over {@link #batches} Poisson batches of expected size b (after two untimed ones). */
    private double rate(ExampleSource source, int n, int b) {
        PoissonBatchSampler sampler = new PoissonBatchSampler(n, (double) b / n, 7);
        long rowsRead = 0;
        long nanos = 0;
        for (int t = 1; t <= batches + 2; t++) {
            int[] batch = sampler.batch(t);
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
