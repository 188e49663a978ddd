package org.dpdl4j.dpsgd;

import java.util.Arrays;
import java.util.Map;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.impl.scatter.ScatterUpdate;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * DL4J's {@code EmbeddingLayer} (input [B, 1] of indices, output [B, d]) and {@code EmbeddingSequenceLayer} (input
 * [B, T] or [B, 1, T] of indices, output [B, d, T] in NCW): at each position p (an example's step) with index v_p the
 * output is φ(W[v_p] + b), W being [V, d]; a feature mask m multiplies the output and the delta, as DL4J's layers do.
 *
 * <p>Example i's gradient is G_W = Σ_{p of i} e_{v_p} δ_pᵀ (row v of G_W is the sum of the deltas of i's positions with
 * index v: an index repeated within one example sums its rows before the norm) and G_b = Σ_p δ_p. Its squared norm
 * ‖G_W‖² = Σ_{s,t} [v_s = v_t](δ_s·δ_t) is the ghost norm Σ_{s,t} (a_s·a_t)(δ_s·δ_t) of a layer whose inputs a_p are
 * one-hot (X. Li, F. Tramèr, P. Liang, T. Hashimoto, "Large Language Models Can Be Strong Differentially Private
 * Learners", ICLR 2022, arXiv:2110.05679, Section 4), here summed per index instead of over pairs. The kernel groups an
 * example's positions by index on the host (one pass over the n·d delta entries, in float64, whatever the network's
 * type), so ‖G_W‖² + ‖G_b‖² is exact without forming any [V, d] matrix; the clip-weighted sum is formed the same way over
 * the whole batch, then added into the gradient's rows with one scatter whose indices are distinct (no two updates of
 * one row race). Grouped norms ({@link #addGroupSquaredNorms}) group the positions of k consecutive rows, which serves
 * both augmentation multiplicity and an {@code EmbeddingLayer} on every time step of a sequence (after DL4J's
 * {@code RnnToFeedForwardPreProcessor}).
 *
 * <p>Indices are data: each must be an integer in [0, V) (DL4J throws on one out of range and silently truncates a
 * fractional one; the kernel refuses both, naming the example and step, since a fractional index usually means that a
 * normaliser was applied to the indices). Like DL4J's layers, the kernel passes no gradient to its input: the layer
 * comes first.
 */
final class EmbeddingKernel extends LayerKernel {
    private final INDArray w;    // [V, d]
    private final INDArray bias; // [1, d] or null
    private final ActivationDerivative derivative;
    private final boolean sequence;
    private final long inputLength; // EmbeddingSequenceLayer's configured length, or −1 (inferred, or EmbeddingLayer)
    private final String where;
    private final long vocabulary;
    private final long width;
    // kept by a training pass
    private int[] indices;   // [n], positions in row-major order: row i's positions at i·P … i·P + P − 1
    private long rows;       // rows of the input (B, or B·T for a layer on every step)
    private long positions;  // positions per row P: T for a sequence, 1 otherwise
    private INDArray keptMask; // [n] or null
    private INDArray kept;   // the activation's output (or input) [n, d]
    private INDArray delta;  // [n, d] after the backward pass
    private int[] slotOf;    // scratch of sumByIndex (length V)

    /**
     * @param sequence    whether the layer is an {@code EmbeddingSequenceLayer} (else an {@code EmbeddingLayer})
     * @param inputLength the sequence length the layer is configured for, or −1 to take the input's
     */
    EmbeddingKernel(INDArray w, INDArray bias, IActivation activation, boolean sequence, long inputLength, String where) {
        this.w = w;
        this.bias = bias;
        this.derivative = new ActivationDerivative(activation);
        this.sequence = sequence;
        this.inputLength = inputLength;
        this.where = where;
        this.vocabulary = w.size(0);
        this.width = w.size(1);
    }

    /** {@inheritDoc} ([B, 1] for an EmbeddingLayer; a sequence layer takes [B, T] or [B, 1, T]) */
    @Override
    int inputRank() {
        return sequence ? 0 : 2;
    }

    @Override
    boolean hasInputGradient() {
        return false; // indices have no gradient (DL4J's layers return none either)
    }

    /** {@inheritDoc} ([B, T] for a sequence, [B, 1] otherwise, as DL4J's layers take it) */
    @Override
    boolean acceptsMask() {
        return true;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        long b;
        long p;
        if (sequence) {
            if (x.rank() == 1) { // DL4J reads a vector as [n, 1, 1]
                x = x.reshape(x.length(), 1, 1);
            }
            if (!(x.rank() == 2 || x.rank() == 3 && x.size(1) == 1)) {
                throw new IllegalArgumentException(where + ": an EmbeddingSequenceLayer reads indices [B, T] or [B, 1, T], got "
                        + "shape " + Arrays.toString(x.shape()));
            }
            b = x.size(0);
            p = x.size(x.rank() - 1);
            if (inputLength >= 0 && p != inputLength) {
                throw new IllegalArgumentException(where + ": the layer is configured for sequences of " + inputLength
                        + " indices, got shape " + Arrays.toString(x.shape()));
            }
        } else {
            if (x.rank() != 2 || x.size(1) != 1) {
                throw new IllegalArgumentException(where + ": an EmbeddingLayer reads one index per example, [B, 1], got shape "
                        + Arrays.toString(x.shape()));
            }
            b = x.size(0);
            p = 1;
        }
        boolean[] bad = new boolean[(int) b];
        int[] idx = indicesOf(x, p, bad);
        INDArray z = Nd4j.pullRows(w, 1, idx); // [n, d]
        if (bias != null) {
            z.addiRowVector(bias);
        }
        for (int i = 0; i < b; i++) {
            if (bad[i]) { // its every output NaN: its gradient is not finite, so it gets factor 0 and adds nothing
                z.get(NDArrayIndex.interval(i * p, (i + 1) * p), NDArrayIndex.all()).assign(Double.NaN);
            }
        }
        INDArray[] out = derivative.apply(z, keep);
        INDArray m = mask == null ? null : positionMask(mask, b, p);
        INDArray a = out[0];
        if (m != null) {
            a = a.mulColumnVector(m);
        }
        if (keep) {
            indices = idx;
            rows = b;
            positions = p;
            keptMask = m;
            kept = out[1];
        }
        return sequence ? a.reshape('c', b, p, width).permute(0, 2, 1).dup('c') : a;
    }

    /** The mask as one entry per position [n, 1]: [B, T] for a sequence, [B, 1] (or [B]) for one index per row. */
    private INDArray positionMask(INDArray m, long b, long p) {
        if (m.length() != b * p || m.size(0) != b) {
            throw new IllegalArgumentException(where + ": a feature mask of shape " + Arrays.toString(m.shape()) + " for "
                    + b + " rows of " + p + " indices; it must be [B, T] (one entry per index)");
        }
        return m.castTo(w.dataType()).dup('c').reshape('c', b * p, 1);
    }

    /**
     * The indices of x in row-major order. One that is not an integer in [0, V) marks its example in {@code bad} (and is
     * read as 0): one example's content must not stop a run that was charged; it adds nothing instead (its output is
     * made NaN, so its gradient gets factor 0), as a non-finite example does. With {@link #strict} (the check before a
     * run, whose values come from the data's first examples) it is refused, naming the index: a pipeline that feeds no
     * indices at all (a normaliser applied to them, say) is refused before anything is charged.
     */
    private int[] indicesOf(INDArray x, long p, boolean[] bad) {
        double[] v = x.castTo(DataType.DOUBLE).dup('c').reshape('c', new long[]{x.length()}).toDoubleVector();
        int[] idx = new int[v.length];
        for (int j = 0; j < v.length; j++) {
            double value = v[j];
            if (!(value >= 0 && value < vocabulary && value == Math.rint(value))) {
                bad[(int) (j / p)] = true;
                if (strict) {
                    throw new IllegalArgumentException(where + ": index " + value + " of example " + j / p
                            + (sequence ? ", step " + j % p : "") + " is not an integer in [0, " + vocabulary + ") (the layer's "
                            + "nIn, its vocabulary); an embedding reads indices as they are: apply no normaliser to them");
                }
                continue;
            }
            idx[j] = (int) value;
        }
        return idx;
    }

    /**
     * Whether an index out of range is refused (the check before a run, on values of the data's first examples) rather
     * than giving its example factor 0 (during a run).
     */
    boolean strict;

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        INDArray g = sequence ? gradOutput.permute(0, 2, 1).dup('c').reshape('c', rows * positions, width) : gradOutput;
        if (keptMask != null) {
            g = g.mulColumnVector(keptMask);
        }
        delta = derivative.backprop(kept, g);
        kept = null;
        return null;
    }

    /** The delta in float64 on the host, [n·d] row-major. */
    private double[] hostDelta() {
        return delta.castTo(DataType.DOUBLE).dup('c').reshape('c', new long[]{delta.length()}).toDoubleVector();
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        sq.addi(Nd4j.createFromArray(groupNorms((int) positions)));
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return true;
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) {
        sq.addi(Nd4j.createFromArray(groupNorms((int) (k * positions))));
    }

    /**
     * ‖Σ_{p in g} e_{v_p}δ_pᵀ‖² + ‖Σ_{p in g} δ_p‖² (the bias term when the layer has one) for each group g of
     * {@code size} consecutive positions, in float64.
     */
    private double[] groupNorms(int size) {
        double[] d = hostDelta();
        int dw = (int) width;
        double[] out = new double[indices.length / size];
        double[] acc = new double[size * dw];
        int[] used = new int[size];
        double[] biasAcc = new double[dw];
        for (int g = 0; g < out.length; g++) {
            Arrays.fill(biasAcc, 0);
            int count = sumByIndex(d, g * size, (g + 1) * size, null, acc, used, biasAcc);
            double total = 0;
            for (int j = 0; j < count * dw; j++) {
                total += acc[j] * acc[j];
            }
            if (bias != null) {
                for (double x : biasAcc) {
                    total += x * x;
                }
            }
            out[g] = total;
        }
        return out;
    }

    /**
     * Sums the deltas of positions [from, to), each times its row's weight (1 when {@code rowWeights} is null), into one
     * row per distinct index (row s of {@code acc} for index used[s]) and all of them into {@code biasAcc}.
     *
     * @return the number of distinct indices
     */
    private int sumByIndex(double[] d, int from, int to, double[] rowWeights, double[] acc, int[] used, double[] biasAcc) {
        if (slotOf == null) { // index → its row in acc, −1 when absent; all −1 between calls
            slotOf = new int[Math.toIntExact(vocabulary)];
            Arrays.fill(slotOf, -1);
        }
        int dw = (int) width;
        int count = 0;
        for (int q = from; q < to; q++) {
            double f = rowWeights == null ? 1.0 : rowWeights[(int) (q / positions)];
            if (f == 0) {
                continue; // an example given factor 0 (e.g. a non-finite gradient) contributes nothing
            }
            int v = indices[q];
            int s = slotOf[v];
            if (s < 0) {
                s = count++;
                slotOf[v] = s;
                used[s] = v;
                Arrays.fill(acc, s * dw, (s + 1) * dw, 0);
            }
            int at = q * dw;
            int row = s * dw;
            for (int c = 0; c < dw; c++) {
                double x = f * d[at + c];
                acc[row + c] += x;
                biasAcc[c] += x;
            }
        }
        for (int s = 0; s < count; s++) {
            slotOf[used[s]] = -1;
        }
        return count;
    }

    @Override
    void addWeightedSum(INDArray weights, Map<String, INDArray> views) {
        add(weights.castTo(DataType.DOUBLE).reshape(weights.length()).toDoubleVector(), views);
    }

    @Override
    void addSum(Map<String, INDArray> views) {
        add(null, views);
    }

    /** Adds Σ_p w_{row(p)} e_{v_p}δ_pᵀ into W's rows (distinct indices, one scatter) and Σ_p w δ_p into b; w null: all 1. */
    private void add(double[] rowWeights, Map<String, INDArray> views) {
        int n = indices.length;
        int dw = (int) width;
        int[] used = new int[Math.min(n, Math.toIntExact(vocabulary))];
        double[] acc = new double[used.length * dw];
        double[] biasAcc = new double[dw];
        int count = sumByIndex(hostDelta(), 0, n, rowWeights, acc, used, biasAcc);
        if (count > 0) {
            INDArray view = views.get("W");
            INDArray rowsSum = Nd4j.createFromArray(Arrays.copyOf(acc, count * dw)).reshape('c', count, dw).castTo(view.dataType());
            Nd4j.scatterUpdate(ScatterUpdate.UpdateOp.ADD, view, Nd4j.createFromArray(Arrays.copyOf(used, count)), rowsSum, 1);
        }
        if (bias != null) {
            INDArray b = views.get("b");
            addInto(b, Nd4j.createFromArray(biasAcc).castTo(b.dataType()));
        }
    }

    @Override
    void zeroNonFinite() {
        LayerKernel.zeroNonFinite(delta);
    }

    @Override
    void clear() {
        indices = null;
        keptMask = null;
        kept = null;
        delta = null;
    }
}
