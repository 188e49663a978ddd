package org.dpdl4j.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The scattering transform against independent computations: a numpy implementation written for these tests
 * ({@code scattering_reference.py} beside the fixture, numpy's FFT), direct convolution in space for the channels that
 * need no low-pass truncation, and the filter bank's closed forms (φ̂(0) = 1, ψ̂(0) = 0, the Littlewood–Paley sum).
 */
class Scattering2DTest {

    /** The test image of scattering_reference.py. */
    static double[] image(int h, int w) {
        double[] x = new double[h * w];
        for (int i = 0; i < h; i++) {
            for (int j = 0; j < w; j++) {
                x[i * w + j] = ((i * 7 + j * 13) % 17) / 16.0 + 0.5 * Math.sin(0.3 * i) * Math.cos(0.2 * j);
            }
        }
        return x;
    }

    @Test
    void matchesTheNumpyReference() throws Exception {
        List<String> lines = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                Scattering2DTest.class.getResourceAsStream("scattering_reference.txt"), StandardCharsets.US_ASCII))) {
            r.lines().forEach(lines::add);
        }
        int cases = 0;
        for (int i = 0; i < lines.size(); ) {
            String[] head = lines.get(i++).split(" ");
            int h = Integer.parseInt(head[1]);
            int w = Integer.parseInt(head[2]);
            Scattering2D s = new Scattering2D(h, w, Integer.parseInt(head[3]), Integer.parseInt(head[4]));
            int count = s.coefficients() * s.outputHeight() * s.outputWidth();
            double[] ours = new double[count];
            s.transform(image(h, w), 0, ours, 0);
            double worst = 0;
            double scale = 0;
            for (int k = 0; k < count; k++) {
                double ref = Double.parseDouble(lines.get(i + k));
                worst = Math.max(worst, Math.abs(ours[k] - ref));
                scale = Math.max(scale, Math.abs(ref));
            }
            i += count;
            System.out.printf("scattering %s: %d coefficients, max |ours - numpy| / max |numpy| = %.2e%n",
                    String.join(" ", head), count, worst / scale);
            assertTrue(worst <= 1e-10 * scale, String.join(" ", head) + ": " + worst / scale);
            cases++;
        }
        assertEquals(3, cases);
    }

    /**
     * Order 0 and the order-1 channels with j₁ = 0 computed directly: circular convolution of the reflect-padded image
     * with the spatial filters (built here from the Gabor formula; a filter whose Fourier transform is real-parted acts
     * as (ψ(u) + conj ψ(−u))/2), the modulus, then the low-pass, sampled every 2^J pixels. These channels see no
     * band-limited low-pass, so they must agree with the Fourier-domain computation to rounding.
     */
    @Test
    void firstScaleAgreesWithDirectSpatialConvolution() {
        int h = 20;
        int w = 24;
        int scales = 2;
        int angles = 8;
        Scattering2D s = new Scattering2D(h, w, scales, angles);
        int m = s.paddedHeight();
        int n = s.paddedWidth();
        double[] x = image(h, w);
        double[] padded = new double[m * n];
        int top = (m - h) / 2;
        int left = (n - w) / 2;
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                int si = Math.abs(i - top);
                si = si >= h ? 2 * (h - 1) - si : si;
                int sj = Math.abs(j - left);
                sj = sj >= w ? 2 * (w - 1) - sj : sj;
                padded[i * n + j] = x[si * w + sj];
            }
        }
        double[] phi = realParted(Scattering2D.gabor(m, n, 0.8 * (1 << (scales - 1)), 0, 0, 1), m, n);
        int oh = s.outputHeight();
        int ow = s.outputWidth();
        double[] out = new double[s.coefficients() * oh * ow];
        s.transform(x, 0, out, 0);
        double worst = 0;
        double scale = 0;
        double[] direct = sampledLowPass(padded, phi, m, n, scales, oh, ow);
        for (int k = 0; k < oh * ow; k++) {
            worst = Math.max(worst, Math.abs(direct[k] - out[k]));
            scale = Math.max(scale, Math.abs(direct[k]));
        }
        for (int t = 0; t < angles; t++) {
            double theta = ((int) (angles / 2.0 - 1) - t) * Math.PI / angles;
            double[] psi = realParted(Scattering2D.morlet(m, n, 0.8, theta, 0.75 * Math.PI, 4.0 / angles), m, n);
            double[] u = new double[m * n];
            for (int p = 0; p < m; p++) {
                for (int q = 0; q < n; q++) {
                    double re = 0;
                    double im = 0;
                    for (int a = 0; a < m; a++) {
                        for (int b = 0; b < n; b++) {
                            double v = padded[Math.floorMod(p - a, m) * n + Math.floorMod(q - b, n)];
                            re += v * psi[2 * (a * n + b)];
                            im += v * psi[2 * (a * n + b) + 1];
                        }
                    }
                    u[p * n + q] = Math.hypot(re, im);
                }
            }
            double[] s1 = sampledLowPass(u, phi, m, n, scales, oh, ow);
            for (int k = 0; k < oh * ow; k++) {
                double ours = out[(1 + t) * oh * ow + k];
                worst = Math.max(worst, Math.abs(s1[k] - ours));
                scale = Math.max(scale, Math.abs(s1[k]));
            }
        }
        System.out.printf("scattering order 0 and order 1 (j1 = 0) vs direct convolution: max relative error %.2e%n", worst / scale);
        assertTrue(worst <= 1e-11 * scale, "direct convolution: " + worst / scale);
    }

    /** (f(u) + conj f(−u))/2: the spatial filter whose DFT is the real part of f's. */
    private static double[] realParted(double[] f, int m, int n) {
        double[] g = new double[f.length];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                int k = i * n + j;
                int r = Math.floorMod(-i, m) * n + Math.floorMod(-j, n);
                g[2 * k] = (f[2 * k] + f[2 * r]) / 2;
                g[2 * k + 1] = (f[2 * k + 1] - f[2 * r + 1]) / 2;
            }
        }
        return g;
    }

    /** (u ⋆ φ) at padded positions (2^J (r+1), 2^J (c+1)): the output grid after the one-sample border is cut. */
    private static double[] sampledLowPass(double[] u, double[] phi, int m, int n, int scales, int oh, int ow) {
        double[] out = new double[oh * ow];
        int step = 1 << scales;
        for (int r = 0; r < oh; r++) {
            for (int c = 0; c < ow; c++) {
                int p = (r + 1) * step;
                int q = (c + 1) * step;
                double sum = 0;
                for (int a = 0; a < m; a++) {
                    for (int b = 0; b < n; b++) {
                        sum += u[Math.floorMod(p - a, m) * n + Math.floorMod(q - b, n)] * phi[2 * (a * n + b)];
                    }
                }
                out[r * ow + c] = sum;
            }
        }
        return out;
    }

    /**
     * The filter bank (J = 2, L = 8 on 36×36): φ̂(0) = 1 and ψ̂(0) = 0 (closed forms: a normalised Gaussian, a
     * zero-mean wavelet); the Littlewood–Paley sum A(ω) = |φ̂(ω)|² + ½Σ(|ψ̂(ω)|² + |ψ̂(−ω)|²) is at most 1, so each layer
     * and therefore the transform is non-expansive (Mallat 2012, arXiv:1101.2286, Prop. 2.5), and at least 0.12, so no
     * frequency is lost (numpy gives 0.12298 and 1).
     */
    @Test
    void filterBankIsNormalisedAndItsLittlewoodPaleySumIsBounded() {
        Scattering2D s = new Scattering2D(28, 28, 2, 8);
        int m = s.paddedHeight();
        int n = s.paddedWidth();
        double[] phi = s.lowPassFourier(0);
        assertEquals(1, phi[0], 1e-12, "phi^(0)");
        double[] lp = new double[m * n];
        for (int k = 0; k < lp.length; k++) {
            lp[k] = phi[k] * phi[k];
        }
        for (int j = 0; j < 2; j++) {
            for (int t = 0; t < 8; t++) {
                double[] psi = s.waveletFourier(j, t);
                assertEquals(0, psi[0], 1e-12, "psi^(0) of (" + j + ", " + t + ")");
                for (int a = 0; a < m; a++) {
                    for (int b = 0; b < n; b++) {
                        double minus = psi[Math.floorMod(-a, m) * n + Math.floorMod(-b, n)];
                        lp[a * n + b] += 0.5 * (psi[a * n + b] * psi[a * n + b] + minus * minus);
                    }
                }
            }
        }
        double min = java.util.Arrays.stream(lp).min().orElseThrow();
        double max = java.util.Arrays.stream(lp).max().orElseThrow();
        System.out.printf("Littlewood-Paley sum on %dx%d: min %.5f max %.12f%n", m, n, min, max);
        assertTrue(max <= 1 + 1e-12 && min >= 0.12, "Littlewood-Paley sum in [" + min + ", " + max + "]");
        // the low-pass at resolution 1 is φ̂'s central band: its value at 0 is unchanged
        assertEquals(1, s.lowPassFourier(1)[0], 1e-12);
    }

    @Test
    void batchesKeepChannelsAndDataType() {
        Scattering2D s = new Scattering2D(20, 24, 2, 8);
        INDArray x = Nd4j.rand(DataType.FLOAT, 3, 2, 20, 24);
        INDArray y = s.transform(x);
        assertEquals(DataType.FLOAT, y.dataType());
        assertEquals(List.of(3L, 162L, 5L, 6L), java.util.Arrays.stream(y.shape()).boxed().toList());
        double[] one = new double[81 * 30];
        s.transform(x.get(org.nd4j.linalg.indexing.NDArrayIndex.point(2), org.nd4j.linalg.indexing.NDArrayIndex.point(1))
                .castTo(DataType.DOUBLE).dup('c').data().asDouble(), 0, one, 0);
        INDArray expected = Nd4j.create(one, new long[]{81, 5, 6}, DataType.DOUBLE).castTo(DataType.FLOAT);
        INDArray got = y.get(org.nd4j.linalg.indexing.NDArrayIndex.point(2),
                org.nd4j.linalg.indexing.NDArrayIndex.interval(81, 162));
        assertEquals(0, expected.sub(got).amaxNumber().doubleValue(), 0);
        var e = assertThrows(IllegalArgumentException.class, () -> new Scattering2D(4, 28, 2, 8));
        assertTrue(e.getMessage().contains("4x28"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> s.transform(Nd4j.rand(DataType.FLOAT, 1, 1, 28, 28)));
        assertTrue(e.getMessage().contains("[1, 1, 28, 28]"), e.getMessage());
    }

    /**
     * A batch large enough to be split over threads gives, image for image, exactly the one-image transform, and the
     * same batch as on one thread; zero threads are refused by name.
     */
    @Test
    void aSplitBatchIsTheTransformOfEachImage() {
        Scattering2D s = new Scattering2D(28, 28, 2, 8);
        INDArray x = Nd4j.rand(DataType.DOUBLE, 300, 1, 28, 28);
        INDArray y = s.transform(x);
        double[] one = new double[81 * 49];
        for (int i : new int[]{0, 127, 128, 149, 150, 299}) {
            s.transform(x.get(org.nd4j.linalg.indexing.NDArrayIndex.point(i)).dup('c').data().asDouble(), 0, one, 0);
            INDArray got = y.get(org.nd4j.linalg.indexing.NDArrayIndex.point(i)).reshape(81 * 49);
            assertEquals(0, Nd4j.create(one).sub(got).amaxNumber().doubleValue(), 0, "image " + i);
        }
        assertEquals(0, s.transform(x, 1).sub(y).amaxNumber().doubleValue(), 0, "one thread gives the same batch");
        var e = assertThrows(IllegalArgumentException.class, () -> s.transform(x, 0));
        assertTrue(e.getMessage().contains("threads must be >= 1, got 0"), e.getMessage());
    }
}
