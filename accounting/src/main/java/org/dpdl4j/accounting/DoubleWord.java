package org.dpdl4j.accounting;

/**
 * Double-word ("double-double") arithmetic: a value is hi + lo with |lo| ≤ ulp(hi)/2, about 106 bits. The algorithms and
 * their error bounds are those of Joldes, Muller &amp; Popescu, Tight and Rigorous Error Bounds for Basic Building
 * Blocks of Double-Word Arithmetic, ACM TOMS 44(2), 2017; each result is written to {@code out} as {hi, lo}.
 */
final class DoubleWord {
    private DoubleWord() {
    }

    /** Double-word sum, Joldes–Muller–Popescu 2017 Algorithm 6 (AccurateDWPlusDW): relative error ≤ 3u² + 13u³. */
    static void add(double xh, double xl, double yh, double yl, double[] out) {
        double sh = xh + yh;
        double bb = sh - xh;
        double sl = (xh - (sh - bb)) + (yh - bb);
        double th = xl + yl;
        bb = th - xl;
        double tl = (xl - (th - bb)) + (yl - bb);
        double c = sl + th;
        double vh = sh + c;
        double vl = c - (vh - sh);
        double w = tl + vl;
        double zh = vh + w;
        out[0] = zh;
        out[1] = w - (zh - vh);
    }

    /** Double-word product with FMA, Joldes–Muller–Popescu 2017 Algorithm 12 (DWTimesDW3): relative error ≤ 5u². */
    static void mul(double xh, double xl, double yh, double yl, double[] out) {
        double ch = xh * yh;
        double cl1 = Math.fma(xh, yh, -ch);
        double tl0 = xl * yl;
        double tl1 = Math.fma(xh, yl, tl0);
        double cl2 = Math.fma(xl, yh, tl1);
        double cl3 = cl1 + cl2;
        double zh = ch + cl3;
        out[0] = zh;
        out[1] = cl3 - (zh - ch);
    }

    /** (xh + xl)/y in double words (Joldes–Muller–Popescu 2017, Algorithm 15, DWDivFP3): relative error ≤ 3u². */
    static void divide(double xh, double xl, double y, double[] out) {
        double th = xh / y;
        double ph = th * y;
        double pl = Math.fma(th, y, -ph);
        double dh = xh - ph;
        double dt = dh - pl;
        double d = dt + xl;
        double tl = d / y;
        double zh = th + tl;
        out[0] = zh;
        out[1] = tl - (zh - th);
    }
    /**
     * (xh + xl)/(yh + yl) in double words: a quotient and one correction from the remainder. Not one of the paper's
     * algorithms and without a proven bound: it is used only where the result is checked afterwards (connect-the-dots
     * masses, whose hockey-stick curve is recomputed) or tested against BigDecimal (e^x − 1).
     */
    static void divide(double xh, double xl, double yh, double yl, double[] out) {
        double[] t = new double[2];
        double q1 = xh / yh;
        mul(q1, 0, yh, yl, t);
        add(xh, xl, -t[0], -t[1], t);
        double q2 = (t[0] + t[1]) / yh;
        double s = q1 + q2;
        out[0] = s;
        out[1] = q2 - (s - q1);
    }

    /** e^x − 1 in double words: Taylor series below 1/16, doubling formula e^{2y} − 1 = (e^y − 1)(e^y + 1) up to 64, double precision beyond. */
    static double[] expm1(double x) {
        if (!(Math.abs(x) <= 64)) { // e^x − 1 is then −1 or beyond double words' use here (and NaN stays NaN)
            return new double[]{Math.expm1(x), 0};
        }
        if (Math.abs(x) > 0.0625) {
            double[] h = expm1(x / 2);
            double[] t = new double[2];
            add(h[0], h[1], 2, 0, t);
            mul(h[0], h[1], t[0], t[1], t);
            return t;
        }
        double[] t = new double[2];
        double sh = x, sl = 0, th = x, tl = 0;
        for (int k = 2; k <= 24; k++) {
            mul(th, tl, x, 0, t);
            divide(t[0], t[1], k, t);
            th = t[0];
            tl = t[1];
            add(sh, sl, th, tl, t);
            sh = t[0];
            sl = t[1];
        }
        return new double[]{sh, sl};
    }

    /** e^x in double words: 1 + (e^x − 1), added as double words. */
    static double[] exp(double x) {
        double[] e = expm1(x);
        add(1, 0, e[0], e[1], e);
        return e;
    }

    /** a − b for doubles a, b as an exact double word. */
    static double[] difference(double a, double b) {
        double s = a - b;
        double bb = s - a;
        return new double[]{s, (a - (s - bb)) + (-b - bb)};
    }
}
