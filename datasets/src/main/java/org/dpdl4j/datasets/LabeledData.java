package org.dpdl4j.datasets;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Labelled images held in memory.
 *
 * <p>Features: a float32 matrix of shape [n, channels·height·width], each row an image flattened
 * in NCHW (channel-major, then row, then column) order — the layout DL4J's
 * {@code InputType.convolutionalFlat} expects. Labels: a float32 one-hot matrix [n, classes].
 * Instances are immutable by convention: never write into the arrays handed out.
 *
 * @param features    [n, c·h·w] float32
 * @param labels      [n, classes] one-hot float32
 * @param channels    c ≥ 1
 * @param height      h ≥ 1
 * @param width       w ≥ 1
 */
public record LabeledData(INDArray features, INDArray labels, int channels, int height, int width) {

    /** @throws IllegalArgumentException if the shapes disagree */
    public LabeledData {
        if (features.rank() != 2 || labels.rank() != 2 || features.rows() != labels.rows()) {
            throw new IllegalArgumentException("features must be [n, c*h*w] and labels [n, classes], got "
                    + Arrays.toString(features.shape()) + " and " + Arrays.toString(labels.shape()));
        }
        if (features.columns() != (long) channels * height * width) {
            throw new IllegalArgumentException("features have " + features.columns() + " columns, expected c*h*w = "
                    + channels + "*" + height + "*" + width);
        }
    }

    /**
     * Builds data from unsigned-byte pixels scaled to [0, 1] (pixel / 255) and integer labels.
     *
     * @param pixels   n·c·h·w bytes, NCHW per image
     * @param labels   n labels in [0, classes)
     * @param classes  number of classes ≥ 2
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

    /** Number of examples n. */
    public int size() {
        return (int) features.rows();
    }

    /** Number of classes. */
    public int numClasses() {
        return (int) labels.columns();
    }

    /** The examples at the given row indices (copied), in that order. */
    public LabeledData rows(int[] indices) {
        if (indices.length == 0) {
            return new LabeledData(Nd4j.create(features.dataType(), 0, features.columns()),
                    Nd4j.create(labels.dataType(), 0, labels.columns()), channels, height, width);
        }
        return new LabeledData(Nd4j.pullRows(features, 1, indices), Nd4j.pullRows(labels, 1, indices),
                channels, height, width);
    }

    /** The first {@code count} examples of a seeded random permutation (a uniform random subset). */
    public LabeledData randomSubset(int count, long seed) {
        if (count < 0 || count > size()) {
            throw new IllegalArgumentException("count must be in [0, " + size() + "], got " + count);
        }
        return rows(Arrays.copyOf(permutation(size(), seed), count));
    }

    /**
     * A seeded split into (train, validation): the validation part holds round(fraction·n) examples
     * drawn uniformly at random without replacement.
     *
     * @param validationFraction in [0, 1)
     * @throws IllegalArgumentException if the fraction is out of range
     */
    public Split split(double validationFraction, long seed) {
        if (!(validationFraction >= 0 && validationFraction < 1)) {
            throw new IllegalArgumentException("validationFraction must be in [0, 1), got " + validationFraction);
        }
        int[] perm = permutation(size(), seed);
        int v = (int) Math.round(validationFraction * size());
        int[] valIdx = Arrays.copyOfRange(perm, 0, v);
        int[] trainIdx = Arrays.copyOfRange(perm, v, perm.length);
        Arrays.sort(valIdx);
        Arrays.sort(trainIdx);
        return new Split(rows(trainIdx), rows(valIdx));
    }

    /** A train/validation pair. */
    public record Split(LabeledData train, LabeledData validation) {
    }

    /**
     * A split for private data: each example goes to validation with probability
     * {@code validationFraction}, decided by a hash of the seed and the example's own pixels and label
     * alone. Adding or removing one example therefore changes only that example's part, which is what
     * a privacy analysis of "train on one part, score on the other" assumes (a seeded permutation of
     * all n examples would move many others). Identical examples land in the same part. The sizes are
     * random (binomial); order is kept.
     *
     * @param validationFraction in [0, 1)
     * @throws IllegalArgumentException if the fraction is out of range
     */
    public Split splitByRecord(double validationFraction, long seed) {
        if (!(validationFraction >= 0 && validationFraction < 1)) {
            throw new IllegalArgumentException("validationFraction must be in [0, 1), got " + validationFraction);
        }
        double[] u = recordCoins(seed);
        int[] val = new int[u.length];
        int[] train = new int[u.length];
        int nv = 0;
        int nt = 0;
        for (int i = 0; i < u.length; i++) {
            if (u[i] < validationFraction) {
                val[nv++] = i;
            } else {
                train[nt++] = i;
            }
        }
        return new Split(rows(Arrays.copyOf(train, nt)), rows(Arrays.copyOf(val, nv)));
    }

    /**
     * k disjoint parts for private data, each example assigned by a keyed hash of its own pixels and
     * label (as {@link #splitByRecord}): adding or removing one example changes exactly one part.
     * Part sizes are random (multinomial); order is kept.
     *
     * @param k number of parts, ≥ 1
     * @throws IllegalArgumentException if k &lt; 1
     */
    public List<LabeledData> partitionByRecord(int k, long seed) {
        if (k < 1) {
            throw new IllegalArgumentException("number of partitions k must be >= 1, got " + k);
        }
        double[] u = recordCoins(seed ^ 0x5851F42D4C957F2DL);
        int[][] idx = new int[k][u.length];
        int[] count = new int[k];
        for (int i = 0; i < u.length; i++) {
            int part = Math.min(k - 1, (int) (u[i] * k));
            idx[part][count[part]++] = i;
        }
        List<LabeledData> parts = new java.util.ArrayList<>();
        for (int p = 0; p < k; p++) {
            parts.add(rows(Arrays.copyOf(idx[p], count[p])));
        }
        return parts;
    }

    /** One uniform number per example from a hash of the seed, the example's pixels and its label. */
    private double[] recordCoins(long seed) {
        int n = size();
        int[] classes = classIndices();
        double[] u = new double[n];
        for (int i = 0; i < n; i++) {
            long h = seed ^ 0x632BE59BD9B4E019L;
            for (float f : features.getRow(i).toFloatVector()) {
                h = (h ^ Float.floatToIntBits(f)) * 0x9E3779B97F4A7C15L;
            }
            h = (h ^ classes[i]) * 0x9E3779B97F4A7C15L;
            u[i] = new java.util.SplittableRandom(h).nextDouble();
        }
        return u;
    }

    /**
     * A Poisson subsample: each example joins {@code subset} independently with probability
     * {@code rate}, and the others form {@code rest} (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Section 3.1, step 1). Order is kept.
     *
     * @param rate   inclusion probability in [0, 1]
     * @param random the coin flips (a {@link java.security.SecureRandom} for a private deployment)
     * @throws IllegalArgumentException if the rate is out of range
     */
    public Partition poissonSubset(double rate, java.util.random.RandomGenerator random) {
        if (!(rate >= 0 && rate <= 1)) {
            throw new IllegalArgumentException("Poisson subsampling rate must be in [0, 1], got " + rate);
        }
        int[] in = new int[size()];
        int[] out = new int[size()];
        int nIn = 0;
        int nOut = 0;
        for (int i = 0; i < size(); i++) {
            if (random.nextDouble() < rate) {
                in[nIn++] = i;
            } else {
                out[nOut++] = i;
            }
        }
        return new Partition(rows(Arrays.copyOf(in, nIn)), rows(Arrays.copyOf(out, nOut)));
    }

    /** A subset and the rest of the data. */
    public record Partition(LabeledData subset, LabeledData rest) {
    }

    /** The integer class of every example (argmax of the one-hot row). */
    public int[] classIndices() {
        return labels.argMax(1).toIntVector();
    }

    /** Features reshaped to [n, c, h, w] (a view). */
    public INDArray featuresNchw() {
        return features.reshape('c', size(), channels, height, width);
    }

    /** As a DL4J {@link DataSet} with flat features [n, c·h·w] (views, not copies). */
    public DataSet toDataSet() {
        return new DataSet(features, labels);
    }

    /** The same data converted to another floating-point type (float32 or float64). */
    public LabeledData castTo(DataType type) {
        return new LabeledData(features.castTo(type), labels.castTo(type), channels, height, width);
    }

    private static int[] permutation(int n, long seed) {
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
