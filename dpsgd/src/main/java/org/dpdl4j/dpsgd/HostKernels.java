package org.dpdl4j.dpsgd;

import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.Arrays;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * im2col and max pooling written in Java over host memory, for the CPU backend, where libnd4j's own ops are slow
 * (measured in one JVM, one op thread, standard CNN, 256 examples, float32: libnd4j 9.3 and 5.6 ms
 * for the two convolutions, this gather 2.7 and 1.6 ms). It produces exactly what libnd4j's
 * {@code im2col} produces; the per-example gradient tests compare the engine with DL4J's own layers
 * in float64 and {@code HostKernelsTest} compares it with the libnd4j op in float32 and float64.
 * On other backends (CUDA) the engine keeps the libnd4j op: {@link #enabled} is false there. Arrays
 * are read through their NIO views into a reused Java array; not thread-safe (one instance per layer
 * kernel, as the kernels are).
 */
final class HostKernels {
    /**
     * On the CPU backend, unless {@code -Ddpdl4j.javakernels=false} turns the Java kernels off (with
     * {@code -Ddpdl4j.onednn=false}, the engine then runs the libnd4j ops alone, as it does under CUDA).
     */
    private static final boolean CPU = Nd4j.getBackend().getClass().getSimpleName().startsWith("Cpu") && javaKernelsFlag();

    private static boolean javaKernelsFlag() {
        String flag = System.getProperty("dpdl4j.javakernels", "true");
        if (!flag.equals("true") && !flag.equals("false")) {
            throw new IllegalArgumentException("system property dpdl4j.javakernels must be true or false, got '" + flag + "'");
        }
        return flag.equals("true");
    }
    /** Input elements that {@link #maxPoolForward} takes per block of whole planes (16 KiB per int array). */
    private static final int POOL_BLOCK = 4096;
    private float[] floats;
    private double[] doubles;
    private float[] floatRow;
    private int[] transposedMap; // col2imTransposed's reordering of transposedMapOf
    private int[] transposedMapOf;
    private double[] doubleRow;
    private Pool pool;
    private int[] argmaxScratch;
    private float[] gradInScratch;

    /** Whether the Java kernels serve arrays of this type on this backend (CPU, float32 or float64). */
    static boolean enabled(DataType type) {
        return CPU && (type == DataType.FLOAT || type == DataType.DOUBLE);
    }

    /**
     * The im2col gather map of one example: for column entry (c, kh, kw, oh, ow), in that order, the
     * offset of the input pixel (c, oh·sH − pH + kh·dH, ow·sW − pW + kw·dW) within the example's
     * [C, H, W] block, or −1 where the window lies on the zero padding.
     */
    static int[] im2colMap(long channels, long height, long width, Ops.Window g) {
        long oH = g.outH(height);
        long oW = g.outW(width);
        long size = channels * g.kH() * g.kW() * oH * oW;
        if (size > Integer.MAX_VALUE || channels * height * width > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("an example's im2col block has " + size + " entries, more than 2^31 - 1");
        }
        int[] map = new int[(int) size];
        int j = 0;
        for (int c = 0; c < channels; c++) {
            for (int kh = 0; kh < g.kH(); kh++) {
                for (int kw = 0; kw < g.kW(); kw++) {
                    for (int oh = 0; oh < oH; oh++) {
                        long h = (long) oh * g.sH() - g.pH() + (long) kh * g.dH();
                        for (int ow = 0; ow < oW; ow++) {
                            long w = (long) ow * g.sW() - g.pW() + (long) kw * g.dW();
                            map[j++] = h < 0 || h >= height || w < 0 || w >= width ? -1 : (int) ((c * height + h) * width + w);
                        }
                    }
                }
            }
        }
        return map;
    }

    /**
     * im2col of x [B, C, H, W] through {@code map} (from {@link #im2colMap}): [B, C, kH, kW, oH, oW],
     * equal to libnd4j's {@code im2col} with zero padding. Allocated in the current workspace.
     */
    INDArray im2col(INDArray x, Ops.Window g, int[] map) {
        long b = x.size(0);
        int in = (int) (x.length() / b);
        int n = map.length;
        INDArray out = Nd4j.createUninitialized(x.dataType(), b, x.size(1), g.kH(), g.kW(), g.outH(x.size(2)), g.outW(x.size(3)));
        if (x.dataType() == DataType.FLOAT) {
            im2colInto(contiguous(x), 0, (int) b, map, out);
        } else {
            double[] src = readDoubles(x);
            if (doubleRow == null || doubleRow.length < n) {
                doubleRow = new double[n];
            }
            double[] row = doubleRow;
            DoubleBuffer dst = out.data().asNioDouble();
            for (int e = 0; e < b; e++) {
                int from = e * in;
                for (int j = 0; j < n; j++) {
                    int i = map[j];
                    row[j] = i < 0 ? 0.0 : src[from + i];
                }
                dst.put(e * n, row, 0, n);
            }
        }
        return out;
    }

    /**
     * im2col of examples [from, from + count) of a dense float32 x [B, C, H, W] through {@code map}
     * into a dense float32 {@code out} of count·map.length elements ([count, C, kH, kW, oH, oW]).
     * Only those examples are read.
     *
     * @throws IllegalArgumentException if an array is not dense float32 or the sizes disagree
     */
    void im2colInto(INDArray x, int from, int count, int[] map, INDArray out) {
        int n = map.length;
        long in = x.length() / x.size(0);
        if (x.dataType() != DataType.FLOAT || out.dataType() != DataType.FLOAT || !isDense(x) || !isDense(out)
                || from < 0 || count < 1 || from + count > x.size(0) || out.length() != (long) count * n
                || (long) count * in > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("im2colInto: examples [" + from + ", " + (from + count) + ") of "
                    + x.dataType() + " " + Arrays.toString(x.shape()) + " into " + out.dataType() + " "
                    + Arrays.toString(out.shape()) + " with " + n + " column entries per example");
        }
        int length = (int) (count * in);
        if (floats == null || floats.length < length) {
            floats = new float[length];
        }
        float[] src = floats;
        x.data().asNioFloat().get((int) (from * in), src, 0, length);
        if (floatRow == null || floatRow.length < n) {
            floatRow = new float[n];
        }
        float[] row = floatRow;
        FloatBuffer dst = out.data().asNioFloat();
        // each example is gathered into a Java array and written with one bulk put: an absolute put
        // per element on the direct buffer costs several times the gather itself
        for (int e = 0; e < count; e++) {
            int base = (int) (e * in);
            for (int j = 0; j < n; j++) {
                int i = map[j];
                row[j] = i < 0 ? 0f : src[base + i];
            }
            dst.put(e * n, row, 0, n);
        }
    }

    /**
     * The adjoint of {@link #im2col}, from the columns' gradient stored transposed per example:
     * colsT [B, P, K] (float32; K = C·kH·kW, P = oH·oW, the layout {@link Dnnl} produces). Returns
     * dx [B, C, H, W] with dx[b, map[j]] = Σ of the column entries j = kk·P + p that read that pixel
     * (0 where none does): a convolution's input gradient. Allocated in the current workspace.
     */
    INDArray col2imTransposed(INDArray colsT, long[] inputShape, int[] map) {
        if (colsT.dataType() != DataType.FLOAT || colsT.rank() != 3) {
            throw new IllegalArgumentException("col2imTransposed needs float32 [B, P, K], got " + colsT.dataType()
                    + " of rank " + colsT.rank());
        }
        long b = inputShape[0];
        int in = (int) (inputShape[1] * inputShape[2] * inputShape[3]);
        int p = (int) colsT.size(1);
        int k = (int) colsT.size(2);
        int n = map.length;
        if (colsT.size(0) != b || (long) p * k != n) {
            throw new IllegalArgumentException("colsT " + Arrays.toString(colsT.shape()) + " does not match "
                    + b + " examples of " + n + " column entries");
        }
        if (transposedMapOf != map) { // mapT[pos·K + kk] = map[kk·P + pos], so that colsT is read in order
            transposedMap = new int[n];
            for (int kk = 0; kk < k; kk++) {
                for (int pos = 0; pos < p; pos++) {
                    transposedMap[pos * k + kk] = map[kk * p + pos];
                }
            }
            transposedMapOf = map;
        }
        int[] mapT = transposedMap;
        float[] src = readFloats(colsT);
        float[] pixels = new float[in];
        INDArray out = Nd4j.createUninitialized(DataType.FLOAT, inputShape, 'c');
        FloatBuffer dst = out.data().asNioFloat();
        for (int e = 0; e < b; e++) {
            Arrays.fill(pixels, 0f);
            int from = e * n;
            for (int j = 0; j < n; j++) {
                int i = mapT[j];
                if (i >= 0) {
                    pixels[i] += src[from + j];
                }
            }
            dst.put(e * in, pixels, 0, in);
        }
        return out;
    }

    /**
     * Σ_j m_ij² per row of a float32 matrix [rows, n], each product and sum in float64 (exact
     * squares, a float64 sum), as a float64 vector [rows] in the current workspace. Reads rows in
     * bulk rather than widening the whole matrix to a float64 copy first.
     */
    static INDArray rowSquaredNorms(INDArray m) {
        if (m.dataType() != DataType.FLOAT || m.rank() != 2) {
            throw new IllegalArgumentException("rowSquaredNorms needs a float32 matrix, got " + m.dataType() + " of rank " + m.rank());
        }
        INDArray c = contiguous(m);
        int rows = (int) c.size(0);
        int n = (int) c.size(1);
        float[] row = new float[n];
        double[] out = new double[rows];
        FloatBuffer buffer = c.data().asNioFloat();
        for (int r = 0; r < rows; r++) {
            buffer.get(r * n, row, 0, n);
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            int j = 0;
            for (; j + 3 < n; j += 4) {
                double a = row[j], b = row[j + 1], d = row[j + 2], e = row[j + 3];
                s0 += a * a;
                s1 += b * b;
                s2 += d * d;
                s3 += e * e;
            }
            for (; j < n; j++) {
                double a = row[j];
                s0 += a * a;
            }
            out[r] = (s0 + s1) + (s2 + s3);
        }
        return Nd4j.createFromArray(out);
    }

    /**
     * A max-pooling output and, in argmax's first output.length() entries, per output element, the flat index in the
     * input of its window's maximum. argmax is the kernel's scratch: valid until its next {@link #maxPoolForward}.
     */
    record MaxPool(INDArray output, int[] argmax) {
    }

    /**
     * Whether {@link #maxPoolForward} serves this window on inputs of spatial size h × w: no dilation and no padding
     * (the output size is then libnd4j's: ⌊(h − kH)/sH⌋ + 1).
     */
    static boolean maxPoolSupported(Ops.Window g, long h, long w) {
        return !g.same() && g.dH() == 1 && g.dW() == 1 && g.pH() == 0 && g.pW() == 0 && h >= g.kH() && w >= g.kW();
    }

    /**
     * Max pooling of a float32 x [B, C, H, W] without padding or dilation ({@link #maxPoolSupported}): the output
     * [B, C, oH, oW] in the current workspace and the flat input index of each window's first maximum (a NaN in a
     * window is its maximum, so it propagates; −0 and +0 tie). oneDNN's pooling on plain NCHW layouts ran at about
     * 50 million elements per second here (its "simple_nchw" implementation), and a loop that compares floats window
     * by window mispredicts its branches on real activations. So the float bits become ordered int keys
     * ({@link #orderedKeys}) and the windows are reduced by branch-free int loops that the JIT vectorises: for each
     * window position in turn, the key at every window corner plus that position is compared with the running
     * maximum. With stride 1 every input position is taken as a corner (the few that start no output are wasted
     * work) and the shifted keys are array copies; with larger strides the outputs' corners are gathered. Blocks of
     * whole planes keep the arrays in the core's cache. The standard CNN's first pooling (256 examples, 16 × 14 × 14,
     * 2 × 2, stride 1) took 4.2 ms against 15.7 ms with the branching loop (JDK 17, one thread).
     */
    MaxPool maxPoolForward(INDArray x, Ops.Window g) {
        INDArray c = contiguous(x);
        int planes = (int) (c.size(0) * c.size(1));
        int h = (int) c.size(2), w = (int) c.size(3);
        int oh = (int) g.outH(h), ow = (int) g.outW(w);
        int kh = g.kH(), kw = g.kW(), sh = g.sH(), sw = g.sW();
        INDArray output = Nd4j.createUninitialized(DataType.FLOAT, new long[]{c.size(0), c.size(1), oh, ow}, 'c');
        if (argmaxScratch == null || argmaxScratch.length < planes * oh * ow) {
            argmaxScratch = new int[planes * oh * ow];
        }
        int[] argmax = argmaxScratch;
        IntBuffer source = c.data().asNioInt();
        IntBuffer target = output.data().asNioInt(); // the outputs are copied inputs: bit patterns in, bit patterns out
        int planeSize = h * w;
        int group = Math.max(1, Math.min(planes, POOL_BLOCK / planeSize)); // whole planes, so that the passes stay in cache
        boolean dense = sh == 1 && sw == 1;
        if (pool == null || pool.bits.length < group * planeSize || pool.h != h || pool.w != w || !pool.window.equals(g)) {
            pool = new Pool(group, h, w, g, dense);
        }
        Pool s = pool;
        int o = 0;
        for (int p0 = 0; p0 < planes; p0 += group) {
            int p1 = Math.min(planes, p0 + group);
            int n = (p1 - p0) * planeSize;
            int outputs = (p1 - p0) * oh * ow;
            source.get((int) c.offset() + p0 * planeSize, s.bits, 0, n);
            int corners = dense ? n - (kh - 1) * w - (kw - 1) : outputs; // the windows' top-left corners t
            windowMaxima(s, n, corners, w, kh, kw);
            int base = p0 * planeSize;
            if (dense) { // every input position was a corner: keep those of the outputs
                for (int p = 0, k = o; p < p1 - p0; p++) {
                    for (int i = 0; i < oh; i++) {
                        int rowStart = p * planeSize + i * w;
                        for (int j = 0; j < ow; j++, k++) {
                            int at = rowStart + j + s.best[rowStart + j];
                            s.out[k - o] = s.bits[at];
                            argmax[k] = base + at;
                        }
                    }
                }
            } else {
                for (int t = 0; t < outputs; t++) {
                    int at = s.corner[t] + s.best[t];
                    s.out[t] = s.bits[at];
                    argmax[o + t] = base + at;
                }
            }
            target.put(o, s.out, 0, outputs);
            o += outputs;
        }
        return new MaxPool(output, argmax);
    }

    /**
     * The first maximum of each window of a block of whole planes (n elements of s.bits, width w): for each corner
     * t (the input position t when s.corner is null, else s.corner[t]), the offset from the corner of the window
     * position holding it, in s.best. A method of its own, called once per block: inlined into the caller's loop
     * over blocks (compiled on stack replacement), the JIT (JDK 17) left its loops scalar.
     */
    private static void windowMaxima(Pool s, int n, int corners, int w, int kh, int kw) {
        orderedKeys(s.bits, s.key, n);
        for (int u = 0; u < kh; u++) {
            for (int v = 0; v < kw; v++) { // the window's positions, row-major: the first maximum stays
                int off = u * w + v;
                // the key at each corner + off, so that the loop below reads all its arrays at t: the JIT vectorises it
                int[] key = off == 0 ? s.max : s.shiftedKey;
                if (s.corner == null) {
                    System.arraycopy(s.key, off, key, 0, corners);
                } else {
                    for (int t = 0; t < corners; t++) {
                        key[t] = s.key[s.corner[t] + off];
                    }
                }
                if (off == 0) {
                    Arrays.fill(s.best, 0, corners, 0);
                } else {
                    takeGreater(s.max, s.shiftedKey, s.best, off, corners);
                }
            }
        }
    }

    /**
     * Where key[t] exceeds max[t] (strictly, so that the first maximum stays), takes it as the maximum and off as
     * best[t]. Branch-free: the signed comparison m &lt; k is the sign of (m − k) corrected for overflow (Warren,
     * Hacker's Delight, 2nd ed., Sec. 2-12).
     */
    private static void takeGreater(int[] max, int[] key, int[] best, int off, int corners) {
        for (int t = 0; t < corners; t++) {
            int m = max[t], k = key[t];
            int d = m - k;
            int x = m ^ k;
            int less = (d ^ (x & (d ^ m))) >> 31; // −1 where m < k, else 0
            max[t] = m ^ (x & less);
            best[t] ^= (best[t] ^ off) & less;
        }
    }

    /** Scratch arrays of {@link #maxPoolForward} for blocks of up to {@code group} planes of one shape and window. */
    private static final class Pool {
        final int h, w;
        final Ops.Window window;
        final int[] bits, key, max, best, shiftedKey, out;
        final int[] corner; // the corner of each output of a block, when the stride exceeds 1; else null

        Pool(int group, int h, int w, Ops.Window g, boolean dense) {
            this.h = h;
            this.w = w;
            window = g;
            int planeSize = h * w;
            int size = group * planeSize;
            bits = new int[size];
            key = new int[size];
            max = new int[size];
            best = new int[size];
            shiftedKey = new int[size];
            out = new int[size];
            if (dense) {
                corner = null;
            } else {
                int oh = (int) g.outH(h), ow = (int) g.outW(w);
                corner = new int[group * oh * ow];
                for (int p = 0, t = 0; p < group; p++) {
                    for (int i = 0; i < oh; i++) {
                        for (int j = 0; j < ow; j++, t++) {
                            corner[t] = p * planeSize + i * g.sH() * w + j * g.sW();
                        }
                    }
                }
            }
        }
    }

    /**
     * Writes to keys, for the first n float32 bit patterns in bits, int keys in the floats' order: a &lt; b exactly when
     * key(a) &lt; key(b), −0 and +0 share the key 0, and every NaN gets {@code Integer.MAX_VALUE}, above +∞ (0x7f800000).
     * Positive floats keep their bits; a negative float's magnitude bits are flipped (so larger magnitudes sort lower)
     * and then raised by one, which moves −0 from −1 to 0 and keeps the order.
     */
    static void orderedKeys(int[] bits, int[] keys, int n) {
        for (int i = 0; i < n; i++) {
            int b = bits[i];
            int k = b ^ ((b >> 31) & 0x7fffffff);
            k += k >>> 31;
            int nan = (0x7f800000 - (b & 0x7fffffff)) >> 31; // −1 where the magnitude bits exceed +∞'s
            keys[i] = (k & ~nan) | (Integer.MAX_VALUE & nan);
        }
    }

    /**
     * dL/dx [B, C, H, W] (current workspace) of a {@link #maxPoolForward} on an input of shape inputShape: each
     * output's gradient goes to its arg-max.
     *
     * @throws IllegalArgumentException if gradOutput's shape is not the pooled output's
     */
    INDArray maxPoolBackward(INDArray gradOutput, MaxPool pooled, long[] inputShape) {
        if (!Arrays.equals(gradOutput.shape(), pooled.output().shape())) {
            throw new IllegalArgumentException("max-pooling gradient of shape " + Arrays.toString(gradOutput.shape())
                    + " for outputs of shape " + Arrays.toString(pooled.output().shape()));
        }
        float[] gradOut = readFloats(gradOutput);
        int n = (int) (inputShape[0] * inputShape[1] * inputShape[2] * inputShape[3]);
        if (gradInScratch == null || gradInScratch.length < n) {
            gradInScratch = new float[n];
        }
        float[] gradIn = gradInScratch;
        Arrays.fill(gradIn, 0, n, 0f);
        int[] argmax = pooled.argmax();
        for (int o = 0, outputs = (int) gradOutput.length(); o < outputs; o++) {
            gradIn[argmax[o]] += gradOut[o];
        }
        INDArray result = Nd4j.createUninitialized(DataType.FLOAT, inputShape, 'c');
        result.data().asNioFloat().put(0, gradIn, 0, n);
        return result;
    }

    /** The elements of x in 'c' order, in a reused scratch array (valid until the next read). */
    private float[] readFloats(INDArray x) {
        INDArray c = contiguous(x);
        int n = (int) c.length();
        if (floats == null || floats.length < n) {
            floats = new float[n];
        }
        FloatBuffer buffer = c.data().asNioFloat();
        buffer.position((int) c.offset());
        buffer.get(floats, 0, n);
        return floats;
    }

    private double[] readDoubles(INDArray x) {
        INDArray c = contiguous(x);
        int n = (int) c.length();
        if (doubles == null || doubles.length < n) {
            doubles = new double[n];
        }
        DoubleBuffer buffer = c.data().asNioDouble();
        buffer.position((int) c.offset());
        buffer.get(doubles, 0, n);
        return doubles;
    }

    private static INDArray contiguous(INDArray x) {
        if (x.length() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("array of " + x.length() + " elements is too large for the host kernels");
        }
        return isDense(x) ? x : x.dup('c');
    }

    /**
     * Whether x's elements are the first x.length() elements of its buffer, in 'c' order (a fresh
     * array or a reshape of one), so native code and NIO views may read the buffer directly.
     */
    static boolean isDense(INDArray x) {
        return x.offset() == 0 && isContiguous(x);
    }

    /**
     * Whether x's elements are x.length() consecutive elements of its buffer from x's offset, in 'c'
     * order (a dense array, or a range of one along its first dimension).
     */
    static boolean isContiguous(INDArray x) {
        long expected = 1; // the 'c' stride of each dimension; dimensions of size 1 may have any stride
        for (int d = x.rank() - 1; d >= 0; d--) {
            if (x.size(d) > 1 && x.stride(d) != expected) {
                return false;
            }
            expected *= x.size(d);
        }
        return true;
    }
}
