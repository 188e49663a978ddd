package org.dpdl4j.datasets;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Fashion-MNIST (Xiao, Rasul &amp; Vollgraf 2017): 60,000 training and 10,000 test 28×28 grey-scale
 * images of clothing, 10 classes, read from the four gzipped IDX files (as installed by the
 * Debian package dataset-fashion-mnist, fetched by {@code scripts/fetch-data.sh}) and verified by
 * the SHA-256 of their uncompressed bytes. Pixels are scaled to [0, 1].
 */
public final class FashionMnist {
    static final IdxDataset SPEC = new IdxDataset("fashion-mnist", ".gz",
            "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
            "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
            "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
            "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34");

    private FashionMnist() {
    }

    /**
     * Loads Fashion-MNIST from a directory holding the four {@code *-ubyte.gz} files.
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
