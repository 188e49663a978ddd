package org.dpdl4j.accounting;

import java.util.Arrays;

/**
 * A Rényi-DP curve: ε(α) at each order α of a grid. Values may be +∞ (no bound at that order).
 * Immutable; arrays are copied in and out.
 */
public final class RdpCurve {
    private final double[] orders;
    private final double[] epsilons;

    /**
     * @param orders   RDP orders, each finite and &gt; 1
     * @param epsilons ε(α) ≥ 0 per order (+∞ allowed), same length as orders
     * @throws IllegalArgumentException on a length mismatch, an invalid order, or a negative/NaN ε
     */
    public RdpCurve(double[] orders, double[] epsilons) {
        if (orders.length != epsilons.length || orders.length == 0) {
            throw new IllegalArgumentException("orders and epsilons must have the same non-zero length, got "
                    + orders.length + " and " + epsilons.length);
        }
        for (int i = 0; i < orders.length; i++) {
            Checks.order(orders[i]);
            if (!(epsilons[i] >= 0)) {
                throw new IllegalArgumentException("RDP epsilon at order " + orders[i] + " must be >= 0, got " + epsilons[i]);
            }
        }
        this.orders = orders.clone();
        this.epsilons = epsilons.clone();
    }

    /** The orders α (a copy). */
    public double[] orders() {
        return orders.clone();
    }

    /** ε(α) per order (a copy). */
    public double[] epsilons() {
        return epsilons.clone();
    }

    /** Number of orders. */
    public int size() {
        return orders.length;
    }

    /** Order at index i. */
    public double order(int i) {
        return orders[i];
    }

    /** ε at index i. */
    public double epsilon(int i) {
        return epsilons[i];
    }

    /** Composition: the pointwise sum (Mironov 2017, Proposition 1). Grids must match. */
    public RdpCurve plus(RdpCurve other) {
        requireSameGrid(other);
        double[] sum = new double[orders.length];
        for (int i = 0; i < sum.length; i++) {
            sum[i] = epsilons[i] + other.epsilons[i];
        }
        return new RdpCurve(orders, sum);
    }

    /** k-fold self-composition: ε(α)·k (k ≥ 0; 0·∞ is taken as 0). */
    public RdpCurve times(double k) {
        Checks.finiteNonNegative("k", k);
        double[] out = new double[orders.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = k == 0 ? 0 : epsilons[i] * k;
        }
        return new RdpCurve(orders, out);
    }

    /** Pointwise maximum, e.g. over candidates with different curves (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Lemma 9). */
    public RdpCurve max(RdpCurve other) {
        requireSameGrid(other);
        double[] out = new double[orders.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = Math.max(epsilons[i], other.epsilons[i]);
        }
        return new RdpCurve(orders, out);
    }

    private void requireSameGrid(RdpCurve other) {
        if (!Arrays.equals(orders, other.orders)) {
            throw new IllegalArgumentException("RDP curves are on different order grids");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RdpCurve c && Arrays.equals(orders, c.orders) && Arrays.equals(epsilons, c.epsilons);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(orders) + Arrays.hashCode(epsilons);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("RdpCurve[");
        for (int i = 0; i < orders.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(orders[i]).append(": ").append(epsilons[i]);
        }
        return sb.append(']').toString();
    }
}
