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
 * The examples of a {@link DataSetIterator}, read once and written to one file of records, then read back by index: the
 * {@link ExampleSource} for data that arrives as an iterator, so that a DP-SGD step reads only its Poisson batch and the
 * iterator is read once, not once per step.
 *
 * <p>A record holds one example's features, labels, feature mask and label mask (the masks when the iterator has them),
 * each in C order with the shape of one row of the iterator's arrays, as little-endian float32, or float64 when the
 * features or labels are float64 (so no value changes on the way). Every DataSet must have the same per-example shapes
 * and the same masks, but for the time steps of sequences ([k, f, T] features): DL4J's sequence iterators pad each
 * minibatch to its own longest sequence, so that the padding an example carries depends on the examples it was batched
 * with. A sequence is therefore stored with its own steps only: cut to the span of its feature mask (its first to its
 * last unmasked step, whichever end the iterator padded), with its own length. A read pads the batch's sequences at their
 * end to the longest among them, with masks that cover each example's own steps (a feature mask, and a label mask for
 * labels per step), so that an example's record and its gradient depend on it alone, not on its batch-mates. Records
 * are read with one positional read each; the file is deleted on {@link #close} when this object created it
 * ({@link #packToTemporaryFile}).
 */
public final class PackedExamples implements ExampleSource {
    private final Path file;
    private final boolean temporary;
    private final FileChannel channel;
    private final int size;
    private final DataType type;
    /** Per-example shapes of features, labels, feature mask and label mask (null: no such mask); T is the longest's. */
    private final long[][] shapes;
    /** Which of the four carry the sequence's time steps (their last dimension). */
    private final boolean[] timed;
    /** Whether records have lengths of their own (sequences of different lengths, or masked): reads pad and mask them. */
    private final boolean ragged;
    /** Record i's first byte; offsets[n] is the file's size. */
    private final long[] offsets;
    /** Record i's time steps (sequences), else null. */
    private final int[] steps;
    /** A 64-bit hash of each record's bytes, in record order (equal records, equal hashes). */
    private final long[] digests;

    private PackedExamples(Path file, boolean temporary, FileChannel channel, int size, DataType type, long[][] shapes, boolean[] timed,
                           boolean ragged, long[] offsets, int[] steps, long[] digests) {
        this.file = file;
        this.temporary = temporary;
        this.channel = channel;
        this.size = size;
        this.type = type;
        this.shapes = shapes;
        this.timed = timed;
        this.ragged = ragged;
        this.offsets = offsets;
        this.steps = steps;
        this.digests = digests;
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

    /** What the records of a DataSet are: the per-example shapes, which carry time, and the sequence's length T. */
    private record Layout(long[][] shapes, boolean[] timed, long t) {
        static Layout of(INDArray[] arrays) {
            long[][] shapes = new long[arrays.length][];
            for (int a = 0; a < arrays.length; a++) {
                shapes[a] = arrays[a] == null ? null : Arrays.copyOfRange(arrays[a].shape(), 1, arrays[a].rank());
            }
            boolean sequence = arrays[0].rank() == 3;
            long t = sequence ? arrays[0].size(2) : -1;
            boolean[] timed = new boolean[arrays.length];
            timed[0] = sequence;
            timed[1] = sequence && arrays[1].rank() == 3 && arrays[1].size(2) == t;
            for (int a = 2; a < arrays.length; a++) {
                timed[a] = sequence && arrays[a] != null && arrays[a].rank() == 2 && arrays[a].size(1) == t;
            }
            return new Layout(shapes, timed, t);
        }

        /** The shapes with every time dimension replaced by −1: what all DataSets must share. */
        String template() {
            long[][] s = new long[shapes.length][];
            for (int a = 0; a < shapes.length; a++) {
                if (shapes[a] != null) {
                    s[a] = shapes[a].clone();
                    if (timed[a]) {
                        s[a][s[a].length - 1] = -1;
                    }
                }
            }
            return Arrays.deepToString(s) + Arrays.toString(timed);
        }
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
            Layout first = null;
            DataType type = null;
            boolean ragged = false;
            long longest = 0;
            Growing offsets = new Growing();
            Growing steps = new Growing();
            Growing digests = new Growing();
            offsets.add(0);
            int index = 0;
            while (data.hasNext()) {
                DataSet ds = data.next();
                INDArray[] arrays = {ds.getFeatures(), ds.getLabels(), ds.getFeaturesMaskArray(), ds.getLabelsMaskArray()};
                Layout layout = Layout.of(arrays);
                if (first == null) {
                    first = layout;
                    type = arrays[0].dataType() == DataType.DOUBLE || arrays[1].dataType() == DataType.DOUBLE ? DataType.DOUBLE
                            : DataType.FLOAT;
                    if (layout.shapes[0].length < 1 || layout.shapes[0].length > 3) {
                        throw new IllegalArgumentException("DataSet 0 of the iterator has features of shape "
                                + Arrays.toString(arrays[0].shape()) + "; expected [k, d], [k, f, T] or [k, c, h, w]");
                    }
                } else if (!layout.template().equals(first.template())) {
                    throw new IllegalArgumentException("DataSet " + index + " of the iterator has per-example shapes (features, labels, "
                            + "feature mask, label mask) " + Arrays.deepToString(layout.shapes) + ", DataSet 0 has "
                            + Arrays.deepToString(first.shapes) + ": every DataSet must have the same (but for the time steps of "
                            + "sequences)");
                }
                ragged |= layout.t != first.t || arrays[2] != null && layout.timed[2];
                written[0] = write(channel, written[0], arrays, layout, type, offsets, steps, digests);
                index++;
            }
            int count = offsets.size() - 1;
            if (count == 0) {
                throw new IllegalArgumentException("the DataSetIterator must hold between 1 and " + Integer.MAX_VALUE
                        + " examples, got 0");
            }
            long[][] shapes = first.shapes.clone();
            int[] lengths = first.t < 0 ? null : steps.ints();
            if (lengths != null) { // the shapes of the longest
                for (int t : lengths) {
                    longest = Math.max(longest, t);
                }
                for (int a = 0; a < shapes.length; a++) {
                    if (shapes[a] != null && first.timed[a]) {
                        shapes[a] = shapes[a].clone();
                        shapes[a][shapes[a].length - 1] = longest;
                    }
                }
            }
            return new PackedExamples(file, temporary, channel, count, type, shapes, first.timed, ragged, offsets.longs(), lengths,
                    digests.longs());
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

    /** A growing list of longs (offsets, lengths, hashes: millions of examples without boxing). */
    private static final class Growing {
        private long[] values = new long[1024];
        private int n;

        void add(long v) {
            if (n == values.length) {
                if (n == Integer.MAX_VALUE - 8) {
                    throw new IllegalArgumentException("the DataSetIterator must hold at most " + (Integer.MAX_VALUE - 9) + " examples");
                }
                values = Arrays.copyOf(values, (int) Math.min(Integer.MAX_VALUE - 8L, 2L * n));
            }
            values[n++] = v;
        }

        int size() {
            return n;
        }

        long[] longs() {
            return Arrays.copyOf(values, n);
        }

        int[] ints() {
            int[] out = new int[n];
            for (int i = 0; i < n; i++) {
                out[i] = (int) values[i];
            }
            return out;
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

    /**
     * Writes a DataSet's k records at {@code at}, each sequence cut to its feature mask's span; records each record's
     * offset, its time steps and its hash. Returns the offset after them.
     */
    private static long write(FileChannel channel, long at, INDArray[] arrays, Layout layout, DataType type, Growing offsets,
                              Growing steps, Growing digests) throws IOException {
        int k = (int) arrays[0].size(0);
        int width = type.width();
        Object[] flat = new Object[arrays.length];
        long[] perExample = new long[arrays.length];
        for (int a = 0; a < arrays.length; a++) {
            if (arrays[a] != null) {
                if (arrays[a].size(0) != k) {
                    throw new IllegalArgumentException("a DataSet's arrays have " + arrays[a].size(0) + " and " + k + " rows");
                }
                INDArray dense = arrays[a].castTo(type).dup('c');
                flat[a] = type == DataType.DOUBLE ? dense.data().asDouble() : dense.data().asFloat();
                perExample[a] = dense.length() / Math.max(1, k);
            }
        }
        long t = layout.t;
        for (int i = 0; i < k; i++) {
            int from = 0;
            int to = (int) Math.max(t, 0); // the span [from, to) of steps kept
            if (t > 0 && arrays[2] != null && layout.timed[2]) { // the feature mask's span, whichever end was padded
                int firstOn = -1;
                int lastOn = -1;
                for (int s = 0; s < t; s++) {
                    if (value(flat[2], i * t + s) != 0) {
                        firstOn = firstOn < 0 ? s : firstOn;
                        lastOn = s;
                    }
                }
                from = firstOn < 0 ? 0 : firstOn;
                to = firstOn < 0 ? 1 : lastOn + 1; // a sequence with no step: one masked step
            }
            int kept = to - from;
            long values = 0;
            for (int a = 0; a < arrays.length; a++) {
                if (arrays[a] != null) {
                    values += layout.timed[a] ? perExample[a] / t * kept : perExample[a];
                }
            }
            ByteBuffer out = ByteBuffer.allocate(Math.toIntExact(values * width)).order(ByteOrder.LITTLE_ENDIAN);
            for (int a = 0; a < arrays.length; a++) {
                if (arrays[a] == null) {
                    continue;
                }
                long base = i * perExample[a];
                if (layout.timed[a]) { // [rows, T] per example: each row's kept steps
                    long rows = perExample[a] / t;
                    for (long r = 0; r < rows; r++) {
                        for (int s = from; s < to; s++) {
                            put(out, flat[a], base + r * t + s, type);
                        }
                    }
                } else {
                    for (long j = 0; j < perExample[a]; j++) {
                        put(out, flat[a], base + j, type);
                    }
                }
            }
            out.flip();
            long h = hash(out) ^ (t < 0 ? 0 : 0x9E3779B97F4A7C15L * kept);
            digests.add(h);
            long position = at;
            while (out.hasRemaining()) {
                position += channel.write(out, position);
            }
            at = position;
            offsets.add(at);
            if (t >= 0) {
                steps.add(kept);
            }
        }
        return at;
    }

    private static double value(Object flat, long j) {
        return flat instanceof double[] d ? d[(int) j] : ((float[]) flat)[(int) j];
    }

    private static void put(ByteBuffer out, Object flat, long j, DataType type) {
        if (type == DataType.DOUBLE) {
            out.putDouble(((double[]) flat)[(int) j]);
        } else {
            out.putFloat(((float[]) flat)[(int) j]);
        }
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
        ByteBuffer record = ByteBuffer.allocate(Math.toIntExact(offsets[i + 1] - offsets[i])).order(ByteOrder.LITTLE_ENDIAN);
        try {
            while (record.hasRemaining()) {
                if (channel.read(record, offsets[i] + record.position()) < 0) {
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
     * The shape of one example's features, as the iterator gave them (for sequences, at the longest one's length).
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
     * The file's size in bytes: the records one after another.
     *
     * @return the bytes of all records (values of 4 bytes for float32 or 8 for float64)
     */
    public long bytes() {
        return offsets[size];
    }

    /**
     * Reads the records at the given indices (one positional read each). Sequences of different lengths, or masked ones,
     * come padded at their end to the longest of the batch, with a feature mask (and, for labels per step, a label mask)
     * that covers each example's own steps.
     *
     * @param sortedIndices distinct indices in [0, n), ascending; may be empty
     * @return the examples with the iterator's per-example shapes (time steps: the batch's longest), data type (float32
     *         or float64) and masks
     * @throws IllegalArgumentException if an index is outside [0, n) or the indices are not ascending, or the file ends
     *                                  before a record
     * @throws UncheckedIOException     if the file cannot be read (for instance after {@link #close})
     */
    @Override
    public LabeledData read(int[] sortedIndices) {
        Indices.checkAscending(sortedIndices, size);
        int b = sortedIndices.length;
        long t = 0; // the batch's longest sequence
        if (steps != null) {
            for (int i : sortedIndices) {
                t = Math.max(t, steps[i]);
            }
            if (!ragged) {
                t = shapes[0][shapes[0].length - 1];
            }
        }
        long[][] batchShapes = new long[shapes.length][];
        long[] lengths = new long[shapes.length];
        for (int a = 0; a < shapes.length; a++) {
            boolean made = ragged && shapes[a] == null && (a == 2 || a == 3 && timed[1]); // masks a padded batch needs
            long[] one = shapes[a] != null ? shapes[a].clone() : made ? new long[]{t} : null;
            if (one != null && (timed[a] || made)) {
                one[one.length - 1] = t;
            }
            if (one != null) {
                batchShapes[a] = one;
                lengths[a] = Arrays.stream(one).reduce(1, Math::multiplyExact);
            }
        }
        boolean[] isTimed = timed.clone();
        isTimed[2] |= ragged;
        isTimed[3] |= ragged && timed[1];
        double[][] values = new double[shapes.length][];
        for (int a = 0; a < shapes.length; a++) {
            if (batchShapes[a] != null) {
                values[a] = new double[Math.toIntExact(b * lengths[a])];
            }
        }
        for (int k = 0; k < b; k++) {
            int i = sortedIndices[k];
            ByteBuffer record = recordBytes(i);
            int own = steps == null ? 0 : steps[i];
            for (int a = 0; a < shapes.length; a++) {
                if (batchShapes[a] == null) {
                    continue;
                }
                long base = k * lengths[a];
                if (shapes[a] == null) { // a mask the batch needs, made: the example's own steps
                    java.util.Arrays.fill(values[a], (int) base, (int) (base + own), 1.0);
                    if (a == 3 && values[2] != null && shapes[2] != null) { // labels per step, masked as the features are
                        System.arraycopy(values[2], (int) (k * lengths[2]), values[a], (int) base, own);
                    }
                } else if (isTimed[a] && steps != null) {
                    long rows = lengths[a] / t;
                    for (long r = 0; r < rows; r++) {
                        for (int s = 0; s < own; s++) {
                            values[a][(int) (base + r * t + s)] = get(record);
                        }
                    }
                } else {
                    for (long j = 0; j < lengths[a]; j++) {
                        values[a][(int) (base + j)] = get(record);
                    }
                }
            }
        }
        INDArray[] arrays = new INDArray[shapes.length];
        for (int a = 0; a < shapes.length; a++) {
            if (batchShapes[a] != null) {
                long[] shape = new long[batchShapes[a].length + 1];
                shape[0] = b;
                System.arraycopy(batchShapes[a], 0, shape, 1, batchShapes[a].length);
                arrays[a] = Nd4j.create(values[a], shape, 'c').castTo(type);
            }
        }
        return LabeledData.of(arrays[0], arrays[1], arrays[2], arrays[3]);
    }

    private double get(ByteBuffer record) {
        return type == DataType.DOUBLE ? record.getDouble() : record.getFloat();
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
