package org.dpdl4j.datasets;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Loading a dataset by name: {@code mnist}, {@code fashion-mnist}, {@code cifar10}, {@code folder:PATH} or
 * {@code shards:PATH} (a directory of {@code train/} and {@code test/} packed shards, {@link PackedShards#loadTrainTest};
 * PATH may be a URI that a {@link ShardStorage.Provider} on the class path opens, such as {@code hdfs://…}).
 */
public final class Datasets {
    /** The names accepted besides {@code folder:PATH}. */
    public static final String KNOWN = "mnist, fashion-mnist, cifar10, folder:PATH, shards:PATH";

    private Datasets() {
    }

    /**
     * @param name      dataset name
     * @param cacheRoot the cache root holding one sub-directory per named dataset
     * @param height    image height for {@code folder:} datasets (ignored otherwise)
     * @param width     image width for {@code folder:} datasets
     * @param channels  channels for {@code folder:} datasets
     * @param seed      seed of the test split for {@code folder:} datasets without train/test
     * @throws IllegalArgumentException for an unknown name
     * @throws InvalidDatasetException  if the files are missing or fail verification
     */
    public static TrainTest load(String name, Path cacheRoot, int height, int width, int channels, long seed)
            throws IOException {
        return load(name, cacheRoot, height, width, channels, seed, w -> { });
    }

    /**
     * As {@link #load(String, Path, int, int, int, long)}, with the data set's warnings (a {@code folder:} data set's
     * duplicate images left out) given to {@code warnings}.
     */
    public static TrainTest load(String name, Path cacheRoot, int height, int width, int channels, long seed,
                                 java.util.function.Consumer<String> warnings) throws IOException {
        return load(name, cacheRoot, height, width, channels, seed, warnings, false);
    }

    /**
     * As {@link #load(String, Path, int, int, int, long, java.util.function.Consumer)}, with the training images of a
     * {@code folder:} data set too large to decode up front left on disk and decoded when read
     * ({@link ImageFolder#loadOrOpen}), as {@code shards:} data always are: {@link TrainTest#trainExamples()} reads them
     * by index.
     */
    public static TrainTest loadReadByIndex(String name, Path cacheRoot, int height, int width, int channels, long seed,
                                            java.util.function.Consumer<String> warnings) throws IOException {
        return load(name, cacheRoot, height, width, channels, seed, warnings, true);
    }

    private static TrainTest load(String name, Path cacheRoot, int height, int width, int channels, long seed,
                                  java.util.function.Consumer<String> warnings, boolean folderByIndex) throws IOException {
        if (name.startsWith("folder:") && folderByIndex) {
            return ImageFolder.loadOrOpen(Paths.get(name.substring("folder:".length())), height, width, channels, seed, warnings);
        }
        if (name.startsWith("folder:")) {
            return ImageFolder.load(Paths.get(name.substring("folder:".length())), height, width, channels, seed, warnings);
        }
        if (name.startsWith("shards:")) {
            return PackedShards.loadTrainTest(name, ShardStorage.of(name.substring("shards:".length())));
        }
        return switch (name) {
            case "mnist" -> Mnist.load(cacheRoot.resolve("mnist"));
            case "fashion-mnist" -> FashionMnist.load(cacheRoot.resolve("fashion-mnist"));
            case "cifar10" -> Cifar10.load(cacheRoot.resolve("cifar10"));
            default -> throw new IllegalArgumentException("dataset must be one of " + KNOWN + ", got '" + name + "'");
        };
    }
}
