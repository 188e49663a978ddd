package org.dpdl4j.datasets;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Labelled 8-bit images packed into fixed-size records in shard files, with a manifest naming each shard's SHA-256:
 * written once ({@link #writer}, {@link #pack}), then read by index ({@link #open}), so that a DP-SGD step reads only
 * its Poisson batch and a data set larger than the JVM's memory trains. Records are read with positional reads
 * ({@code pread}), each into a buffer of the batch: the operating system's page cache holds what is read often, and
 * the process's resident memory does not grow with the files. (A memory mapping did grow it: each record touched
 * mapped its neighbours' pages too, 1.8 GB of a 3 GB file after 35 steps of 256 random records.)
 *
 * <p>The format (version {@value #VERSION}, documented in docs/SHARDS.md so that other tools can write it): a
 * directory with {@code manifest.json} and shards {@code shard-00000.bin}, … Each record is
 * {@value #LABEL_BYTES} bytes of label (unsigned, little-endian) then c·h·w pixel bytes (unsigned, channel-major, then
 * row, then column: NCHW, as {@link LabeledData} flattens an image). Every shard but the last holds
 * {@code records_per_shard} records. A pixel p is read as p / 255 in float32, exactly as
 * {@link LabeledData#fromBytes} reads it, so shards of the same pixels give bit-identical data.
 *
 * <p>Serialized (to a cluster's executors), packed shards travel as a reference: where they are, the SHA-256 of their
 * manifest and the part opened. Read back, the reference opens the shards there and verifies them against that
 * manifest, once per JVM: the opened shards are kept open for the JVM's life and shared by every copy read back.
 */
public final class PackedShards implements ExampleSource, java.io.Serializable {
    private static final long serialVersionUID = 1L;
    /** The manifest's format name. */
    public static final String FORMAT = "dpdl4j-shards";
    /** The format version this class writes and reads. */
    public static final int VERSION = 1;
    /** Bytes of a record's label. */
    public static final int LABEL_BYTES = 2;
    /** The manifest's file name. */
    public static final String MANIFEST = "manifest.json";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final ShardStorage dir;
    private final int channels;
    private final int height;
    private final int width;
    private final int classes;
    private final int size;
    private final int perShard;
    private final int recordBytes;
    private final transient ShardStorage.RandomReads[] shards;
    private final int partFrom;
    private final int partTo;
    private final String manifestSha256;

    private PackedShards(ShardStorage dir, int channels, int height, int width, int classes, int size, int perShard,
                         ShardStorage.RandomReads[] shards, int partFrom, int partTo, String manifestSha256) {
        this.manifestSha256 = manifestSha256;
        this.partFrom = partFrom;
        this.partTo = partTo;
        this.dir = dir;
        this.channels = channels;
        this.height = height;
        this.width = width;
        this.classes = classes;
        this.size = size;
        this.perShard = perShard;
        this.recordBytes = LABEL_BYTES + channels * height * width;
        this.shards = shards;
    }

    /**
     * Opens packed shards: reads the manifest, checks the format, the version, each shard's size against its records
     * and its SHA-256 against the manifest (one pass over the files), and keeps the shards open for reads by index
     * (nothing of them is copied until read); {@link #close} closes them.
     *
     * @param dir a directory written by {@link #writer} (or by another tool in the same format)
     * @return the examples, read by index
     * @throws IllegalArgumentException naming the file and the expected value on a missing or malformed manifest, a
     *                                  truncated or changed shard, or a record size that does not match the image size
     * @throws UncheckedIOException     if a file cannot be read
     */
    public static PackedShards open(Path dir) {
        return open(ShardStorage.local(dir));
    }

    /**
     * Opens packed shards wherever they are stored, as {@link #open(Path)} does: for instance on a distributed file
     * system through {@link ShardStorage#of}.
     *
     * @param dir the shards' directory
     * @return the examples, read by index
     * @throws IllegalArgumentException as {@link #open(Path)}
     * @throws UncheckedIOException     if a file cannot be read
     */
    public static PackedShards open(ShardStorage dir) {
        return open(dir, null, 0, Integer.MAX_VALUE);
    }

    /**
     * Opens the shards that hold records [from, to) of packed shards whose manifest is the one given: what a cluster's
     * executor opens for its own part of the data, on a path every executor can read (a shared file system). The
     * manifest's SHA-256 must equal {@code manifestSha256} (the driver's, {@link Sha256#hex} of {@link #MANIFEST}'s bytes),
     * and each shard that holds records of the part is checked against the manifest (size and SHA-256, one pass over
     * those shards only). Reads of records outside the part are refused.
     *
     * @param dir            the shards' directory ({@link ShardStorage#local}, or {@link ShardStorage#of} a URI)
     * @param manifestSha256 the expected SHA-256 (hex) of the manifest file
     * @param from           the part's first record, ≥ 0
     * @param to             one past its last, in [from, n]
     * @return the shards, reading records of [from, to) by their indices in the whole set
     * @throws IllegalArgumentException as {@link #open}, if the manifest differs from the expected one (naming both
     *                                  digests), or if [from, to) is not within [0, n)
     * @throws UncheckedIOException     if a file cannot be read
     */
    public static PackedShards openPart(ShardStorage dir, String manifestSha256, int from, int to) {
        java.util.Objects.requireNonNull(manifestSha256, "manifestSha256");
        return open(dir, manifestSha256, from, to);
    }

    private static PackedShards open(ShardStorage dir, String manifestSha256, int from, int to) {
        String manifestFile = dir.describe(MANIFEST);
        try {
            if (dir.length(MANIFEST) < 0) {
                throw new IllegalArgumentException("no packed shards at " + dir.location() + ": " + manifestFile + " does not exist");
            }
            byte[] manifestBytes = dir.readAll(MANIFEST);
            if (manifestSha256 != null && !Sha256.hex(manifestBytes).equals(manifestSha256)) {
                throw refused(manifestFile, "SHA-256 " + Sha256.hex(manifestBytes) + " differs from the expected " + manifestSha256
                        + ": not the shards the run was planned on");
            }
            Map<?, ?> m = JSON.readValue(manifestBytes, Map.class);
            if (!FORMAT.equals(m.get("format")) || !(m.get("version") instanceof Integer v) || v != VERSION) {
                throw refused(manifestFile, "format " + m.get("format") + " version " + m.get("version") + " is not " + FORMAT
                        + " version " + VERSION);
            }
            int c = positive(m, "channels", manifestFile);
            int h = positive(m, "height", manifestFile);
            int w = positive(m, "width", manifestFile);
            int classes = positive(m, "classes", manifestFile);
            int count = nonNegative(m, "count", manifestFile);
            int perShard = positive(m, "records_per_shard", manifestFile);
            int recordBytes = positive(m, "record_bytes", manifestFile);
            if (recordBytes != LABEL_BYTES + (long) c * h * w) {
                throw refused(manifestFile, "record_bytes " + recordBytes + " is not " + LABEL_BYTES + " + c*h*w = "
                        + (LABEL_BYTES + (long) c * h * w) + " for " + c + "x" + h + "x" + w + " images");
            }
            if ((long) perShard * recordBytes > Integer.MAX_VALUE) {
                throw refused(manifestFile, "records_per_shard " + perShard + " makes shards above 2 GiB");
            }
            List<?> list = m.get("shards") instanceof List<?> l ? l : null;
            int expectedShards = (count + perShard - 1) / perShard;
            if (list == null || list.size() != expectedShards) {
                throw refused(manifestFile, "shards must list " + expectedShards + " shards for " + count + " records of "
                        + perShard + " per shard, got " + (list == null ? "none" : list.size()));
            }
            boolean whole = manifestSha256 == null;
            if (!whole && (from < 0 || to < from || to > count)) {
                throw new IllegalArgumentException("a part of " + dir.location() + " must be within [0, " + count + "), got [" + from
                        + ", " + to + ")");
            }
            int firstShard = whole ? 0 : from / perShard;
            int endShard = whole ? expectedShards : Math.min(expectedShards, (Math.max(from, to - 1)) / perShard + 1);
            long[][] blocks = new long[expectedShards][];
            for (int s = 0; s < expectedShards; s++) {
                Map<?, ?> shard = (Map<?, ?>) list.get(s);
                String name = String.valueOf(shard.get("file"));
                if (!name.equals(shardName(s))) {
                    throw refused(manifestFile, "shard " + s + " must be " + shardName(s) + ", got " + name);
                }
                long records = Math.min(perShard, count - (long) s * perShard);
                long bytes = records * recordBytes;
                long length = dir.length(name);
                if (length != bytes) {
                    throw refused(dir.describe(name), (length >= 0 ? length + " bytes" : "missing") + ", expected "
                            + bytes + " (" + records + " records of " + recordBytes + " bytes)");
                }
                if (s < firstShard || s >= endShard) {
                    continue; // outside the part: never read by it
                }
                blocks[s] = new long[(int) ((bytes + BLOCK - 1) / BLOCK)];
                String sha = sha256(dir, name, recordBytes, classes, (long) s * perShard, blocks[s]); // and every label in range
                if (!sha.equals(shard.get("sha256"))) {
                    throw refused(dir.describe(name), "SHA-256 " + sha + " differs from the manifest's " + shard.get("sha256")
                            + ": the shard changed after it was packed");
                }
            }
            ShardStorage.RandomReads[] files = new ShardStorage.RandomReads[expectedShards]; // opened once all are verified
            try {
                for (int s = firstShard; s < endShard; s++) {
                    files[s] = dir.openForReads(shardName(s));
                }
            } catch (IOException e) {
                for (ShardStorage.RandomReads f : files) {
                    if (f != null) {
                        f.close();
                    }
                }
                throw e;
            }
            PackedShards opened = new PackedShards(dir, c, h, w, classes, count, perShard, files, whole ? 0 : from, whole ? count : to,
                    Sha256.hex(manifestBytes));
            opened.blocks = blocks;
            return opened;
        } catch (IOException e) {
            throw new UncheckedIOException("could not read packed shards at " + dir.location(), e);
        } catch (ClassCastException e) {
            throw refused(manifestFile, "malformed manifest (" + e.getMessage() + ")");
        }
    }

    /**
     * A data set packed by {@link #packTrainTest}: the training part read by index from {@code dir/train}, the test part
     * read into memory from {@code dir/test}; the digest, which identifies the data in a plan and a sidecar, is the
     * SHA-256 of the training manifest (which names every training shard's SHA-256).
     *
     * @param name the data set's name, e.g. {@code shards:/data/mnist}
     * @param dir  the directory holding {@code train/} and {@code test/} packed shards
     * @return the data set: training examples read by index (open until closed), test examples in memory, and the
     *         training manifest's SHA-256 as its digest
     * @throws IllegalArgumentException as {@link #open}, or if the parts' image shapes or classes differ
     * @throws UncheckedIOException     if a file cannot be read
     */
    public static TrainTest loadTrainTest(String name, ShardStorage dir) {
        PackedShards train = open(dir.resolve("train"));
        try {
            return new TrainTest(name, null, readTest(dir, train), train.manifestSha256(), train);
        } catch (RuntimeException e) {
            train.close();
            throw e;
        }
    }

    /** The test part, read into memory, checked to hold images of the training part's shape and classes. */
    private static LabeledData readTest(ShardStorage dir, PackedShards train) {
        try (PackedShards t = open(dir.resolve("test"))) {
            if (t.channels != train.channels || t.height != train.height || t.width != train.width || t.classes != train.classes) {
                throw new IllegalArgumentException(dir.location() + ": the test shards hold " + t.channels + "x" + t.height + "x" + t.width
                        + " images of " + t.classes + " classes, the training shards " + train.channels + "x" + train.height + "x"
                        + train.width + " of " + train.classes);
            }
            return t.read(java.util.stream.IntStream.range(0, t.size()).toArray());
        }
    }

    /**
     * Packs a data set's two parts into {@code dir/train} and {@code dir/test} ({@link #loadTrainTest} reads them),
     * atomically: {@code dir} appears only when both are complete.
     *
     * @param train           the training images, as {@link #pack} takes them
     * @param test            the test images, as {@link #pack} takes them
     * @param dir             the directory to create; must not exist
     * @param recordsPerShard records per shard ≥ 1, with at most 2 GiB per shard
     * @throws IllegalArgumentException as {@link #pack}, or if dir exists
     * @throws UncheckedIOException     if the files cannot be written
     */
    public static void packTrainTest(LabeledData train, LabeledData test, Path dir, int recordsPerShard) {
        if (Files.exists(dir)) {
            throw new IllegalArgumentException(dir + " exists: packed shards go into a new directory");
        }
        Path partial = null;
        try {
            partial = staging(dir);
            pack(train, partial.resolve("train"), recordsPerShard);
            pack(test, partial.resolve("test"), recordsPerShard);
            unmark(partial);
            force(partial);
            Files.move(partial, dir, StandardCopyOption.ATOMIC_MOVE);
            force(dir.toAbsolutePath().getParent());
        } catch (IOException e) {
            throw new UncheckedIOException("could not pack into " + dir, e);
        } finally {
            try {
                if (partial != null) {
                    deleteTree(partial);
                }
            } catch (IOException e) {
                System.err.println("warning: could not remove " + partial + ": " + e.getMessage());
            }
        }
    }

    /**
     * Packs in-memory 8-bit images (features that are p / 255 for bytes p, as {@link LabeledData#fromBytes} and the
     * MNIST readers make them) into shards.
     *
     * @param data            images with one-hot labels, flat [n, c·h·w] or [n, c, h, w], with 2 to 65536 classes; each
     *                        example's label is the argmax of its label row (not checked to be one-hot)
     * @param dir             the directory to create (it must not exist); written atomically
     * @param recordsPerShard records per shard ≥ 1, with at most 2 GiB per shard
     * @throws IllegalArgumentException if a feature is not p / 255 for a byte p, the sizes are out of range (as
     *                                  {@link #writer}), or dir exists
     * @throws UncheckedIOException     if the files cannot be written (nothing is left behind)
     */
    public static void pack(LabeledData data, Path dir, int recordsPerShard) {
        float[] x = data.features().reshape('c', data.size(), (long) data.channels() * data.height() * data.width())
                .castTo(org.nd4j.linalg.api.buffer.DataType.FLOAT).dup('c').data().asFloat();
        int d = data.channels() * data.height() * data.width();
        int[] labels = data.labels().argMax(1).toIntVector();
        try (Writer w = writer(dir, data.channels(), data.height(), data.width(), data.numClasses(), recordsPerShard)) {
            byte[] pixels = new byte[d];
            for (int i = 0; i < data.size(); i++) {
                for (int j = 0; j < d; j++) {
                    float f = x[i * d + j];
                    int p = Math.round(f * 255f);
                    if (p < 0 || p > 255 || p / 255f != f) {
                        throw new IllegalArgumentException("feature " + j + " of example " + i + " is " + f + ", not p/255 for a byte "
                                + "p: packed shards hold 8-bit images");
                    }
                    pixels[j] = (byte) p;
                }
                w.add(pixels, labels[i]);
            }
            w.commit();
        }
    }

    /** The file that marks a staging directory as dpdl4j's own (removed before the directory is moved into place). */
    private static final String STAGING_MARK = ".dpdl4j-staging";

    /**
     * A new staging directory beside {@code dir}, {@code .<name>.partial-<random>}: a name no directory of the user's
     * has (an existing {@code <name>.partial} of theirs is left alone), marked as dpdl4j's; staging directories of
     * {@code dir} that an earlier pack left (killed), known by the mark, are removed first.
     */
    private static Path staging(Path dir) throws IOException {
        Path parent = dir.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        String prefix = "." + dir.getFileName() + ".partial-";
        try (var siblings = Files.list(parent)) {
            for (Path old : siblings.filter(p -> p.getFileName().toString().startsWith(prefix)
                    && Files.isRegularFile(p.resolve(STAGING_MARK))).toList()) {
                deleteTree(old); // a killed pack's
            }
        }
        Path staging = Files.createTempDirectory(parent, prefix);
        Files.createFile(staging.resolve(STAGING_MARK));
        return staging;
    }

    private static void unmark(Path staging) throws IOException {
        Files.deleteIfExists(staging.resolve(STAGING_MARK));
    }

    /**
     * A writer of packed shards into a directory that appears only when {@link Writer#commit} has written every shard
     * and the manifest (they are written in a staging directory beside {@code dir}, {@code .<name>.partial-<random>}, and
     * moved at once).
     *
     * @param dir             the directory to create; must not exist
     * @param channels        c ≥ 1
     * @param height          h ≥ 1, in pixels
     * @param width           w ≥ 1, in pixels
     * @param classes         the number of classes, in [2, 65536]
     * @param recordsPerShard records per shard ≥ 1, with at most 2 GiB per shard (records of 2 + c·h·w bytes)
     * @return an open writer, which the caller closes
     * @throws IllegalArgumentException on a bad size or an existing directory
     * @throws UncheckedIOException     if the staging directory cannot be created
     */
    public static Writer writer(Path dir, int channels, int height, int width, int classes, int recordsPerShard) {
        if (channels < 1 || height < 1 || width < 1 || classes < 2 || classes > 65536 || recordsPerShard < 1
                || (long) recordsPerShard * (LABEL_BYTES + (long) channels * height * width) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("packed shards need channels, height, width >= 1, classes in [2, 65536] and "
                    + "recordsPerShard >= 1 with shards of at most 2 GiB, got " + channels + "x" + height + "x" + width + ", "
                    + classes + " classes, " + recordsPerShard + " records per shard");
        }
        if (Files.exists(dir)) {
            throw new IllegalArgumentException(dir + " exists: packed shards go into a new directory");
        }
        return new Writer(dir, channels, height, width, classes, recordsPerShard);
    }

    /** Writes records into shards; {@link #commit} makes the directory appear, {@link #close} without it removes everything. */
    public static final class Writer implements AutoCloseable {
        private final Path dir;
        private Path partial;
        private final int channels;
        private final int height;
        private final int width;
        private final int classes;
        private final int perShard;
        private final List<Map<String, Object>> shards = new ArrayList<>();
        private final ByteBuffer record;
        private OutputStream out;
        private MessageDigest digest;
        private int count;
        private boolean committed;

        private Writer(Path dir, int channels, int height, int width, int classes, int perShard) {
            this.dir = dir;
            this.channels = channels;
            this.height = height;
            this.width = width;
            this.classes = classes;
            this.perShard = perShard;
            this.record = ByteBuffer.allocate(LABEL_BYTES + channels * height * width).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            try {
                this.partial = staging(dir);
            } catch (IOException e) {
                throw new UncheckedIOException("could not create a directory beside " + dir + " to pack into", e);
            }
        }

        /**
         * Appends one image.
         *
         * @param pixels c·h·w bytes, NCHW
         * @param label  in [0, classes)
         * @throws IllegalArgumentException on a wrong pixel count or label
         * @throws UncheckedIOException     if the shard cannot be written
         */
        public void add(byte[] pixels, int label) {
            if (pixels.length != record.capacity() - LABEL_BYTES || label < 0 || label >= classes) {
                throw new IllegalArgumentException("record " + count + ": " + pixels.length + " pixel bytes (expected "
                        + (record.capacity() - LABEL_BYTES) + ") and label " + label + " (expected [0, " + classes + "))");
            }
            try {
                if (count % perShard == 0) {
                    finishShard();
                    digest = MessageDigest.getInstance("SHA-256");
                    out = new DigestOutputStream(new java.io.BufferedOutputStream(Files.newOutputStream(partial.resolve(
                            shardName(shards.size())), StandardOpenOption.CREATE_NEW), 1 << 20), digest);
                    Map<String, Object> s = new LinkedHashMap<>();
                    s.put("file", shardName(shards.size()));
                    shards.add(s);
                }
                record.clear();
                record.putShort((short) label).put(pixels);
                out.write(record.array());
                count++;
            } catch (IOException e) {
                throw new UncheckedIOException("could not write " + partial, e);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-256 is missing from this JVM", e);
            }
        }

        private void finishShard() throws IOException {
            if (out != null) {
                out.close();
                Map<String, Object> s = shards.get(shards.size() - 1);
                s.put("records", count - (shards.size() - 1) * perShard);
                s.put("sha256", HexFormat.of().formatHex(digest.digest()));
                out = null;
            }
        }

        /**
         * Writes the manifest and moves the directory into place.
         *
         * @throws UncheckedIOException if that fails (nothing is left behind)
         */
        public void commit() {
            try {
                finishShard();
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("format", FORMAT);
                m.put("version", VERSION);
                m.put("channels", channels);
                m.put("height", height);
                m.put("width", width);
                m.put("classes", classes);
                m.put("count", count);
                m.put("records_per_shard", perShard);
                m.put("record_bytes", record.capacity());
                m.put("label_bytes", LABEL_BYTES);
                m.put("shards", shards);
                JSON.writeValue(partial.resolve(MANIFEST).toFile(), m);
                unmark(partial);
                force(partial);
                Files.move(partial, dir, StandardCopyOption.ATOMIC_MOVE);
                force(dir.toAbsolutePath().getParent());
                committed = true;
            } catch (IOException e) {
                throw new UncheckedIOException("could not finish the packed shards in " + dir, e);
            }
        }

        /**
         * Closes the shard being written and, without {@link #commit}, removes what was written.
         *
         * @throws UncheckedIOException if the files cannot be closed or removed
         */
        @Override
        public void close() {
            try {
                if (out != null) {
                    out.close();
                }
                if (!committed) {
                    deleteTree(partial);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("could not remove " + partial, e);
            }
        }
    }

    /**
     * The number of records.
     *
     * @return n, the manifest's record count, ≥ 0
     */
    @Override
    public int size() {
        return size;
    }

    /**
     * The number of classes.
     *
     * @return the manifest's class count, ≥ 1 (a {@link #writer} writes 2 to 65536)
     */
    @Override
    public int numClasses() {
        return classes;
    }

    /**
     * The shape of one example as read: flat rows, as {@link LabeledData#fromBytes} stores them.
     *
     * @return [c·h·w]
     */
    @Override
    public long[] exampleShape() {
        return new long[]{(long) channels * height * width}; // read() gives flat rows, as LabeledData.fromBytes stores them
    }

    /**
     * The images' channel count.
     *
     * @return c ≥ 1
     */
    public int channels() {
        return channels;
    }

    /**
     * The images' height.
     *
     * @return h ≥ 1, in pixels
     */
    public int height() {
        return height;
    }

    /**
     * The images' width.
     *
     * @return w ≥ 1, in pixels
     */
    public int width() {
        return width;
    }

    /**
     * The SHA-256 (hex) of the manifest these shards were opened and verified with: it names every shard's SHA-256.
     *
     * @return 64 lower-case hex digits
     */
    public String manifestSha256() {
        return manifestSha256;
    }

    /**
     * The directory the shards were read from (a local directory, or one of a distributed file system).
     *
     * @return the storage given to {@code open}
     */
    public ShardStorage storage() {
        return dir;
    }

    /**
     * Reads the records at the given indices from the shards (one positional read each).
     *
     * @param sortedIndices distinct indices in [0, n), ascending, within the part opened ({@link #openPart}); may be empty
     * @return float32 data [k, c·h·w] with pixels p / 255 and one-hot labels
     * @throws IllegalArgumentException if an index is outside [0, n) or the part opened, the indices are not ascending, a
     *                                  shard ends early or a record's label is not below the class count
     * @throws UncheckedIOException     if a shard cannot be read (for instance after {@link #close})
     */
    @Override
    public LabeledData read(int[] sortedIndices) {
        int d = recordBytes - LABEL_BYTES;
        byte[] pixels = new byte[sortedIndices.length * d];
        int[] labels = new int[sortedIndices.length];
        Indices.checkAscending(sortedIndices, size);
        ByteBuffer record = ByteBuffer.allocate(recordBytes).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        byte[] bytes = record.array();
        for (int k = 0; k < sortedIndices.length; k++) {
            int i = sortedIndices[k];
            if (i < partFrom || i >= partTo) {
                throw new IllegalArgumentException("record " + i + " is outside the part [" + partFrom + ", " + partTo + ") opened of "
                        + dir.location());
            }
            try {
                long at = (long) (i % perShard) * recordBytes;
                for (int got = 0, r; got < recordBytes; got += r) {
                    r = shards[i / perShard].read(at + got, bytes, got, recordBytes - got);
                    if (r < 0) {
                        throw new IllegalArgumentException(shardFile(i) + ": ends before record " + i + " (it changed after it was opened)");
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("could not read record " + i + " from " + shardFile(i), e);
            }
            labels[k] = Short.toUnsignedInt(record.getShort(0));
            System.arraycopy(record.array(), LABEL_BYTES, pixels, k * d, d);
            if (labels[k] >= classes) {
                throw new IllegalArgumentException(shardFile(i) + ": record " + i + " has label " + labels[k] + ", expected [0, " + classes + ")");
            }
        }
        return LabeledData.fromBytes(pixels, labels, classes, channels, height, width);
    }

    /**
     * Closes the shard files; reads after this fail.
     *
     * @throws UncheckedIOException if a shard cannot be closed
     */
    @Override
    public void close() {
        for (ShardStorage.RandomReads f : shards) {
            try {
                if (f != null) { // a part opens only its own shards
                    f.close();
                }
            } catch (IOException e) {
                throw new UncheckedIOException("could not close a shard of " + dir.location(), e);
            }
        }
    }

    /** The file of record i, for messages (not formatted on the read path). */
    private String shardFile(int i) {
        return dir.describe(shardName(i / perShard));
    }

    static String shardName(int s) {
        return String.format("shard-%05d.bin", s);
    }

    /**
     * A shard's SHA-256, read once; on the way each record's label is checked to be below the class count, so that a
     * record a run could not read is refused when the shards are opened (before anything is charged), not mid-run.
     *
     * @throws IllegalArgumentException naming the shard and the record whose label is out of range
     */
    private static String sha256(ShardStorage dir, String name, long recordBytes, int classes, long firstRecord, long[] blockHashes)
            throws IOException {
        try (InputStream in = dir.open(name)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[BLOCK];
            long at = 0; // bytes of the shard read so far
            int low = -1; // a label's first byte, when the buffer ended between its two
            for (int r; (r = in.readNBytes(buf, 0, BLOCK)) > 0; ) { // whole blocks: one hash each
                md.update(buf, 0, r);
                blockHashes[(int) (at / BLOCK)] = blockHash(buf, r);
                for (int k = 0; k < r; k++) {
                    long inRecord = (at + k) % recordBytes;
                    if (inRecord == 0) {
                        low = buf[k] & 0xFF;
                    } else if (inRecord == 1) {
                        int label = low | (buf[k] & 0xFF) << 8;
                        if (label >= classes) {
                            long record = firstRecord + (at + k) / recordBytes;
                            throw new IllegalArgumentException(dir.describe(name) + ": record " + record + " has label " + label
                                    + ", expected [0, " + classes + "): the shards are refused before anything is trained or "
                                    + "charged (pack them again from the right data)");
                        }
                    } else {
                        k += (int) Math.min(r - k - 1, recordBytes - inRecord - 1); // to the record's last byte
                    }
                }
                at += r;
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** Bytes per block of a shard whose hash {@link #checkUnchanged} compares. */
    private static final int BLOCK = 1 << 20;
    /** Blocks re-read and compared at each {@link #checkUnchanged}. */
    private static final int SAMPLED_BLOCKS = 4;
    /** Each opened shard's block hashes, taken as it was verified at open (null where not opened; null after travel). */
    private transient long[][] blocks;

    private static long blockHash(byte[] b, int length) {
        long h = 0x2545F4914F6CDD1DL ^ length;
        for (int i = 0; i < length; i++) {
            h = (h ^ b[i]) * 0x9E3779B97F4A7C15L;
        }
        return h ^ (h >>> 31);
    }

    /**
     * Checks that the shards this object reads were not changed since they were opened and verified: each opened
     * shard's size, and {@value #SAMPLED_BLOCKS} distinct blocks of 1 MiB drawn at random (all when there are fewer), re-read and compared with their hashes
     * taken at open (a change in place, such as every pixel rewritten, shows in any block it touched). Runs call it
     * before each checkpoint and before the release, so that a run does not release with the digest of data it did not
     * train on.
     *
     * @throws IllegalArgumentException naming the shard that changed
     * @throws UncheckedIOException     if a shard cannot be read
     */
    @Override
    public void checkUnchanged() {
        if (blocks == null) {
            return;
        }
        java.util.List<int[]> all = new ArrayList<>();
        for (int s = 0; s < blocks.length; s++) {
            if (blocks[s] != null && shards[s] != null) {
                String name = shardName(s);
                long records = Math.min(perShard, size - (long) s * perShard);
                long length;
                try {
                    length = dir.length(name);
                } catch (IOException e) {
                    throw new UncheckedIOException("could not read " + dir.describe(name), e);
                }
                if (length != records * recordBytes) {
                    throw changed(name, "its size is " + length + " bytes, " + records * recordBytes + " when opened");
                }
                for (int k = 0; k < blocks[s].length; k++) {
                    all.add(new int[]{s, k});
                }
            }
        }
        java.util.SplittableRandom random = new java.util.SplittableRandom(System.nanoTime());
        byte[] buf = new byte[BLOCK];
        for (int j = 0; j < Math.min(SAMPLED_BLOCKS, all.size()); j++) {
            java.util.Collections.swap(all, j, j + random.nextInt(all.size() - j)); // distinct blocks: all of them when few
            int[] sk = all.get(j);
            long records = Math.min(perShard, size - (long) sk[0] * perShard);
            long at = (long) sk[1] * BLOCK;
            int length = (int) Math.min(BLOCK, records * recordBytes - at);
            try {
                for (int read = 0; read < length; ) {
                    int r = shards[sk[0]].read(at + read, buf, read, length - read);
                    if (r < 0) {
                        throw changed(shardName(sk[0]), "it ends before byte " + (at + length));
                    }
                    read += r;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("could not read " + dir.describe(shardName(sk[0])), e);
            }
            if (blockHash(buf, length) != blocks[sk[0]][sk[1]]) {
                throw changed(shardName(sk[0]), "its bytes " + at + " to " + (at + length) + " differ from those read when it was "
                        + "opened");
            }
        }
    }

    private IllegalArgumentException changed(String name, String how) {
        return new IllegalArgumentException(dir.describe(name) + " changed during the run (" + how + "): the run trains on the "
                + "shards it was planned and charged on, and stops before its next checkpoint or release; restore the shards "
                + "(pack them again into a new directory for new data) and resume it");
    }

    private static int positive(Map<?, ?> m, String key, String file) {
        int v = nonNegative(m, key, file);
        if (v < 1) {
            throw refused(file, key + " must be >= 1, got " + v);
        }
        return v;
    }

    private static int nonNegative(Map<?, ?> m, String key, String file) {
        if (!(m.get(key) instanceof Integer v) || v < 0) {
            throw refused(file, key + " must be a non-negative integer, got " + m.get(key));
        }
        return v;
    }

    private static IllegalArgumentException refused(String file, String why) {
        return new IllegalArgumentException(file + ": " + why);
    }

    /**
     * Forces a file, or a directory with everything in it, to disk (the shards before the rename that publishes them, so
     * that a lost machine never leaves a manifest naming bytes that were not written).
     */
    private static void force(Path p) throws IOException {
        if (Files.isDirectory(p)) {
            try (var children = Files.list(p)) {
                for (Path c : children.toList()) {
                    force(c);
                }
            }
        }
        try (java.nio.channels.FileChannel c = java.nio.channels.FileChannel.open(p,
                Files.isDirectory(p) ? java.nio.file.StandardOpenOption.READ : java.nio.file.StandardOpenOption.WRITE)) {
            c.force(true);
        }
    }

    /**
     * Removes a directory and everything in it (nothing if it does not exist).
     *
     * @param p the directory (or a single file) to remove
     * @throws IOException if a file cannot be removed
     */
    public static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (var walk = Files.walk(p)) {
            for (Path q : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(q);
            }
        }
    }

    /** Serialization: a {@link Reference} travels, never the open files. */
    private Object writeReplace() {
        return new Reference(dir, manifestSha256, partFrom, partTo);
    }

    private void readObject(java.io.ObjectInputStream in) throws java.io.InvalidObjectException {
        throw new java.io.InvalidObjectException("packed shards are read back through their reference");
    }

    /** Shards opened from references in this JVM, kept open and shared (one entry per shard set and part). */
    private static final Map<Reference, PackedShards> OPENED = new java.util.concurrent.ConcurrentHashMap<>();

    /** Where packed shards are, the manifest they were verified with, and the part [from, to) opened. */
    private record Reference(ShardStorage storage, String manifestSha256, int from, int to) implements java.io.Serializable {
        private Object readResolve() {
            return OPENED.computeIfAbsent(this, r -> openPart(r.storage, r.manifestSha256, r.from, r.to));
        }
    }

    @Override
    public String toString() {
        return "PackedShards[" + dir.location() + ", " + size + " records of " + channels + "x" + height + "x" + width + " in "
                + shards.length + " shards]";
    }
}
