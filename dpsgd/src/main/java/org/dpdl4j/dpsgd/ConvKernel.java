package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.INDArrayIndex;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * 2-D convolution z = W ⋆ x + b, a = φ(z). Per-example weight gradients are exact: G_i = dL/dW of example i alone
 * (= δ_i · cols_iᵀ with cols_i = im2col(x_i) [iC·kH·kW, oH·oW] and δ_i [oC, oH·oW]); the bias gradient is δ_i summed
 * over positions. Three paths:
 * <ul>
 *   <li>float32 on the CPU for windows oneDNN takes ({@link Dnnl#convolutionSupported}), after cropping the input
 *       rows and columns that no window reads ({@link Dnnl#readExtent}; their dL/dx is 0): the forward pass, dL/dx
 *       and the batch sum of the non-private mode are oneDNN's convolution primitives; G_i comes from a batch-1
 *       backward-weights primitive run per example ({@link Dnnl#perExampleConvolutionWeights}), or from im2col
 *       columns for ungrouped inputs of fewer than {@link #FEW_INPUT_CHANNELS} channels. Layers with more
 *       than {@link #streamAbove} weights stream G_i (norms only) and form the clipped sum by one backward-weights
 *       pass on the clip-weighted deltas; smaller ones keep G_i and sum it with the clip weights;</li>
 *   <li>dilated windows in float32 on the CPU (which libnd4j's oneDNN helper rejects): im2col columns and oneDNN
 *       matmuls, z_i = W·cols_i forward and dL/dx_i = col2im(Wᵀδ_i) backward;</li>
 *   <li>otherwise (float64, CUDA, windows oneDNN does not take): libnd4j's conv2d and conv2d_bp, and G_i as one
 *       batched matmul δ_i · cols_iᵀ.</li>
 * </ul>
 * A depthwise convolution is this kernel with {@link #groups} = iC (weights [iC·m, 1, kH, kW]): each input channel c
 * has m filters of its own, output channel c·m + j (libnd4j's depthwise order). Its per-example gradient is, per
 * channel, G_i,c = δ_i,c · cols_i,cᵀ [m, kH·kW]: on libnd4j's path the same batched matmul with (example, channel)
 * pairs as the batch, since im2col's [iC, kH, kW, P] rows of an example are its channels' columns one after another.
 * oneDNN takes the groups in every primitive (goihw weights), the per-example one included; libnd4j's path runs its
 * depthwise_conv2d ops (no dilated column path; {@link Ops#depthwiseConv2d} runs dilated float32 windows in float64,
 * which libnd4j's oneDNN helper can refuse).
 */
final class ConvKernel extends LayerKernel {
    /** {@inheritDoc} ([B, c, h, w]) */
    @Override
    int inputRank() {
        return 4;
    }

    private final INDArray weights; // [oC, iC/groups, kH, kW]
    /** 1, or iC for a depthwise convolution (weights [iC·m, 1, kH, kW]; output channel c·m + j reads input channel c). */
    private final int groups;
    private final INDArray bias;    // [1, oC] or null
    private final ActivationDerivative derivative;
    private final Ops.Window window;
    private INDArray input; // the kept input, cropped to what the window reads on the oneDNN path
    private long[] uncropped; // the kept input's shape before it was cropped, or null
    private INDArray kept; // output a, or z for generic activations
    private INDArray cols; // im2col of the input, kept by the float32 CPU forward pass, or null
    private INDArray perExampleW; // [B, oC, K], or null when streamed
    private INDArray delta; // [B, oC, oH, oW], kept instead of perExampleW when streamed
    private INDArray weightNorms; // ‖G_b‖² [B] (float64) when streamed
    private boolean nonFinite; // zeroNonFinite was called: a streamed weighted sum zeroes non-finite inputs first
    /**
     * Convolutions with more weights than this stream their per-example weight gradients on the oneDNN path: each
     * block of examples' gradients is made, its norms taken and the block dropped, and the clipped sum is one
     * backward-weights pass on the clip-weighted deltas. Below it the per-example gradients are kept ([B, oC, K]) and
     * summed with their weights, which is cheaper than that pass. 2^18 weights keep every convolution of the MNIST
     * models and cifar-cnn; the 256-channel 3×3 convolutions of wrn-16-4 (590k weights, 75 MB per 32 examples each)
     * stream. Package-private and per kernel so that tests can put every convolution on either path.
     */
    long streamAbove = 1L << 18;
    /**
     * On the oneDNN path, convolutions with fewer input channels than this (oneDNN's smallest channel block) form
     * their kept per-example weight gradients as im2col columns times δ ({@link #perExampleWeightsInBlocks}), not
     * with oneDNN's batch-1 backward-weights primitive. Measured with {@code bench dpsgd --modes dp} (2 cores, one
     * run each): the standard CNN (1 input channel) 9,727 examples/s against 8,940 and 8,773 with the primitive;
     * cifar-cnn (3) 403 against 407, unchanged within noise; every convolution on columns slowed cifar-cnn to 383.
     * Ungrouped convolutions only: a depthwise one's columns would feed B·iC tiny matmuls ([m, P]·[P, kH·kW]), and
     * oneDNN's depthwise backward-weights primitive is 4 to 12 times faster (a 3×3 depthwise layer on B = 64 inputs of
     * 16 × 32 × 32, one thread, best of 7: m = 1 Same 81 against 325 ms per clipped sum, m = 2 stride 2 12 against 140).
     */
    private static final long FEW_INPUT_CHANNELS = 8;
    /**
     * Whether every ungrouped convolution on the oneDNN path takes ghost norms ({@link #ghostNorms}), not only those for
     * which they cost less. Package-private so that tests can put every convolution on that path.
     */
    boolean alwaysGhost;
    private INDArray ghostColumns; // [B, K, P] im2col of the kept input when the norms are ghost norms, else null
    /** Target size of the reused block of streamed per-example weight gradients: stays in cache for the norms. */
    private static final long GRADIENT_BLOCK_BYTES = 1L << 20;
    private INDArray gradientBlock; // detached, reused: the streamed per-example weight gradients of a block
    private INDArray perExampleB; // [B, oC]
    private INDArray sumW; // non-private mode: [oC, iC, kH, kW]
    private INDArray sumB; // non-private mode: [oC] or null
    /** Target size of the reused im2col block of the per-example weight gradients: about half a core's L2. */
    private static final long COLUMN_BLOCK_BYTES = 1L << 20;
    private final HostKernels host = new HostKernels();
    private INDArray columnBlock; // detached, reused: the columns of one block of examples
    private int[] im2colMap; // for inputs of shape mapShape
    private long[] mapShape;
    /**
     * A map applied to weight gradients, on [N, oC, K] stacks (one per example, or the batch sum as N = 1), or null:
     * the chain rule through a function of the weights ({@link WsConvKernel}).
     */
    java.util.function.UnaryOperator<INDArray> weightGradientMap;
    /** Whether {@link #weightGradientMap} only reorders entries (norms unchanged: ghost norms stay valid). */
    boolean weightGradientMapPermutes;

    ConvKernel(INDArray weights, INDArray bias, IActivation activation, Ops.Window window) {
        this(weights, bias, activation, window, 1);
    }

    /**
     * @param weights [oC, iC/groups, kH, kW]
     * @param groups  1, or iC for a depthwise convolution (weights [iC·m, 1, kH, kW]); no other grouping
     */
    ConvKernel(INDArray weights, INDArray bias, IActivation activation, Ops.Window window, int groups) {
        if (groups < 1 || groups > 1 && (weights.size(1) != 1 || weights.size(0) % groups != 0)) {
            throw new IllegalArgumentException("weights " + java.util.Arrays.toString(weights.shape()) + " with " + groups
                    + " groups: only ungrouped and depthwise convolutions ([iC·m, 1, kH, kW]) are supported");
        }
        this.groups = groups;
        this.weights = weights;
        this.bias = bias;
        this.window = window;
        this.derivative = new ActivationDerivative(activation);
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        INDArray z;
        INDArray columns = null;
        long[] shape = x.shape();
        if (!columnPath(x) && Dnnl.enabled(x, weights) && !Dnnl.convolutionSupported(window, x.size(2), x.size(3))) {
            long[] read = Dnnl.readExtent(window, x.size(2), x.size(3)); // e.g. the standard CNN's 4×4, stride 2 on 13×13
            x = x.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.interval(0, read[0]), NDArrayIndex.interval(0, read[1]))
                    .dup('c');
        }
        if (columnPath(x)) { // im2col + one matmul; the columns serve the per-example gradients too
            columns = im2col(x);
            long b = x.size(0);
            long oc = weights.size(0);
            long k = columns.size(1) * columns.size(2) * columns.size(3);
            long p = columns.size(4) * columns.size(5);
            z = Dnnl.convolutionForward(weights.reshape('c', oc, k), columns.reshape('c', b, k, p),
                    bias == null ? null : bias.reshape(bias.length())).reshape('c', b, oc, columns.size(4), columns.size(5));
        } else if (oneDnnPath(x)) {
            z = Dnnl.convolutionForward(x, weights, bias, window, groups);
        } else {
            z = groups == 1 ? Ops.conv2d(x, weights, bias, window) : Ops.depthwiseConv2d(x, libnd4jDepthwiseWeights(), bias, window);
        }
        INDArray[] out = derivative.apply(z, keep);
        if (keep) {
            input = x;
            uncropped = x.size(2) != shape[2] || x.size(3) != shape[3] ? shape : null;
            kept = out[1];
            cols = columns;
        }
        return out[0];
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        INDArray delta = derivative.backprop(kept, gradOutput);
        boolean onednn = oneDnnPath(input);
        if (!trainable) { // a frozen convolution with trainable layers before it: only dL/dx
            if (!needInputGradient) {
                return null;
            }
            return inputGradient(delta, onednn);
        }
        if (onednn) { // oneDNN's backward-weights (per example, or summed) and backward-data primitives
            long b = delta.size(0);
            long oc = delta.size(1);
            if (perExample) {
                long positions = delta.size(2) * delta.size(3);
                perExampleB = bias != null ? delta.reshape('c', b, oc, positions).sum(2) : null;
                if (ghostNorms(positions)) {
                    this.delta = delta;
                    ghostColumns = im2col(input).reshape('c', b, weights.length() / oc, positions);
                    weightNorms = ghostSquaredNorms(1);
                    return needInputGradient ? inputGradient(delta, true) : null;
                }
                if (weights.length() > streamAbove) {
                    this.delta = delta;
                    weightNorms = streamedWeightNorms(delta);
                    return needInputGradient ? inputGradient(delta, true) : null;
                }
                if (groups == 1 && input.size(1) < FEW_INPUT_CHANNELS) {
                    perExampleW = perExampleWeightsInBlocks(delta.reshape('c', b, oc, delta.size(2) * delta.size(3)),
                            weights.length() / oc);
                } else {
                    perExampleW = Nd4j.createUninitialized(DataType.FLOAT, new long[]{b, oc, weights.length() / oc}, 'c');
                    Dnnl.perExampleConvolutionWeights(input, delta, window, groups, perExampleW);
                }
                if (weightGradientMap != null) {
                    perExampleW = weightGradientMap.apply(perExampleW);
                }
            } else {
                INDArray w = Nd4j.createUninitialized(DataType.FLOAT, weights.shape(), 'c');
                Dnnl.convolutionBackwardWeights(input, delta, window, groups, w);
                sumW = mapped(w);
                sumB = bias != null ? delta.sum(0, 2, 3) : null;
            }
            return needInputGradient ? inputGradient(delta, true) : null;
        }
        if (!perExample && cols != null) { // non-private mode on the column path: Σ_b δ_b·cols_bᵀ, then as below
            long b = delta.size(0);
            long oc = delta.size(1);
            long positions = delta.size(2) * delta.size(3);
            INDArray delta3 = delta.reshape('c', b, oc, positions);
            sumW = mapped(Dnnl.batchedMatmulTransposed(delta3, cols.reshape('c', b, weights.length() / oc, positions)).sum(0));
            sumB = bias != null ? delta3.sum(0, 2) : null;
            return needInputGradient ? columnsInputGradient(delta3) : null;
        }
        if (!perExample) {
            INDArray[] grads = groups == 1 ? Ops.conv2dBackprop(input, weights, bias, delta, window)
                    : Ops.depthwiseConv2dBackprop(input, libnd4jDepthwiseWeights(), bias, delta, window);
            sumW = mapped(groups == 1 ? grads[1] : fromLibnd4jDepthwise(grads[1]));
            sumB = grads[2];
            return needInputGradient ? grads[0] : null;
        }
        long b = delta.size(0);
        long oc = delta.size(1);
        long positions = delta.size(2) * delta.size(3);
        long k = weights.length() / oc;
        INDArray delta3 = delta.reshape('c', b, oc, positions);
        perExampleB = bias != null ? delta3.sum(2) : null;
        if (groups == 1 && cols == null && Dnnl.enabled(delta3, input) && HostKernels.isDense(input)) {
            perExampleW = perExampleWeightsInBlocks(delta3, k);
        } else { // one batch entry per (example, group): [B·G, oC/G, P] × [B·G, K, P]ᵀ
            INDArray cols3 = (cols != null ? cols : im2col(input)).reshape('c', b * groups, k, positions);
            INDArray deltaG = delta3.reshape('c', b * groups, oc / groups, positions);
            perExampleW = (Dnnl.enabled(deltaG, cols3) ? Dnnl.batchedMatmulTransposed(deltaG, cols3)
                    : Nd4j.matmul(deltaG, cols3, false, true, false)).reshape('c', b, oc, k); // [B, oC, K]
        }
        if (weightGradientMap != null) {
            perExampleW = weightGradientMap.apply(perExampleW.reshape('c', b, oc, k));
        }
        return needInputGradient ? inputGradient(delta, false) : null;
    }

    /**
     * Whether the weight and input gradients run on oneDNN's convolution primitives ({@link Dnnl}): float32 on the
     * CPU, outside the column path, for windows oneDNN takes.
     */
    private boolean oneDnnPath(INDArray x) {
        return !columnPath(x) && Dnnl.enabled(x, weights) && Dnnl.convolutionSupported(window, x.size(2), x.size(3));
    }

    /** The depthwise weights [iC·m, 1, kH, kW] in libnd4j's depthwise layout [kH, kW, iC, m] (a copy). */
    private INDArray libnd4jDepthwiseWeights() {
        long ic = groups;
        return weights.reshape('c', ic, weights.size(0) / ic, window.kH(), window.kW()).permute(2, 3, 0, 1).dup('c');
    }

    /** A depthwise weight gradient [kH, kW, iC, m] (libnd4j's layout) as [iC·m, 1, kH, kW]. */
    private INDArray fromLibnd4jDepthwise(INDArray w) {
        return w.permute(2, 3, 0, 1).dup('c').reshape('c', weights.shape());
    }

    /** dL/dx from dL/dz: oneDNN's backward-data primitive, the column path's col2im, or libnd4j's conv2d_bp. */
    private INDArray inputGradient(INDArray delta, boolean onednn) {
        if (onednn) {
            INDArray gradient = Dnnl.convolutionBackwardData(delta, weights, input.shape(), window, groups);
            if (uncropped == null) {
                return gradient;
            }
            INDArray whole = Nd4j.create(gradient.dataType(), uncropped); // the unread rows and columns: 0
            whole.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.interval(0, input.size(2)),
                    NDArrayIndex.interval(0, input.size(3))).assign(gradient);
            return whole;
        }
        if (columnPath(input)) {
            return columnsInputGradient(delta.reshape('c', delta.size(0), delta.size(1), delta.size(2) * delta.size(3)));
        }
        return groups == 1 ? Ops.conv2dInputGradient(input, weights, bias, delta, window)
                : Ops.depthwiseConv2dBackprop(input, libnd4jDepthwiseWeights(), bias, delta, window)[0];
    }

    /**
     * ‖G_b‖² [B] (float64, after {@link #weightGradientMap}) with G_b made by oneDNN a block of examples at a time into
     * one reused buffer of about {@link #GRADIENT_BLOCK_BYTES} (outside the workspace) and dropped once its norms are
     * taken.
     */
    private INDArray streamedWeightNorms(INDArray delta) {
        return streamedWeightNorms(delta, 1);
    }

    /**
     * ‖Σ_{j&lt;k} G_{gk+j}‖² per group g of k consecutive examples [B/k] (float64), streamed as in
     * {@link #streamedWeightNorms(INDArray)} in blocks of whole groups.
     */
    private INDArray streamedWeightNorms(INDArray delta, int k) {
        long b = delta.size(0);
        long oc = weights.size(0);
        long perExample = weights.length();
        int block = (int) Math.max(k, Math.min(b, GRADIENT_BLOCK_BYTES / (4 * perExample)) / k * k);
        if (gradientBlock == null || gradientBlock.length() < block * perExample) {
            try (MemoryWorkspace outside = Nd4j.getWorkspaceManager().scopeOutOfWorkspaces()) {
                gradientBlock = Nd4j.createUninitializedDetached(DataType.FLOAT, block * perExample);
            }
        }
        double[] norms = new double[(int) (b / k)];
        for (long from = 0; from < b; from += block) {
            int n = (int) Math.min(block, b - from);
            INDArray g = gradientBlock.get(NDArrayIndex.interval(0, n * perExample)).reshape('c', n, perExample);
            INDArrayIndex range = NDArrayIndex.interval(from, from + n);
            Dnnl.perExampleConvolutionWeights(input.get(range, NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.all()),
                    delta.get(range, NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.all()), window, groups, g);
            INDArray mappedG = weightGradientMap == null ? g
                    : weightGradientMap.apply(g.reshape('c', n, oc, perExample / oc)).reshape('c', n, perExample);
            double[] blockNorms = LayerKernel.rowSquaredNorms(k == 1 ? mappedG : LayerKernel.groupSums(mappedG, k)).toDoubleVector();
            System.arraycopy(blockNorms, 0, norms, (int) (from / k), n / k);
        }
        return Nd4j.createFromArray(norms);
    }

    /**
     * Whether ‖G_b‖² is taken as a ghost norm (an ungrouped convolution on the oneDNN path whose {@link #weightGradientMap},
     * if any, only reorders entries):
     * when its float64 Gram matrices, 2·P²·(K + oC) multiply-adds per example for P output positions and K = iC·kH·kW,
     * cost less than forming G_b, P·K·oC of them and K·oC values to write and read back (or always, {@link #alwaysGhost}).
     * The factor 2 prices float64 against float32. Late, small feature maps qualify: ResNet50's 3×3, 512-channel
     * convolutions at 3×3 positions (P = 9, K = 4,608, oC = 512) take 0.8 M instead of 21 M; the early ones keep G_b.
     */
    private boolean ghostNorms(long positions) {
        long oc = weights.size(0);
        long k = weights.length() / oc;
        return groups == 1 && (weightGradientMap == null || weightGradientMapPermutes)
                && (alwaysGhost || 2 * positions * (k + oc) < k * oc);
    }

    /**
     * Ghost norms: ‖Σ_{j in group} G_j‖² for groups of k consecutive examples [B/k] (float64), with G_j = δ_j·cols_jᵀ
     * ([oC, P]·[P, K]), from the positions' Gram matrices without forming any G_j:
     * ‖Σ_j G_j‖² = Σ_{(j,p),(j',q)} (c_jp·c_j'q)(δ_jp·δ_j'q), c_jp ∈ ℝ^K the column and δ_jp ∈ ℝ^oC the delta of example j
     * at output position p (I. Goodfellow, "Efficient Per-Example Gradient Computations", arXiv:1510.01799, for dense
     * layers; Z. Bu, J. Mao, S. Xu, "Scalable and Efficient Training of Large Convolutional Neural Networks with Differential
     * Privacy", NeurIPS 2022, arXiv:2205.10683, Section 3, for convolutions). The Grams and their inner product are taken in
     * float64 from the float32 columns and deltas; every product and sum there has relative error at most
     * γ_n = n·u/(1 − n·u), u = 2⁻⁵³, n = K + oC + 2·(kP)² + 2 (N. Higham, "Accuracy and Stability of Numerical
     * Algorithms", 2nd ed., Lemma 3.3 and Section 3.1, for dot products and sums), so the result is within γ_n·s² of the exact value, where
     * s = Σ_{(j,p)} ‖c_jp‖·‖δ_jp‖ (Cauchy–Schwarz bounds every |Gram entry| by the product of its diagonal roots). That
     * bound is added: the norm returned is never below the exact norm of the G_j the weighted sum adds.
     */
    private INDArray ghostSquaredNorms(int k) {
        long b = delta.size(0);
        long oc = delta.size(1);
        long p = delta.size(2) * delta.size(3);
        INDArray columns = positionGram(ghostColumns, k); // [B/k, kP, kP]
        INDArray deltas = positionGram(delta.reshape('c', b, oc, p), k);
        long n = ghostColumns.size(1) + oc + 2 * (k * p) * (k * p) + 2;
        double gamma = n * 0x1p-53 / (1 - n * 0x1p-53);
        INDArray diagonalRoots = org.nd4j.linalg.ops.transforms.Transforms.sqrt(
                diagonals(columns).muli(diagonals(deltas)), false); // ‖c‖·‖δ‖ per (j, p): [B/k, kP]
        INDArray s = diagonalRoots.sum(1);
        return columns.muli(deltas).sum(1, 2).addi(s.muli(s).muli(gamma));
    }

    /** Σ over each group of k consecutive examples of m [B, d, P] as a Gram over the group's positions: [B/k, kP, kP], float64. */
    private static INDArray positionGram(INDArray m, int k) {
        long b = m.size(0);
        long d = m.size(1);
        long p = m.size(2);
        INDArray wide = m.castTo(DataType.DOUBLE);
        if (k > 1) { // example j's positions side by side: [B/k, d, k·P]
            wide = wide.reshape('c', b / k, k, d, p).permute(0, 2, 1, 3).dup('c').reshape('c', b / k, d, k * p);
        }
        return Nd4j.matmul(wide, wide, true, false, false);
    }

    /** The diagonals of a stack of square matrices [N, n, n]: [N, n] (a copy). */
    private static INDArray diagonals(INDArray stack) {
        long n = stack.size(1);
        INDArray eye = Nd4j.eye(n).castTo(stack.dataType()).reshape(1, n * n);
        return stack.reshape('c', stack.size(0), n * n).mulRowVector(eye).reshape('c', stack.size(0), n, n).sum(2);
    }

    /**
     * A streamed clipped sum: Σ_b w_b G_b is the weight gradient of the batch with each example's delta scaled by w_b,
     * one backward-weights pass (then {@link #weightGradientMap}, linear). After {@link #zeroNonFinite}, non-finite
     * values of the scaled deltas and of the input are zeroed first, so an example given factor 0 contributes exactly
     * nothing.
     */
    private void addStreamedWeightedSum(INDArray w, Map<String, INDArray> views) {
        long b = delta.size(0);
        INDArray scaled = delta.mul(w.castTo(DataType.FLOAT).reshape(b, 1, 1, 1));
        INDArray x = input;
        if (nonFinite) {
            LayerKernel.zeroNonFinite(scaled);
            x = input.dup('c');
            LayerKernel.zeroNonFinite(x);
        }
        INDArray sum = Nd4j.createUninitialized(DataType.FLOAT, weights.shape(), 'c');
        Dnnl.convolutionBackwardWeights(x, scaled, window, groups, sum);
        addInto(views.get("W"), mapped(sum));
        addWeightedRows(w, perExampleB, views.get("b"));
    }

    /** A weight gradient [oC, iC, kH, kW] (a batch sum) through {@link #weightGradientMap}. */
    private INDArray mapped(INDArray w) {
        if (weightGradientMap == null) {
            return w;
        }
        long oc = weights.size(0);
        return weightGradientMap.apply(w.dup('c').reshape('c', 1, oc, weights.length() / oc)).reshape('c', weights.shape());
    }

    /** dL/dx = col2im(Wᵀ·δ_b) for δ [B, oC, P]: the adjoint of the column path's im2col and matmul. */
    private INDArray columnsInputGradient(INDArray delta3) {
        long oc = delta3.size(1);
        INDArray colsGradient = Dnnl.convolutionColumnsGradientTransposed(weights.reshape('c', oc, weights.length() / oc), delta3);
        return host.col2imTransposed(colsGradient, input.shape(), im2colMap);
    }

    /**
     * G_b = δ_b·cols_bᵀ [B, oC, K] (float32, oneDNN) with the columns made a block of examples at a
     * time in one reused buffer of about {@link #COLUMN_BLOCK_BYTES} (outside the workspace), rather
     * than for the whole batch: the workspace no longer holds every example's columns (39 MB for the
     * standard CNN at 512 examples), the block stays in cache between im2col and the matmul, and
     * only the block size and one remainder are matmul shapes, whatever the Poisson batch size.
     */
    private INDArray perExampleWeightsInBlocks(INDArray delta3, long k) {
        long b = delta3.size(0);
        long oc = delta3.size(1);
        long positions = delta3.size(2);
        int[] map = im2colMap(input);
        long perExample = k * positions;
        int block = (int) Math.max(1, Math.min(b, COLUMN_BLOCK_BYTES / (4 * perExample)));
        if (columnBlock == null || columnBlock.length() < block * perExample) {
            try (MemoryWorkspace outside = Nd4j.getWorkspaceManager().scopeOutOfWorkspaces()) {
                columnBlock = Nd4j.createUninitializedDetached(DataType.FLOAT, block * perExample);
            }
        }
        INDArray out = Nd4j.createUninitialized(DataType.FLOAT, new long[]{b, oc, k}, 'c');
        for (long from = 0; from < b; from += block) {
            int n = (int) Math.min(block, b - from);
            INDArray colsN = columnBlock.get(NDArrayIndex.interval(0, n * perExample)).reshape('c', n, k, positions);
            host.im2colInto(input, (int) from, n, map, colsN);
            INDArrayIndex range = NDArrayIndex.interval(from, from + n);
            Dnnl.batchedMatmulTransposedInto(delta3.get(range, NDArrayIndex.all(), NDArrayIndex.all()), colsN,
                    out.get(range, NDArrayIndex.all(), NDArrayIndex.all()));
        }
        return out;
    }

    /**
     * Whether the forward and input-gradient passes run on im2col columns and oneDNN matmuls rather
     * than libnd4j's conv2d/conv2d_bp: for dilated windows in float32 on the CPU, where libnd4j's
     * oneDNN helper fails to create its primitive. (Elsewhere libnd4j's ops are measured faster.)
     */
    private boolean columnPath(INDArray x) {
        return groups == 1 && (window.dH() > 1 || window.dW() > 1) && Dnnl.enabled(x, weights);
    }

    private INDArray im2col(INDArray x) {
        if (!HostKernels.enabled(x.dataType())) {
            return Ops.im2col(x, window);
        }
        return host.im2col(x, window, im2colMap(x));
    }

    /** The gather map of inputs shaped like x, rebuilt when their shape changes. */
    private int[] im2colMap(INDArray x) {
        long[] shape = {x.size(1), x.size(2), x.size(3)};
        if (!java.util.Arrays.equals(shape, mapShape)) {
            im2colMap = HostKernels.im2colMap(shape[0], shape[1], shape[2], window);
            mapShape = shape;
        }
        return im2colMap;
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        sq.addi(weightNorms != null ? weightNorms : LayerKernel.rowSquaredNorms(perExampleW.reshape('c', perExampleW.size(0), -1)));
        if (perExampleB != null) {
            sq.addi(LayerKernel.rowSquaredNorms(perExampleB));
        }
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return true;
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) { // streamed: the per-example gradients once more, a block of groups at a time
        sq.addi(ghostColumns != null ? ghostSquaredNorms(k) : delta != null ? streamedWeightNorms(delta, k)
                : LayerKernel.rowSquaredNorms(LayerKernel.groupSums(perExampleW.reshape('c', perExampleW.size(0), -1), k)));
        if (perExampleB != null) {
            sq.addi(LayerKernel.rowSquaredNorms(LayerKernel.groupSums(perExampleB, k)));
        }
    }

    @Override
    void zeroNonFinite() {
        nonFinite = true;
        LayerKernel.zeroNonFinite(perExampleW);
        LayerKernel.zeroNonFinite(perExampleB);
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> views) {
        if (delta != null) {
            addStreamedWeightedSum(w, views);
            return;
        }
        addWeightedRows(w, perExampleW, views.get("W"));
        addWeightedRows(w, perExampleB, views.get("b"));
    }

    @Override
    void addSum(Map<String, INDArray> views) {
        addWeightAndBias(views, sumW, sumB);
    }

    @Override
    void clear() {
        sumW = null;
        sumB = null;
        input = null;
        uncropped = null;
        kept = null;
        perExampleW = null;
        perExampleB = null;
        delta = null;
        weightNorms = null;
        ghostColumns = null;
        nonFinite = false;
        cols = null;
    }
}
