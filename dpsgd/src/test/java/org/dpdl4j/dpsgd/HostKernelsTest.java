package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/** The Java im2col against libnd4j's im2col op, element for element, in float32 and float64. */
class HostKernelsTest {

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
