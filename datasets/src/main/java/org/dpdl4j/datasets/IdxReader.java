package org.dpdl4j.datasets;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Reader for the IDX format of MNIST and Fashion-MNIST (LeCun et al.): a big-endian magic number
 * 0x000008NN (unsigned-byte data, NN dimensions), NN big-endian int32 sizes, then the data.
 * Raw or gzip-compressed files. A file is checked whole before any of it is returned: magic,
 * dimensions, exact length and, when given, the SHA-256 of the uncompressed bytes.
 */
public final class IdxReader {
    private IdxReader() {
    }

    /**
     * An IDX file's dimensions and unsigned-byte payload.
     *
     * @param dims sizes, outermost first (e.g. [60000, 28, 28])
     * @param data the payload, row-major, length = product of dims
     */
    public record IdxFile(int[] dims, byte[] data) {
    }

    /**
     * Reads and verifies an IDX file.
     *
     * @param file           path to the file (".gz" is decompressed)
     * @param expectedDims   the dimensions the file must have
     * @param expectedSha256 SHA-256 of the uncompressed bytes (lower-case hex), or null to skip
     * @return the file's dimensions (equal to {@code expectedDims}) and its payload
     * @throws InvalidDatasetException on a missing file, bad magic number, wrong dimensions, wrong
     *                                 length (truncated or padded) or wrong checksum
     * @throws IOException             if the file cannot be read
     */
    public static IdxFile read(Path file, int[] expectedDims, String expectedSha256) throws IOException {
        byte[] bytes = FileVerification.readVerified(file, expectedSha256);
        int rank = expectedDims.length;
        if (bytes.length < 4 + 4 * rank) {
            throw new InvalidDatasetException("IDX file " + file + " is truncated: " + bytes.length + " bytes");
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        int magic = buf.getInt();
        int expectedMagic = 0x00000800 | rank;
        if (magic != expectedMagic) {
            throw new InvalidDatasetException(String.format(
                    "IDX file %s has magic number 0x%08x, expected 0x%08x (unsigned bytes, %d dimensions)",
                    file, magic, expectedMagic, rank));
        }
        int[] dims = new int[rank];
        long count = 1;
        for (int i = 0; i < rank; i++) {
            dims[i] = buf.getInt();
            count *= dims[i];
        }
        if (!Arrays.equals(dims, expectedDims)) {
            throw new InvalidDatasetException("IDX file " + file + " has dimensions " + Arrays.toString(dims)
                    + ", expected " + Arrays.toString(expectedDims));
        }
        long expectedLength = 4L + 4L * rank + count;
        if (bytes.length != expectedLength) {
            throw new InvalidDatasetException("IDX file " + file + " has " + bytes.length + " bytes, expected "
                    + expectedLength + (bytes.length < expectedLength ? " (truncated)" : ""));
        }
        return new IdxFile(dims, Arrays.copyOfRange(bytes, 4 + 4 * rank, bytes.length));
    }
}
