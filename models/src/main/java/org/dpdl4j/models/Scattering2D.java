package org.dpdl4j.models;

import org.jtransforms.fft.DoubleFFT_2D;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The 2-D scattering transform with Morlet wavelets (J. Bruna, S. Mallat, "Invariant Scattering Convolution Networks",
 * IEEE TPAMI 2013, arXiv:1203.1513), as Kymatio's {@code Scattering2D} computes it (M. Andreux et al., "Kymatio:
 * Scattering Transforms in Python", JMLR 2020, arXiv:1812.11214) and as Tramèr &amp; Boneh use it for private learning
 * ("Differentially Private Learning Needs Better Features (or Much More Data)", ICLR 2021, arXiv:2011.11660, Sec. 3).
 * It is fixed and data-independent: no parameters, no privacy cost.
 *
 * <p>For one channel x of size H×W, with J scales and L angles, the output has K = 1 + JL + L²J(J−1)/2 channels (81 for
 * J = 2, L = 8) of size ⌊H/2^J⌋×⌊W/2^J⌋, in this order: S₀x = x ⋆ φ_J; for each (j₁, θ₁), j₁ major,
 * S₁x = |x ⋆ ψ_{j₁,θ₁}| ⋆ φ_J; for each (j₁, θ₁) and each (j₂, θ₂) with j₂ &gt; j₁, S₂x = ||x ⋆ ψ_{j₁,θ₁}| ⋆
 * ψ_{j₂,θ₂}| ⋆ φ_J; each subsampled by 2^J. Computation (Kymatio's): x is reflect-padded to M×N with
 * M = (⌊(H + 2^J)/2^J⌋ + 1)·2^J (W likewise), the filters act by multiplication in the Fourier domain, each
 * convolution output is subsampled as early as its band allows (by periodising its spectrum), and one sample is cut from
 * each border at the end.
 *
 * <p>The filters, on the M×N grid (x along rows, y along columns), are Gabor functions periodised over 5×5 periods,
 * g(x, y) = Σ exp(−uᵀ R_θ diag(1, s²) R_θᵀ u / (2σ²) + iξ(x cos θ + y sin θ)) · s/(2πσ²) (Bruna &amp; Mallat, Sec.
 * 2.1): the low-pass φ is g with σ = 0.8·2^(J−1), ξ = 0, s = 1 (so φ̂(0) = 1 up to the periodisation's e^(−2π²σ²));
 * the wavelet ψ_{j,θ} is the Morlet function g − κ·g|_{ξ=0}, κ chosen so that ψ sums to 0 (ψ̂(0) = 0), with
 * σ = 0.8·2^j, ξ = 3π/(4·2^j), s = 4/L and angle ((⌊L/2⌋ − 1) − θ)π/L for θ = 0..L−1. Each filter's Fourier transform
 * is kept as its real part, as Kymatio keeps it. One difference: Kymatio divides by 2·3.1415·σ²/s, this class by
 * 2πσ²/s, which scales its outputs by about 1 + 3·10⁻⁵ per filter applied.
 *
 * <p>FFTs are JTransforms' (any size; double precision). Thread-safe: the filter bank is immutable and each call uses
 * its own FFT plans and scratch space. {@link #transform(INDArray)} splits a batch of 128 or more images over the common
 * fork-join pool ({@link #transform(INDArray, int)} bounds the threads); the result is the same as one image at a time.
 */
public final class Scattering2D {
    /** Images per part when a batch is split over threads: about 0.1 s of work each, far more than a part's set-up. */
    private static final int MIN_IMAGES_PER_PART = 64;
    private final int height;
    private final int width;
    private final int scales;
    private final int angles;
    private final int paddedHeight;
    private final int paddedWidth;
    private final int padTop;
    private final int padLeft;
    /** φ̂ at resolutions 0..J−1, each (M/2^r)·(N/2^r) real values, row-major. */
    private final double[][] lowPass;
    /** ψ̂ for wavelet n = j·L + θ at resolutions 0..max(J−2, 0). */
    private final double[][][] wavelets;

    /**
     * A transform for H×W images with J scales and L angles; builds the filter bank (φ̂ at J resolutions, ψ̂ for the
     * J·L wavelets).
     *
     * @param height H, the input's height in pixels, &gt; 2^J
     * @param width  W, the input's width in pixels, &gt; 2^J
     * @param scales J in [1, 8], the number of scales (the output is subsampled by 2^J)
     * @param angles L in [1, 64], the number of orientations
     * @throws IllegalArgumentException if J or L is below 1, J above 8, L above 64, or H or W is at most the padding
     *                                  2^J (reflect padding needs more pixels than it adds)
     */
    public Scattering2D(int height, int width, int scales, int angles) {
        if (scales < 1 || scales > 8) {
            throw new IllegalArgumentException("scales J must be in [1, 8], got " + scales);
        }
        if (angles < 1 || angles > 64) {
            throw new IllegalArgumentException("angles L must be in [1, 64], got " + angles);
        }
        int step = 1 << scales;
        if (height <= step || width <= step) {
            throw new IllegalArgumentException("the scattering transform with J = " + scales + " needs images larger than "
                    + step + "x" + step + ", got " + height + "x" + width);
        }
        this.height = height;
        this.width = width;
        this.scales = scales;
        this.angles = angles;
        this.paddedHeight = ((height + step) / step + 1) * step;
        this.paddedWidth = ((width + step) / step + 1) * step;
        this.padTop = (paddedHeight - height) / 2;
        this.padLeft = (paddedWidth - width) / 2;
        int m = paddedHeight;
        int n = paddedWidth;
        double[] phi = fourierReal(gabor(m, n, 0.8 * (1 << (scales - 1)), 0, 0, 1), m, n);
        lowPass = new double[scales][];
        for (int r = 0; r < scales; r++) {
            lowPass[r] = periodize(phi, m, n, r);
        }
        int levels = Math.max(scales - 1, 1);
        wavelets = new double[scales * angles][][];
        for (int j = 0; j < scales; j++) {
            for (int t = 0; t < angles; t++) {
                double theta = ((int) (angles / 2.0 - 1) - t) * Math.PI / angles;
                double[] psi = fourierReal(morlet(m, n, 0.8 * (1 << j), theta, 0.75 * Math.PI / (1 << j), 4.0 / angles), m, n);
                double[][] byLevel = new double[levels][];
                for (int r = 0; r < levels; r++) {
                    byLevel[r] = periodize(psi, m, n, r);
                }
                wavelets[j * angles + t] = byLevel;
            }
        }
    }

    /**
     * H, the input height.
     *
     * @return H in pixels
     */
    public int inputHeight() {
        return height;
    }

    /**
     * W, the input width.
     *
     * @return W in pixels
     */
    public int inputWidth() {
        return width;
    }

    /**
     * K = 1 + JL + L²J(J−1)/2, the output channels per input channel.
     *
     * @return K, ≥ 1 (81 for J = 2, L = 8)
     */
    public int coefficients() {
        return 1 + scales * angles + angles * angles * scales * (scales - 1) / 2;
    }

    /**
     * ⌊H/2^J⌋.
     *
     * @return the output height in pixels, ⌊H/2^J⌋ ≥ 1
     */
    public int outputHeight() {
        return paddedHeight / (1 << scales) - 2;
    }

    /**
     * ⌊W/2^J⌋.
     *
     * @return the output width in pixels, ⌊W/2^J⌋ ≥ 1
     */
    public int outputWidth() {
        return paddedWidth / (1 << scales) - 2;
    }

    /**
     * M, the padded height on which the filters are defined.
     *
     * @return M = (⌊(H + 2^J)/2^J⌋ + 1)·2^J, in pixels
     */
    public int paddedHeight() {
        return paddedHeight;
    }

    /**
     * N, the padded width on which the filters are defined.
     *
     * @return N = (⌊(W + 2^J)/2^J⌋ + 1)·2^J, in pixels
     */
    public int paddedWidth() {
        return paddedWidth;
    }

    /**
     * A copy of φ̂ at resolution r ∈ [0, J): (M/2^r)×(N/2^r) real values, row-major, frequency 0 first.
     *
     * @param r the resolution, in [0, J) (outside it the array access fails with an
     *          {@link ArrayIndexOutOfBoundsException})
     * @return a new array of (M/2^r)·(N/2^r) values
     */
    public double[] lowPassFourier(int r) {
        return lowPass[r].clone();
    }

    /**
     * A copy of ψ̂_{j,θ} at full resolution: M×N real values, row-major, frequency 0 first.
     *
     * @param j     the scale index, in [0, J)
     * @param theta the angle index, in [0, L)
     * @return a new array of M·N values
     * @throws IllegalArgumentException if j or theta is out of range
     */
    public double[] waveletFourier(int j, int theta) {
        if (j < 0 || j >= scales || theta < 0 || theta >= angles) {
            throw new IllegalArgumentException("wavelet (j, theta) must be in [0, " + scales + ") x [0, " + angles + "), got ("
                    + j + ", " + theta + ")");
        }
        return wavelets[j * angles + theta][0].clone();
    }

    /**
     * The transform of a batch, a large one split over the common fork-join pool and the caller (see
     * {@link #transform(INDArray, int)}).
     *
     * @param x NCHW images [B, C, H, W] (float or double)
     * @return [B, C·K, ⌊H/2^J⌋, ⌊W/2^J⌋] in x's data type; channel c·K + k is coefficient k of input channel c
     * @throws IllegalArgumentException if x is not [B, C, H, W] with this transform's H and W
     */
    public INDArray transform(INDArray x) {
        return transform(x, java.util.concurrent.ForkJoinPool.getCommonPoolParallelism() + 1);
    }

    /**
     * The transform of a batch on at most {@code threads} threads: the caller, and the common fork-join pool when a batch
     * of at least 128 images is split. Callers that run their own threads (the DP-SGD workers) pass 1. Every image's
     * output is the same whatever the split.
     *
     * @param x       NCHW images [B, C, H, W] (float or double)
     * @param threads at most this many threads, &gt;= 1
     * @return as {@link #transform(INDArray)}
     * @throws IllegalArgumentException if x is not [B, C, H, W] with this transform's H and W, or threads &lt; 1
     */
    public INDArray transform(INDArray x, int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        if (x.rank() != 4 || x.size(2) != height || x.size(3) != width) {
            throw new IllegalArgumentException("the scattering transform expects NCHW input [B, C, " + height + ", " + width
                    + "], got " + java.util.Arrays.toString(x.shape()));
        }
        int b = (int) x.size(0);
        int c = (int) x.size(1);
        int k = coefficients();
        int per = outputHeight() * outputWidth();
        double[] in = x.castTo(DataType.DOUBLE).reshape('c', new long[]{x.length()}).toDoubleVector();
        double[] out = new double[b * c * k * per];
        int images = b * c;
        // the images are independent: a large batch (a test set scored) is split over the common pool and the caller,
        // each part with its own FFT plans; every image's output is the same whatever the split
        int parts = Math.max(1, Math.min(images / MIN_IMAGES_PER_PART, threads));
        java.util.stream.IntStream range = java.util.stream.IntStream.range(0, parts);
        (parts > 1 ? range.parallel() : range).forEach(part -> {
            Plans plans = new Plans();
            for (int i = (int) ((long) images * part / parts), end = (int) ((long) images * (part + 1) / parts); i < end; i++) {
                transform(in, i * height * width, out, i * k * per, plans);
            }
        });
        DataType type = x.dataType().isFPType() ? x.dataType() : DataType.FLOAT;
        return Nd4j.create(out, new long[]{b, (long) c * k, outputHeight(), outputWidth()}, DataType.DOUBLE).castTo(type);
    }

    /**
     * The transform of one channel.
     *
     * @param image     H·W pixels, row-major, from {@code offset}; not modified
     * @param offset    index in {@code image} of the channel's first pixel, ≥ 0, with H·W pixels after it
     * @param out       receives K·⌊H/2^J⌋·⌊W/2^J⌋ values from {@code outOffset}, coefficient-major
     * @param outOffset index in {@code out} of the first output value, ≥ 0, with room for all of them after it
     */
    public void transform(double[] image, int offset, double[] out, int outOffset) {
        transform(image, offset, out, outOffset, new Plans());
    }

    private void transform(double[] image, int offset, double[] out, int outOffset, Plans plans) {
        int m = paddedHeight;
        int n = paddedWidth;
        int per = outputHeight() * outputWidth();
        double[] x = new double[2 * m * n]; // real input in the first m·n slots (realForwardFull's layout)
        for (int r = 0; r < m; r++) {
            int sr = reflect(r - padTop, height);
            for (int col = 0; col < n; col++) {
                x[r * n + col] = image[offset + sr * width + reflect(col - padLeft, width)];
            }
        }
        plans.at(0).realForwardFull(x);
        int o = outOffset;
        o = lowPassOut(times(x, lowPass[0]), 0, out, o, plans);
        double[][] order1 = new double[wavelets.length][]; // the spectra of |x ⋆ ψ₁|, all order-1 outputs come first
        for (int n1 = 0; n1 < wavelets.length; n1++) {
            int j1 = n1 / angles;
            order1[n1] = modulusSpectrum(subsample(times(x, wavelets[n1][0]), m, n, 1 << j1), j1, plans);
            o = lowPassOut(times(order1[n1], lowPass[j1]), j1, out, o, plans);
        }
        for (int n1 = 0; n1 < wavelets.length; n1++) {
            int j1 = n1 / angles;
            double[] u = order1[n1];
            for (int n2 = 0; n2 < wavelets.length; n2++) {
                int j2 = n2 / angles;
                if (j2 <= j1) {
                    continue;
                }
                double[] v = subsample(times(u, wavelets[n2][j1]), m >> j1, n >> j1, 1 << (j2 - j1));
                v = modulusSpectrum(v, j2, plans);
                o = lowPassOut(times(v, lowPass[j2]), j2, out, o, plans);
            }
        }
        if (o != outOffset + coefficients() * per) {
            throw new IllegalStateException("scattering wrote " + (o - outOffset) + " values, expected " + coefficients() * per);
        }
    }

    /** The spectrum of |F⁻¹(u)| for a spectrum u at resolution r. */
    private double[] modulusSpectrum(double[] u, int r, Plans plans) {
        DoubleFFT_2D fft = plans.at(r);
        fft.complexInverse(u, true);
        int half = u.length / 2;
        for (int k = 0; k < half; k++) { // compacted into the first half (slot k was read before it is written)
            u[k] = Math.hypot(u[2 * k], u[2 * k + 1]);
        }
        fft.realForwardFull(u); // the spectrum of real data: about half the work of a complex transform
        return u;
    }

    /** Subsamples a low-pass-filtered spectrum at resolution r to resolution J, inverts it, and writes the unpadded real part. */
    private int lowPassOut(double[] spectrum, int r, double[] out, int o, Plans plans) {
        double[] s = subsample(spectrum, paddedHeight >> r, paddedWidth >> r, 1 << (scales - r));
        plans.at(scales).complexInverse(s, true);
        int mj = paddedHeight >> scales;
        int nj = paddedWidth >> scales;
        for (int row = 1; row < mj - 1; row++) {
            for (int col = 1; col < nj - 1; col++) {
                out[o++] = s[2 * (row * nj + col)];
            }
        }
        return o;
    }

    /** A new complex array: spectrum ∘ a real filter of the same size. */
    private static double[] times(double[] spectrum, double[] filter) {
        double[] y = new double[spectrum.length];
        for (int i = 0; i < filter.length; i++) {
            y[2 * i] = spectrum[2 * i] * filter[i];
            y[2 * i + 1] = spectrum[2 * i + 1] * filter[i];
        }
        return y;
    }

    /**
     * Subsampling by k in space, done on an m×n spectrum: Y[a, b] = k⁻² Σ_{p,q &lt; k} X[a + p·m/k, b + q·n/k]
     * (periodisation); returns the (m/k)×(n/k) spectrum.
     */
    private static double[] subsample(double[] x, int m, int n, int k) {
        if (k == 1) {
            return x;
        }
        int mk = m / k;
        int nk = n / k;
        double[] y = new double[2 * mk * nk];
        double scale = 1.0 / ((double) k * k);
        for (int p = 0; p < k; p++) {
            for (int a = 0; a < mk; a++) {
                int src = (p * mk + a) * n;
                for (int q = 0; q < k; q++) {
                    for (int b = 0; b < nk; b++) {
                        int from = 2 * (src + q * nk + b);
                        int to = 2 * (a * nk + b);
                        y[to] += x[from];
                        y[to + 1] += x[from + 1];
                    }
                }
            }
        }
        for (int i = 0; i < y.length; i++) {
            y[i] *= scale;
        }
        return y;
    }

    /** numpy's 'reflect' index (the edge sample is not repeated); |i| &lt; size − 1 beyond each edge. */
    private static int reflect(int i, int size) {
        if (i < 0) {
            return -i;
        }
        return i >= size ? 2 * (size - 1) - i : i;
    }

    /**
     * A Gabor filter on the m×n grid, periodised over offsets −2..2 periods in each direction, as interleaved complex
     * values: exp(−uᵀ R diag(1, s²) Rᵀ u / (2σ²) + iξ(x cos θ + y sin θ)) · s/(2πσ²), u = (x, y).
     */
    static double[] gabor(int m, int n, double sigma, double theta, double xi, double slant) {
        double c = Math.cos(theta);
        double s = Math.sin(theta);
        double twoSigma2 = 2 * sigma * sigma;
        double a = (c * c + slant * slant * s * s) / twoSigma2;
        double b = c * s * (1 - slant * slant) / twoSigma2;
        double d = (s * s + slant * slant * c * c) / twoSigma2;
        double norm = slant / (2 * Math.PI * sigma * sigma);
        double[] g = new double[2 * m * n];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                double re = 0;
                double im = 0;
                for (int ex = -2; ex <= 2; ex++) {
                    for (int ey = -2; ey <= 2; ey++) {
                        double x = i + (double) ex * m;
                        double y = j + (double) ey * n;
                        double mag = Math.exp(-(a * x * x + 2 * b * x * y + d * y * y));
                        double phase = xi * (x * c + y * s);
                        re += mag * Math.cos(phase);
                        im += mag * Math.sin(phase);
                    }
                }
                g[2 * (i * n + j)] = re * norm;
                g[2 * (i * n + j) + 1] = im * norm;
            }
        }
        return g;
    }

    /** The Morlet wavelet g_ξ − κ·g_0 with κ = Σg_ξ / Σg_0 (complex), so that it sums to zero. */
    static double[] morlet(int m, int n, double sigma, double theta, double xi, double slant) {
        double[] wave = gabor(m, n, sigma, theta, xi, slant);
        double[] envelope = gabor(m, n, sigma, theta, 0, slant);
        double wr = 0;
        double wi = 0;
        double er = 0;
        double ei = 0;
        for (int i = 0; i < wave.length; i += 2) {
            wr += wave[i];
            wi += wave[i + 1];
            er += envelope[i];
            ei += envelope[i + 1];
        }
        double den = er * er + ei * ei;
        double kr = (wr * er + wi * ei) / den;
        double ki = (wi * er - wr * ei) / den;
        for (int i = 0; i < wave.length; i += 2) {
            wave[i] -= kr * envelope[i] - ki * envelope[i + 1];
            wave[i + 1] -= kr * envelope[i + 1] + ki * envelope[i];
        }
        return wave;
    }

    /** The real part of the 2-D DFT of a complex m×n array. */
    private static double[] fourierReal(double[] spatial, int m, int n) {
        double[] f = spatial.clone();
        new DoubleFFT_2D(m, n).complexForward(f);
        double[] re = new double[m * n];
        for (int i = 0; i < re.length; i++) {
            re[i] = f[2 * i];
        }
        return re;
    }

    /**
     * A real m×n Fourier filter at resolution r: the frequencies outside the band [−m/2^(r+1), m/2^(r+1)) (likewise
     * for n) set to 0, then folded onto (m/2^r)×(n/2^r) (Kymatio's {@code periodize_filter_fft}).
     */
    private static double[] periodize(double[] f, int m, int n, int r) {
        int k = 1 << r;
        int mk = m / k;
        int nk = n / k;
        int rowStart = m / (2 * k);
        int rowEnd = rowStart + m - mk;
        int colStart = n / (2 * k);
        int colEnd = colStart + n - nk;
        double[] crop = new double[mk * nk];
        for (int i = 0; i < m; i++) {
            if (r > 0 && i >= rowStart && i < rowEnd) {
                continue;
            }
            for (int j = 0; j < n; j++) {
                if (r > 0 && j >= colStart && j < colEnd) {
                    continue;
                }
                crop[(i % mk) * nk + j % nk] += f[i * n + j];
            }
        }
        return crop;
    }

    /** FFT plans for resolutions 0..J, made on first use (one set per call or per thread). */
    private final class Plans {
        private final DoubleFFT_2D[] byLevel = new DoubleFFT_2D[scales + 1];

        DoubleFFT_2D at(int r) {
            if (byLevel[r] == null) {
                byLevel[r] = new DoubleFFT_2D(paddedHeight >> r, paddedWidth >> r);
            }
            return byLevel[r];
        }
    }
}
