package org.dpdl4j.accounting;

import java.lang.ref.SoftReference;

/**
 * Radix-2 Cooley–Tukey FFTs for PLD composition, with error bounds that the caller charges. The forward transform of
 * a real array runs in double-word ("double-double") arithmetic and the spectrum is raised to a power or multiplied in
 * it as well, so that the T-fold amplification of the forward error is applied to an error of order u² instead of u
 * (u = 2⁻⁵³); the inverse transform runs in double precision. Twiddle factors are computed once per size in
 * double-word arithmetic by Taylor series on the first octant and symmetry; their double parts serve the inverse.
 *
 * <p>Error model (N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., SIAM 2002, Theorem 24.2): for
 * n = 2ᵗ, twiddles within μ of the exact ones and an arithmetic with unit roundoff v, the computed transform ŷ of x
 * satisfies ‖ŷ − Fx‖₂ ≤ ρ‖Fx‖₂ with ρ = tη/(1 − tη), η = μ + γ₄(√2 + μ), γₖ = kv/(1 − kv). In double precision v = u
 * and μ ≤ 2u (the double part of a double-word twiddle is within u + 2⁻¹⁰⁰ of the exact value per component).
 * Double-word operations (Joldes, Muller &amp; Popescu, Tight and Rigorous Error Bounds for Basic Building Blocks of
 * Double-Word Arithmetic, ACM TOMS 44(2), 2017: addition Algorithm 6, relative error ≤ 3u² + 13u³; multiplication
 * with FMA Algorithm 12, ≤ 5u²) satisfy the standard model with v = 8u²; the double-word twiddles are within
 * {@link #TWIDDLE_ERROR_DD} (checked against 40-digit values in FftTest). Java evaluates double expressions without
 * contraction, so each written operation rounds once, as the model assumes; {@link Math#fma} is exact-then-rounded.
 */
final class Fft {
    /** u, the unit roundoff of double precision. */
    static final double U = 0x1p-53;
    /** The standard-model unit roundoff of the double-word operations used here (8u², covering 3u² + 13u³ and 5u²). */
    static final double U_DD = 8 * U * U;
    /** A bound on |ŵ − w| for the double-word twiddles (2⁻⁹⁶: the Taylor series' rounding, with room to spare). */
    static final double TWIDDLE_ERROR_DD = 0x1p-96;
    /** A bound on |ŵ − w| for the double twiddles (their double parts): u per component, times √2, plus the above. */
    static final double TWIDDLE_ERROR = 1.5 * U;
    /** A spectral component whose T-th power is below this is dropped (set to 0), its size charged. */
    private static final double NEGLIGIBLE = 1e-40;
    /** The largest size supported (2²⁴). */
    static final int MAX_SIZE = 1 << 24;

    private static final double TWO_PI_HI = 6.283185307179586;
    private static final double TWO_PI_LO = 2.4492935982947064e-16;

    /** cos(2πk/N) for k = 0 … N/4 as double words (hi, lo), for the largest N asked for so far. */
    private record Table(int size, double[] hi, double[] lo) {
    }

    private static SoftReference<Table> table = new SoftReference<>(null);

    private Fft() {
    }

    /**
     * Masses computed by FFT and a bound on their error.
     *
     * @param values  the real parts of the inverse transform, length n (the circular result)
     * @param l2Error a bound on ‖values − exact‖₂ over all n points, exact being the circular convolution in exact
     *                arithmetic of the given inputs
     */
    record Result(double[] values, double l2Error) {
    }

    /**
     * The circular convolution of a and b (each zero-padded to n; linear when n ≥ a.length + b.length − 1): forward
     * transforms and their product in double words, rounded once, the inverse in double. The bound: the forward errors
     * (‖Âₖ − Aₖ‖₂ ≤ ρ_dd√n‖a‖₂ and |Aₖ| ≤ ‖a‖₁), the product's ({@link #productError()}) and the final rounding (u),
     * then the inverse's ρ‖Ẑ‖₂; divided by √n (Parseval).
     */
    static Result convolve(double[] a, double[] b, int n) {
        double[][] x = forwardDd(a, n);
        double[][] y = forwardDd(b, n);
        double[] re = new double[n];
        double[] im = new double[n];
        double[] t = new double[2];
        double[] z = new double[4];
        for (int k = 0; k < n; k++) {
            complexMul(x[0][k], x[1][k], x[2][k], x[3][k], y[0][k], y[1][k], y[2][k], y[3][k], t, z);
            re[k] = z[0] + z[1];
            im[k] = z[2] + z[3];
        }
        double sqrtN = Math.sqrt(n);
        double rhoDd = relativeErrorDd(n);
        double ea = rhoDd * sqrtN * l2(a);
        double eb = rhoDd * sqrtN * l2(b);
        double product = ea * (l1(b) + eb) + l1(a) * eb + productError() * (l1(a) + ea) * (sqrtN * l2(b) + eb);
        double error = ((relativeErrorDouble(n) + U) * l2(re, im) + product) / sqrtN;
        inverse(re, im);
        return new Result(re, error);
    }

    /**
     * The circular T-fold convolution of p with itself (zero-padded to n): the forward transform and each component's
     * T-th power ({@link #power}) in double words, rounded once, the inverse in double. A component whose T-th power
     * is below 10⁻⁴⁰ is set to 0 and its size counted in the bound. The bound: ‖Ŷ^T − Y^T‖₂ ≤ T·M^{T−1}·ρ_dd√n‖p‖₂
     * with M = max(1, ‖p‖₁) + ρ_dd√n‖p‖₂ ≥ |Yₖ|, |Ŷₖ|; the powers' relative error (1 + e)^{2T} − 1 and the rounding
     * u of what was kept; what was dropped; the inverse's ρ‖Ẑ‖₂; divided by √n.
     */
    static Result selfConvolve(double[] p, long count, int n) {
        double[][] y = forwardDd(p, n);
        double sqrtN = Math.sqrt(n);
        double forward = relativeErrorDd(n) * sqrtN * l2(p); // ‖Ŷ − Y‖₂, and so each |Ŷₖ − Yₖ|
        double[] re = new double[n];
        double[] im = new double[n];
        double[] z = new double[4];
        double dropped = 0; // Σ |Ŷₖ|^{2T} over the components set to 0
        double logTiny = Math.log(NEGLIGIBLE);
        for (int k = 0; k < n; k++) {
            double magnitude = Math.hypot(y[0][k], y[2][k]) * (1 + 4 * U) + Math.abs(y[1][k]) + Math.abs(y[3][k]);
            double logPower = count * Math.log(magnitude);
            if (logPower < logTiny) {
                dropped += Math.max(Math.exp(2 * logPower), Double.MIN_VALUE);
                continue;
            }
            power(y[0][k], y[1][k], y[2][k], y[3][k], count, z);
            re[k] = z[0] + z[1];
            im[k] = z[2] + z[3];
        }
        double powering = Math.expm1(2 * count * productError());
        double amplified = count * Math.exp((count - 1) * Math.log1p(Math.max(0, l1(p) - 1) + forward)) * forward;
        double error = ((relativeErrorDouble(n) + U + powering) * l2(re, im) + amplified + Math.sqrt(dropped)) / sqrtN;
        inverse(re, im);
        return new Result(re, error);
    }

    /** ‖x‖₂, with a relative allowance for its own rounding. */
    private static double l2(double[] x) {
        double s = 0;
        for (double v : x) {
            s += v * v;
        }
        return Math.sqrt(s) * (1 + (x.length + 2) * U);
    }

    private static double l2(double[] re, double[] im) {
        double s = 0;
        for (int i = 0; i < re.length; i++) {
            s += re[i] * re[i] + im[i] * im[i];
        }
        return Math.sqrt(s) * (1 + (2 * re.length + 2) * U);
    }

    private static double l1(double[] x) {
        double s = 0;
        for (double v : x) {
            s += Math.abs(v);
        }
        return s * (1 + (x.length + 1) * U);
    }

    /** Higham's ρ for size n with twiddle error μ and unit roundoff v: tη/(1 − tη), η = μ + γ₄(√2 + μ). */
    static double relativeError(int n, double mu, double unit) {
        int t = Integer.numberOfTrailingZeros(n);
        double gamma4 = 4 * unit / (1 - 4 * unit);
        double eta = mu + gamma4 * (Math.sqrt(2) + mu);
        return t * eta / (1 - t * eta);
    }

    /** ρ of {@link #forwardDd}. */
    static double relativeErrorDd(int n) {
        return relativeError(n, TWIDDLE_ERROR_DD, U_DD);
    }

    /** ρ of {@link #inverse}. */
    static double relativeErrorDouble(int n) {
        return relativeError(n, TWIDDLE_ERROR, U);
    }

    /** The smallest power of two ≥ max(1, length). */
    static int sizeFor(long length) {
        if (length > MAX_SIZE) {
            throw new IllegalArgumentException("FFT size above 2^24 for length " + length);
        }
        return length <= 1 ? 1 : Integer.highestOneBit((int) (length - 1)) << 1;
    }

    /**
     * The DFT Σⱼ xⱼ e^{−2πijk/n} of the real array x zero-padded to n, in double-word arithmetic.
     *
     * @return {reHi, reLo, imHi, imLo}, each of length n
     */
    static double[][] forwardDd(double[] x, int n) {
        Table cos = twiddles(n);
        int stride = cos.size / n;
        double[] rh = new double[n];
        double[] rl = new double[n];
        double[] ih = new double[n];
        double[] il = new double[n];
        int bits = Integer.numberOfTrailingZeros(n);
        for (int i = 0; i < x.length; i++) {
            int j = bits == 0 ? 0 : Integer.reverse(i) >>> (32 - bits);
            rh[j] = x[i];
        }
        double[] t = new double[2];
        double[] wch = new double[Math.max(1, n / 2)];
        double[] wcl = new double[wch.length];
        double[] wsh = new double[wch.length];
        double[] wsl = new double[wch.length];
        for (int len = 2; len <= n; len <<= 1) {
            int half = len >> 1;
            int step = n / len;
            for (int j = 0; j < half; j++) { // twiddle e^{−2πij/len} = cos − i·sin
                double[] w = twiddle(cos, j * step * stride);
                wch[j] = w[0];
                wcl[j] = w[1];
                wsh[j] = -w[2];
                wsl[j] = -w[3];
            }
            for (int block = 0; block < n; block += len) {
                for (int j = 0; j < half; j++) {
                    int a = block + j;
                    int b = a + half;
                    // v = x[b]·w in double words
                    DoubleWord.mul(rh[b], rl[b], wch[j], wcl[j], t);
                    double p1h = t[0], p1l = t[1];
                    DoubleWord.mul(ih[b], il[b], wsh[j], wsl[j], t);
                    DoubleWord.add(p1h, p1l, -t[0], -t[1], t);
                    double vrh = t[0], vrl = t[1];
                    DoubleWord.mul(rh[b], rl[b], wsh[j], wsl[j], t);
                    double p3h = t[0], p3l = t[1];
                    DoubleWord.mul(ih[b], il[b], wch[j], wcl[j], t);
                    DoubleWord.add(p3h, p3l, t[0], t[1], t);
                    double vih = t[0], vil = t[1];
                    DoubleWord.add(rh[a], rl[a], -vrh, -vrl, t);
                    rh[b] = t[0];
                    rl[b] = t[1];
                    DoubleWord.add(ih[a], il[a], -vih, -vil, t);
                    ih[b] = t[0];
                    il[b] = t[1];
                    DoubleWord.add(rh[a], rl[a], vrh, vrl, t);
                    rh[a] = t[0];
                    rl[a] = t[1];
                    DoubleWord.add(ih[a], il[a], vih, vil, t);
                    ih[a] = t[0];
                    il[a] = t[1];
                }
            }
        }
        return new double[][]{rh, rl, ih, il};
    }

    /**
     * The inverse DFT (1/n) Σₖ zₖ e^{2πijk/n} in place, in double precision; only the real part is wanted by callers
     * but both are transformed.
     */
    static void inverse(double[] re, double[] im) {
        int n = re.length;
        Table cos = twiddles(n);
        int stride = cos.size / n;
        int bits = Integer.numberOfTrailingZeros(n);
        for (int i = 0; i < n; i++) {
            int j = bits == 0 ? 0 : Integer.reverse(i) >>> (32 - bits);
            if (j > i) {
                double r = re[i];
                re[i] = re[j];
                re[j] = r;
                r = im[i];
                im[i] = im[j];
                im[j] = r;
            }
        }
        double[] wc = new double[Math.max(1, n / 2)];
        double[] ws = new double[wc.length];
        for (int len = 2; len <= n; len <<= 1) {
            int half = len >> 1;
            int step = n / len;
            for (int j = 0; j < half; j++) { // e^{+2πij/len} = cos + i·sin
                double[] w = twiddle(cos, j * step * stride);
                wc[j] = w[0];
                ws[j] = w[2];
            }
            for (int block = 0; block < n; block += len) {
                for (int j = 0; j < half; j++) {
                    int a = block + j;
                    int b = a + half;
                    double vr = re[b] * wc[j] - im[b] * ws[j];
                    double vi = re[b] * ws[j] + im[b] * wc[j];
                    re[b] = re[a] - vr;
                    im[b] = im[a] - vi;
                    re[a] += vr;
                    im[a] += vi;
                }
            }
        }
        double scale = 1.0 / n; // a power of two: exact
        for (int i = 0; i < n; i++) {
            re[i] *= scale;
            im[i] *= scale;
        }
    }

    /** {cosHi, cosLo, sinHi, sinLo} of 2πk/N for 0 ≤ k &lt; N/2, from the table of cos over the first quadrant. */
    private static double[] twiddle(Table cos, int k) {
        int quarter = cos.size >> 2;
        double[] hi = cos.hi;
        double[] lo = cos.lo;
        if (k <= quarter) {
            return new double[]{hi[k], lo[k], hi[quarter - k], lo[quarter - k]};
        }
        int m = (cos.size >> 1) - k; // θ = π − θ': cos = −cos θ', sin = sin θ'
        return new double[]{-hi[m], -lo[m], hi[quarter - m], lo[quarter - m]};
    }

    /** The table for a size ≥ n (sizes are powers of two, so a larger table serves by stride). */
    private static synchronized Table twiddles(int n) {
        Table t = table.get();
        if (t != null && t.size >= n) {
            return t;
        }
        int size = Math.max(4, Math.max(n, t == null ? 0 : t.size));
        int quarter = size / 4;
        double[] hi = new double[quarter + 1];
        double[] lo = new double[quarter + 1];
        double[] cs = new double[4];
        for (int k = 0; k <= size / 8; k++) {
            cosSin(k, size, cs);
            hi[k] = cs[0];
            lo[k] = cs[1];
            hi[quarter - k] = cs[2]; // cos(π/2 − θ) = sin θ
            lo[quarter - k] = cs[3];
        }
        t = new Table(size, hi, lo);
        table = new SoftReference<>(t);
        return t;
    }

    /** cos and sin of θ = 2πk/n (θ ≤ π/4) in double words, by their Taylor series. */
    static void cosSin(long k, int n, double[] out) {
        double[] t = new double[2];
        // θ = (2π)·(k/n); k/n is exact (n a power of two), so θ = TWO_PI·f with one product in double words
        double f = (double) k / n;
        double th = TWO_PI_HI * f;
        double tl = Math.fma(TWO_PI_HI, f, -th) + TWO_PI_LO * f;
        double s = th + tl;
        tl = tl - (s - th);
        th = s;
        DoubleWord.mul(th, tl, th, tl, t);
        double x2h = t[0], x2l = t[1];
        // sin: θ − θ³/3! + …; cos: 1 − θ²/2! + …; terms fall below 2⁻¹¹⁰ by the 30th power at θ ≤ π/4
        double sh = th, sl = tl, termH = th, termL = tl;
        double ch = 1, cl = 0, cTermH = 1, cTermL = 0;
        for (int j = 1; j <= 16; j++) {
            DoubleWord.mul(termH, termL, x2h, x2l, t);
            DoubleWord.divide(t[0], t[1], -(2.0 * j) * (2.0 * j + 1), t);
            termH = t[0];
            termL = t[1];
            DoubleWord.add(sh, sl, termH, termL, t);
            sh = t[0];
            sl = t[1];
            DoubleWord.mul(cTermH, cTermL, x2h, x2l, t);
            DoubleWord.divide(t[0], t[1], -(2.0 * j - 1) * (2.0 * j), t);
            cTermH = t[0];
            cTermL = t[1];
            DoubleWord.add(ch, cl, cTermH, cTermL, t);
            ch = t[0];
            cl = t[1];
        }
        out[0] = ch;
        out[1] = cl;
        out[2] = sh;
        out[3] = sl;
    }

    /**
     * z^T for the double word complex z = (rh + rl) + i(ih + il), by binary powering in double-word arithmetic: at most
     * 2⌊log₂T⌋ + 1 products, so |result − z^T| ≤ ((1 + {@link #productError()})^{2T} − 1)|z|^T.
     *
     * @param out {reHi, reLo, imHi, imLo}
     */
    static void power(double rh, double rl, double ih, double il, long count, double[] out) {
        double[] t = new double[2];
        double[] z = new double[4];
        double ah = 1, al = 0, bh = 0, bl = 0; // the accumulated product
        double xh = rh, xl = rl, yh = ih, yl = il;
        long e = count;
        while (true) {
            if ((e & 1) != 0) {
                complexMul(ah, al, bh, bl, xh, xl, yh, yl, t, z);
                ah = z[0];
                al = z[1];
                bh = z[2];
                bl = z[3];
            }
            e >>>= 1;
            if (e == 0) {
                break;
            }
            complexMul(xh, xl, yh, yl, xh, xl, yh, yl, t, z);
            xh = z[0];
            xl = z[1];
            yh = z[2];
            yl = z[3];
        }
        out[0] = ah;
        out[1] = al;
        out[2] = bh;
        out[3] = bl;
    }

    /** The relative error of one double-word complex product: √2·γ₂ (Higham, Lemma 3.5) with v = {@link #U_DD}. */
    static double productError() {
        return Math.sqrt(2) * 2 * U_DD / (1 - 2 * U_DD);
    }

    /** (a + ib)(c + id) in double words; out = {reHi, reLo, imHi, imLo}. */
    static void complexMul(double ah, double al, double bh, double bl, double ch, double cl, double dh, double dl,
                           double[] t, double[] out) {
        DoubleWord.mul(ah, al, ch, cl, t);
        double ph = t[0], pl = t[1];
        DoubleWord.mul(bh, bl, dh, dl, t);
        DoubleWord.add(ph, pl, -t[0], -t[1], t);
        double reH = t[0], reL = t[1];
        DoubleWord.mul(ah, al, dh, dl, t);
        ph = t[0];
        pl = t[1];
        DoubleWord.mul(bh, bl, ch, cl, t);
        DoubleWord.add(ph, pl, t[0], t[1], t);
        out[0] = reH;
        out[1] = reL;
        out[2] = t[0];
        out[3] = t[1];
    }
}
