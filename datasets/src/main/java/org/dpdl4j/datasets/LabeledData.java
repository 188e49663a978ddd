package org.dpdl4j.datasets;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Labelled examples held in memory: images, sequences or plain feature vectors.
 *
 * <p>Features: a float matrix [n, d] of flattened examples, or an array of any rank [n, ...] in the shape the network
 * reads (images [n, c, h, w] in NCHW, sequences [n, f, T] in NCW). A flattened image is stored channel-major, then
 * row, then column (NCHW), the layout DL4J's {@code InputType.convolutionalFlat} expects, with its channels, height and
 * width as metadata, so that it can be handed to a network that reads [n, c, h, w] ({@link #features(int)}). Labels: a
 * float matrix [n, outputs] (one-hot for classification). Instances are immutable by convention: never write into the
 * arrays handed out.
 *
 * <p>Sequences may carry masks (DL4J's, one row per example): a feature mask [n, T] marks the time steps of each
 * example's input that exist (1) or are padding (0); a label mask [n, T] (or [n, 1] for one label per example) marks
 * which labels count in the example's loss. Labels of a sequence-to-sequence network are [n, outputs, T].
 *
 * @param features    [n, d] with d = c·h·w, or [n, c, h, w], or [n, f, T] (then c = f, h = 1, w = T)
 * @param labels      [n, outputs], or [n, outputs, T] for a label per time step
 * @param channels    c ≥ 1
 * @param height      h ≥ 1
 * @param width       w ≥ 1
 * @param featureMask [n, T] or null
 * @param labelMask   [n, T] or [n, 1], or null
 */
public record LabeledData(INDArray features, INDArray labels, int channels, int height, int width, INDArray featureMask,
                          INDArray labelMask) implements ExampleSource {

    /**
     * Data without masks.
     *
     * @param features [n, d] with d = c·h·w, or [n, c, h, w], or [n, f, T] (then c = f, h = 1, w = T)
     * @param labels   [n, outputs], or [n, outputs, T] for a label per time step
     * @param channels c ≥ 1
     * @param height   h ≥ 1
     * @param width    w ≥ 1
     * @throws IllegalArgumentException if the shapes disagree (as the canonical constructor)
     */
    public LabeledData(INDArray features, INDArray labels, int channels, int height, int width) {
        this(features, labels, channels, height, width, null, null);
    }

    /**
     * Checks that the arrays' shapes agree with each other and with c, h and w.
     *
     * @param features    [n, d] with d = c·h·w, or [n, c, h, w], or [n, f, T] (then c = f, h = 1, w = T)
     * @param labels      [n, outputs], or [n, outputs, T] for a label per time step
     * @param channels    c ≥ 1
     * @param height      h ≥ 1
     * @param width       w ≥ 1
     * @param featureMask [n, T] or null
     * @param labelMask   [n, T] or [n, 1], or null
     * @throws IllegalArgumentException if the shapes disagree: features not of rank 2 to 4, labels not of rank 2 or 3, a
     *                                  different number of rows n, a mask not of rank 2 with n rows, or c, h and w not
     *                                  matching the features' shape (c·h·w columns for [n, d])
     */
    public LabeledData {
        if (features.rank() < 2 || features.rank() > 4 || labels.rank() < 2 || labels.rank() > 3 || features.size(0) != labels.size(0)) {
            throw new IllegalArgumentException("features must be [n, d], [n, c, h, w] or [n, f, T] and labels [n, outputs] or "
                    + "[n, outputs, T], got " + Arrays.toString(features.shape()) + " and " + Arrays.toString(labels.shape()));
        }
        for (INDArray mask : new INDArray[]{featureMask, labelMask}) {
            if (mask != null && mask.rank() == 4) { // CnnSentenceDataSetIterator's [n, 1, T, 1]
                throw new IllegalArgumentException("a 4-D mask " + Arrays.toString(mask.shape()) + " (an image-shaped sentence's "
                        + "padding, as DL4J's CnnSentenceDataSetIterator gives it) is not supported; dropping it would change what "
                        + "pooling sees. Give sentences as sequences instead: features [n, vectorSize, T] with a [n, T] mask "
                        + "(Convolution1DLayer and GlobalPoolingLayer take its mask), or sentences of one length without a mask");
            }
            if (mask != null && (mask.rank() != 2 || mask.size(0) != features.size(0))) {
                throw new IllegalArgumentException("a mask must be [n, T] (one row per example), got " + Arrays.toString(mask.shape())
                        + " for " + features.size(0) + " examples");
            }
        }
        long[] expected = features.rank() == 4 ? new long[]{features.size(1), features.size(2), features.size(3)}
                : features.rank() == 3 ? new long[]{features.size(1), 1, features.size(2)} : null;
        if (expected != null && (channels != expected[0] || height != expected[1] || width != expected[2])) {
            throw new IllegalArgumentException("features " + Arrays.toString(features.shape()) + " do not have channels, height "
                    + "and width " + channels + ", " + height + ", " + width);
        }
        if (expected == null && features.size(1) != (long) channels * height * width) {
            throw new IllegalArgumentException("features have " + features.size(1) + " columns, expected c*h*w = "
                    + channels + "*" + height + "*" + width);
        }
    }

    /**
     * Data whose features already have the shape a network reads: [n, d] (vectors: c = h = 1, w = d), [n, f, T]
     * (sequences) or [n, c, h, w] (images).
     *
     * @param features [n, d], [n, f, T] or [n, c, h, w]
     * @param labels   [n, outputs], or [n, outputs, T] for a label per time step
     * @return the data, without masks, with c, h and w read from the features' shape
     * @throws IllegalArgumentException if the features are of another rank or the row counts differ
     */
    public static LabeledData of(INDArray features, INDArray labels) {
        return of(features, labels, null, null);
    }

    /**
     * {@link #of(INDArray, INDArray)} with masks.
     *
     * @param features    [n, d], [n, f, T] or [n, c, h, w]
     * @param labels      [n, outputs], or [n, outputs, T] for a label per time step
     * @param featureMask [n, T] or null
     * @param labelMask   [n, T] or [n, 1], or null
     * @return the data, with c, h and w read from the features' shape
     * @throws IllegalArgumentException if the features are of another rank, the row counts differ or a mask has another
     *                                  shape
     */
    public static LabeledData of(INDArray features, INDArray labels, INDArray featureMask, INDArray labelMask) {
        return switch (features.rank()) {
            case 2 -> new LabeledData(features, labels, 1, 1, (int) features.size(1), featureMask, labelMask);
            case 3 -> new LabeledData(features, labels, (int) features.size(1), 1, (int) features.size(2), featureMask, labelMask);
            case 4 -> new LabeledData(features, labels, (int) features.size(1), (int) features.size(2), (int) features.size(3),
                    featureMask, labelMask);
            default -> throw new IllegalArgumentException("features must be [n, d], [n, f, T] or [n, c, h, w], got "
                    + Arrays.toString(features.shape()));
        };
    }

    /**
     * The features as an array of the given rank: 2 → [n, c·h·w] (flattened in C order), 4 → [n, c, h, w], 3 → [n, f, T]
     * (sequence data, or flattened data stored as [n, f·T] with h = 1). Views where the layout allows.
     *
     * @param rank 2, 3 or 4
     * @return the features in that rank (the stored array itself when it already has that rank)
     * @throws IllegalArgumentException if the data cannot be read in that rank (e.g. images as sequences)
     */
    public INDArray features(int rank) {
        return shaped(features, rank, channels, height, width);
    }

    /**
     * {@link #features(int)} for an array of examples with this data's layout (e.g. augmented copies of its rows).
     *
     * @param examples [m, c·h·w], [m, c, h, w] or [m, c, w] (h = 1)
     * @param rank     2, 3 or 4
     * @return the examples in that rank (the array itself when it already has that rank)
     * @throws IllegalArgumentException if the examples cannot be read in that rank
     */
    public INDArray features(INDArray examples, int rank) {
        return shaped(examples, rank, channels, height, width);
    }

    private static INDArray shaped(INDArray features, int rank, int channels, int height, int width) {
        if (rank == features.rank()) {
            return features;
        }
        INDArray c = features.ordering() == 'c' ? features : features.dup('c');
        long n = features.size(0);
        if (rank == 2) {
            return c.reshape('c', n, (long) channels * height * width);
        }
        if (rank == 4) {
            return c.reshape('c', n, channels, height, width);
        }
        if (rank == 3 && height == 1) {
            return c.reshape('c', n, channels, width);
        }
        throw new IllegalArgumentException("data of shape " + Arrays.toString(features.shape()) + " (channels " + channels
                + ", height " + height + ", width " + width + ") cannot be read as an array of rank " + rank
                + (rank == 3 ? " (a sequence [n, f, T] needs height 1)" : ""));
    }

    /**
     * The shape of one example as stored: [d] for flattened data, else the features' shape without n.
     *
     * @return a new array of the features' sizes after the first
     */
    public long[] exampleShape() {
        return Arrays.copyOfRange(features.shape(), 1, features.rank());
    }

    /**
     * Rows of an array of any rank, copied, in the given order, with the rank kept ({@code Nd4j.pullRows} alone keeps it
     * for matrices only: on [n, c, h, w] it would gather [c] vectors).
     *
     * @param a       [n, ...]
     * @param indices rows in [0, n)
     * @return [indices.length, ...]
     */
    public static INDArray gatherRows(INDArray a, int[] indices) {
        if (a.rank() <= 2) {
            return indices.length == 0 ? Nd4j.create(a.dataType(), 0, a.rank() == 2 ? a.size(1) : 1)
                    : Nd4j.pullRows(a.rank() == 2 ? a : a.reshape(a.length(), 1), 1, indices);
        }
        long[] shape = a.shape().clone();
        shape[0] = indices.length;
        if (indices.length == 0) {
            return Nd4j.create(a.dataType(), shape);
        }
        INDArray c = a.ordering() == 'c' && a.elementWiseStride() == 1 ? a : a.dup('c');
        return Nd4j.pullRows(c.reshape('c', a.size(0), a.length() / a.size(0)), 1, indices).reshape('c', shape);
    }

    /**
     * Builds data from unsigned-byte pixels scaled to [0, 1] (pixel / 255) and integer labels.
     *
     * @param pixels   n·c·h·w bytes, NCHW per image, each read as unsigned (0 to 255)
     * @param labels   n labels in [0, classes)
     * @param classes  number of classes (the width of the one-hot labels), ≥ 2
     * @param channels c ≥ 1
     * @param height   h ≥ 1, in pixels
     * @param width    w ≥ 1, in pixels
     * @return float32 data: features [n, c·h·w] in [0, 1], one-hot labels [n, classes]
     * @throws IllegalArgumentException on inconsistent sizes or a label out of range
     */
    public static LabeledData fromBytes(byte[] pixels, int[] labels, int classes, int channels, int height, int width) {
        int n = labels.length;
        int d = channels * height * width;
        if ((long) n * d != pixels.length) {
            throw new IllegalArgumentException(pixels.length + " pixel bytes do not hold " + n + " images of " + d);
        }
        float[] f = new float[pixels.length];
        for (int i = 0; i < f.length; i++) {
            f[i] = (pixels[i] & 0xFF) / 255f;
        }
        float[] y = new float[n * classes];
        for (int i = 0; i < n; i++) {
            if (labels[i] < 0 || labels[i] >= classes) {
                throw new IllegalArgumentException("label " + labels[i] + " of example " + i + " is outside [0, " + classes + ")");
            }
            y[i * classes + labels[i]] = 1f;
        }
        return new LabeledData(Nd4j.create(f, new long[]{n, d}, 'c'), Nd4j.create(y, new long[]{n, classes}, 'c'),
                channels, height, width);
    }

    /**
     * Number of examples n.
     *
     * @return n, the features' first size, ≥ 0
     */
    public int size() {
        return (int) features.size(0);
    }

    /**
     * Number of classes.
     *
     * @return the labels' second size (outputs)
     */
    public int numClasses() {
        return (int) labels.size(1);
    }

    /**
     * The examples at the given row indices (copied), in that order, in the same shape.
     *
     * @param indices row indices in [0, n), in any order; may be empty
     * @return {@code indices.length} examples with their masks, if any
     */
    public LabeledData rows(int[] indices) {
        return new LabeledData(gatherRows(features, indices), gatherRows(labels, indices), channels, height, width,
                featureMask == null ? null : gatherRows(featureMask, indices), labelMask == null ? null : gatherRows(labelMask, indices));
    }

    /**
     * Itself: data in memory are their own cache.
     *
     * @param maxBytes the bound, ≥ 0 bytes (checked, otherwise unused)
     * @return this data
     * @throws IllegalArgumentException if maxBytes &lt; 0
     */
    @Override
    public LabeledData withCache(long maxBytes) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("a cache's bound must be >= 0 bytes, got " + maxBytes);
        }
        return this;
    }

    /**
     * The rows at the given indices, copied ({@link #rows}), in the order given.
     *
     * @param indices row indices in [0, n), in any order (not checked for repeats here)
     * @return the copied examples
     */
    @Override
    public LabeledData subset(int[] indices) {
        return rows(indices);
    }

    /**
     * These examples followed by {@code more}, copied into one array ({@code more}'s cast to this data's type and read
     * in its layout).
     *
     * @param more examples with the same number of features per example and of classes, without masks
     * @return n + more.size() examples, without masks
     * @throws IllegalArgumentException if the two differ in per-example size or classes, or either has masks
     */
    @Override
    public LabeledData followedBy(LabeledData more) {
        if (more.numClasses() != numClasses() || more.features(2).size(1) != features(2).size(1) || hasMasks() || more.hasMasks()) {
            throw new IllegalArgumentException("appended examples must have this data's " + features(2).size(1) + " features and "
                    + numClasses() + " classes and no masks, got " + more.features(2).size(1) + " and " + more.numClasses());
        }
        return new LabeledData(Nd4j.vstack(features, more.features(features.rank()).castTo(features.dataType())),
                Nd4j.vstack(labels, more.labels().castTo(labels.dataType())), channels, height, width);
    }

    /**
     * The examples at the given indices ({@link #rows}): in memory, any order is read as given.
     *
     * @param sortedIndices row indices in [0, n); here they need not be ascending (not checked)
     * @return the copied examples, in the order given
     */
    @Override
    public LabeledData read(int[] sortedIndices) {
        return rows(sortedIndices);
    }

    /** Nothing to release: the arrays stay usable. */
    @Override
    public void close() {
    }

    /**
     * The first {@code count} examples of a seeded random permutation (a uniform random subset), in the permutation's
     * order ({@link Splits#randomSubset}).
     *
     * @param count the number of examples to take, in [0, n]
     * @param seed  the seed of the permutation; any value
     * @return {@code count} distinct examples, copied
     * @throws IllegalArgumentException if count is out of range
     */
    public LabeledData randomSubset(int count, long seed) {
        if (count < 0 || count > size()) {
            throw new IllegalArgumentException("count must be in [0, " + size() + "], got " + count);
        }
        return rows(Splits.randomSubset(size(), count, seed));
    }

    /**
     * A train/validation pair.
     *
     * @param train      the examples to train on
     * @param validation the held-out examples
     */
    public record Split(LabeledData train, LabeledData validation) {
    }

    /**
     * A split for private data: each example goes to validation with probability
     * {@code validationFraction}, decided by a hash of the seed and the example's own pixels and label
     * alone. Adding or removing one example therefore changes only that example's part, which is what
     * a privacy analysis of "train on one part, score on the other" assumes (a seeded permutation of
     * all n examples would move many others). Identical examples land in the same part. The sizes are
     * random (binomial); order is kept. The parts of {@link Splits#byRecord}.
     *
     * @param validationFraction the probability that an example goes to validation, in [0, 1)
     * @param seed               the key of the hash; any value
     * @return the two parts (copies)
     * @throws IllegalArgumentException if the fraction is out of range
     */
    public Split splitByRecord(double validationFraction, long seed) {
        int[][] parts = Splits.byRecord(this, validationFraction, seed);
        return new Split(rows(parts[0]), rows(parts[1]));
    }

    /**
     * k disjoint parts for private data, each example assigned by a keyed hash of its own pixels and
     * label (as {@link #splitByRecord}): adding or removing one example changes exactly one part.
     * Part sizes are random (multinomial); order is kept. The parts of {@link Splits#partitionByRecord}.
     *
     * @param k    number of parts, ≥ 1
     * @param seed the key of the hash; any value
     * @return k parts (copies, some may be empty)
     * @throws IllegalArgumentException if k &lt; 1
     */
    public List<LabeledData> partitionByRecord(int k, long seed) {
        List<LabeledData> parts = new java.util.ArrayList<>();
        for (int[] part : Splits.partitionByRecord(this, k, seed)) {
            parts.add(rows(part));
        }
        return parts;
    }

    /**
     * A Poisson subsample: each example joins {@code subset} independently with probability
     * {@code rate}, and the others form {@code rest} (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Section 3.1, step 1).
     * Order is kept. The parts of {@link Splits#poisson}.
     *
     * @param rate   inclusion probability in [0, 1]
     * @param random the coin flips (a {@link java.security.SecureRandom} for a private deployment)
     * @return the subset and the rest (copies)
     * @throws IllegalArgumentException if the rate is out of range
     */
    public Partition poissonSubset(double rate, java.util.random.RandomGenerator random) {
        int[][] parts = Splits.poisson(size(), rate, random);
        return new Partition(rows(parts[0]), rows(parts[1]));
    }

    /**
     * A subset and the rest of the data.
     *
     * @param subset the examples drawn into the subset
     * @param rest   the other examples
     */
    public record Partition(LabeledData subset, LabeledData rest) {
    }

    /**
     * The integer class of every example (argmax of the one-hot row).
     *
     * @return n class indices in [0, numClasses)
     */
    public int[] classIndices() {
        return labels.argMax(1).toIntVector();
    }

    /**
     * Features reshaped to [n, c, h, w] (a view where the layout allows).
     *
     * @return {@link #features(int) features(4)}
     */
    public INDArray featuresNchw() {
        return features(4);
    }

    /**
     * As a DL4J {@link DataSet} with the features as stored, and the masks (views, not copies).
     *
     * @return a data set over this data's arrays
     */
    public DataSet toDataSet() {
        return new DataSet(features, labels, featureMask, labelMask);
    }

    /**
     * The same data converted to another floating-point type (float32 or float64).
     *
     * @param type the target type, {@code DataType.FLOAT} or {@code DataType.DOUBLE}
     * @return the converted data (features, labels and masks), with the same c, h and w
     */
    public LabeledData castTo(DataType type) {
        return new LabeledData(features.castTo(type), labels.castTo(type), channels, height, width,
                featureMask == null ? null : featureMask.castTo(type), labelMask == null ? null : labelMask.castTo(type));
    }

    /**
     * Whether the data carries a feature or a label mask.
     *
     * @return true if either mask is non-null
     */
    public boolean hasMasks() {
        return featureMask != null || labelMask != null;
    }

    static int[] permutation(int n, long seed) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        SplittableRandom rng = new SplittableRandom(seed);
        for (int i = n - 1; i > 0; i--) {
            int j = rng.nextInt(i + 1);
            int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return p;
    }
}
