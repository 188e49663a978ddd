package org.dpdl4j.datasets;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * The index sets of the splits that tuning and auditing make of private data: train/validation by record, k parts by
 * record, a Poisson subset and its rest, a uniform random subset. {@link ExampleSource#subset} takes each as it is, and
 * the same data and seed give the same parts whether the data are in memory or read by index.
 */
public final class Splits {
    /** Examples read at once when a pass over the data hashes them. */
    private static final int CHUNK = 4096;

    private Splits() {
    }

    /**
     * Train and validation by record: each example goes to validation with probability {@code validationFraction},
     * decided by a keyed hash of the seed, the example's own features and its label alone. Adding or removing one example
     * therefore changes only that example's part, which is what a privacy analysis of "train on one part, score on the
     * other" assumes (a seeded permutation of all n examples would move many others). Identical examples land in the same
     * part; the sizes are random (binomial). Reads the data once.
     *
     * @param data               the private data, n examples (read once, in chunks of 4096 examples)
     * @param validationFraction the probability that an example goes to validation, in [0, 1)
     * @param seed               the key of the hash; any value (the same seed and data give the same split)
     * @return {training indices, validation indices}, each ascending, disjoint and together covering [0, n)
     * @throws IllegalArgumentException if the fraction is out of range
     */
    public static int[][] byRecord(ExampleSource data, double validationFraction, long seed) {
        if (!(validationFraction >= 0 && validationFraction < 1)) {
            throw new IllegalArgumentException("validationFraction must be in [0, 1), got " + validationFraction);
        }
        double[] u = recordCoins(data, seed);
        int[][] parts = new int[2][u.length];
        int[] count = new int[2];
        for (int i = 0; i < u.length; i++) {
            int p = u[i] < validationFraction ? 1 : 0;
            parts[p][count[p]++] = i;
        }
        return new int[][]{Arrays.copyOf(parts[0], count[0]), Arrays.copyOf(parts[1], count[1])};
    }

    /**
     * Train and validation by each record's own key (an image file's SHA-256, say): a record goes to validation with
     * probability {@code validationFraction}, decided by a keyed hash of the seed and its key alone, as {@link #byRecord}
     * decides by its features and label. Adding or removing one record therefore moves no other record; equal keys land in
     * the same part; the sizes are random (binomial). Reads no data.
     *
     * @param keys               one key per record, n of them, each non-null (the records' identities, in the data's order)
     * @param validationFraction the probability that a record goes to validation, in [0, 1)
     * @param seed               the key of the hash; any value (the same seed and keys give the same split)
     * @return {training indices, validation indices}, each ascending, disjoint and together covering [0, n)
     * @throws IllegalArgumentException if the fraction is out of range
     * @throws NullPointerException     if a key is null
     */
    public static int[][] byKey(java.util.List<String> keys, double validationFraction, long seed) {
        if (!(validationFraction >= 0 && validationFraction < 1)) {
            throw new IllegalArgumentException("validationFraction must be in [0, 1), got " + validationFraction);
        }
        int[][] parts = new int[2][keys.size()];
        int[] count = new int[2];
        for (int i = 0; i < keys.size(); i++) {
            long h = seed ^ 0x2545F4914F6CDD1DL;
            for (byte b : keys.get(i).getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
                h = (h ^ b) * 0x9E3779B97F4A7C15L;
            }
            int p = new SplittableRandom(h).nextDouble() < validationFraction ? 1 : 0;
            parts[p][count[p]++] = i;
        }
        return new int[][]{Arrays.copyOf(parts[0], count[0]), Arrays.copyOf(parts[1], count[1])};
    }

    /**
     * k disjoint parts by record, each example assigned by a keyed hash of its own features and label (as
     * {@link #byRecord}): adding or removing one example changes exactly one part. Part sizes are random (multinomial).
     * Reads the data once.
     *
     * @param data the private data, n examples (read once, in chunks of 4096 examples)
     * @param k    number of parts, ≥ 1
     * @param seed the key of the hash; any value (the same seed and data give the same parts)
     * @return k disjoint index sets (some may be empty), each ascending, together covering [0, n)
     * @throws IllegalArgumentException if k &lt; 1
     */
    public static int[][] partitionByRecord(ExampleSource data, int k, long seed) {
        if (k < 1) {
            throw new IllegalArgumentException("number of partitions k must be >= 1, got " + k);
        }
        double[] u = recordCoins(data, seed ^ 0x5851F42D4C957F2DL);
        int[][] idx = new int[k][u.length];
        int[] count = new int[k];
        for (int i = 0; i < u.length; i++) {
            int part = Math.min(k - 1, (int) (u[i] * k));
            idx[part][count[part]++] = i;
        }
        int[][] parts = new int[k][];
        for (int p = 0; p < k; p++) {
            parts[p] = Arrays.copyOf(idx[p], count[p]);
        }
        return parts;
    }

    /**
     * A Poisson subsample of n examples: each joins the subset independently with probability {@code rate} (one
     * {@code random.nextDouble()} per example, in order), and the others form the rest (Koskela &amp; Kulkarni 2023,
     * arXiv:2301.11989, Section 3.1, step 1). Reads no data.
     *
     * @param n      the number of examples, ≥ 0
     * @param rate   inclusion probability in [0, 1]
     * @param random the coin flips (a {@link java.security.SecureRandom} for a private deployment)
     * @return {subset indices, rest indices}, each ascending
     * @throws IllegalArgumentException if the rate is out of range or n &lt; 0
     */
    public static int[][] poisson(int n, double rate, RandomGenerator random) {
        if (!(rate >= 0 && rate <= 1)) {
            throw new IllegalArgumentException("Poisson subsampling rate must be in [0, 1], got " + rate);
        }
        if (n < 0) {
            throw new IllegalArgumentException("n must be >= 0, got " + n);
        }
        int[][] parts = new int[2][n];
        int[] count = new int[2];
        for (int i = 0; i < n; i++) {
            int p = random.nextDouble() < rate ? 0 : 1;
            parts[p][count[p]++] = i;
        }
        return new int[][]{Arrays.copyOf(parts[0], count[0]), Arrays.copyOf(parts[1], count[1])};
    }

    /**
     * A uniform random subset of n examples: the first {@code count} of a seeded random permutation, in that order (as
     * {@link LabeledData#randomSubset} takes them). Reads no data.
     *
     * @param n     the number of examples, ≥ 0
     * @param count the size of the subset, in [0, n]
     * @param seed  the seed of the permutation; any value
     * @return {@code count} distinct indices in [0, n), in the permutation's order (not ascending)
     * @throws IllegalArgumentException if count is out of range
     */
    public static int[] randomSubset(int n, int count, long seed) {
        if (count < 0 || count > n) {
            throw new IllegalArgumentException("count must be in [0, " + n + "], got " + count);
        }
        return Arrays.copyOf(LabeledData.permutation(n, seed), count);
    }

    /**
     * Every example's class index, read in chunks (a source that is not in memory is never read whole).
     *
     * @param data the examples, n of them (read in chunks of 4096 examples unless already in memory)
     * @return n class indices, in [0, numClasses)
     */
    public static int[] classIndices(ExampleSource data) {
        if (data instanceof LabeledData inMemory) {
            return inMemory.classIndices();
        }
        int n = data.size();
        int[] classes = new int[n];
        for (int from = 0; from < n; from += CHUNK) {
            int[] chunk = data.read(java.util.stream.IntStream.range(from, Math.min(n, from + CHUNK)).toArray()).classIndices();
            System.arraycopy(chunk, 0, classes, from, chunk.length);
        }
        return classes;
    }

    /** One uniform number per example from a hash of the seed, the example's features (as float32) and its label. */
    static double[] recordCoins(ExampleSource data, long seed) {
        int n = data.size();
        double[] u = new double[n];
        for (int from = 0; from < n; from += CHUNK) {
            int[] idx = java.util.stream.IntStream.range(from, Math.min(n, from + CHUNK)).toArray();
            LabeledData chunk = data.read(idx);
            int[] classes = chunk.classIndices();
            float[][] rows = chunk.features(2).toFloatMatrix();
            for (int r = 0; r < idx.length; r++) {
                long h = seed ^ 0x632BE59BD9B4E019L;
                for (float f : rows[r]) {
                    h = (h ^ Float.floatToIntBits(f)) * 0x9E3779B97F4A7C15L;
                }
                h = (h ^ classes[r]) * 0x9E3779B97F4A7C15L;
                u[from + r] = new SplittableRandom(h).nextDouble();
            }
        }
        return u;
    }
}
