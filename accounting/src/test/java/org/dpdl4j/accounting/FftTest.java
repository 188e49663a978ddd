package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Random;
import org.apache.commons.math3.transform.DftNormalization;
import org.apache.commons.math3.transform.FastFourierTransformer;
import org.apache.commons.math3.transform.TransformType;
import org.junit.jupiter.api.Test;

/**
 * The PLD accountant's FFTs against independent computations: twiddles against 40-digit Taylor sums in BigDecimal,
 * round trips, and convolutions of small integer sequences against their exact convolution (a number-theoretic
 * transform modulo 998244353, exact in integers). Each measured error must lie below the bound that
 * {@link PrivacyLossDistribution} charges, and the table printed here (sizes 2¹⁶–2¹⁸ by default; {@code
 * -Ddpdl4j.fft.maxLog2=22} for the full table) puts Commons Math 3.6.1's FFT, which the accountant used before, beside
 * ours.
 */
class FftTest {
    private static final MathContext MC = new MathContext(45);

    @Test
    void twiddlesAreWithinTheirBoundOfFortyDigitValues() {
        int n = 1 << 22;
        double worst = 0;
        double[] cs = new double[4];
        Random random = new Random(5);
        for (int i = 0; i < 400; i++) {
            long k = i < 20 ? i : i < 40 ? n / 8 - (i - 20) : random.nextInt(n / 8 + 1);
            Fft.cosSin(k, n, cs);
            BigDecimal theta = twoPi().multiply(BigDecimal.valueOf(k)).divide(BigDecimal.valueOf(n), MC);
            BigDecimal[] exact = cosSinExact(theta);
            BigDecimal dc = new BigDecimal(cs[0]).add(new BigDecimal(cs[1])).subtract(exact[0]);
            BigDecimal ds = new BigDecimal(cs[2]).add(new BigDecimal(cs[3])).subtract(exact[1]);
            worst = Math.max(worst, Math.hypot(dc.doubleValue(), ds.doubleValue()));
        }
        System.out.printf("double-word twiddles at n = 2^22: largest |w - exact| %.3g (bound %.3g)%n", worst, Fft.TWIDDLE_ERROR_DD);
        assertTrue(worst <= Fft.TWIDDLE_ERROR_DD, "twiddle error " + worst);
        // the double parts, which the inverse transform uses, are within the double bound
        assertTrue(worst + Fft.U * Math.sqrt(2) <= Fft.TWIDDLE_ERROR);
    }

    /** Round trip and convolution error at each size, ours and Commons Math's; ours must be within the charged bound. */
    @Test
    void roundTripAndConvolutionErrorsAreWithinTheChargedBounds() {
        int maxLog2 = Integer.getInteger("dpdl4j.fft.maxLog2", 18);
        System.out.println("log2(n)  round trip: ours, Commons Math  |  convolution max |error| / max value: ours, Commons Math  |  ours: L2 error <= its charged bound");
        for (int log2 = 16; log2 <= maxLog2; log2 += 2) {
            int n = 1 << log2;
            Random random = new Random(log2);
            double[] x = new double[n];
            for (int i = 0; i < n; i++) {
                x[i] = random.nextDouble();
            }
            // round trip: forward (double words, rounded) then inverse, relative L2 error
            double[][] y = Fft.forwardDd(x, n);
            double[] re = new double[n];
            double[] im = new double[n];
            for (int k = 0; k < n; k++) {
                re[k] = y[0][k] + y[1][k];
                im[k] = y[2][k] + y[3][k];
            }
            Fft.inverse(re, im);
            double ours = relativeL2(re, x);
            double[][] c = {x.clone(), new double[n]};
            FastFourierTransformer.transformInPlace(c, DftNormalization.STANDARD, TransformType.FORWARD);
            FastFourierTransformer.transformInPlace(c, DftNormalization.STANDARD, TransformType.INVERSE);
            double commons = relativeL2(c[0], x);

            // convolution of two integer sequences in [0, 15] of length n/2, against the exact one
            long[] a = new long[n / 2];
            long[] b = new long[n / 2];
            for (int i = 0; i < n / 2; i++) {
                a[i] = random.nextInt(16);
                b[i] = random.nextInt(16);
            }
            long[] exact = exactConvolution(a, b, n);
            Fft.Result result = Fft.convolve(toDouble(a), toDouble(b), n);
            double[] oursConv = result.values();
            double[] commonsConv = commonsConvolution(a, b, n);
            double top = 0;
            double eo = 0;
            double ec = 0;
            double measuredL2 = 0;
            for (int i = 0; i < n; i++) {
                top = Math.max(top, exact[i]);
                eo = Math.max(eo, Math.abs(oursConv[i] - exact[i]));
                ec = Math.max(ec, Math.abs(commonsConv[i] - exact[i]));
                measuredL2 += (oursConv[i] - exact[i]) * (oursConv[i] - exact[i]);
            }
            measuredL2 = Math.sqrt(measuredL2);
            System.out.printf("%7d  %.3g  %.3g  |  %.3g  %.3g  |  L2 %.3g <= %.3g%n", log2, ours, commons, eo / top, ec / top,
                    measuredL2, result.l2Error());
            assertTrue(ours <= Fft.relativeErrorDouble(n) + Fft.relativeErrorDd(n) + Fft.U, "round trip " + ours);
            assertTrue(ours < 1e-15, "round trip error at 2^" + log2 + ": " + ours);
            assertTrue(measuredL2 <= result.l2Error(), "convolution error " + measuredL2 + " above the bound " + result.l2Error());
            assertTrue(eo / top < 1e-15, "convolution error at 2^" + log2 + ": " + eo / top);
        }
    }

    @Test
    void powerMatchesRepeatedProductsAndDoubleWordsAreExactWhereTheyMustBe() {
        double[] z = new double[4];
        Fft.power(0.6, 0, 0.8, 0, 5, z); // (0.6 + 0.8i)^5 = cos 5θ + i sin 5θ with cos θ = 0.6
        double theta = Math.atan2(0.8, 0.6);
        assertEquals(Math.cos(5 * theta), z[0] + z[1], 1e-15);
        assertEquals(Math.sin(5 * theta), z[2] + z[3], 1e-15);
        Fft.power(1 + 0x1p-40, 0, 0, 0, 1L << 20, z); // (1 + 2⁻⁴⁰)^(2²⁰), exactly representable in a double word
        BigDecimal exact = BigDecimal.ONE.add(new BigDecimal(0x1p-40)).pow(1 << 20, MC);
        double err = new BigDecimal(z[0]).add(new BigDecimal(z[1])).subtract(exact).abs().doubleValue();
        assertTrue(err < 1e-28, "power error " + err);
        double[] e = DoubleWord.expm1(1e-4);
        BigDecimal expm1 = expExact(new BigDecimal(1e-4)).subtract(BigDecimal.ONE);
        assertTrue(new BigDecimal(e[0]).add(new BigDecimal(e[1])).subtract(expm1).abs().doubleValue() < 1e-34,
                "expm1 in double words");
        assertEquals(1, Fft.sizeFor(0));
        assertEquals(1 << 17, Fft.sizeFor((1 << 16) + 1));
    }

    private static double relativeL2(double[] got, double[] want) {
        double num = 0;
        double den = 0;
        for (int i = 0; i < want.length; i++) {
            num += (got[i] - want[i]) * (got[i] - want[i]);
            den += want[i] * want[i];
        }
        return Math.sqrt(num / den);
    }

    private static double[] commonsConvolution(long[] a, long[] b, int n) {
        double[][] x = {java.util.Arrays.copyOf(toDouble(a), n), new double[n]};
        double[][] y = {java.util.Arrays.copyOf(toDouble(b), n), new double[n]};
        FastFourierTransformer.transformInPlace(x, DftNormalization.STANDARD, TransformType.FORWARD);
        FastFourierTransformer.transformInPlace(y, DftNormalization.STANDARD, TransformType.FORWARD);
        for (int k = 0; k < n; k++) {
            double r = x[0][k] * y[0][k] - x[1][k] * y[1][k];
            x[1][k] = x[0][k] * y[1][k] + x[1][k] * y[0][k];
            x[0][k] = r;
        }
        FastFourierTransformer.transformInPlace(x, DftNormalization.STANDARD, TransformType.INVERSE);
        return x[0];
    }

    private static double[] toDouble(long[] a) {
        double[] d = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            d[i] = a[i];
        }
        return d;
    }

    // ---- exact convolution by a number-theoretic transform modulo P = 119·2²³ + 1 (values stay below P here) ----

    private static final long P = 998244353;
    private static final long G = 3;

    static long[] exactConvolution(long[] a, long[] b, int n) {
        long[] x = java.util.Arrays.copyOf(a, n);
        long[] y = java.util.Arrays.copyOf(b, n);
        ntt(x, false);
        ntt(y, false);
        for (int i = 0; i < n; i++) {
            x[i] = x[i] * y[i] % P;
        }
        ntt(x, true);
        return x;
    }

    private static void ntt(long[] a, boolean invert) {
        int n = a.length;
        for (int i = 1, j = 0; i < n; i++) {
            int bit = n >> 1;
            for (; (j & bit) != 0; bit >>= 1) {
                j ^= bit;
            }
            j ^= bit;
            if (i < j) {
                long t = a[i];
                a[i] = a[j];
                a[j] = t;
            }
        }
        for (int len = 2; len <= n; len <<= 1) {
            long w = pow(G, (P - 1) / len);
            if (invert) {
                w = pow(w, P - 2);
            }
            for (int i = 0; i < n; i += len) {
                long wn = 1;
                for (int j = 0; j < len / 2; j++) {
                    long u = a[i + j];
                    long v = a[i + j + len / 2] * wn % P;
                    a[i + j] = (u + v) % P;
                    a[i + j + len / 2] = (u - v + P) % P;
                    wn = wn * w % P;
                }
            }
        }
        if (invert) {
            long inv = pow(n, P - 2);
            for (int i = 0; i < n; i++) {
                a[i] = a[i] * inv % P;
            }
        }
    }

    private static long pow(long base, long e) {
        long r = 1;
        base %= P;
        while (e > 0) {
            if ((e & 1) != 0) {
                r = r * base % P;
            }
            base = base * base % P;
            e >>= 1;
        }
        return r;
    }

    // ---- 45-digit reference values ----

    private static BigDecimal twoPi() {
        // π to 50 digits
        return new BigDecimal("3.14159265358979323846264338327950288419716939937510").multiply(BigDecimal.valueOf(2));
    }

    private static BigDecimal[] cosSinExact(BigDecimal theta) {
        BigDecimal cos = BigDecimal.ZERO;
        BigDecimal sin = BigDecimal.ZERO;
        BigDecimal term = BigDecimal.ONE; // θ^k / k!
        for (int k = 0; k < 60; k++) {
            switch (k % 4) {
                case 0 -> cos = cos.add(term, MC);
                case 1 -> sin = sin.add(term, MC);
                case 2 -> cos = cos.subtract(term, MC);
                default -> sin = sin.subtract(term, MC);
            }
            term = term.multiply(theta, MC).divide(BigDecimal.valueOf(k + 1), MC);
        }
        return new BigDecimal[]{cos, sin};
    }

    private static BigDecimal expExact(BigDecimal x) {
        BigDecimal sum = BigDecimal.ZERO;
        BigDecimal term = BigDecimal.ONE;
        for (int k = 0; k < 40; k++) {
            sum = sum.add(term, MC);
            term = term.multiply(x, MC).divide(BigDecimal.valueOf(k + 1), MC);
        }
        return sum;
    }
}
