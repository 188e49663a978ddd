package org.dpdl4j.accounting;

import java.util.function.DoubleUnaryOperator;

/**
 * A pessimistic discretised privacy loss distribution (PLD) of one dominating pair (P, Q): the law of
 * L = log(P(o)/Q(o)) for o ~ P, as masses on the grid {(offset + i)·Δ} plus a mass at +∞. Every operation keeps it
 * pessimistic, so that its hockey-stick curve δ(ε) = p∞ + Σ pᵢ (1 − e^{ε − lᵢ})₊ is never below the true one:
 * <ul>
 *   <li>a mechanism's PLD is built by connect-the-dots from its exact δ(ε) at the grid points (Doroshenko, Ghazi,
 *       Kamath, Kumar &amp; Manurangsi, Connect the Dots: Tighter Discrete Approximations of Privacy Loss
 *       Distributions, PETS 2022, arXiv:2207.04380, Algorithm 1 and Theorem 4.3: exact at the grid points and above
 *       the true curve between them, because δ is convex in e^ε);</li>
 *   <li>composition is the convolution of the finite parts, with 1 − p∞ multiplying, computed by {@link Fft}: the
 *       forward transforms and the spectra's product or T-th power in double-word arithmetic, the inverse in double;
 *       a proven bound on the L1 error of the computed masses (L2 bound of Higham's Theorem 24.2 carried through the
 *       product, times √(points)) is added to p∞, so the rounding is charged, never renormalised;</li>
 *   <li>the masses of connect-the-dots are formed in double-word arithmetic, and the hockey-stick curve of the rounded
 *       masses is recomputed at every grid point in double-word arithmetic; wherever it falls below the δ it was built
 *       from, the largest shortfall is added to p∞;</li>
 *   <li>a tail cut after a composition moves the upper tail to +∞ and the lower tail up to the lowest kept point
 *       (raising a loss only raises δ); masses that rounding makes negative are set to 0;</li>
 *   <li>when a composition would need more than {@link #MAX_POINTS} points, Δ is doubled by rounding each loss up
 *       to the coarser grid (again only raising losses), so memory stays bounded whatever ε; {@link PldAccountant}
 *       rebuilds a self-composed mechanism on the coarser grid instead, which is tighter.</li>
 * </ul>
 * Instances are immutable.
 */
final class PrivacyLossDistribution {
    /** The probability mass each tail cut may move: the cuts' total is added to δ, so it must be negligible. */
    static final double TAIL_MASS = 1e-15;
    /** The largest number of grid points a distribution may hold (2²², 32 MiB per array). */
    static final int MAX_POINTS = 1 << 22;

    final double interval;
    final long offset;
    final double[] pmf;
    final double infinityMass;

    PrivacyLossDistribution(double interval, long offset, double[] pmf, double infinityMass) {
        this.interval = interval;
        this.offset = offset;
        this.pmf = pmf;
        this.infinityMass = Math.min(1, infinityMass);
    }

    /** The PLD of a mechanism that reveals everything: all mass at +∞. */
    static PrivacyLossDistribution infinite(double interval) {
        return new PrivacyLossDistribution(interval, 0, new double[]{0}, 1);
    }

    /** The PLD of a mechanism that reveals nothing: all mass at loss 0. */
    static PrivacyLossDistribution identity(double interval) {
        return new PrivacyLossDistribution(interval, 0, new double[]{1}, 0);
    }

    /**
     * Connect-the-dots from a mechanism's exact hockey-stick curve (arXiv:2207.04380, Algorithm 1, on the grid
     * ⌊lossLow/Δ⌋·Δ … ⌈lossHigh/Δ⌉·Δ).
     *
     * @param hockeyStick δ(ε) of the pair, exact (non-increasing in ε, 1 − e^ε below the loss's support)
     * @param lossLow     a loss at or below which the pair's δ curve may be replaced by its chord to (ε = −∞, 1): the
     *                    smallest loss, or a lower-tail quantile
     * @param lossHigh    a loss above which P has mass ≤ {@link #TAIL_MASS} (that mass goes to +∞)
     * @param interval    Δ &gt; 0 (doubled until the grid has at most {@link #MAX_POINTS} points)
     */
    static PrivacyLossDistribution connectTheDots(DoubleUnaryOperator hockeyStick, double lossLow, double lossHigh, double interval) {
        double d = interval;
        while ((Math.ceil(lossHigh / d) - Math.floor(lossLow / d)) + 1 > MAX_POINTS) {
            d *= 2;
        }
        long lo = (long) Math.floor(lossLow / d);
        long hi = Math.max(lo, (long) Math.ceil(lossHigh / d));
        int n = (int) (hi - lo + 1);
        double[] delta = new double[n];
        for (int i = 0; i < n; i++) {
            delta[i] = Math.min(1, Math.max(0, hockeyStick.applyAsDouble((lo + i) * d)));
        }
        for (int i = 1; i < n; i++) { // rounding may break monotonicity by an ulp
            delta[i] = Math.min(delta[i], delta[i - 1]);
        }
        double[] p = new double[n];
        double infinity = delta[n - 1];
        if (n == 1) {
            p[0] = 1 - delta[0];
            return new PrivacyLossDistribution(d, lo, p, infinity);
        }
        // masses in double words: differences of doubles are exact, so each mass is rounded once, at the end
        double[] t = new double[2];
        double[] em1 = DoubleWord.expm1(d); // e^Δ − 1
        double[] ed = DoubleWord.exp(d);
        double[] inv = new double[2];
        DoubleWord.divide(1, 0, em1[0], em1[1], inv); // 1/(e^Δ − 1)
        double[] prev = DoubleWord.difference(delta[1], delta[0]);
        double[] low = new double[2];
        DoubleWord.add(1, 0, -delta[0], 0, low); // 1 − δ₀, exactly
        DoubleWord.mul(prev[0], prev[1], inv[0], inv[1], t);
        DoubleWord.add(low[0], low[1], t[0], t[1], t);
        p[0] = t[0] + t[1];
        for (int i = 1; i < n - 1; i++) {
            double[] next = DoubleWord.difference(delta[i + 1], delta[i]);
            DoubleWord.mul(ed[0], ed[1], prev[0], prev[1], t);
            DoubleWord.add(next[0], next[1], -t[0], -t[1], t);
            DoubleWord.mul(t[0], t[1], inv[0], inv[1], t);
            p[i] = t[0] + t[1];
            prev = next;
        }
        // the top mass: (δₙ₋₂ − δₙ₋₁)/(1 − e^{−Δ}) = (δₙ₋₂ − δₙ₋₁)·e^Δ/(e^Δ − 1)
        DoubleWord.mul(-prev[0], -prev[1], ed[0], ed[1], t);
        DoubleWord.mul(t[0], t[1], inv[0], inv[1], t);
        p[n - 1] = t[0] + t[1];
        for (int i = 0; i < n; i++) {
            if (!(p[i] > 0)) {
                p[i] = 0;
            }
        }
        return new PrivacyLossDistribution(d, lo, p, infinity + shortfall(p, infinity, delta, d));
    }

    /**
     * The largest amount by which the hockey-stick curve of the rounded masses falls below the δ it was built from, over
     * the grid points and ε → −∞ (where the curve must reach 1), computed in double-word arithmetic by the recurrences
     * A ← A + pⱼ, S ← e^{−Δ}(S + pⱼ), δ(lⱼ₋₁) = p∞ + A − S; plus a bound on the recurrences' own rounding. Between the
     * grid points both curves are checked by convexity: the PLD's curve is the chord in e^ε, the true one convex in e^ε.
     */
    private static double shortfall(double[] p, double infinity, double[] delta, double d) {
        double[] t = new double[2];
        double[] r = DoubleWord.exp(-d);
        double rh = r[0];
        double rl = r[1];
        double ah = 0, al = 0, sh = 0, sl = 0;
        double worst = 0;
        for (int j = p.length - 1; j >= 0; j--) {
            DoubleWord.add(infinity, 0, ah, al, t);
            DoubleWord.add(t[0], t[1], -sh, -sl, t);
            DoubleWord.add(delta[j], 0, -t[0], -t[1], t);
            worst = Math.max(worst, t[0]);
            DoubleWord.add(ah, al, p[j], 0, t);
            ah = t[0];
            al = t[1];
            DoubleWord.add(sh, sl, p[j], 0, t);
            DoubleWord.mul(t[0], t[1], rh, rl, t);
            sh = t[0];
            sl = t[1];
        }
        DoubleWord.add(infinity, 0, ah, al, t);
        worst = Math.max(worst, 1 - t[0] - t[1]);
        // each step's four double-word operations err by at most 8u² of values ≤ 2; e^{−Δ}'s error compounds n times
        double recurrence = 64 * p.length * Fft.U_DD;
        return worst > 0 ? worst + recurrence : recurrence;
    }

    /** A two-point PLD (losses rounded up to the grid): randomized response, the dominating pair of pure ε₀-DP. */
    static PrivacyLossDistribution twoPoint(double lossA, double massA, double lossB, double massB, double interval) {
        long a = (long) Math.ceil(lossA / interval);
        long b = (long) Math.ceil(lossB / interval);
        long lo = Math.min(a, b);
        double[] p = new double[(int) (Math.max(a, b) - lo + 1)];
        p[(int) (a - lo)] += massA;
        p[(int) (b - lo)] += massB;
        return new PrivacyLossDistribution(interval, lo, p, 0);
    }

    /** The composition of two mechanisms (in either order), by linear convolution. */
    PrivacyLossDistribution compose(PrivacyLossDistribution other) {
        PrivacyLossDistribution a = this;
        PrivacyLossDistribution b = other;
        while (a.interval < b.interval) {
            a = a.coarsened();
        }
        while (b.interval < a.interval) {
            b = b.coarsened();
        }
        while ((long) a.pmf.length + b.pmf.length - 1 > MAX_POINTS) {
            a = a.coarsened();
            b = b.coarsened();
        }
        int len = a.pmf.length + b.pmf.length - 1;
        Fft.Result r = Fft.convolve(a.pmf, b.pmf, Fft.sizeFor(len));
        double[] p = java.util.Arrays.copyOf(r.values(), len);
        double error = r.l2Error();
        double infinity = 1 - (1 - a.infinityMass) * (1 - b.infinityMass) + charge(error, len);
        return clean(a.interval, a.offset + b.offset, p, infinity).truncated();
    }

    /**
     * The T-fold composition with itself: the FFT raised to the T-th power on a window [L, U] outside of which the
     * T-fold sum has mass at most {@link #TAIL_MASS} on each side (a Chernoff bound over several λ); the cut tails
     * and the wrap-around of the circular convolution are charged to +∞.
     *
     * @param count T ≥ 1
     */
    PrivacyLossDistribution selfCompose(long count) {
        if (count == 1) {
            return this;
        }
        PrivacyLossDistribution base = this;
        while (true) {
            long[] window = base.window(count);
            long width = window[1] - window[0] + 1;
            if (width <= MAX_POINTS && base.pmf.length <= MAX_POINTS) {
                return base.powerOnWindow(count, window);
            }
            base = base.coarsened();
        }
    }

    /** Whether {@link #selfCompose} can compose T copies on this grid without coarsening it. */
    boolean selfComposesOnItsGrid(long count) {
        long[] window = window(count);
        return count == 1 || window[1] - window[0] + 1 <= MAX_POINTS && pmf.length <= MAX_POINTS;
    }

    private PrivacyLossDistribution powerOnWindow(long count, long[] window) {
        int width = (int) (window[1] - window[0] + 1);
        int size = Fft.sizeFor(Math.max(width, pmf.length));
        Fft.Result r = Fft.selfConvolve(pmf, count, size);
        double[] re = r.values();
        double error = r.l2Error();
        // relative index s of the T-fold sum sits at s mod size; the window starts at s = L − T·offset
        long start = window[0] - count * offset;
        double[] p = new double[width];
        for (int i = 0; i < width; i++) {
            p[i] = re[(int) Math.floorMod(start + i, (long) size)];
        }
        double finite = Math.pow(1 - infinityMass, count);
        // two cut tails and what wrapped around onto the window, and the rounding
        double infinity = 1 - finite + 3 * TAIL_MASS + charge(error, width);
        return clean(interval, window[0], p, infinity);
    }

    /**
     * What is added to p∞ for masses computed with L2 error at most {@code l2Error} on {@code points} points: their L1
     * error is at most √points times it (Cauchy–Schwarz), and δ(ε) moves by at most the L1 error (weights in [0, 1]).
     * Doubled, to cover the second-order terms and the rounding in evaluating the bound itself.
     */
    private static double charge(double l2Error, int points) {
        return 2 * Math.sqrt(points) * l2Error;
    }

    /** [L, U] in grid units: the T-fold sum lies outside it with probability at most TAIL_MASS on each side. */
    private long[] window(long count) {
        long min = count * offset;
        long max = count * (offset + pmf.length - 1);
        double lower = min;
        double upper = max;
        double logTail = Math.log(TAIL_MASS);
        for (int k = -12; k <= 12; k++) {
            double lambda = Math.pow(2, k / 2.0) * interval; // λ per grid unit, from λ_ε ∈ [2^-6, 2^6]
            double up = (count * logMgf(lambda) - logTail) / lambda;      // P(S ≥ u) ≤ M(λ)^T e^{−λu}
            double down = (logTail - count * logMgf(-lambda)) / lambda;    // P(S ≤ l) ≤ M(−λ)^T e^{λl}
            if (Double.isFinite(up)) {
                upper = Math.min(upper, Math.ceil(up));
            }
            if (Double.isFinite(down)) {
                lower = Math.max(lower, Math.floor(down));
            }
        }
        long l = (long) Math.max(min, Math.min(lower, max));
        long u = (long) Math.min(max, Math.max(upper, l));
        return new long[]{l, u};
    }

    /** log Σ pᵢ e^{λ·(offset + i)} (λ per grid unit), by log-sum-exp. */
    private double logMgf(double lambda) {
        double top = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < pmf.length; i++) {
            if (pmf[i] > 0) {
                top = Math.max(top, lambda * (offset + i));
            }
        }
        if (top == Double.NEGATIVE_INFINITY) {
            return Double.NEGATIVE_INFINITY;
        }
        double s = 0;
        for (int i = 0; i < pmf.length; i++) {
            if (pmf[i] > 0) {
                s += pmf[i] * Math.exp(lambda * (offset + i) - top);
            }
        }
        return top + Math.log(s);
    }

    /** The same PLD on the grid of step 2Δ, every loss rounded up. */
    PrivacyLossDistribution coarsened() {
        long lo = Math.floorDiv(offset + 1, 2); // ⌈offset/2⌉
        long hi = Math.floorDiv(offset + pmf.length, 2); // ⌈(offset + n − 1)/2⌉
        double[] p = new double[(int) (hi - lo + 1)];
        for (int i = 0; i < pmf.length; i++) {
            p[(int) (Math.floorDiv(offset + i + 1, 2) - lo)] += pmf[i];
        }
        return new PrivacyLossDistribution(2 * interval, lo, p, infinityMass);
    }

    /** The lower tail (mass ≤ TAIL_MASS) moved up to the lowest kept point, the upper tail to +∞. */
    private PrivacyLossDistribution truncated() {
        int n = pmf.length;
        int first = 0;
        double low = 0;
        while (first < n - 1 && low + pmf[first] <= TAIL_MASS) {
            low += pmf[first++];
        }
        int last = n - 1;
        double high = 0;
        while (last > first && high + pmf[last] <= TAIL_MASS) {
            high += pmf[last--];
        }
        if (first == 0 && last == n - 1) {
            return this;
        }
        double[] p = java.util.Arrays.copyOfRange(pmf, first, last + 1);
        p[0] += low;
        return new PrivacyLossDistribution(interval, offset + first, p, infinityMass + high);
    }

    /** δ(ε) = p∞ + Σ pᵢ (1 − e^{ε − lᵢ}) over lᵢ &gt; ε. */
    double hockeyStick(double epsilon) {
        double s = infinityMass;
        for (int i = pmf.length - 1; i >= 0; i--) {
            double l = (offset + i) * interval;
            if (l <= epsilon) {
                break;
            }
            s += pmf[i] * -Math.expm1(epsilon - l);
        }
        return Math.min(1, s);
    }

    /**
     * The smallest ε ≥ 0 with δ(ε) ≤ δ: on each interval (lᵢ₋₁, lᵢ] between grid points δ(ε) = p∞ + A − e^ε B, with A
     * the mass at lᵢ and above and B = Σ pⱼ e^{−lⱼ} over the same points, so it is solved exactly, scanning from the
     * top. B is kept as B·e^{lᵢ} so that neither factor overflows at large losses. A, B and the comparison are formed
     * in double-word arithmetic (A − e^{−Δ}B cancels, and the recurrence runs over up to 2²² points); only the final
     * solve for ε rounds in double, a relative error of a few u that the accountant's margin covers.
     *
     * @return +∞ if p∞ &gt; δ
     */
    double epsilon(double delta) {
        if (infinityMass > delta) {
            return Double.POSITIVE_INFINITY;
        }
        double[] t = new double[2];
        double[] r = DoubleWord.exp(-interval);
        double rh = r[0];
        double rl = r[1];
        double ah = 0, al = 0;                         // a
        double sh = 0, sl = 0;                         // Σ pⱼ e^{lᵢ − lⱼ} over j ≥ i
        for (int i = pmf.length - 1; i >= 0; i--) {
            double l = (offset + i) * interval;
            DoubleWord.add(ah, al, pmf[i], 0, t);
            ah = t[0];
            al = t[1];
            DoubleWord.mul(sh, sl, rh, rl, t);
            DoubleWord.add(t[0], t[1], pmf[i], 0, t);
            sh = t[0];
            sl = t[1];
            // at the left end of (lᵢ₋₁, lᵢ]: δ = p∞ + a − e^{lᵢ₋₁ − lᵢ} · scaled (the end is −∞ below the lowest point)
            DoubleWord.add(infinityMass, 0, ah, al, t);
            double fh = t[0], fl = t[1];               // p∞ + a
            if (i > 0) {
                DoubleWord.mul(rh, rl, sh, sl, t);
                DoubleWord.add(fh, fl, -t[0], -t[1], t);
            }
            if (t[0] + t[1] > delta) {
                DoubleWord.add(fh, fl, -delta, 0, t);
                double e = l + Math.log((t[0] + t[1]) / (sh + sl));
                return Math.max(0, Math.min(l, e));
            }
            if (l - interval <= 0) {
                return 0;
            }
        }
        return 0;
    }

    /**
     * Masses that floating-point rounding made negative set to 0 (which only adds mass); the rounding itself is charged
     * by the caller.
     */
    private static PrivacyLossDistribution clean(double interval, long offset, double[] p, double infinity) {
        for (int i = 0; i < p.length; i++) {
            if (!(p[i] > 0)) {
                p[i] = 0;
            }
        }
        return new PrivacyLossDistribution(interval, offset, p, infinity);
    }
}
