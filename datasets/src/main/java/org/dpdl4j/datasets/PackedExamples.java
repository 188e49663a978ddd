package org.dpdl4j.datasets;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The examples of a {@link DataSetIterator}, read once and written to one file of fixed-size records, then read back by
 * index: the {@link ExampleSource} for data that arrives as an iterator, so that a DP-SGD step reads only its Poisson
 * batch and the iterator is read once, not once per step.
 *
 * <p>A record holds one example's features, labels, feature mask and label mask (the masks when the iterator has them),
 * each in C order with the shape of one row of the iterator's arrays, as little-endian float32, or float64 when the
 * features or labels are float64 (so no value changes on the way). Every DataSet must have the same per-example shapes
 * and the same masks. Records are read with one positional read each; the file is deleted on {@link #close} when this
 * object created it ({@link #packToTemporaryFile}).
 */
public final class PackedExamples implements ExampleSource {
    private final Path file;
    private final boolean temporary;
    private final FileChannel channel;
    private final int size;
    private final DataType type;
    /** Per-example shapes of features, labels, feature mask and label mask (null: no such mask). */
    private final long[][] shapes;
    private final long[] lengths;
    private final long recordValues;
    /** A 64-bit hash of each record's bytes, in record order (equal records, equal hashes). */
    private final long[] digests;

    private PackedExamples(Path file, boolean temporary, FileChannel channel, int size, DataType type, long[][] shapes, long[] digests) {
        this.digests = digests;
        this.file = file;
        this.temporary = temporary;
        this.channel = channel;
        this.size = size;
        this.type = type;
        this.shapes = shapes;
        this.lengths = new long[shapes.length];
        long values = 0;
        for (int a = 0; a < shapes.length; a++) {
            lengths[a] = shapes[a] == null ? 0 : Arrays.stream(shapes[a]).reduce(1, Math::multiplyExact);
            values += lengths[a];
        }
        this.recordValues = values;
    }

    /**
     * Reads the iterator once (from its start when it can be reset) into a new temporary file, deleted on {@link #close}
     * (and when the JVM exits).
     *
     * @param data DataSets of features [k, …] (rank 2 to 4 with k), labels [k, …] and optional masks [k, T]
     * @return the examples, n ≥ 1
     * @throws IllegalArgumentException if the iterator is empty, holds more than {@link Integer#MAX_VALUE} examples, or its
     *                                  DataSets differ in per-example shape or in which masks they have (the DataSet named)
     * @throws UncheckedIOException     if the file cannot be written (nothing is left behind)
     */
    public static PackedExamples packToTemporaryFile(DataSetIterator data) {
        Path file;
        try {
            file = Files.createTempFile("dpdl4j-iterator-", ".examples");
        } catch (IOException e) {
            throw new UncheckedIOException("could not create a temporary file for the DataSetIterator's examples in "
                    + System.getProperty("java.io.tmpdir") + " (" + describe(e, Path.of(System.getProperty("java.io.tmpdir"), "x"), 0)
                    + ")", e);
        }
        file.toFile().deleteOnExit();
        return pack(data, file, true);
    }

    /**
     * Reads the iterator once (from its start when it can be reset) into {@code file} (created or overwritten); the file
     * stays after {@link #close}.
     *
     * @param data DataSets of features [k, …] (rank 2 to 4 with k), labels [k, …] and optional masks [k, T]
     * @param file the file to write the records to; an existing file is overwritten
     * @return the examples, n ≥ 1, read by index from {@code file}
     * @throws IllegalArgumentException as {@link #packToTemporaryFile}
     * @throws UncheckedIOException     if the file cannot be written (it is then deleted)
     */
    public static PackedExamples pack(DataSetIterator data, Path file) {
        return pack(data, file, false);
    }

    private static PackedExamples pack(DataSetIterator data, Path file, boolean temporary) {
        java.util.Objects.requireNonNull(data, "data");
        long[] written = {0};
        FileChannel channel = null;
        try {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            if (data.resetSupported()) {
                data.reset();
            }
            long[][] shapes = null;
            DataType type = null;
            long count = 0;
            long at = 0;
            int index = 0;
            written[0] = 0;
            long[][] digests = {new long[1024]};
            int[] digested = {0};
            java.util.function.LongConsumer digest = h -> {
                if (digested[0] == digests[0].length) {
                    digests[0] = Arrays.copyOf(digests[0], Math.max(16, digests[0].length * 2));
                }
                digests[0][digested[0]++] = h;
            };
            while (data.hasNext()) {
                DataSet ds = data.next();
                INDArray[] arrays = {ds.getFeatures(), ds.getLabels(), ds.getFeaturesMaskArray(), ds.getLabelsMaskArray()};
                if (shapes == null) {
                    shapes = perExampleShapes(arrays);
                    type = arrays[0].dataType() == DataType.DOUBLE || arrays[1].dataType() == DataType.DOUBLE ? DataType.DOUBLE
                            : DataType.FLOAT;
                    if (shapes[0].length < 1 || shapes[0].length > 3) {
                        throw new IllegalArgumentException("DataSet 0 of the iterator has features of shape "
                                + Arrays.toString(arrays[0].shape()) + "; expected [k, d], [k, f, T] or [k, c, h, w]");
                    }
                } else if (!Arrays.deepEquals(shapes, perExampleShapes(arrays))) {
                    throw new IllegalArgumentException("DataSet " + index + " of the iterator has per-example shapes (features, labels, "
                            + "feature mask, label mask) " + Arrays.deepToString(perExampleShapes(arrays)) + ", DataSet 0 has "
                            + Arrays.deepToString(shapes) + ": every DataSet must have the same");
                }
                at += write(channel, at, arrays, type, digest);
                written[0] = at;
                count += arrays[0].size(0);
                index++;
            }
            if (count == 0 || count > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("the DataSetIterator must hold between 1 and " + Integer.MAX_VALUE
                        + " examples, got " + count);
            }
            return new PackedExamples(file, temporary, channel, (int) count, type, shapes, Arrays.copyOf(digests[0], digested[0]));
        } catch (IOException | RuntimeException e) {
            try {
                if (channel != null) {
                    channel.close();
                }
                Files.deleteIfExists(file);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            if (e instanceof IOException io) {
                throw new UncheckedIOException("could not write the DataSetIterator's examples to " + file + " ("
                        + describe(io, file, written[0]) + ")", io);
            }
            throw (RuntimeException) e;
        }
    }

    /**
     * Why a write failed, for its message: a full file system is named as such, with the space left there, what had
     * been written and the setting that moves the file ({@code java.io.tmpdir}).
     */
    static String describe(IOException e, Path file, long written) {
        String text = String.valueOf(e.getMessage());
        long free = -1;
        try {
            free = Files.getFileStore(file.toAbsolutePath().getParent()).getUsableSpace();
        } catch (IOException | RuntimeException ignored) {
            // the space left is not known
        }
        boolean full = text.contains("No space left") || text.contains("Disk quota") || free >= 0 && free < (1 << 20);
        if (!full) {
            return e.getClass().getSimpleName() + ": " + text;
        }
        return String.format(java.util.Locale.ROOT, "no space left on the device of %s: %.1f MB were written when it filled, "
                + "%.1f MB are free there; point java.io.tmpdir at a file system with room (-Djava.io.tmpdir=DIR; for the "
                + "dpdl4j command, in DPDL4J_JAVA_OPTS)", file.toAbsolutePath().getParent(), written / 1e6, Math.max(0, free) / 1e6);
    }

    private static long[][] perExampleShapes(INDArray[] arrays) {
        long[][] shapes = new long[arrays.length][];
        for (int a = 0; a < arrays.length; a++) {
            shapes[a] = arrays[a] == null ? null : Arrays.copyOfRange(arrays[a].shape(), 1, arrays[a].rank());
        }
        return shapes;
    }

    /** Writes a DataSet's k records at {@code at}, handing each record's hash to {@code digest}; returns the bytes written. */
    private static long write(FileChannel channel, long at, INDArray[] arrays, DataType type, java.util.function.LongConsumer digest)
            throws IOException {
        int k = (int) arrays[0].size(0);
        int width = type.width();
        long[] values = new long[arrays.length];
        Object[] flat = new Object[arrays.length];
        long perRecord = 0;
        for (int a = 0; a < arrays.length; a++) {
            if (arrays[a] != null) {
                if (arrays[a].size(0) != k) {
                    throw new IllegalArgumentException("a DataSet's arrays have " + arrays[a].size(0) + " and " + k + " rows");
                }
                INDArray dense = arrays[a].castTo(type).dup('c');
                flat[a] = type == DataType.DOUBLE ? dense.data().asDouble() : dense.data().asFloat();
                values[a] = dense.length() / Math.max(1, k);
                perRecord += values[a];
            }
        }
        ByteBuffer out = ByteBuffer.allocate(Math.toIntExact(perRecord * width)).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < k; i++) {
            out.clear();
            for (int a = 0; a < arrays.length; a++) {
                for (long j = i * values[a]; j < (i + 1) * values[a]; j++) {
                    if (type == DataType.DOUBLE) {
                        out.putDouble(((double[]) flat[a])[(int) j]);
                    } else {
                        out.putFloat(((float[]) flat[a])[(int) j]);
                    }
                }
            }
            out.flip();
            digest.accept(hash(out));
            long position = at + (long) i * out.limit();
            while (out.hasRemaining()) {
                position += channel.write(out, position);
            }
        }
        return (long) k * perRecord * width;
    }

    /** A 64-bit hash of a record's bytes (its position unchanged). */
    private static long hash(ByteBuffer record) {
        ByteBuffer b = record.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        long h = 0x2545F4914F6CDD1DL ^ b.remaining();
        while (b.remaining() >= Long.BYTES) {
            h = Long.rotateLeft((h ^ b.getLong()) * 0x9E3779B97F4A7C15L, 31);
        }
        while (b.hasRemaining()) {
            h = Long.rotateLeft((h ^ b.get()) * 0x9E3779B97F4A7C15L, 31);
        }
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        return h ^ (h >>> 33);
    }

    /**
     * The records that repeat an earlier one: equal in every byte of features, labels and masks (what training reads).
     * Records are grouped by their hash and every group is confirmed byte by byte (a collision of hashes is no repeat).
     *
     * @return the count of repeated records (n minus the distinct ones), the largest number of copies of one record, and
     *         the first repeat with the record it repeats (−1 for both when nothing repeats)
     * @throws UncheckedIOException if the file cannot be read
     */
    public Duplicates duplicates() {
        Integer[] order = new Integer[size];
        for (int i = 0; i < size; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> digests[a] != digests[b] ? Long.compare(digests[a], digests[b]) : Integer.compare(a, b));
        int repeated = 0;
        int largest = size == 0 ? 0 : 1;
        int firstCopy = -1;
        int firstOriginal = -1;
        for (int from = 0; from < size; ) {
            int to = from + 1;
            while (to < size && digests[order[to]] == digests[order[from]]) {
                to++;
            }
            if (to - from > 1) { // equal hashes: the records themselves, compared in index order
                java.util.List<java.util.List<Integer>> groups = new java.util.ArrayList<>();
                java.util.List<ByteBuffer> bytes = new java.util.ArrayList<>();
                for (int k = from; k < to; k++) {
                    ByteBuffer r = recordBytes(order[k]);
                    int g = bytes.indexOf(r);
                    if (g < 0) {
                        bytes.add(r);
                        groups.add(new java.util.ArrayList<>(java.util.List.of(order[k])));
                    } else {
                        groups.get(g).add(order[k]);
                    }
                }
                for (java.util.List<Integer> g : groups) {
                    repeated += g.size() - 1;
                    largest = Math.max(largest, g.size());
                    if (g.size() > 1 && (firstCopy < 0 || g.get(1) < firstCopy)) {
                        firstCopy = g.get(1);
                        firstOriginal = g.get(0);
                    }
                }
            }
            from = to;
        }
        return new Duplicates(repeated, largest, firstCopy, firstOriginal);
    }

    /**
     * The records of a packed iterator that repeat others.
     *
     * @param repeated      the records that equal an earlier record (n minus the distinct records), ≥ 0
     * @param largestGroup  the most copies of one record (1 when nothing repeats)
     * @param firstCopy     the lowest index of a record equal to an earlier one, or −1
     * @param firstOriginal the earlier record it equals, or −1
     */
    public record Duplicates(int repeated, int largestGroup, int firstCopy, int firstOriginal) {
    }

    /** Record i's bytes as written. */
    private ByteBuffer recordBytes(int i) {
        ByteBuffer record = ByteBuffer.allocate(Math.toIntExact(recordValues * type.width()));
        try {
            long at = (long) i * record.capacity();
            while (record.hasRemaining()) {
                if (channel.read(record, at + record.position()) < 0) {
                    throw new IllegalArgumentException(file + ": ends before record " + i + " (it changed after it was written)");
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not read record " + i + " from " + file, e);
        }
        return record.flip();
    }

    /**
     * The number of examples packed.
     *
     * @return n, in [1, {@link Integer#MAX_VALUE}]
     */
    @Override
    public int size() {
        return size;
    }

    /**
     * The number of classes, read from the labels' shape.
     *
     * @return the width of one example's labels (their first dimension after the example's)
     */
    @Override
    public int numClasses() {
        return (int) shapes[1][0];
    }

    /**
     * The shape of one example's features, as the iterator gave them.
     *
     * @return the features' shape without the example dimension: [d], [f, T] or [c, h, w]
     */
    @Override
    public long[] exampleShape() {
        return shapes[0].clone();
    }

    /**
     * The file the records are in.
     *
     * @return the file's path (a temporary file's is deleted on {@link #close})
     */
    public Path file() {
        return file;
    }

    /**
     * The file's size in bytes: n records of equal size.
     *
     * @return n · (values per record) · (4 for float32 or 8 for float64), in bytes
     */
    public long bytes() {
        return (long) size * recordValues * type.width();
    }

    /**
     * Reads the records at the given indices (one positional read each).
     *
     * @param sortedIndices distinct indices in [0, n), ascending; may be empty
     * @return the examples with the iterator's per-example shapes, data type (float32 or float64) and masks
     * @throws IllegalArgumentException if an index is outside [0, n) or the indices are not ascending, or the file ends
     *                                  before a record
     * @throws UncheckedIOException     if the file cannot be read (for instance after {@link #close})
     */
    @Override
    public LabeledData read(int[] sortedIndices) {
        Indices.checkAscending(sortedIndices, size);
        int b = sortedIndices.length;
        int width = type.width();
        ByteBuffer record = ByteBuffer.allocate(Math.toIntExact(recordValues * width)).order(ByteOrder.LITTLE_ENDIAN);
        double[][] doubles = new double[shapes.length][];
        float[][] floats = new float[shapes.length][];
        for (int a = 0; a < shapes.length; a++) {
            if (shapes[a] != null) {
                if (type == DataType.DOUBLE) {
                    doubles[a] = new double[Math.toIntExact(b * lengths[a])];
                } else {
                    floats[a] = new float[Math.toIntExact(b * lengths[a])];
                }
            }
        }
        for (int k = 0; k < b; k++) {
            int i = sortedIndices[k];
            record.clear();
            try {
                long at = (long) i * record.capacity();
                while (record.hasRemaining()) {
                    if (channel.read(record, at + record.position()) < 0) {
                        throw new IllegalArgumentException(file + ": ends before record " + i + " (it changed after it was written)");
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("could not read record " + i + " from " + file, e);
            }
            record.flip();
            for (int a = 0; a < shapes.length; a++) {
                for (long j = 0; j < lengths[a]; j++) {
                    if (type == DataType.DOUBLE) {
                        doubles[a][(int) (k * lengths[a] + j)] = record.getDouble();
                    } else {
                        floats[a][(int) (k * lengths[a] + j)] = record.getFloat();
                    }
                }
            }
        }
        INDArray[] arrays = new INDArray[shapes.length];
        for (int a = 0; a < shapes.length; a++) {
            if (shapes[a] != null) {
                long[] shape = new long[shapes[a].length + 1];
                shape[0] = b;
                System.arraycopy(shapes[a], 0, shape, 1, shapes[a].length);
                arrays[a] = type == DataType.DOUBLE ? Nd4j.create(doubles[a], shape, 'c') : Nd4j.create(floats[a], shape, 'c');
            }
        }
        return LabeledData.of(arrays[0], arrays[1], arrays[2], arrays[3]);
    }

    /**
     * Closes the file, and deletes it when it is a temporary one; reads after this fail.
     *
     * @throws UncheckedIOException if the file cannot be closed or deleted
     */
    @Override
    public void close() {
        try {
            channel.close();
            if (temporary) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not close " + file, e);
        }
    }

    @Override
    public String toString() {
        return "the examples of a DataSetIterator in " + file;
    }
}
