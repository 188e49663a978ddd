package org.dpdl4j.dpsgd;

import static org.bytedeco.dnnl.global.dnnl.*;

import org.bytedeco.dnnl.const_dnnl_op_desc_t;
import org.bytedeco.dnnl.dnnl_eltwise_desc_t;
import org.bytedeco.dnnl.dnnl_engine;
import org.bytedeco.dnnl.dnnl_exec_arg_t;
import org.bytedeco.dnnl.dnnl_matmul_desc_t;
import org.bytedeco.dnnl.dnnl_memory;
import org.bytedeco.dnnl.dnnl_memory_desc_t;
import org.bytedeco.dnnl.dnnl_pooling_desc_t;
import org.bytedeco.dnnl.dnnl_primitive;
import org.bytedeco.dnnl.dnnl_primitive_desc;
import org.bytedeco.dnnl.dnnl_stream;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerScope;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * oneDNN primitives called directly, through JavaCPP's {@code org.bytedeco:dnnl} presets (oneDNN
 * 2.5, the library libnd4j's CPU build links), on ND4J host memory. They replace the libnd4j ops
 * that dominated a DP-SGD step on the CPU (measured in one JVM, one op thread, standard CNN, 256
 * examples, float32): the per-example weight gradients of a convolution, a batched matmul that
 * libnd4j ran at 5–7 GFLOP/s and oneDNN's matmul at 37–48 in the same microbenchmark; max
 * pooling's backward pass, which libnd4j recomputes the forward pass for, where oneDNN keeps the
 * arg-max workspace; tanh and its derivative; and the clip-weighted sum Σ_b w_b g_b. For dilated
 * convolutions, which libnd4j's float32 oneDNN helper rejects, they also give the convolution's
 * forward pass and columns' gradient as matmuls.
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
            dnnl_primitive_desc pd = new dnnl_primitive_desc();
            check(dnnl_reorder_primitive_desc_create(pd, from, ENGINE, to, ENGINE, null), "reorder primitive desc");
            try {
                run(pd, new int[]{DNNL_ARG_FROM, DNNL_ARG_TO}, new dnnl_memory_desc_t[]{from, to}, new INDArray[]{positionsMajor, out});
            } finally {
                dnnl_primitive_desc_destroy(pd);
            }
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

    /**
     * Whether {@link #maxPoolForward} serves this window on inputs of spatial size h × w: no
     * dilation and no padding (oneDNN's output size is then libnd4j's: ⌊(h − kH)/sH⌋ + 1).
     */
    static boolean poolingSupported(Ops.Window g, long h, long w) {
        return g.dH() == 1 && g.dW() == 1 && g.pH() == 0 && g.pW() == 0 && h >= g.kH() && w >= g.kW();
    }

    /**
     * Max pooling of x [B, C, H, W] for training: {output [B, C, oH, oW], workspace} where the
     * workspace (the arg-max of each window, oneDNN's layout) is what {@link #maxPoolBackward}
     * needs. Both in the current workspace. Requires {@link #poolingSupported}.
     */
    static INDArray[] maxPoolForward(INDArray x, Ops.Window g) {
        x = contiguous(x);
        long[] outShape = {x.size(0), x.size(1), g.outH(x.size(2)), g.outW(x.size(3))};
        INDArray out = Nd4j.createUninitialized(DataType.FLOAT, outShape, 'c');
        // ND4J arrays are allocated outside the PointerScopes, which would otherwise own their pointers
        INDArray workspace = Nd4j.createUninitialized(DataType.BYTE, new long[]{poolingWorkspaceBytes(x.shape(), outShape, g)}, 'c');
        try (PointerScope scope = new PointerScope()) {
            dnnl_memory_desc_t src = nchw(x.shape());
            dnnl_memory_desc_t dst = nchw(outShape);
            dnnl_primitive_desc pd = poolingForward(src, dst, g);
            try {
                dnnl_memory_desc_t ws = dnnl_primitive_desc_query_md(pd, dnnl_query_workspace_md, 0);
                run(pd, new int[]{DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_WORKSPACE},
                        new dnnl_memory_desc_t[]{src, dst, ws}, new INDArray[]{x, out, workspace});
                return new INDArray[]{out, workspace};
            } finally {
                dnnl_primitive_desc_destroy(pd);
            }
        }
    }

    private static long poolingWorkspaceBytes(long[] inputShape, long[] outShape, Ops.Window g) {
        try (PointerScope scope = new PointerScope()) {
            dnnl_primitive_desc pd = poolingForward(nchw(inputShape), nchw(outShape), g);
            try {
                return dnnl_memory_desc_get_size(dnnl_primitive_desc_query_md(pd, dnnl_query_workspace_md, 0));
            } finally {
                dnnl_primitive_desc_destroy(pd);
            }
        }
    }

    /**
     * dL/dx [B, C, H, W] of max pooling from dL/dy and the forward pass's workspace; the gradient of
     * each window goes to its arg-max, as in libnd4j's {@code maxpool2d_bp}.
     */
    static INDArray maxPoolBackward(INDArray gradOut, INDArray workspace, long[] inputShape, Ops.Window g) {
        gradOut = contiguous(gradOut);
        INDArray gradIn = Nd4j.createUninitialized(DataType.FLOAT, inputShape, 'c');
        try (PointerScope scope = new PointerScope()) {
            dnnl_memory_desc_t src = nchw(inputShape);
            dnnl_memory_desc_t dst = nchw(gradOut.shape());
            dnnl_primitive_desc hint = poolingForward(src, dst, g);
            try {
                dnnl_pooling_desc_t desc = new dnnl_pooling_desc_t();
                check(dnnl_pooling_backward_desc_init(desc, dnnl_pooling_max, src, dst, new long[]{g.sH(), g.sW()},
                        new long[]{g.kH(), g.kW()}, new long[]{0, 0}, new long[]{0, 0}), "pooling backward desc");
                dnnl_memory_desc_t ws = dnnl_primitive_desc_query_md(hint, dnnl_query_workspace_md, 0);
                execute(new const_dnnl_op_desc_t(desc), hint, new int[]{DNNL_ARG_DIFF_DST, DNNL_ARG_WORKSPACE, DNNL_ARG_DIFF_SRC},
                        new dnnl_memory_desc_t[]{dst, ws, src}, new INDArray[]{gradOut, workspace, gradIn});
            } finally {
                dnnl_primitive_desc_destroy(hint);
            }
        }
        return gradIn;
    }

    private static dnnl_primitive_desc poolingForward(dnnl_memory_desc_t src, dnnl_memory_desc_t dst, Ops.Window g) {
        dnnl_pooling_desc_t desc = new dnnl_pooling_desc_t();
        check(dnnl_pooling_forward_desc_init(desc, dnnl_forward_training, dnnl_pooling_max, src, dst,
                new long[]{g.sH(), g.sW()}, new long[]{g.kH(), g.kW()}, new long[]{0, 0}, new long[]{0, 0}), "pooling desc");
        dnnl_primitive_desc pd = new dnnl_primitive_desc();
        check(dnnl_primitive_desc_create(pd, new const_dnnl_op_desc_t(desc), null, ENGINE, null), "pooling primitive desc");
        return pd;
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
        for (int i = 0; i < arrays.length; i++) {
            long bytes = arrays[i].length() * arrays[i].data().getElementSize();
            if (!HostKernels.isContiguous(arrays[i]) || bytes != dnnl_memory_desc_get_size(mds[i])) {
                throw new IllegalArgumentException("argument " + i + " of shape " + java.util.Arrays.toString(arrays[i].shape())
                        + " (" + bytes + " bytes) does not fill oneDNN's memory of " + dnnl_memory_desc_get_size(mds[i]) + " bytes");
            }
        }
        dnnl_primitive primitive = new dnnl_primitive();
        check(dnnl_primitive_create(primitive, pd), "primitive");
        dnnl_memory[] memories = new dnnl_memory[arrays.length];
        dnnl_stream stream = new dnnl_stream();
        try {
            dnnl_exec_arg_t args = new dnnl_exec_arg_t(arrays.length);
            for (int i = 0; i < arrays.length; i++) {
                memories[i] = new dnnl_memory();
                check(dnnl_memory_create(memories[i], mds[i], ENGINE, address(arrays[i])), "memory");
                args.position(i).arg(argKinds[i]).memory(memories[i]);
            }
            check(dnnl_stream_create(stream, ENGINE, dnnl_stream_default_flags), "stream");
            check(dnnl_primitive_execute(primitive, stream, arrays.length, args.position(0)), "execute");
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

    private static dnnl_memory_desc_t strided(long[] dims, long[] strides) {
        dnnl_memory_desc_t md = new dnnl_memory_desc_t();
        check(dnnl_memory_desc_init_by_strides(md, dims.length, dims, dnnl_f32, strides), "memory desc");
        return md;
    }

    private static dnnl_memory_desc_t nchw(long[] shape) {
        if (shape.length != 4) {
            throw new IllegalArgumentException("pooling needs [B, C, H, W] arrays, got shape " + java.util.Arrays.toString(shape));
        }
        dnnl_memory_desc_t md = new dnnl_memory_desc_t();
        check(dnnl_memory_desc_init_by_tag(md, 4, shape, dnnl_f32, dnnl_nchw), "memory desc");
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
