package org.dpdl4j.datasets;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 digests in hex: how dpdl4j names the bytes it verifies (data files, shipped data, released models). */
public final class Sha256 {
    private Sha256() {
    }

    /**
     * The SHA-256 of {@code bytes} as 64 lower-case hex digits.
     *
     * @param bytes the bytes to hash; may be empty
     * @return 64 lower-case hex digits
     * @throws IllegalStateException if the JVM has no SHA-256
     */
    public static String hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /**
     * The SHA-256 of a set of examples: their count and classes, then each example's features (float32 bits, big-endian)
     * and class index, read in chunks of 4,096 (the source is never read whole). It names the data a run was planned on,
     * so that a resume on other data is refused.
     *
     * @param data the examples
     * @return 64 lower-case hex digits
     * @throws IllegalStateException if the JVM has no SHA-256
     */
    public static String of(ExampleSource data) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            int n = data.size();
            md.update(java.nio.ByteBuffer.allocate(8).putInt(n).putInt(data.numClasses()).array());
            for (int from = 0; from < n; from += 4096) {
                LabeledData chunk = data.read(java.util.stream.IntStream.range(from, Math.min(n, from + 4096)).toArray());
                float[] x = chunk.features().castTo(org.nd4j.linalg.api.buffer.DataType.FLOAT).dup('c').data().asFloat();
                java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(4 * x.length);
                buf.asFloatBuffer().put(x);
                md.update(buf.array());
                int[] labels = chunk.classIndices();
                java.nio.ByteBuffer lb = java.nio.ByteBuffer.allocate(4 * labels.length);
                lb.asIntBuffer().put(labels);
                md.update(lb.array());
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
