package org.dpdl4j.dpsgd;

import static org.bytedeco.dnnl.global.dnnl.*;

import org.bytedeco.dnnl.const_dnnl_op_desc_t;
import org.bytedeco.dnnl.dnnl_convolution_desc_t;
import org.bytedeco.dnnl.dnnl_eltwise_desc_t;
import org.bytedeco.dnnl.dnnl_engine;
import org.bytedeco.dnnl.dnnl_exec_arg_t;
import org.bytedeco.dnnl.dnnl_matmul_desc_t;
import org.bytedeco.dnnl.dnnl_memory;
import org.bytedeco.dnnl.dnnl_memory_desc_t;
import org.bytedeco.dnnl.dnnl_primitive;
import org.bytedeco.dnnl.dnnl_primitive_desc;
import org.bytedeco.dnnl.dnnl_stream;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerScope;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * oneDNN primitives called directly, through JavaCPP's {@code org.bytedeco:dnnl} presets (oneDNN
 * 2.5, the library libnd4j's CPU build links), on ND4J host memory. They replace the libnd4j ops
 * that dominated a DP-SGD step on the CPU (measured in one JVM, one op thread, standard CNN, 256
 * examples, float32): the per-example weight gradients of a convolution (one backward-weights
 * primitive of batch 1 run per example; before it, a batched matmul that libnd4j ran at 5–7 GFLOP/s
 * and oneDNN's matmul at 37–48 in the same microbenchmark); a convolution's input gradient alone
 * (libnd4j's conv2d_bp always computes the weight gradient too) and its weight gradient summed over
 * the batch, on oneDNN's blocked layouts with reorders; tanh and its derivative; and the
 * clip-weighted sum Σ_b w_b g_b. For dilated convolutions, which libnd4j's float32 oneDNN helper
 * rejects, they also give the convolution's forward pass and columns' gradient as matmuls.
 *
 * <p>float32 on the CPU backend only ({@link #enabled}); float64 and CUDA keep the libnd4j ops, so
 * the float64 per-example tests against DL4J's layers check the libnd4j path and {@code DnnlTest}
 * checks each primitive here against its libnd4j counterpart. Primitives are created per call:
 * oneDNN's own primitive cache makes re-creating one of a seen shape cost microseconds (measured
 * 7–30 µs). Stateless and thread-safe (a stream per call). The engine sets oneDNN's default
 * floating-point mode to strict, so no primitive computes below float32.
 */
final class Dnnl {
    private static final dnnl_engine ENGINE = createEngine();

    private Dnnl() {
    }

    private static dnnl_engine createEngine() {
        String flag = System.getProperty("dpdl4j.onednn", "true");
        if (!flag.equals("true") && !flag.equals("false")) {
            throw new IllegalArgumentException("system property dpdl4j.onednn must be true or false, got '" + flag + "'");
        }
        if (!HostKernels.enabled(DataType.FLOAT) || flag.equals("false")) {
            return null;
        }
        try {
            // float32 arithmetic throughout: an environment variable (ONEDNN_DEFAULT_FPMATH_MODE) could
            // otherwise let matmuls round to bf16, an error far above the clipping margin
            if (dnnl_set_default_fpmath_mode(dnnl_fpmath_mode_strict) != dnnl_success) {
                return null;
            }
            dnnl_engine e = new dnnl_engine();
            return dnnl_engine_create(e, dnnl_cpu, 0) == dnnl_success ? e : null;
        } catch (LinkageError notLoadable) {
            return null; // the presets' native libraries are missing: keep the libnd4j ops
        }
    }

    /**
     * Whether these primitives serve all of the given arrays: CPU backend, oneDNN loadable, float32.
     * {@code -Ddpdl4j.onednn=false} turns them off (to compare with the libnd4j ops).
     */
    static boolean enabled(INDArray... arrays) {
        if (ENGINE == null) {
            return false;
        }
        for (INDArray a : arrays) {
            if (a.dataType() != DataType.FLOAT) {
                return false;
            }
        }
        return true;
    }

    /**
     * The per-example products a_b · c_bᵀ for a [B, M, P] and c [B, K, P]: [B, M, K], in the current
     * workspace. B is a fixed dimension of the primitive: oneDNN's batch-reduce GEMM kernels are then
     * about 1.4× faster than with B as a runtime dimension (measured 43 against 32 GFLOP/s); each new
     * Poisson batch size compiles a kernel once, which oneDNN's primitive cache (1,024 entries)
     * keeps.
     */
    static INDArray batchedMatmulTransposed(INDArray a, INDArray c) {
        INDArray out = Nd4j.createUninitialized(DataType.FLOAT, new long[]{a.size(0), a.size(1), c.size(1)}, 'c');
        batchedMatmulTransposedInto(a, c, out);
        return out;
    }

    /**
     * {@link #batchedMatmulTransposed} into out [B, M, K], which may be a range of a larger array
     * along its first dimension ({@link HostKernels#isContiguous}).
     *
     * @throws IllegalArgumentException if the shapes disagree or out is not contiguous
     */
    static void batchedMatmulTransposedInto(INDArray a, INDArray c, INDArray out) {
        a = contiguous(a);
        c = contiguous(c);
        long b = a.size(0), m = a.size(1), p = a.size(2), k = c.size(1);
        if (c.size(0) != b || c.size(2) != p || out.rank() != 3 || out.size(0) != b || out.size(1) != m || out.size(2) != k
                || !HostKernels.isContiguous(out) || out.dataType() != DataType.FLOAT) {
            throw new IllegalArgumentException("shapes " + java.util.Arrays.toString(a.shape()) + " and "
                    + java.util.Arrays.toString(c.shape()) + " do not match a contiguous output "
                    + java.util.Arrays.toString(out.shape()));
        }
        try (PointerScope scope = new PointerScope()) {
            dnnl_memory_desc_t src = strided(new long[]{b, m, p}, new long[]{m * p, p, 1});
            dnnl_memory_desc_t wei = strided(new long[]{b, p, k}, new long[]{k * p, 1, p}); // c_bᵀ
            dnnl_memory_desc_t dst = strided(new long[]{b, m, k}, new long[]{m * k, k, 1});
            dnnl_matmul_desc_t desc = new dnnl_matmul_desc_t();
            check(dnnl_matmul_desc_init(desc, src, wei, null, dst), "matmul desc");
            execute(new const_dnnl_op_desc_t(desc), null,
                    new int[]{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                    new dnnl_memory_desc_t[]{src, wei, dst}, new INDArray[]{a, c, out});
        }
    }

    /**
     * Whether oneDNN's convolution primitives ({@link #convolutionBackwardData}, {@link #convolutionBackwardWeights},
     * {@link #perExampleConvolutionWeights}) take this window on inputs of height h and width w: the right padding
     * that reproduces DL4J's output size (Truncate mode) must not be negative.
     */
    static boolean convolutionSupported(Ops.Window g, long h, long w) {
        return rightPadding(h, g.kH(), g.sH(), g.pH(), g.dH()) >= 0 && rightPadding(w, g.kW(), g.sW(), g.pW(), g.dW()) >= 0;
    }

    /**
     * The height and width of the part of an h × w input that the window reads: DL4J's output size (Truncate mode)
     * can leave the last rows or columns unread, where the right padding {@link #convolutionSupported} needs would be
     * negative. Cropped to this, the input has the same output and is {@link #convolutionSupported}.
     */
    static long[] readExtent(Ops.Window g, long h, long w) {
        return new long[]{h + Math.min(0, rightPadding(h, g.kH(), g.sH(), g.pH(), g.dH())),
                w + Math.min(0, rightPadding(w, g.kW(), g.sW(), g.pW(), g.dW()))};
    }

    /** The right padding with which oneDNN's output size (in + pl + pr − d(k−1) − 1)/s + 1 equals DL4J's. */
    private static long rightPadding(long in, int k, int s, int p, int d) {
        long out = (in + 2L * p - ((long) d * (k - 1) + 1)) / s + 1;
        return (out - 1) * s + (long) d * (k - 1) + 1 - in - p;
    }

    /**
     * A convolution's output z = W ⋆ x + b [B, oC, oH, oW] for x [B, iC, H, W], weights [oC, iC/groups, kH, kW] and a
     * bias [oC] or null, in the current workspace (oneDNN's direct convolution on its blocked layouts, with reorders).
     * With groups G &gt; 1 the channels split into G groups, output channel o reading input group ⌊o/(oC/G)⌋ only (a
     * depthwise convolution: G = iC, output channel c·m + j the j-th filter of input channel c, as libnd4j's
     * depthwise_conv2d orders them).
     *
     * @throws IllegalArgumentException if the window is not {@link #convolutionSupported} or shapes disagree
     */
    static INDArray convolutionForward(INDArray x, INDArray w, INDArray bias, Ops.Window g, int groups) {
        x = contiguous(x);
        w = contiguous(w);
        long[] outShape = {x.size(0), w.size(0), g.outH(x.size(2)), g.outW(x.size(3))};
        INDArray out = Nd4j.createUninitialized(DataType.FLOAT, outShape, 'c');
        try (PointerScope scope = new PointerScope()) {
            dnnl_memory_desc_t[] md = convolutionMds(x.shape(), w.shape(), outShape, g, groups, false);
            dnnl_memory_desc_t[] any = convolutionMds(x.shape(), w.shape(), outShape, g, groups, true);
            dnnl_memory_desc_t biasMd = null;
            if (bias != null) {
                biasMd = new dnnl_memory_desc_t();
                check(dnnl_memory_desc_init_by_tag(biasMd, 1, new long[]{w.size(0)}, dnnl_f32, dnnl_a), "memory desc");
            }
            dnnl_convolution_desc_t desc = new dnnl_convolution_desc_t();
            check(dnnl_dilated_convolution_forward_desc_init(desc, dnnl_forward_training, dnnl_convolution_direct, any[0], any[1],
                    biasMd, any[2], strides(g), dilates(g), leftPadding(g), rightPadding(x.shape(), g)), "convolution desc");
            dnnl_primitive_desc pd = new dnnl_primitive_desc();
            check(dnnl_primitive_desc_create(pd, new const_dnnl_op_desc_t(desc), null, ENGINE, null), "convolution primitive desc");
            try {
                if (bias == null) {
                    runReordered(pd, new int[]{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                            new dnnl_memory_desc_t[]{md[0], md[1], md[2]}, new INDArray[]{x, w, out}, 2);
                } else {
                    runReordered(pd, new int[]{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST},
                            new dnnl_memory_desc_t[]{md[0], md[1], biasMd, md[2]},
                            new INDArray[]{x, w, contiguous(bias).reshape(bias.length()), out}, 3);
                }
            } finally {
                dnnl_primitive_desc_destroy(pd);
            }
        }
        return out;
    }

    /**
     * A convolution's input gradient dL/dx [B, iC, H, W] from dL/dz [B, oC, oH, oW] and the weights
     * [oC, iC/groups, kH, kW] (the transposed convolution; no weight gradient is computed, unlike libnd4j's conv2d_bp),
     * in the current workspace.
     *
     * @param inputShape the shape of x, [B, iC, H, W]
     * @throws IllegalArgumentException if the window is not {@link #convolutionSupported} or shapes disagree
     */
    static INDArray convolutionBackwardData(INDArray delta, INDArray w, long[] inputShape, Ops.Window g, int groups) {
        delta = contiguous(delta);
        w = contiguous(w);
        INDArray out = Nd4j.createUninitialized(DataType.FLOAT, inputShape, 'c');
        try (PointerScope scope = new PointerScope()) {
            dnnl_memory_desc_t[] md = convolutionMds(inputShape, w.shape(), delta.shape(), g, groups, false);
            dnnl_memory_desc_t[] any = convolutionMds(inputShape, w.shape(), delta.shape(), g, groups, true);
            dnnl_primitive_desc hint = convolutionForwardHint(any, g, inputShape);
            dnnl_primitive_desc pd = new dnnl_primitive_desc();
            try {
                dnnl_convolution_desc_t desc = new dnnl_convolution_desc_t();
                check(dnnl_dilated_convolution_backward_data_desc_init(desc, dnnl_convolution_direct, any[0], any[1], any[2],
                        strides(g), dilates(g), leftPadding(g), rightPadding(inputShape, g)), "convolution backward data desc");
                check(dnnl_primitive_desc_create(pd, new const_dnnl_op_desc_t(desc), null, ENGINE, hint), "primitive desc");
                runReordered(pd, new int[]{DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC},
                        new dnnl_memory_desc_t[]{md[2], md[1], md[0]}, new INDArray[]{delta, w, out}, 2);
            } finally {
                if (!pd.isNull()) {
                    dnnl_primitive_desc_destroy(pd);
                }
                dnnl_primitive_desc_destroy(hint);
            }
        }
        return out;
    }

    /**
     * A convolution's weight gradient summed over the batch, Σ_b dL/dW of example b, from its input x [B, iC, H, W]
     * and dL/dz [B, oC, oH, oW], written into {@code out} (contiguous, oC·(iC/groups)·kH·kW elements, overwritten).
     *
     * @throws IllegalArgumentException if the window is not {@link #convolutionSupported} or shapes disagree
     */
    static void convolutionBackwardWeights(INDArray x, INDArray delta, Ops.Window g, int groups, INDArray out) {
        x = contiguous(x);
        delta = contiguous(delta);
        long[] wShape = {delta.size(1), x.size(1) / groups, g.kH(), g.kW()};
        try (PointerScope scope = new PointerScope()) {
            dnnl_memory_desc_t[] md = convolutionMds(x.shape(), wShape, delta.shape(), g, groups, false);
            dnnl_primitive_desc pd = backwardWeightsPrimitiveDesc(convolutionMds(x.shape(), wShape, delta.shape(), g, groups, true), g,
                    x.shape());
            try {
                runReordered(pd, new int[]{DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS},
                        new dnnl_memory_desc_t[]{md[0], md[2], md[1]}, new INDArray[]{x, delta, out}, 2);
            } finally {
                dnnl_primitive_desc_destroy(pd);
            }
        }
    }

    /**
     * Per-example weight gradients of a convolution: row b of {@code out} [n, oC·(iC/groups)·kH·kW] (contiguous, overwritten)
     * is dL/dW of example b alone, from x [n, iC, H, W] and dL/dz [n, oC, oH, oW]. One backward-weights primitive of
     * batch 1 on oneDNN's blocked layouts is created and run once per example, each example's input and output
     * gradient reordered into those layouts and its weight gradient reordered back into its row of {@code out} (the
     * batch-1 primitive on plain layouts, oneDNN's im2col and GEMM, ran at a third of the speed). No columns are kept
     * and only the output grows with n.
     *
     * @throws IllegalArgumentException if the window is not {@link #convolutionSupported} or shapes disagree
     */
    static void perExampleConvolutionWeights(INDArray x, INDArray delta, Ops.Window g, int groups, INDArray out) {
        x = contiguous(x);
        delta = contiguous(delta);
        long n = x.size(0);
        long[] src = {1, x.size(1), x.size(2), x.size(3)};
        long[] dst = {1, delta.size(1), delta.size(2), delta.size(3)};
        long[] wShape = {delta.size(1), x.size(1) / groups, g.kH(), g.kW()};
        long wLength = wShape[0] * wShape[1] * wShape[2] * wShape[3];
        if (delta.size(0) != n || out.length() != n * wLength || !HostKernels.isContiguous(out) || out.dataType() != DataType.FLOAT) {
            throw new IllegalArgumentException("per-example convolution weights: input " + java.util.Arrays.toString(x.shape())
                    + ", output gradient " + java.util.Arrays.toString(delta.shape()) + " and result "
                    + java.util.Arrays.toString(out.shape()) + " do not match");
        }
        try (PointerScope scope = new PointerScope()) {
            dnnl_memory_desc_t[] plain = convolutionMds(src, wShape, dst, g, groups, false); // {src, weights, dst}
            dnnl_primitive_desc pd = backwardWeightsPrimitiveDesc(convolutionMds(src, wShape, dst, g, groups, true), g, src);
            java.util.List<Bound> steps = new java.util.ArrayList<>();
            dnnl_stream stream = new dnnl_stream();
            try {
                int[] kinds = {DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST};
                Pointer[] perExample = {address(x), address(out), address(delta)}; // example 0 of each, in plain layout
                long[] step = {src[1] * src[2] * src[3] * 4, wLength * 4, dst[1] * dst[2] * dst[3] * 4};
                Bound[] reorders = new Bound[3];
                dnnl_memory_desc_t[] used = new dnnl_memory_desc_t[3];
                Pointer[] convArgs = new Pointer[3];
                long[] convStep = new long[3];
                dnnl_memory_desc_t[] plainBatch = convolutionMds(x.shape(), wShape, delta.shape(), g, groups, false);
                for (int i = 0; i < 3; i++) {
                    used[i] = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, kinds[i]);
                    dnnl_memory_desc_t usedBatch = kinds[i] == DNNL_ARG_DIFF_WEIGHTS ? null : withBatch(used[i], n);
                    if (dnnl_memory_desc_equal(used[i], plain[i]) != 0) {
                        convArgs[i] = perExample[i];
                        convStep[i] = step[i];
                    } else if (usedBatch != null) { // the whole batch reordered at once; each example a slab of it
                        convArgs[i] = scratch(dnnl_memory_desc_get_size(usedBatch));
                        reorder(plainBatch[i], address(i == 0 ? x : delta), usedBatch, convArgs[i]);
                        convStep[i] = dnnl_memory_desc_get_size(used[i]);
                    } else { // a scratch buffer in oneDNN's layout, and a reorder between it and the example's plain memory
                        convArgs[i] = scratch(dnnl_memory_desc_get_size(used[i]));
                        boolean output = kinds[i] == DNNL_ARG_DIFF_WEIGHTS;
                        reorders[i] = output ? Bound.reorder(used[i], convArgs[i], plain[i], perExample[i], 1, step[i])
                                : Bound.reorder(plain[i], perExample[i], used[i], convArgs[i], 0, step[i]);
                        steps.add(reorders[i]);
                    }
                }
                if (reorders[1] != null) { // the weight gradient's reorder runs after the convolution
                    steps.remove(reorders[1]);
                }
                Bound conv = new Bound(pd, false, kinds, used, convArgs);
                for (int i = 0; i < 3; i++) {
                    if (reorders[i] == null) {
                        conv.vary(i, convStep[i]);
                    }
                }
                steps.add(conv);
                if (reorders[1] != null) {
                    steps.add(reorders[1]);
                }
                check(dnnl_stream_create(stream, ENGINE, dnnl_stream_default_flags), "stream");
                for (long b = 0; b < n; b++) {
                    for (Bound bound : steps) {
                        bound.execute(stream, b);
                    }
                }
                check(dnnl_stream_wait(stream), "stream wait");
            } finally {
                if (!stream.isNull()) {
                    dnnl_stream_destroy(stream);
                }
                for (Bound bound : steps) {
                    bound.destroy();
                }
                dnnl_primitive_desc_destroy(pd);
            }
        }
    }

    /**
     * The layout of a batch-1 descriptor extended to n examples, each a slab of one batch-1 size (so example b of the
     * batch is the batch-1 memory at b slabs), or null where the extended layout is not that.
     */
    private static dnnl_memory_desc_t withBatch(dnnl_memory_desc_t one, long n) {
        dnnl_memory_desc_t md = new dnnl_memory_desc_t();
        Pointer.memcpy(md, one, md.sizeof());
        md.dims().put(0, n);
        md.padded_dims().put(0, n);
        return dnnl_memory_desc_get_size(md) == n * dnnl_memory_desc_get_size(one) ? md : null;
    }

    /**
     * A primitive bound to its memories, some of which move by a fixed number of bytes per example (a loop over the
     * examples of a batch updates their handles instead of creating memories).
     */
    private static final class Bound {
        private final dnnl_primitive primitive = new dnnl_primitive();
        private final dnnl_memory[] memories;
        private final dnnl_exec_arg_t args;
        private final Pointer[] base;
        private final long[] step; // bytes per example, 0 for fixed memories
        private final boolean ownsPd;
        private final dnnl_primitive_desc pd;

        Bound(dnnl_primitive_desc pd, boolean ownsPd, int[] kinds, dnnl_memory_desc_t[] mds, Pointer[] data) {
            this.pd = pd;
            this.ownsPd = ownsPd;
            this.memories = new dnnl_memory[kinds.length];
            this.base = data;
            this.step = new long[kinds.length];
            this.args = new dnnl_exec_arg_t(kinds.length);
            check(dnnl_primitive_create(primitive, pd), "primitive");
            for (int i = 0; i < kinds.length; i++) {
                memories[i] = new dnnl_memory();
                check(dnnl_memory_create(memories[i], mds[i], ENGINE, data[i]), "memory");
                args.position(i).arg(kinds[i]).memory(memories[i]);
            }
        }

        /** A reorder from → to; argument {@code varying} (0 from, 1 to) moves by {@code step} bytes per example. */
        static Bound reorder(dnnl_memory_desc_t fromMd, Pointer from, dnnl_memory_desc_t toMd, Pointer to, int varying, long step) {
            dnnl_primitive_desc pd = new dnnl_primitive_desc();
            check(dnnl_reorder_primitive_desc_create(pd, fromMd, ENGINE, toMd, ENGINE, null), "reorder primitive desc");
            Bound b = new Bound(pd, true, new int[]{DNNL_ARG_FROM, DNNL_ARG_TO}, new dnnl_memory_desc_t[]{fromMd, toMd},
                    new Pointer[]{from, to});
            b.vary(varying, step);
            return b;
        }

        void vary(int argument, long bytes) {
            step[argument] = bytes;
        }

        void execute(dnnl_stream stream, long example) {
            for (int i = 0; i < memories.length; i++) {
                if (step[i] != 0) {
                    Pointer at = new Pointer(base[i]).position(base[i].position() + example * step[i]);
                    check(dnnl_memory_set_data_handle(memories[i], at), "memory handle");
                }
            }
            check(dnnl_primitive_execute(primitive, stream, memories.length, args.position(0)), "execute");
        }

        void destroy() {
            for (dnnl_memory m : memories) {
                if (m != null && !m.isNull()) {
                    dnnl_memory_destroy(m);
                }
            }
            if (!primitive.isNull()) {
                dnnl_primitive_destroy(primitive);
            }
            if (ownsPd) {
                dnnl_primitive_desc_destroy(pd);
            }
        }
    }

    /**
     * Memory descriptors {src, weights, dst} of a convolution: plain (nchw, oihw, nchw; goihw for G &gt; 1 groups, the
     * same memory as weights [oC, iC/G, kH, kW]), or with {@code any} left to oneDNN (its blocked layouts, for which its
     * direct convolution kernels exist).
     */
    private static dnnl_memory_desc_t[] convolutionMds(long[] src, long[] wei, long[] dst, Ops.Window g, int groups, boolean any) {
        if (src.length != 4 || wei.length != 4 || dst.length != 4 || groups < 1 || src[0] != dst[0] || src[1] != wei[1] * groups
                || dst[1] != wei[0] || wei[0] % groups != 0 || wei[2] != g.kH() || wei[3] != g.kW() || dst[2] != g.outH(src[2])
                || dst[3] != g.outW(src[3]) || !convolutionSupported(g, src[2], src[3])) {
            throw new IllegalArgumentException("convolution shapes input " + java.util.Arrays.toString(src) + ", weights "
                    + java.util.Arrays.toString(wei) + ", output " + java.util.Arrays.toString(dst) + " do not match window " + g
                    + " with " + groups + " group(s)");
        }
        dnnl_memory_desc_t[] md = new dnnl_memory_desc_t[3];
        long[][] dims = {src, groups == 1 ? wei : new long[]{groups, wei[0] / groups, wei[1], wei[2], wei[3]}, dst};
        int[] tags = {dnnl_nchw, groups == 1 ? dnnl_oihw : dnnl_goihw, dnnl_nchw};
        for (int i = 0; i < 3; i++) {
            md[i] = new dnnl_memory_desc_t();
            check(dnnl_memory_desc_init_by_tag(md[i], dims[i].length, dims[i], dnnl_f32, any ? dnnl_format_tag_any : tags[i]),
                    "memory desc");
        }
        return md;
    }

    private static dnnl_primitive_desc convolutionForwardHint(dnnl_memory_desc_t[] md, Ops.Window g, long[] src) {
        dnnl_convolution_desc_t desc = new dnnl_convolution_desc_t();
        check(dnnl_dilated_convolution_forward_desc_init(desc, dnnl_forward_training, dnnl_convolution_direct, md[0], md[1], null,
                md[2], strides(g), dilates(g), leftPadding(g), rightPadding(src, g)), "convolution desc");
        dnnl_primitive_desc pd = new dnnl_primitive_desc();
        check(dnnl_primitive_desc_create(pd, new const_dnnl_op_desc_t(desc), null, ENGINE, null), "convolution primitive desc");
        return pd;
    }

    private static dnnl_primitive_desc backwardWeightsPrimitiveDesc(dnnl_memory_desc_t[] md, Ops.Window g, long[] src) {
        dnnl_primitive_desc hint = convolutionForwardHint(md, g, src);
        try {
            dnnl_convolution_desc_t desc = new dnnl_convolution_desc_t();
            check(dnnl_dilated_convolution_backward_weights_desc_init(desc, dnnl_convolution_direct, md[0], md[1], null, md[2],
                    strides(g), dilates(g), leftPadding(g), rightPadding(src, g)), "convolution backward weights desc");
            dnnl_primitive_desc pd = new dnnl_primitive_desc();
            check(dnnl_primitive_desc_create(pd, new const_dnnl_op_desc_t(desc), null, ENGINE, hint), "primitive desc");
            return pd;
        } finally {
            dnnl_primitive_desc_destroy(hint);
        }
    }

    private static long[] strides(Ops.Window g) {
        return new long[]{g.sH(), g.sW()};
    }

    private static long[] dilates(Ops.Window g) {
        return new long[]{g.dH() - 1, g.dW() - 1}; // oneDNN counts the gaps; DL4J's dilation 1 is none
    }

    private static long[] leftPadding(Ops.Window g) {
        return new long[]{g.pH(), g.pW()};
    }

    private static long[] rightPadding(long[] src, Ops.Window g) {
        return new long[]{rightPadding(src[2], g.kH(), g.sH(), g.pH(), g.dH()), rightPadding(src[3], g.kW(), g.sW(), g.pW(), g.dW())};
    }

    /**
     * A convolution's output from its im2col columns: z_b = w · cols_b + bias for w [M, K] (the
     * weights [oC, iC·kH·kW]) and cols [B, K, P] (P output positions): [B, M, P], i.e. NCHW.
     * oneDNN's fast matmul kernels need the shared matrix as the (broadcast) right operand and a
     * plain destination, so this computes z_bᵀ = cols_bᵀ · wᵀ into [B, P, M] and reorders that.
     *
     * @param bias [M], or null
     */
    static INDArray convolutionForward(INDArray w, INDArray cols, INDArray bias) {
        cols = contiguous(cols);
        long b = cols.size(0), k = cols.size(1), p = cols.size(2), m = w.size(0);
        if (w.size(1) != k) {
            throw new IllegalArgumentException("weights " + java.util.Arrays.toString(w.shape()) + " do not match columns "
                    + java.util.Arrays.toString(cols.shape()));
        }
        INDArray wT = w.transpose().dup('c'); // [K, M]
        INDArray biasArray = bias == null ? null : contiguous(bias);
        INDArray positionsMajor = Nd4j.createUninitialized(DataType.FLOAT, new long[]{b, p, m}, 'c');
        INDArray out = Nd4j.createUninitialized(DataType.FLOAT, new long[]{b, m, p}, 'c');
        try (PointerScope scope = new PointerScope()) {
            dnnl_memory_desc_t src = strided(new long[]{b, p, k}, new long[]{k * p, 1, p}); // cols_bᵀ
            dnnl_memory_desc_t wei = strided(new long[]{1, k, m}, new long[]{k * m, m, 1});
            dnnl_memory_desc_t dst = strided(new long[]{b, p, m}, new long[]{p * m, m, 1});
            dnnl_matmul_desc_t desc = new dnnl_matmul_desc_t();
            if (bias == null) {
                check(dnnl_matmul_desc_init(desc, src, wei, null, dst), "matmul desc");
                execute(new const_dnnl_op_desc_t(desc), null, new int[]{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                        new dnnl_memory_desc_t[]{src, wei, dst}, new INDArray[]{cols, wT, positionsMajor});
            } else {
                dnnl_memory_desc_t bia = strided(new long[]{1, 1, m}, new long[]{m, m, 1});
                check(dnnl_matmul_desc_init(desc, src, wei, bia, dst), "matmul desc");
                execute(new const_dnnl_op_desc_t(desc), null, new int[]{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST},
                        new dnnl_memory_desc_t[]{src, wei, bia, dst}, new INDArray[]{cols, wT, biasArray, positionsMajor});
            }
            // [B, P, M] → [B, M, P]
            dnnl_memory_desc_t from = strided(new long[]{b, m, p}, new long[]{p * m, 1, m});
            dnnl_memory_desc_t to = strided(new long[]{b, m, p}, new long[]{m * p, p, 1});
            requireFilled(new dnnl_memory_desc_t[]{from, to}, new INDArray[]{positionsMajor, out});
            reorder(from, address(positionsMajor), to, address(out));
        }
        return out;
    }

    /**
     * The gradient of a convolution's im2col columns, wᵀ · δ_b for w [M, K] and output deltas
     * δ [B, M, P], returned transposed per example: [B, P, K] (the layout
     * {@link HostKernels#col2imTransposed} reads; oneDNN's fast kernels need a plain destination).
     */
    static INDArray convolutionColumnsGradientTransposed(INDArray w, INDArray delta) {
        delta = contiguous(delta);
        INDArray wc = contiguous(w);
        long b = delta.size(0), m = delta.size(1), p = delta.size(2), k = w.size(1);
        if (w.size(0) != m) {
            throw new IllegalArgumentException("weights " + java.util.Arrays.toString(w.shape()) + " do not match deltas "
                    + java.util.Arrays.toString(delta.shape()));
        }
        INDArray out = Nd4j.createUninitialized(DataType.FLOAT, new long[]{b, p, k}, 'c');
        try (PointerScope scope = new PointerScope()) {
            dnnl_memory_desc_t src = strided(new long[]{b, p, m}, new long[]{m * p, 1, p}); // δ_bᵀ
            dnnl_memory_desc_t wei = strided(new long[]{1, m, k}, new long[]{m * k, k, 1});
            dnnl_memory_desc_t dst = strided(new long[]{b, p, k}, new long[]{p * k, k, 1});
            dnnl_matmul_desc_t desc = new dnnl_matmul_desc_t();
            check(dnnl_matmul_desc_init(desc, src, wei, null, dst), "matmul desc");
            execute(new const_dnnl_op_desc_t(desc), null, new int[]{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                    new dnnl_memory_desc_t[]{src, wei, dst}, new INDArray[]{delta, wc, out});
        }
        return out;
    }

    /** tanh of x in place (x dense, see {@link HostKernels#isDense}); returns x. */
    static INDArray tanhInPlace(INDArray x) {
        if (!HostKernels.isDense(x)) {
            throw new IllegalArgumentException("tanhInPlace needs a dense 'c'-ordered array");
        }
        try (PointerScope scope = new PointerScope()) {
            dnnl_memory_desc_t md = new dnnl_memory_desc_t();
            check(dnnl_memory_desc_init_by_tag(md, 1, new long[]{x.length()}, dnnl_f32, dnnl_a), "memory desc");
            dnnl_eltwise_desc_t desc = new dnnl_eltwise_desc_t();
            check(dnnl_eltwise_forward_desc_init(desc, dnnl_forward_inference, dnnl_eltwise_tanh, md, 0f, 0f), "tanh desc");
            execute(new const_dnnl_op_desc_t(desc), null, new int[]{DNNL_ARG_SRC, DNNL_ARG_DST},
                    new dnnl_memory_desc_t[]{md, md}, new INDArray[]{x, x});
        }
        return x;
    }

    /** dL/dz = dL/da · (1 − a²) for a = tanh(z), from the output a; a new array. */
    static INDArray tanhBackward(INDArray a, INDArray gradOut) {
        a = contiguous(a);
        gradOut = contiguous(gradOut);
        INDArray gradIn = Nd4j.createUninitialized(DataType.FLOAT, a.shape(), 'c');
        try (PointerScope scope = new PointerScope()) {
            dnnl_memory_desc_t md = new dnnl_memory_desc_t();
            check(dnnl_memory_desc_init_by_tag(md, 1, new long[]{a.length()}, dnnl_f32, dnnl_a), "memory desc");
            dnnl_eltwise_desc_t forward = new dnnl_eltwise_desc_t();
            check(dnnl_eltwise_forward_desc_init(forward, dnnl_forward_training, dnnl_eltwise_tanh_use_dst_for_bwd, md, 0f, 0f), "tanh desc");
            dnnl_primitive_desc hint = new dnnl_primitive_desc();
            check(dnnl_primitive_desc_create(hint, new const_dnnl_op_desc_t(forward), null, ENGINE, null), "tanh primitive desc");
            try {
                dnnl_eltwise_desc_t desc = new dnnl_eltwise_desc_t();
                check(dnnl_eltwise_backward_desc_init(desc, dnnl_eltwise_tanh_use_dst_for_bwd, md, md, 0f, 0f), "tanh backward desc");
                execute(new const_dnnl_op_desc_t(desc), hint, new int[]{DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC},
                        new dnnl_memory_desc_t[]{md, md, md}, new INDArray[]{a, gradOut, gradIn});
            } finally {
                dnnl_primitive_desc_destroy(hint);
            }
        }
        return gradIn;
    }

    /** The row vector w [B] times the matrix g [B, N]: Σ_b w_b g_b, [1, N]. */
    static INDArray vectorTimesMatrix(INDArray w, INDArray g) {
        w = contiguous(w);
        g = contiguous(g);
        long b = g.size(0), n = g.size(1);
        if (w.length() != b) {
            throw new IllegalArgumentException("w has " + w.length() + " elements, g has " + b + " rows");
        }
        INDArray out = Nd4j.createUninitialized(DataType.FLOAT, new long[]{1, n}, 'c');
        try (PointerScope scope = new PointerScope()) {
            dnnl_memory_desc_t src = strided(new long[]{1, b}, new long[]{b, 1});
            dnnl_memory_desc_t wei = strided(new long[]{b, n}, new long[]{n, 1});
            dnnl_memory_desc_t dst = strided(new long[]{1, n}, new long[]{n, 1});
            dnnl_matmul_desc_t desc = new dnnl_matmul_desc_t();
            check(dnnl_matmul_desc_init(desc, src, wei, null, dst), "matmul desc");
            execute(new const_dnnl_op_desc_t(desc), null, new int[]{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                    new dnnl_memory_desc_t[]{src, wei, dst}, new INDArray[]{w, g, out});
        }
        return out;
    }

    private static void execute(const_dnnl_op_desc_t desc, dnnl_primitive_desc hint, int[] argKinds,
                                dnnl_memory_desc_t[] mds, INDArray[] arrays) {
        dnnl_primitive_desc pd = new dnnl_primitive_desc();
        check(dnnl_primitive_desc_create(pd, desc, null, ENGINE, hint), "primitive desc");
        try {
            run(pd, argKinds, mds, arrays);
        } finally {
            dnnl_primitive_desc_destroy(pd);
        }
    }

    /**
     * Executes pd's primitive on the arrays, each dense and exactly the size of its memory
     * descriptor (oneDNN reads raw addresses: a mismatch would read or write past an array).
     */
    private static void run(dnnl_primitive_desc pd, int[] argKinds, dnnl_memory_desc_t[] mds, INDArray[] arrays) {
        requireFilled(mds, arrays);
        Pointer[] data = new Pointer[arrays.length];
        for (int i = 0; i < arrays.length; i++) {
            data[i] = address(arrays[i]);
        }
        runAt(pd, argKinds, mds, data);
    }

    /**
     * Each array dense and exactly the size of its memory descriptor (oneDNN reads raw addresses: a mismatch would read
     * or write past an array).
     */
    private static void requireFilled(dnnl_memory_desc_t[] mds, INDArray[] arrays) {
        for (int i = 0; i < arrays.length; i++) {
            long bytes = arrays[i].length() * arrays[i].data().getElementSize();
            if (!HostKernels.isContiguous(arrays[i]) || bytes != dnnl_memory_desc_get_size(mds[i])) {
                throw new IllegalArgumentException("argument " + i + " of shape " + java.util.Arrays.toString(arrays[i].shape())
                        + " (" + bytes + " bytes) does not fill oneDNN's memory of " + dnnl_memory_desc_get_size(mds[i]) + " bytes");
            }
        }
    }

    /** Executes pd's primitive on memory at the given addresses, each holding its descriptor's size. */
    private static void runAt(dnnl_primitive_desc pd, int[] argKinds, dnnl_memory_desc_t[] mds, Pointer[] data) {
        dnnl_primitive primitive = new dnnl_primitive();
        check(dnnl_primitive_create(primitive, pd), "primitive");
        dnnl_memory[] memories = new dnnl_memory[data.length];
        dnnl_stream stream = new dnnl_stream();
        try {
            dnnl_exec_arg_t args = new dnnl_exec_arg_t(data.length);
            for (int i = 0; i < data.length; i++) {
                memories[i] = new dnnl_memory();
                check(dnnl_memory_create(memories[i], mds[i], ENGINE, data[i]), "memory");
                args.position(i).arg(argKinds[i]).memory(memories[i]);
            }
            check(dnnl_stream_create(stream, ENGINE, dnnl_stream_default_flags), "stream");
            check(dnnl_primitive_execute(primitive, stream, data.length, args.position(0)), "execute");
            check(dnnl_stream_wait(stream), "stream wait");
        } finally {
            if (!stream.isNull()) {
                dnnl_stream_destroy(stream);
            }
            for (dnnl_memory m : memories) {
                if (m != null && !m.isNull()) {
                    dnnl_memory_destroy(m);
                }
            }
            dnnl_primitive_destroy(primitive);
        }
    }

    /**
     * {@link #run} for a primitive whose chosen layouts may differ from the arrays' plain ones: each argument whose
     * layout differs goes through a scratch buffer ({@link #scratch}), reordered in before the primitive (inputs) or
     * out after it (the output, at {@code outputIndex}). Call inside a {@link PointerScope}.
     */
    private static void runReordered(dnnl_primitive_desc pd, int[] argKinds, dnnl_memory_desc_t[] plain, INDArray[] arrays,
                                     int outputIndex) {
        requireFilled(plain, arrays);
        dnnl_memory_desc_t[] chosen = new dnnl_memory_desc_t[arrays.length];
        Pointer[] used = new Pointer[arrays.length];
        boolean outputReordered = false;
        for (int i = 0; i < arrays.length; i++) {
            chosen[i] = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, argKinds[i]);
            if (dnnl_memory_desc_equal(chosen[i], plain[i]) != 0) {
                used[i] = address(arrays[i]);
            } else {
                used[i] = scratch(dnnl_memory_desc_get_size(chosen[i]));
                if (i != outputIndex) {
                    reorder(plain[i], address(arrays[i]), chosen[i], used[i]);
                } else {
                    outputReordered = true;
                }
            }
        }
        runAt(pd, argKinds, chosen, used);
        if (outputReordered) {
            reorder(chosen[outputIndex], used[outputIndex], plain[outputIndex], address(arrays[outputIndex]));
        }
    }

    /**
     * Uninitialised native memory of the given size, 64-byte aligned, freed when the enclosing {@link PointerScope}
     * closes: scratch copies in oneDNN's layouts live for one call, not in ND4J's workspace until the end of the batch
     * (where they would also be zeroed each time the workspace grows).
     */
    private static Pointer scratch(long bytes) {
        BytePointer block = new BytePointer(bytes + 64);
        long misalignment = block.address() % 64;
        return new Pointer(block).position(0).capacity(0).limit(0).position(misalignment == 0 ? 0 : 64 - misalignment);
    }

    private static void reorder(dnnl_memory_desc_t fromMd, Pointer from, dnnl_memory_desc_t toMd, Pointer to) {
        dnnl_primitive_desc pd = new dnnl_primitive_desc();
        check(dnnl_reorder_primitive_desc_create(pd, fromMd, ENGINE, toMd, ENGINE, null), "reorder primitive desc");
        try {
            runAt(pd, new int[]{DNNL_ARG_FROM, DNNL_ARG_TO}, new dnnl_memory_desc_t[]{fromMd, toMd}, new Pointer[]{from, to});
        } finally {
            dnnl_primitive_desc_destroy(pd);
        }
    }

    private static dnnl_memory_desc_t strided(long[] dims, long[] strides) {
        dnnl_memory_desc_t md = new dnnl_memory_desc_t();
        check(dnnl_memory_desc_init_by_strides(md, dims.length, dims, dnnl_f32, strides), "memory desc");
        return md;
    }

    /**
     * The address of x's first element (x contiguous; a view's buffer starts at the view's offset), as
     * oneDNN's memory handle.
     */
    private static Pointer address(INDArray x) {
        if (!HostKernels.isContiguous(x)) {
            throw new IllegalArgumentException("oneDNN reads contiguous arrays only");
        }
        Pointer p = x.data().addressPointer();
        return new Pointer(p).position(0).capacity(0).limit(0).position(p.position() * p.sizeof());
    }

    /** x itself when it is contiguous ({@link HostKernels#isContiguous}), else a 'c' copy. */
    private static INDArray contiguous(INDArray x) {
        return HostKernels.isContiguous(x) ? x : x.dup('c');
    }

    private static void check(int status, String what) {
        if (status != dnnl_success) {
            throw new IllegalStateException("oneDNN " + what + " failed with status " + status);
        }
    }
}
