package org.dpdl4j.dpsgd;

import java.util.Arrays;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.LabeledData;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.INDArrayIndex;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * The check that a kernel the engine cannot vouch for (DL4J's fallback, a graph vertex run by DL4J, a user's kernel:
 * {@link LayerKernel#mayMixExamples}) gives each example an output of its own: DP-SGD's per-example gradients, and the
 * bound C on what one example changes in a step's clipped sum, hold only through layers whose output for an example is
 * a function of that example alone. A layer that subtracts the batch's mean, say, moves every example's output when one
 * example is removed, so that removing one example moves the clipped sum by more than C.
 *
 * <p>On the inputs a step receives in a forward pass of B ≥ 2 examples, the step is run on the whole batch (twice: its
 * output must not be random, or it could not be checked), with B ≥ 3 on example 0 beside each of two other partners,
 * and on each example alone (the first {@value #MAX_ALONE}); example i's rows of every run must equal its rows of the batch's (relative difference at
 * most 1e-9 in float64, 1e-4 otherwise). The engine runs it at plan time on a synthetic batch
 * ({@link #syntheticBatch}) and again on the first real batch of ≥ 2 examples it computes.
 */
final class MixingCheck {
    /** Examples of a synthetic batch: each alone, and example 0 with two different partners. */
    static final int SYNTHETIC_EXAMPLES = 4;
    /** At most this many examples of a real batch are run alone (each costs one forward pass of the step). */
    static final int MAX_ALONE = 64;

    private MixingCheck() {
    }

    /** A step found to give an example an output that depends on other examples (or that cannot be checked). */
    static final class Mixed extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        Mixed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Checks that a step's output for each example depends on that example alone.
     *
     * @param k        the step's kernel, in the pass's mode ({@code training}, {@code examples} set by the engine)
     * @param x        the step's inputs for the pass, each with {@code k.examples} examples (a row each, or a block of
     *                 rows each: the T rows of a sequence unfolded for a time-distributed layer)
     * @param mask     the step's feature mask [B, T], or null
     * @param where    the step's position and name, for the refusal
     * @throws IllegalArgumentException if its output is random, not a whole number of rows per example, fails on an example
     *                                  alone, or differs for an example alone or with other partners from its rows of
     *                                  the batch's output
     */
    static void requireUnmixed(LayerKernel k, INDArray[] x, INDArray mask, String where) {
        long b = k.examples;
        if (b < 2) {
            return;
        }
        boolean training = k.training;
        try {
            INDArray batch = run(k, x, mask, null, where);
            long outRows = rowsPerExample(batch, b, where);
            if (!same(batch, run(k, x, mask, null, where), b, outRows)) {
                k.training = false; // random in training (its own dropout, noise): its computation is checked without the draws
                batch = run(k, x, mask, null, where);
                if (!same(batch, run(k, x, mask, null, where), b, outRows)) {
                    throw new Mixed(where + ": its output is random even outside training (two passes over the same batch "
                            + "differ), so the DP-SGD engine cannot check that it keeps the examples of a batch apart; a layer of "
                            + "unknown kind must compute each example's output from that example alone", null);
                }
            }
            for (int partner = 1; partner < 3 && b >= 3; partner++) { // first: a layer that fails on one row alone still shows its mixing
                require(k, x, mask, new int[]{0, partner}, batch, outRows, where);
            }
            for (int i = 0; i < Math.min(b, MAX_ALONE); i++) {
                require(k, x, mask, new int[]{i}, batch, outRows, where);
            }
        } finally {
            k.training = training;
        }
    }

    /** Runs examples {@code examples} alone and compares their rows with the batch's. */
    private static void require(LayerKernel k, INDArray[] x, INDArray mask, int[] examples, INDArray batch, long outRows,
                                String where) {
        long b = k.examples;
        INDArray part;
        try {
            part = run(k, x, mask, examples, where);
        } finally {
            k.examples = b;
        }
        for (int j = 0; j < examples.length; j++) {
            INDArray alone = rows(part, j, outRows);
            INDArray inBatch = rows(batch, examples[j], outRows);
            double scale = Math.max(1e-30, finiteMax(inBatch));
            double diff = difference(alone.reshape(inBatch.shape()).castTo(inBatch.dataType()), inBatch);
            double tolerance = inBatch.dataType() == DataType.DOUBLE ? 1e-9 : 1e-4;
            if (!(diff <= tolerance * scale)) {
                String with = examples.length == 1 ? "alone" : "with example " + examples[1 - j] + " alone beside it";
                throw new Mixed(where + ": its output for one example depends on the other examples of the "
                        + "batch (example " + examples[j] + " " + with + " differs from its rows of the batch's output by "
                        + String.format("%.3g", diff / scale) + ", relative); a layer that mixes examples (a batch "
                        + "statistic, such as a mean over the batch) cannot be trained through with DP-SGD: one example would "
                        + "move every example's gradient, beyond the clipping norm C", null);
            }
        }
    }

    /**
     * The step's output on the given examples of its inputs (all when {@code examples} is null).
     *
     * @throws IllegalArgumentException if the step fails on them
     */
    private static INDArray run(LayerKernel k, INDArray[] x, INDArray mask, int[] examples, String where) {
        long b = k.examples;
        INDArray[] in = new INDArray[x.length];
        for (int j = 0; j < x.length; j++) {
            in[j] = examples == null ? x[j].dup() : blocks(x[j], examples, rowsPerExample(x[j], b, where));
        }
        k.mask = mask == null || examples == null ? mask : blocks(mask, examples, rowsPerExample(mask, b, where));
        k.examples = examples == null ? b : examples.length;
        try {
            INDArray out = k.forward(in, false);
            return out.dup('c');
        } catch (RuntimeException e) {
            if (examples == null) {
                throw e;
            }
            throw new Mixed(where + ": its forward pass fails on " + (examples.length == 1 ? "one example alone"
                    : examples.length + " examples") + " (" + e.getClass().getSimpleName() + ": " + e.getMessage() + "): Poisson "
                    + "sampling draws such batches, and a layer whose output for an example cannot be computed from that "
                    + "example alone cannot be trained through with DP-SGD", e);
        } finally {
            k.mask = mask;
            k.examples = b;
        }
    }

    /** Rows per example of an array with a whole number of rows per example. */
    private static long rowsPerExample(INDArray a, long examples, String where) {
        if (a.rank() == 0 || a.size(0) % examples != 0 || a.size(0) == 0) {
            throw new Mixed(where + ": its output has " + (a.rank() == 0 ? "no rows" : a.size(0) + " rows")
                    + " for " + examples + " examples, not a whole number per example: the DP-SGD engine cannot tell the "
                    + "examples' outputs apart", null);
        }
        return a.size(0) / examples;
    }

    /** The rows of the given examples, r rows each, in that order. */
    private static INDArray blocks(INDArray a, int[] examples, long r) {
        INDArray[] parts = new INDArray[examples.length];
        for (int j = 0; j < examples.length; j++) {
            parts[j] = rows(a, examples[j], r);
        }
        return parts.length == 1 ? parts[0] : Nd4j.concat(0, parts);
    }

    /** Example i's r rows of a. */
    private static INDArray rows(INDArray a, long i, long r) {
        INDArrayIndex[] index = NDArrayIndex.allFor(a);
        index[0] = NDArrayIndex.interval(i * r, (i + 1) * r);
        return a.get(index).dup('c');
    }

    /** Whether two outputs of b examples (r rows each) are equal, NaN matching NaN, compared one example at a time. */
    private static boolean same(INDArray x, INDArray y, long b, long r) {
        if (!Arrays.equals(x.shape(), y.shape())) {
            return false;
        }
        for (long i = 0; i < b; i++) {
            if (difference(rows(x, i, r), rows(y, i, r)) != 0) {
                return false;
            }
        }
        return true;
    }

    /** The largest |a − b| over the elements, where equal values (infinities, NaN with NaN) differ by 0. */
    static double difference(INDArray a, INDArray b) {
        double[] x = a.castTo(DataType.DOUBLE).dup('c').data().asDouble();
        double[] y = b.castTo(DataType.DOUBLE).dup('c').data().asDouble();
        if (x.length != y.length) {
            return Double.POSITIVE_INFINITY;
        }
        double max = 0;
        for (int i = 0; i < x.length; i++) {
            if (Double.compare(x[i], y[i]) != 0 && !(x[i] == y[i])) { // 0.0 == -0.0; NaN only matches NaN
                max = Math.max(max, Double.isNaN(x[i] - y[i]) ? Double.POSITIVE_INFINITY : Math.abs(x[i] - y[i]));
            }
        }
        return max;
    }

    static double finiteMax(INDArray a) {
        double max = 0;
        for (double v : a.castTo(DataType.DOUBLE).dup('c').data().asDouble()) {
            if (Double.isFinite(v)) {
                max = Math.max(max, Math.abs(v));
            }
        }
        return max;
    }

    /**
     * A batch in the data's shape for the check before a run: the data's first (up to 3) examples, then
     * {@value #SYNTHETIC_EXAMPLES} synthetic ones whose every value is drawn (from a fixed seed) from the values that
     * those first examples hold together with 0 and 1, so that the values are of the data's kind (indices of an
     * embedding stay indices of it, pixels pixels); with a feature mask, the synthetic examples have different lengths
     * (all of T, about half, one step). Nothing of it is released: it only runs the check.
     *
     * @param data the data a run trains on, at least one example
     * @return features (as stored) and feature mask (or null) of the batch, in the data's type (labels zero)
     */
    static LabeledData syntheticBatch(ExampleSource data) {
        int seen = Math.min(3, data.size());
        LabeledData first = data.read(java.util.stream.IntStream.range(0, seen).toArray());
        double[] values = first.features().castTo(DataType.DOUBLE).dup('c').data().asDouble();
        double[] pool = java.util.stream.DoubleStream.concat(java.util.Arrays.stream(values).filter(Double::isFinite),
                java.util.stream.DoubleStream.of(0, 1)).distinct().toArray();
        java.util.SplittableRandom random = new java.util.SplittableRandom(0x6D1F_3A5C_92B4_E807L);
        long[] shape = first.features().shape().clone();
        shape[0] = SYNTHETIC_EXAMPLES;
        int per = (int) (values.length / seen);
        double[] synthetic = new double[SYNTHETIC_EXAMPLES * per];
        for (int i = 0; i < synthetic.length; i++) {
            synthetic[i] = pool[random.nextInt(pool.length)];
        }
        DataType type = first.features().dataType();
        INDArray features = Nd4j.create(synthetic, shape, 'c').castTo(type);
        INDArray mask = null;
        if (first.featureMask() != null) {
            long t = first.featureMask().size(1);
            mask = Nd4j.zeros(first.featureMask().dataType(), SYNTHETIC_EXAMPLES, t);
            for (int i = 0; i < SYNTHETIC_EXAMPLES; i++) {
                long length = i == 0 ? t : i == SYNTHETIC_EXAMPLES - 1 ? 1 : Math.max(1, (t + i - 1) / i);
                mask.get(NDArrayIndex.point(i), NDArrayIndex.interval(0, length)).assign(1);
            }
        }
        // the data's first examples come first: what they hold (an embedding's indices) is checked as it is
        features = Nd4j.concat(0, first.features().castTo(type), features);
        if (mask != null) {
            mask = Nd4j.concat(0, first.featureMask().castTo(mask.dataType()), mask);
        }
        long[] labelShape = first.labels().shape().clone();
        labelShape[0] = features.size(0);
        return new LabeledData(features, Nd4j.zeros(first.labels().dataType(), labelShape), first.channels(), first.height(),
                first.width(), mask, null);
    }
}
