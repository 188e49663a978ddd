package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * The Java im2col against libnd4j's im2col op, element for element, in float32 and float64; the Java max pooling
 * against a brute-force scan of each window on inputs full of ties, signed zeros, infinities and NaNs.
 */
class HostKernelsTest {

    /** Bit patterns that float comparison orders as listed; −0 equals +0, and NaNs (either sign) exceed everything. */
    @org.junit.jupiter.api.Test
    void orderedKeysFollowTheFloatOrder() {
        float[] ascending = {Float.NEGATIVE_INFINITY, -Float.MAX_VALUE, -1f, -Float.MIN_NORMAL, -Float.MIN_VALUE, -0f, 0f,
                Float.MIN_VALUE, Float.MIN_NORMAL, 1f, Float.MAX_VALUE, Float.POSITIVE_INFINITY,
                Float.NaN, Float.intBitsToFloat(0xffc00001), Float.intBitsToFloat(0x7f800001)};
        int[] bits = new int[ascending.length];
        for (int i = 0; i < bits.length; i++) {
            bits[i] = Float.floatToRawIntBits(ascending[i]);
        }
        int[] keys = new int[bits.length];
        HostKernels.orderedKeys(bits, keys, bits.length);
        for (int i = 0; i < keys.length; i++) {
            for (int j = 0; j < keys.length; j++) {
                float a = ascending[i], b = ascending[j];
                boolean aNaN = Float.isNaN(a), bNaN = Float.isNaN(b);
                int expected = aNaN || bNaN ? Boolean.compare(aNaN, bNaN) : Integer.signum(Float.compare(a + 0f, b + 0f));
                assertEquals(expected, Integer.signum(Integer.compare(keys[i], keys[j])), a + " vs " + b);
            }
        }
    }

    /**
     * Each output is its window's first maximum (NaN above all, −0 tied with +0), bit for bit, and its arg-max the
     * input index of that element, found by scanning the window: for strides 1 and above, rectangular windows, planes
     * larger than a block and blocks whose last one is partial, and an input that is a view.
     */
    @ParameterizedTest(name = "{0}x{1} planes, {2}x{3} k{4}x{5} s{6}x{7}")
    @CsvSource({
            "7, 16, 14, 14, 2, 2, 1, 1",   // standard CNN, first pooling: 20 planes a block, a partial last block
            "5, 32, 5, 5, 2, 2, 1, 1",     // standard CNN, second pooling
            "3, 8, 32, 32, 2, 2, 2, 2",    // cifar-cnn
            "2, 3, 70, 70, 3, 3, 2, 2",    // a plane larger than a block
            "4, 5, 9, 11, 2, 3, 1, 2",     // rectangular window, unequal strides
            "2, 2, 4, 4, 4, 4, 1, 1"})     // window as large as the input
    void maxPoolingTakesEachWindowsFirstMaximum(int b, int c, int h, int w, int kH, int kW, int sH, int sW) {
        Ops.Window g = new Ops.Window(kH, kW, sH, sW, 0, 0, 1, 1);
        assertTrue(HostKernels.maxPoolSupported(g, h, w));
        java.util.Random random = new java.util.Random(h * 31L + w);
        float[] special = {0f, -0f, 0f, 1f, -1f, Float.NaN, Float.intBitsToFloat(0xffc00001), Float.POSITIVE_INFINITY,
                Float.NEGATIVE_INFINITY};
        float[] values = new float[2 * b * c * h * w];
        for (int i = 0; i < values.length; i++) {
            double u = random.nextDouble();
            values[i] = u < 0.5 ? (float) Math.floor(random.nextGaussian()) // many ties
                    : u < 0.6 ? special[random.nextInt(special.length)] : (float) random.nextGaussian();
        }
        INDArray whole = Nd4j.create(values, new long[]{2L * b, c, h, w}, 'c');
        INDArray x = whole.get(NDArrayIndex.interval(1, 2, 2L * b), NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.all());
        float[] in = x.dup('c').data().asFloat();
        int oh = (h - kH) / sH + 1, ow = (w - kW) / sW + 1;
        HostKernels host = new HostKernels();
        host.maxPoolForward(Nd4j.rand(DataType.FLOAT, b + 1, c, h, w), g); // scratch sized for a larger input first
        HostKernels.MaxPool pooled = host.maxPoolForward(x, g);
        assertEquals(java.util.Arrays.toString(new long[]{b, c, oh, ow}), java.util.Arrays.toString(pooled.output().shape()));
        float[] out = pooled.output().data().asFloat();
        int o = 0;
        for (int p = 0; p < b * c; p++) {
            for (int i = 0; i < oh; i++) {
                for (int j = 0; j < ow; j++, o++) {
                    int best = -1;
                    for (int u = 0; u < kH; u++) {
                        for (int v = 0; v < kW; v++) {
                            int at = p * h * w + (i * sH + u) * w + j * sW + v;
                            if (best < 0 || (!Float.isNaN(in[best]) && (Float.isNaN(in[at]) || in[at] > in[best]))) {
                                best = at;
                            }
                        }
                    }
                    assertEquals(best, pooled.argmax()[o], "arg-max of output " + o);
                    assertEquals(Float.floatToRawIntBits(in[best]), Float.floatToRawIntBits(out[o]), "output " + o);
                }
            }
        }
        INDArray gradOut = Nd4j.randn(DataType.FLOAT, b, c, oh, ow);
        float[] expected = new float[in.length];
        for (int k = 0; k < o; k++) {
            expected[pooled.argmax()[k]] += gradOut.data().getFloat(k);
        }
        assertEquals(Nd4j.create(expected, new long[]{b, c, h, w}, 'c'), host.maxPoolBackward(gradOut, pooled, x.shape()));
    }

    @ParameterizedTest(name = "{0} C={1} {2}x{3} k{4}x{5} s{6}x{7} p{8}x{9} d{10}x{11}")
    @CsvSource({
            "FLOAT, 1, 28, 28, 8, 8, 2, 2, 3, 3, 1, 1",   // standard CNN, first convolution
            "FLOAT, 16, 13, 13, 4, 4, 2, 2, 0, 0, 1, 1",  // standard CNN, second convolution
            "DOUBLE, 3, 11, 9, 3, 3, 1, 1, 2, 2, 2, 2",   // padding wider than the dilated window's reach
            "DOUBLE, 2, 7, 10, 2, 3, 3, 2, 1, 0, 1, 2",   // rectangular, unequal strides and dilations
            "FLOAT, 4, 5, 5, 5, 5, 1, 1, 0, 0, 1, 1"})    // window as large as the input
    void equalsLibnd4jIm2col(DataType type, int c, int h, int w, int kH, int kW, int sH, int sW, int pH, int pW, int dH, int dW) {
        assertTrue(HostKernels.enabled(type), "this test runs on the CPU backend");
        Ops.Window g = new Ops.Window(kH, kW, sH, sW, pH, pW, dH, dW);
        Nd4j.getRandom().setSeed(5);
        INDArray x = Nd4j.rand(type, 3, c, h, w).subi(0.5);
        INDArray expected = Ops.im2col(x, g);
        INDArray actual = new HostKernels().im2col(x, g, HostKernels.im2colMap(c, h, w, g));
        assertEquals(java.util.Arrays.toString(expected.shape()), java.util.Arrays.toString(actual.shape()));
        assertEquals(expected, actual);
        // a view (every other example) is read in its logical order
        INDArray view = Nd4j.rand(type, 6, c, h, w).get(NDArrayIndex.interval(0, 2, 6), NDArrayIndex.all(), NDArrayIndex.all(),
                NDArrayIndex.all());
        assertEquals(Ops.im2col(view.dup('c'), g), new HostKernels().im2col(view, g, HostKernels.im2colMap(c, h, w, g)));
        if (type == DataType.FLOAT) { // examples [1, 3) alone, into a given array: that slice of the whole
            INDArray part = Nd4j.createUninitialized(type, 2, expected.size(1), kH, kW, expected.size(4), expected.size(5));
            new HostKernels().im2colInto(x, 1, 2, HostKernels.im2colMap(c, h, w, g), part);
            assertEquals(expected.get(NDArrayIndex.interval(1, 3)), part);
        }
        if (type == DataType.FLOAT) { // col2im is im2col's adjoint: <im2col(x), y> = <x, col2im(y)>
            INDArray y = Nd4j.randn(DataType.FLOAT, expected.shape());
            long k = (long) c * kH * kW;
            long p = y.length() / (3 * k);
            INDArray yT = y.reshape('c', 3, k, p).permute(0, 2, 1).dup('c'); // [B, P, K]
            INDArray back = new HostKernels().col2imTransposed(yT, x.shape(), HostKernels.im2colMap(c, h, w, g));
            double lhs = expected.castTo(DataType.DOUBLE).mul(y.castTo(DataType.DOUBLE)).sumNumber().doubleValue();
            double rhs = x.castTo(DataType.DOUBLE).mul(back.castTo(DataType.DOUBLE)).sumNumber().doubleValue();
            assertEquals(lhs, rhs, 1e-5 * (Math.abs(lhs) + 1), "adjoint identity");
        }
    }
}
