package org.dpdl4j.dpsgd;

import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * im2col written in Java over host memory, for the CPU backend, where libnd4j's own op is slow
 * (measured in one JVM, one op thread, standard CNN, 256 examples, float32: libnd4j 9.3 and 5.6 ms
 * for the two convolutions, this gather 2.7 and 1.6 ms). It produces exactly what libnd4j's
 * {@code im2col} produces; the per-example gradient tests compare the engine with DL4J's own layers
 * in float64 and {@code HostKernelsTest} compares it with the libnd4j op in float32 and float64.
 * On other backends (CUDA) the engine keeps the libnd4j op: {@link #enabled} is false there. Arrays
 * are read through their NIO views into a reused Java array; not thread-safe (one instance per layer
 * kernel, as the kernels are).
 */
final class HostKernels {
    private static final boolean CPU = Nd4j.getBackend().getClass().getSimpleName().startsWith("Cpu");
    private float[] floats;
    private double[] doubles;

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
            float[] src = readFloats(x);
            FloatBuffer dst = out.data().asNioFloat();
            for (int e = 0; e < b; e++) {
                int from = e * in;
                int to = e * n;
                for (int j = 0; j < n; j++) {
                    int i = map[j];
                    dst.put(to + j, i < 0 ? 0f : src[from + i]);
                }
            }
        } else {
            double[] src = readDoubles(x);
            DoubleBuffer dst = out.data().asNioDouble();
            for (int e = 0; e < b; e++) {
                int from = e * in;
                int to = e * n;
                for (int j = 0; j < n; j++) {
                    int i = map[j];
                    dst.put(to + j, i < 0 ? 0.0 : src[from + i]);
                }
            }
        }
        return out;
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
        return x.ordering() == 'c' && x.elementWiseStride() == 1 && !x.isView() ? x : x.dup('c');
    }
}
