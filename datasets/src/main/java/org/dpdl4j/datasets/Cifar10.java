package org.dpdl4j.datasets;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CIFAR-10 (Krizhevsky 2009), binary version: {@code data_batch_1.bin} … {@code data_batch_5.bin}
 * (training, 50,000 images) and {@code test_batch.bin} (10,000), each exactly 10,000 records of
 * 3,073 bytes = 1 label byte (0..9) + 1,024 red + 1,024 green + 1,024 blue bytes (32×32, row-major).
 * Every file's exact size and every label are checked; the record layout is already NCHW.
 * Pixels are scaled to [0, 1]. The files are not fetched automatically: download
 * cifar-10-binary.tar.gz from the dataset's home page and extract its {@code .bin} files into
 * {@code $DPDL4J_DATA/cifar10/}.
 */
public final class Cifar10 {
    /** Bytes per record: one label byte and 3·32·32 pixel bytes. */
    public static final int RECORD_BYTES = 3073;
    /** Records per file. */
    public static final int RECORDS_PER_FILE = 10_000;

    private Cifar10() {
    }

    /**
     * Loads the five training batches and the test batch from a directory.
     *
     * @param directory the directory holding {@code data_batch_1.bin} … {@code data_batch_5.bin} and
     *                  {@code test_batch.bin}
     * @return 50,000 training and 10,000 test images, float32 [n, 3·32·32] (NCHW) in [0, 1] with one-hot labels of 10
     *         classes
     * @throws InvalidDatasetException if the directory or a file is missing (the message says where
     *                                 to put the files), a file has the wrong size, or a label is not in 0..9
     * @throws IOException             if a file cannot be read
     */
    public static TrainTest load(Path directory) throws IOException {
        if (!Files.isDirectory(directory)) {
            throw new InvalidDatasetException("CIFAR-10 directory " + directory + " does not exist: download the binary "
                    + "version (cifar-10-binary.tar.gz) and put data_batch_1.bin .. data_batch_5.bin and test_batch.bin there");
        }
        String[] trainFiles = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"};
        return new TrainTest("cifar10", read(directory, trainFiles), read(directory, new String[]{"test_batch.bin"}))
                .withPublicTest(true); // the published test batch
    }

    private static LabeledData read(Path dir, String[] names) throws IOException {
        int n = names.length * RECORDS_PER_FILE;
        ByteArrayOutputStream pixels = new ByteArrayOutputStream(n * (RECORD_BYTES - 1));
        int[] labels = new int[n];
        int k = 0;
        for (String name : names) {
            Path file = dir.resolve(name);
            byte[] bytes = FileVerification.readVerified(file, null);
            if (bytes.length != RECORDS_PER_FILE * RECORD_BYTES) {
                throw new InvalidDatasetException("CIFAR-10 file " + file + " has " + bytes.length + " bytes, expected "
                        + RECORDS_PER_FILE * RECORD_BYTES + " (10,000 records of 3,073 bytes)");
            }
            for (int r = 0; r < RECORDS_PER_FILE; r++, k++) {
                int off = r * RECORD_BYTES;
                labels[k] = bytes[off] & 0xFF;
                if (labels[k] > 9) {
                    throw new InvalidDatasetException("CIFAR-10 file " + file + " record " + r + " has label "
                            + labels[k] + ", expected 0..9");
                }
                pixels.write(bytes, off + 1, RECORD_BYTES - 1);
            }
        }
        return LabeledData.fromBytes(pixels.toByteArray(), labels, 10, 3, 32, 32);
    }
}
