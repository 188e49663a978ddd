package org.dpdl4j.accounting;

import org.apache.commons.math3.special.Erf;

/**
 * The privacy loss distribution (PLD) accountant: tighter than RDP for DP-SGD (for the standard MNIST run, q =
 * 256/60000, σ = 1.1, T = 14,063, δ = 10⁻⁵: ε ≈ 2.38 where RDP gives 2.60). Under add/remove-one neighbours it keeps
 * one PLD per direction (remove: P is the mechanism with the example, Q without; add: the reverse), composes each
 * by FFT, and reports the larger ε (or δ) of the two, as Google's dp_accounting does (Doroshenko, Ghazi, Kamath,
 * Kumar &amp; Manurangsi, Connect the Dots: Tighter Discrete Approximations of Privacy Loss Distributions, PETS 2022,
 * arXiv:2207.04380; Koskela, Jälkö &amp; Honkela, Computing Tight Differential Privacy
 * Guarantees Using FFT, AISTATS 2020, arXiv:1906.03049).
 *
 * <p>Supported events: {@link GaussianEvent}, {@link LaplaceEvent}, {@link PureDpEvent} (randomized response, its
 * dominating pair), {@link PoissonSampledEvent} of a {@link GaussianEvent}, {@link SelfComposedEvent} and
 * {@link ComposedEvent} of supported events, {@link NoOpEvent} and {@link NonPrivateEvent}. The tuning events
 * (repeat-and-select and its relatives), zCDP, pointwise maxima and the distributed discrete Gaussian are refused:
 * their theorems are RDP statements, so {@link RdpAccountant} bounds them.
 *
 * <p>Pessimism: each mechanism's PLD is exact at the grid points of step Δ (the value discretisation interval) and
 * above the true δ(ε) between them; tail cuts move at most 10⁻¹⁵ per cut to δ or to higher losses; the grid is
 * coarsened (losses rounded up) instead of growing beyond 2²² points. So in exact arithmetic the reported ε is never
 * below the exact ε of the event. Floating point is charged, not assumed away: connect-the-dots masses are checked
 * against the δ they were built from and any shortfall is added to δ; every FFT composition adds a proven bound on
 * its error to δ (see {@link Fft}: double-word forward transforms and powers, so the T-fold amplification acts on an
 * error of order 10⁻³¹); the hockey-stick sums run in double-word arithmetic. The one-step δ(ε) at each grid point is
 * raised by a bound on its own error ({@link #TAIL_ACCURACY} relative on each term, so cancellation between terms is
 * charged). What is not proven is that accuracy of the normal tail (Commons Math's erfc): it is measured against
 * 60-digit values in PldAccountantTest (at most 6·10⁻¹⁴ where it is used). A relative margin of 10⁻⁶ on every ε and δ
 * covers the rounding left in the final logarithm. A Gaussian (or a Poisson-sampled one with q = 1) composed T times
 * is the Gaussian with σ/√T, built directly.
 */
public final class PldAccountant implements PrivacyAccountant {
    /** Δ as dp_accounting's PLDAccountant uses it by default. */
    public static final double DEFAULT_INTERVAL = 1e-4;

    private static final PldAccountant STANDARD = new PldAccountant(DEFAULT_INTERVAL);
    /** The coarsest loss step a self-composition may be computed on before the accountant refuses the event. */
    static final double MAX_INTERVAL = 1.0;
    /** z with P(N(0, 1) &gt; z) = {@link PrivacyLossDistribution#TAIL_MASS}. */
    private static final double TAIL_Z = Math.sqrt(2) * Erf.erfcInv(2 * PrivacyLossDistribution.TAIL_MASS);

    /**
     * Relative margin added to every reported ε and δ, for what is not charged explicitly: the double-precision
     * logarithm in the final solve for ε and the rounding of the grid's losses (a few u each).
     */
    static final double ROUNDING_MARGIN = 1e-6;

    /**
     * The relative accuracy assumed of the normal tail (Commons Math's erfc, iterated to a relative 10⁻¹⁵, and the
     * asymptotic series beyond z = 30, 2·10⁻¹⁴); Commons Math's is measured against 60-digit values in PldAccountantTest:
     * at most 6·10⁻¹⁴ on [−6, 21.3], where it is used.
     */
    static final double TAIL_ACCURACY = 1e-12;

    private final double interval;

    /**
     * An accountant whose loss grid has step Δ.
     *
     * @param valueDiscretizationInterval Δ, the loss grid's step: finite, in (0, 1] (smaller is tighter and slower)
     * @throws IllegalArgumentException if Δ is out of range
     */
    public PldAccountant(double valueDiscretizationInterval) {
        if (!(valueDiscretizationInterval > 0 && valueDiscretizationInterval <= 1)) {
            throw new IllegalArgumentException("value discretization interval must be in (0, 1], got " + valueDiscretizationInterval);
        }
        this.interval = valueDiscretizationInterval;
    }

    /**
     * The accountant with Δ = {@value #DEFAULT_INTERVAL}.
     *
     * @return the shared standard instance
     */
    public static PldAccountant standard() {
        return STANDARD;
    }

    /**
     * Δ, the loss grid's step.
     *
     * @return Δ, in (0, 1] (in units of privacy loss, nats)
     */
    public double valueDiscretizationInterval() {
        return interval;
    }

    /**
     * "pld".
     *
     * @return "pld"
     */
    @Override
    public String name() {
        return "pld";
    }

    /**
     * True for the events listed in the class description: Gaussian, Laplace, pure DP, no-op and non-private events,
     * a Poisson-sampled Gaussian, and self-compositions and compositions of supported events.
     *
     * @param event the event to check (null gives false)
     * @return whether {@link #guarantee} and {@link #delta} accept the event (they may still refuse a
     *         self-composition with too many steps)
     */
    @Override
    public boolean supports(PrivacyEvent event) {
        if (event instanceof GaussianEvent || event instanceof LaplaceEvent || event instanceof PureDpEvent
                || event instanceof NoOpEvent || event instanceof NonPrivateEvent) {
            return true;
        }
        if (event instanceof PoissonSampledEvent p) {
            return p.event() instanceof GaussianEvent;
        }
        if (event instanceof SelfComposedEvent s) {
            return supports(s.event());
        }
        if (event instanceof ComposedEvent c) {
            return c.events().stream().allMatch(this::supports);
        }
        return false;
    }

    /**
     * (ε, δ) of the event at δ: the larger ε of the remove and add PLDs, raised by a relative margin of 10⁻⁶.
     *
     * @param event the event; it must be {@linkplain #supports supported}
     * @param delta δ ∈ (0, 1)
     * @return the guarantee, with order NaN, {@code orderAtGridEdge} false and accountant "pld"
     * @throws IllegalArgumentException if δ ∉ (0, 1), the event is not supported, or a self-composition has too many steps
     *                                  to fit a grid with a loss step up to {@value #MAX_INTERVAL} (use RDP there)
     */
    @Override
    public PrivacyGuarantee guarantee(PrivacyEvent event, double delta) {
        Checks.delta(delta);
        PrivacyLossDistribution[] pair = pld(event);
        double epsilon = Math.max(pair[0].epsilon(delta), pair[1].epsilon(delta)) * (1 + ROUNDING_MARGIN);
        return new PrivacyGuarantee(epsilon, delta, Double.NaN, false, "pld");
    }

    /**
     * The smallest δ at ε: the larger hockey-stick divergence of the remove and add PLDs, raised by a relative margin
     * of 10⁻⁶ and capped at 1.
     *
     * @param event   the event; it must be {@linkplain #supports supported}
     * @param epsilon ε, finite and ≥ 0
     * @return δ in [0, 1]
     * @throws IllegalArgumentException if ε is negative or not finite, the event is not supported, or has too many steps
     */
    @Override
    public double delta(PrivacyEvent event, double epsilon) {
        Checks.finiteNonNegative("epsilon", epsilon);
        PrivacyLossDistribution[] pair = pld(event);
        return Math.min(1, Math.max(pair[0].hockeyStick(epsilon), pair[1].hockeyStick(epsilon)) * (1 + ROUNDING_MARGIN));
    }

    /** The event's PLDs, {remove, add}, on the grid of step Δ (coarser where a self-composition needs it). */
    PrivacyLossDistribution[] pld(PrivacyEvent event) {
        return pld(event, interval);
    }

    private PrivacyLossDistribution[] pld(PrivacyEvent event, double interval) {
        if (!supports(event)) {
            throw new IllegalArgumentException("the PLD accountant does not support " + event
                    + " (supported: Gaussian, Laplace, pure DP, Poisson-sampled Gaussian, and their compositions; use the rdp accountant)");
        }
        if (event instanceof NoOpEvent) {
            return new PrivacyLossDistribution[]{PrivacyLossDistribution.identity(interval), PrivacyLossDistribution.identity(interval)};
        }
        if (event instanceof NonPrivateEvent) {
            return new PrivacyLossDistribution[]{PrivacyLossDistribution.infinite(interval), PrivacyLossDistribution.infinite(interval)};
        }
        if (event instanceof GaussianEvent g) {
            return subsampledGaussian(g.noiseMultiplier(), 1, interval);
        }
        if (event instanceof PoissonSampledEvent p) {
            return subsampledGaussian(((GaussianEvent) p.event()).noiseMultiplier(), p.samplingRate(), interval);
        }
        if (event instanceof LaplaceEvent l) {
            PrivacyLossDistribution d = laplace(l.scale(), interval);
            return new PrivacyLossDistribution[]{d, d};
        }
        if (event instanceof PureDpEvent p) {
            double e = p.epsilon();
            PrivacyLossDistribution d = Double.isInfinite(e) ? PrivacyLossDistribution.infinite(interval)
                    : PrivacyLossDistribution.twoPoint(e, 1 / (1 + Math.exp(-e)), -e, 1 / (1 + Math.exp(e)), interval);
            return new PrivacyLossDistribution[]{d, d};
        }
        if (event instanceof SelfComposedEvent s) {
            if (s.count() == 0) {
                return pld(new NoOpEvent(), interval);
            }
            double fullBatch = fullBatchNoise(s.event());
            if (!Double.isNaN(fullBatch)) { // T Gaussians with σ are one with σ/√T, exactly (q = 1 samples everyone)
                return subsampledGaussian(fullBatch / Math.sqrt(s.count()), 1, interval);
            }
            // too wide a window for the grid: rebuild the mechanism on a grid twice as coarse (tighter than rounding up)
            double d = interval;
            PrivacyLossDistribution[] one = pld(s.event(), d);
            while (!(one[0].selfComposesOnItsGrid(s.count()) && one[1].selfComposesOnItsGrid(s.count()))) {
                d *= 2;
                if (d > MAX_INTERVAL) { // the window's Chernoff bound no longer narrows: refuse rather than search forever
                    throw new IllegalArgumentException("the PLD accountant cannot compose " + s.count() + " steps of " + s.event()
                            + " on a grid of at most 2^22 points with a loss step up to " + MAX_INTERVAL
                            + " (too many steps for this event); use the rdp accountant");
                }
                one = pld(s.event(), d);
            }
            return new PrivacyLossDistribution[]{one[0].selfCompose(s.count()), one[1].selfCompose(s.count())};
        }
        ComposedEvent c = (ComposedEvent) event;
        PrivacyLossDistribution[] total = pld(new NoOpEvent(), interval);
        for (PrivacyEvent e : c.events()) {
            PrivacyLossDistribution[] next = pld(e, interval);
            total = new PrivacyLossDistribution[]{total[0].compose(next[0]), total[1].compose(next[1])};
        }
        return total;
    }

    /** σ if the event is a Gaussian, or a Poisson-sampled one with q = 1 (the same mechanism); NaN otherwise. */
    private static double fullBatchNoise(PrivacyEvent event) {
        if (event instanceof GaussianEvent g) {
            return g.noiseMultiplier();
        }
        if (event instanceof PoissonSampledEvent p && p.samplingRate() == 1 && p.event() instanceof GaussianEvent g) {
            return g.noiseMultiplier();
        }
        return Double.NaN;
    }

    /**
     * The Poisson-subsampled Gaussian mechanism (sensitivity 1, noise σ, rate q; q = 1 is the plain Gaussian).
     * Remove: P = (1 − q)N(0, σ²) + qN(1, σ²), Q = N(0, σ²), loss log(1 − q + q e^{(2x − 1)/(2σ²)}), increasing in x;
     * add: P = N(0, σ²), Q the mixture, loss the negative of that, decreasing in x. For each, δ(ε) = P(L &gt; ε) −
     * e^ε Q(L &gt; ε) in closed form through the normal tail.
     */
    private PrivacyLossDistribution[] subsampledGaussian(double sigma, double q, double interval) {
        if (q == 0) {
            return pld(new NoOpEvent(), interval);
        }
        if (sigma == 0) {
            return pld(new NonPrivateEvent(), interval);
        }
        double s2 = sigma * sigma;
        // the mixture's likelihood ratio 1 − q + q e^{(2x−1)/(2σ²)} equals e^{±ε} at x = σ² logRatio(±ε, q) + 1/2
        java.util.function.DoubleUnaryOperator loss = x -> q == 1 ? (2 * x - 1) / (2 * s2)
                : Math.log1p(q * Math.expm1((2 * x - 1) / (2 * s2)));
        double xHighMixture = 1 + sigma * TAIL_Z; // the mixture's upper tail beyond it is ≤ TAIL_MASS
        double xLowNormal = -sigma * TAIL_Z;
        double xHighNormal = sigma * TAIL_Z;
        double xLowMixture = q == 1 ? 1 - sigma * TAIL_Z : xLowNormal;

        PrivacyLossDistribution remove = PrivacyLossDistribution.connectTheDots(eps -> {
            if (q < 1 && eps <= Math.log1p(-q)) {
                return -Math.expm1(eps);
            }
            double x = s2 * logRatio(eps, q) + 0.5;
            double t1 = (1 - q) * upperTail(x / sigma);
            double t2 = q * upperTail((x - 1) / sigma);
            double t3 = Math.exp(eps + logUpperTail(x / sigma));
            return t1 + t2 - t3 + t1 * tailError(x / sigma, 0) + t2 * tailError((x - 1) / sigma, 0) + t3 * tailError(x / sigma, eps);
        }, q < 1 ? Math.log1p(-q) : loss.applyAsDouble(xLowMixture), loss.applyAsDouble(xHighMixture), interval);

        PrivacyLossDistribution add = PrivacyLossDistribution.connectTheDots(eps -> {
            if (q < 1 && eps >= -Math.log1p(-q)) {
                return 0;
            }
            double x = s2 * logRatio(-eps, q) + 0.5;
            double t1 = upperTail(-x / sigma);
            double t2 = (1 - q) * Math.exp(eps + logUpperTail(-x / sigma));
            double t3 = q * Math.exp(eps + logUpperTail((1 - x) / sigma));
            return t1 - t2 - t3 + t1 * tailError(-x / sigma, 0) + t2 * tailError(-x / sigma, eps) + t3 * tailError((1 - x) / sigma, eps);
        }, -loss.applyAsDouble(xHighNormal), q < 1 ? -Math.log1p(-q) : -loss.applyAsDouble(xLowNormal), interval);
        return new PrivacyLossDistribution[]{remove, add};
    }

    /** log((e^ε − (1 − q))/q), the x-scale of the loss level ε; exactly ε when q = 1 (no cancellation at large ε). */
    private static double logRatio(double eps, double q) {
        return q == 1 ? eps : Math.log1p(Math.expm1(eps) / q);
    }

    /** Lap(b) with sensitivity 1 (the same in both directions): δ(ε) = 1 − e^{(ε − 1/b)/2} on [−1/b, 1/b]. */
    private PrivacyLossDistribution laplace(double b, double interval) {
        if (b == 0) {
            return PrivacyLossDistribution.infinite(interval);
        }
        double e0 = 1 / b;
        return PrivacyLossDistribution.connectTheDots(eps -> eps >= e0 ? 0
                : eps < -e0 ? -Math.expm1(eps) : -Math.expm1((eps - e0) / 2), -e0, e0, interval);
    }

    /** P(N(0, 1) &gt; z), accurate far into both tails. */
    private static double upperTail(double z) {
        return 0.5 * Erf.erfc(z / Math.sqrt(2));
    }

    /**
     * log P(N(0, 1) &gt; z), finite where the tail itself underflows: beyond z = 30 the asymptotic series of the Mills
     * ratio, −z²/2 − log(z√(2π)) + log(1 − 1/z² + 3/z⁴ − 15/z⁶ + 105/z⁸ − 945/z¹⁰) (an alternating series whose error is
     * below its first omitted term, 10395/z¹² &lt; 2·10⁻¹⁴), so that e^ε times it can be formed at large ε without
     * overflow.
     */
    private static double logUpperTail(double z) {
        if (z < 30) {
            return Math.log(upperTail(z));
        }
        double w = 1 / (z * z);
        double series = -w * (1 - w * (3 - w * (15 - w * (105 - w * 945))));
        return -0.5 / w - Math.log(z * Math.sqrt(2 * Math.PI)) + Math.log1p(series);
    }

    /**
     * A bound on the relative error of a computed term Q(z) or e^ε·Q(z) of δ(ε), added to δ at every grid point so
     * that cancellation between the terms (which makes δ's relative error much larger than the terms') is charged:
     * {@link #TAIL_ACCURACY} for the tail function itself, and 8u(z² + |ε|) for the rounding of its argument (the
     * tail's logarithmic derivative is about z) and of the exponent ε + log Q(z).
     */
    private static double tailError(double z, double eps) {
        return TAIL_ACCURACY + 8 * 0x1p-53 * (z * z + Math.abs(eps) + 4);
    }
}
