package org.dpdl4j.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Datasets;
import org.dpdl4j.datasets.PackedShards;
import org.dpdl4j.datasets.TrainTest;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code dpdl4j data}: preparing data sets for training. */
@Command(name = "data", mixinStandardHelpOptions = true, description = "Prepare data sets: pack images into shards read by index.",
        subcommands = {DataCommand.Pack.class})
final class DataCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name a subcommand: data pack");
    }

    /** {@code data pack}: a data set's training and test parts as packed shards (docs/SHARDS.md). */
    @Command(name = "pack", mixinStandardHelpOptions = true, sortOptions = false,
            description = {"Packs a data set's training and test images into fixed-size 8-bit records in shards, with a "
                    + "manifest naming each shard's SHA-256 (format: docs/SHARDS.md), into --output/train and --output/test. "
                    + "train --dataset shards:DIR then reads only each step's Poisson batch from the shards.",
                    "--output appears only when both parts are complete (written in <output>.partial first)."})
    static final class Pack implements Callable<Integer> {
        @Option(names = "--dataset", defaultValue = "mnist", description = "mnist, fashion-mnist, cifar10 or folder:PATH (default ${DEFAULT-VALUE}).")
        String dataset;

        @Option(names = "--image-size", defaultValue = "28x28x1", description = "HxWxC for folder: datasets (default ${DEFAULT-VALUE}).")
        String imageSize;

        @Option(names = "--seed", defaultValue = "0", description = "Seed of the test split of a folder: data set without "
                + "train/ and test/ (default ${DEFAULT-VALUE}, as train's).")
        long seed;

        @Option(names = "--records-per-shard", defaultValue = "65536", description = "Records per shard file (default ${DEFAULT-VALUE}).")
        int recordsPerShard;

        @Option(names = "--output", required = true, paramLabel = "DIR", description = "The directory to create (it must not exist).")
        Path output;

        @Override
        public Integer call() throws Exception {
            if (dataset.startsWith("shards:")) {
                throw new IllegalArgumentException("--dataset " + dataset + " is packed already");
            }
            if (recordsPerShard < 1) {
                throw new IllegalArgumentException("--records-per-shard must be >= 1, got " + recordsPerShard);
            }
            if (java.nio.file.Files.exists(output)) {
                throw new IllegalArgumentException("--output " + output + " exists: packed shards go into a new directory");
            }
            int[] hwc = TrainingOptions.parseImageSize(imageSize);
            TrainTest data = Datasets.load(dataset, DatasetCache.root(), hwc[0], hwc[1], hwc[2], seed,
                    w -> System.err.println("warning: " + w));
            long start = System.nanoTime();
            PackedShards.packTrainTest(data.train(), data.test(), output, recordsPerShard);
            System.out.printf("packed %s: %d training and %d test images of %dx%dx%d into %s (%.1f s); train with --dataset shards:%s%n",
                    dataset, data.train().size(), data.test().size(), data.train().height(), data.train().width(),
                    data.train().channels(), output, (System.nanoTime() - start) / 1e9, output);
            return 0;
        }
    }
}
