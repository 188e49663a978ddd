package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.DynamicCustomOp;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.BooleanIndexing;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.indexing.conditions.Conditions;

/**
 * One DL4J layer executed on ND4J kernels, keeping what per-example gradients need ("book-keeping":
 * the layer's input from the forward pass and its per-example output delta from the backward pass).
 * Not thread-safe; one instance per network.
 */
abstract class LayerKernel {
    /**
     * Whether the next backward pass keeps per-example state (DP-SGD) or only the gradient summed
     * over the batch (the non-private mode, read by {@link #addSum}).
     */
    boolean perExample = true;

    /**
     * Whether the layer's parameters are trained (false for frozen layers: the engine then reads no per-example state of
     * it, and a kernel may skip computing it).
     */
    boolean trainable = true;

    /** Whether the current pass is a training pass (dropout applies) rather than inference. */
    boolean training;

    /** The number of examples of the current pass (a time-distributed layer's rows are examples × steps). */
    long examples;

    /**
     * The feature mask of the current pass's input (DL4J's: [B, T] for sequences, a row per example), or null; set by the
     * engine before {@link #forward}. Only kernels that {@link #acceptsMask()} are given one.
     */
    INDArray mask;

    /**
     * Hands this pass's settings ({@link #perExample}, {@link #trainable}, {@link #training}, {@link #examples}) to a
     * kernel that this one runs inside it; the mask is the caller's to decide.
     */
    final void passSettingsTo(LayerKernel inner) {
        inner.perExample = perExample;
        inner.trainable = trainable;
        inner.training = training;
        inner.examples = examples;
    }

    /**
     * Whether the engine cannot vouch that this kernel's output for an example depends on that example alone (DL4J's
     * own code for a layer or vertex of unknown kind, a user's kernel): such a step is checked on a batch of examples
     * before it is trained through ({@link MixingCheck}). The engine's own kernels compute each example apart.
     */
    boolean mayMixExamples() {
        return false;
    }

    /** Whether the kernel takes a feature mask (else the engine refuses a masked input, naming the layer). */
    boolean acceptsMask() {
        return false;
    }

    /** The mask of this kernel's output after a forward pass with {@link #mask} (by default the same mask). */
    INDArray outputMask() {
        return mask;
    }

    /**
     * Whether the forward pass is a function of its input alone (no random draws, no state carried between calls), so
     * that its output may be computed once per example and reused (see {@link PerExampleGradients#fixedPrefixOutput}).
     */
    boolean deterministic() {
        return true;
    }

    /**
     * The rank of the input this kernel reads: 2 ([B, d]), 3 ([B, f, T]), 4 ([B, c, h, w]), or 0 when it takes what it is
     * given. The engine hands the network's input to the first steps in that rank ({@link PerExampleGradients#inputRank}).
     */
    int inputRank() {
        return 0;
    }

    /** Whether the kernel's output has its input's shape and the kernel reads any rank (the rank asked of its input is its readers'). */
    boolean passesShape() {
        return false;
    }

    /** Whether {@link #backward} can return the gradient with respect to the input (false: the layer must come first). */
    boolean hasInputGradient() {
        return true;
    }

    /** Forward pass; when {@code keep}, caches what {@link #backward} needs. */
    abstract INDArray forward(INDArray input, boolean keep);

    /** Forward pass of a vertex with several inputs (graph vertices override it; a layer reads its one input). */
    INDArray forward(INDArray[] inputs, boolean keep) {
        return forward(inputs[0], keep);
    }

    /**
     * Backward pass of a vertex with several inputs: dL/d(input j) for each input, or null when
     * {@code needInputGradient} is false.
     */
    INDArray[] backwardInputs(INDArray gradOutput, boolean needInputGradient) {
        INDArray g = backward(gradOutput, needInputGradient);
        return g == null ? null : new INDArray[]{g};
    }

    /**
     * Backward pass from dL/d(output) of this layer (per example, un-averaged).
     *
     * @return dL/d(input), or null when {@code needInputGradient} is false
     */
    abstract INDArray backward(INDArray gradOutput, boolean needInputGradient);

    /** Adds each example's squared gradient norm over this layer's parameters to {@code sq} [B]. */
    void addSquaredNorms(INDArray sq) {
    }

    /**
     * Whether {@link #addGroupSquaredNorms} gives this layer's norms of summed groups of rows (else the engine forms each
     * group's gradient itself, one group at a time).
     */
    boolean hasGroupSquaredNorms() {
        return false;
    }

    /**
     * Adds ‖Σ_{j&lt;k} g_{gk+j}‖² over this layer's parameters, for each group g of k consecutive rows (the augmented
     * copies of one example), to {@code sq} [B/k] (float64). Only called when {@link #hasGroupSquaredNorms()}.
     */
    void addGroupSquaredNorms(INDArray sq, int k) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no grouped norms");
    }

    /**
     * The Gram matrices of each group of k consecutive rows of a 2-D matrix m [B, d]: [B/k, k, k] in float64, entry
     * (g, a, b) = m_{gk+a}·m_{gk+b}. For a layer whose per-example gradient is an outer product x_iᵀδ_i,
     * ‖Σ_a x_aᵀδ_a‖² = Σ_{a,b} (x_a·x_b)(δ_a·δ_b): the sum over (a, b) of the product of the two Gram matrices.
     */
    static INDArray groupGram(INDArray m, int k) {
        long groups = m.size(0) / k;
        INDArray wide = m.castTo(DataType.DOUBLE).reshape('c', groups, k, m.size(1));
        return Nd4j.matmul(wide, wide, false, true, false); // one batched product: [groups, k, d] × [groups, d, k]
    }

    /** Σ over the k rows of each group of a 2-D matrix m [B, d], in float64 (for norms without float32 rounding): [B/k, d]. */
    static INDArray groupSums(INDArray m, int k) {
        return m.castTo(DataType.DOUBLE).reshape('c', m.size(0) / k, k, m.size(1)).sum(1);
    }

    /**
     * Adds Σ_i w_i g_i (this layer's per-example gradients weighted by {@code w} [B, 1]) into the
     * named parameter-gradient views.
     */
    void addWeightedSum(INDArray w, Map<String, INDArray> gradientViews) {
    }

    /**
     * Σ_j m_ij² per row of a 2-D matrix, as a float64 vector [rows]: float32 inputs are widened
     * first so that the norms used for clipping carry no float32 summation error.
     */
    static INDArray rowSquaredNorms(INDArray m) {
        if (m.dataType() == DataType.FLOAT && HostKernels.enabled(DataType.FLOAT)) {
            return HostKernels.rowSquaredNorms(m);
        }
        INDArray wide = m.castTo(DataType.DOUBLE);
        INDArray out = Nd4j.createUninitialized(DataType.DOUBLE, m.size(0));
        Nd4j.exec(DynamicCustomOp.builder("reduce_sqnorm").addInputs(wide).addOutputs(out).addIntegerArguments(1).build());
        return out;
    }

    /** The key of the whole [1, n] gradient slice of the layer, given to kernels that {@link #addsFlatGradients}. */
    static final String FLAT = "*";

    /**
     * Whether {@link #addWeightedSum} and {@link #addSum} take the layer's whole slice of the flattened gradient (key
     * {@link #FLAT}) instead of DL4J's named parameter views.
     */
    boolean addsFlatGradients() {
        return false;
    }

    /** Adds this layer's gradient summed over the batch (after a backward pass with {@code perExample} false). */
    void addSum(Map<String, INDArray> gradientViews) {
    }

    /** Replaces NaN and infinite values in an array by 0, in place. */
    static void zeroNonFinite(INDArray a) {
        if (a != null) {
            BooleanIndexing.replaceWhere(a, 0.0, Conditions.isNan());
            BooleanIndexing.replaceWhere(a, 0.0, Conditions.isInfinite());
        }
    }

    /**
     * view += Σ_b w_b G_b for per-example gradients stacked as rows of {@code stack} [B, …] (flattened per example), with
     * oneDNN's vector-matrix product in float32 on the CPU; null stacks add nothing.
     */
    static void addWeightedRows(INDArray w, INDArray stack, INDArray view) {
        if (stack == null) {
            return;
        }
        long b = stack.size(0);
        INDArray row = w.castTo(stack.dataType()).reshape(1, b);
        INDArray flat = stack.reshape('c', b, stack.length() / b);
        addInto(view, Dnnl.enabled(row, flat) ? Dnnl.vectorTimesMatrix(row, flat) : row.mmul(flat));
    }

    /** Adds a batch-summed weight gradient and, when there is one, a bias gradient into the views "W" and "b". */
    static void addWeightAndBias(Map<String, INDArray> views, INDArray w, INDArray b) {
        addInto(views.get("W"), w);
        if (b != null) {
            addInto(views.get("b"), b);
        }
    }

    /** view += value, where value has the view's elements in another (compatible) shape. */
    static void addInto(INDArray view, INDArray value) {
        view.addi(value.reshape(view.ordering(), view.shape()));
    }

    /**
     * Whether {@link #zeroNonFinite} reaches every value this kernel keeps (false for a user's kernel, whose caches the
     * engine cannot see: a chunk with a non-finite example is then computed again without it).
     */
    boolean zeroesNonFinite() {
        return true;
    }

    /** Zeroes non-finite values in what {@link #addWeightedSum} reads (examples given factor 0). */
    void zeroNonFinite() {
    }

    /** Drops cached activations. */
    void clear() {
    }
}
