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
     * Loads a dataset by name, with a {@code folder:} data set's warnings dropped.
     *
     * @param name      dataset name, one of {@link #KNOWN}
     * @param cacheRoot the cache root holding one sub-directory per named dataset (unused for {@code folder:} and
     *                  {@code shards:})
     * @param height    image height in pixels for {@code folder:} datasets, in [1, {@link ImageFolder#MAX_SIDE}]
     *                  (ignored otherwise)
     * @param width     image width in pixels for {@code folder:} datasets, in [1, {@link ImageFolder#MAX_SIDE}]
     *                  (ignored otherwise)
     * @param channels  channels for {@code folder:} datasets, 1 or 3 (ignored otherwise)
     * @param seed      seed of the test split for {@code folder:} datasets without train/test (ignored otherwise)
     * @return the training and test parts
     * @throws IllegalArgumentException for an unknown name, a {@code folder:} size or channel count out of range, or
     *                                  {@code shards:} that no file system serves or that are malformed
     * @throws InvalidDatasetException  if the files are missing or fail verification
     * @throws IOException              if a file cannot be read
     * @throws java.io.UncheckedIOException if packed shards cannot be read
     */
    public static TrainTest load(String name, Path cacheRoot, int height, int width, int channels, long seed)
            throws IOException {
        return load(name, cacheRoot, height, width, channels, seed, w -> { });
    }

    /**
     * As {@link #load(String, Path, int, int, int, long)}, with the data set's warnings (a {@code folder:} data set's
     * duplicate images left out) given to {@code warnings}.
     *
     * @param name      dataset name, one of {@link #KNOWN}
     * @param cacheRoot the cache root holding one sub-directory per named dataset
     * @param height    image height in pixels for {@code folder:} datasets, in [1, {@link ImageFolder#MAX_SIDE}]
     * @param width     image width in pixels for {@code folder:} datasets, in [1, {@link ImageFolder#MAX_SIDE}]
     * @param channels  channels for {@code folder:} datasets, 1 or 3
     * @param seed      seed of the test split for {@code folder:} datasets without train/test
     * @param warnings  receives each warning as one sentence
     * @return the training and test parts, all in memory except for {@code shards:} training data
     * @throws IllegalArgumentException as {@link #load(String, Path, int, int, int, long)}
     * @throws InvalidDatasetException  if the files are missing or fail verification
     * @throws IOException              if a file cannot be read
     * @throws java.io.UncheckedIOException if packed shards cannot be read
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
     *
     * @param name      dataset name, one of {@link #KNOWN}
     * @param cacheRoot the cache root holding one sub-directory per named dataset
     * @param height    image height in pixels for {@code folder:} datasets, in [1, {@link ImageFolder#MAX_SIDE}]
     * @param width     image width in pixels for {@code folder:} datasets, in [1, {@link ImageFolder#MAX_SIDE}]
     * @param channels  channels for {@code folder:} datasets, 1 or 3
     * @param seed      seed of the test split for {@code folder:} datasets without train/test
     * @param warnings  receives each warning as one sentence
     * @return the training and test parts
     * @throws IllegalArgumentException as {@link #load(String, Path, int, int, int, long)}
     * @throws InvalidDatasetException  if the files are missing or fail verification
     * @throws IOException              if a file cannot be read
     * @throws java.io.UncheckedIOException if packed shards cannot be read
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
