package org.dpdl4j.datasets;

import java.io.IOException;
import java.nio.file.Path;

/** The file layout shared by MNIST and Fashion-MNIST: four IDX files with known checksums. */
record IdxDataset(String name, String suffix, String trainImagesSha, String trainLabelsSha,
                  String testImagesSha, String testLabelsSha) {

    TrainTest load(Path dir) throws IOException {
        LabeledData train = part(dir, "train", 60_000, trainImagesSha, trainLabelsSha);
        LabeledData test = part(dir, "t10k", 10_000, testImagesSha, testLabelsSha);
        return new TrainTest(name, train, test).withPublicTest(true); // the published, verified test files
    }

    private LabeledData part(Path dir, String prefix, int n, String imagesSha, String labelsSha) throws IOException {
        IdxReader.IdxFile images = IdxReader.read(dir.resolve(prefix + "-images-idx3-ubyte" + suffix),
                new int[]{n, 28, 28}, imagesSha);
        IdxReader.IdxFile labels = IdxReader.read(dir.resolve(prefix + "-labels-idx1-ubyte" + suffix),
                new int[]{n}, labelsSha);
        int[] y = new int[n];
        for (int i = 0; i < n; i++) {
            y[i] = labels.data()[i] & 0xFF;
            if (y[i] > 9) {
                throw new InvalidDatasetException("label file of " + name + " has label " + y[i] + " at " + i + ", expected 0..9");
            }
        }
        return LabeledData.fromBytes(images.data(), y, 10, 1, 28, 28);
    }
}
