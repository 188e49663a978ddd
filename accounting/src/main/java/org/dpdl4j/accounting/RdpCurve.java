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
     * A curve from its orders and values (both arrays are copied).
     *
     * @param orders   RDP orders α, each finite and &gt; 1; at least one
     * @param epsilons ε(α) ≥ 0 per order (+∞ allowed), same length as orders
     * @throws IllegalArgumentException on a length mismatch, no orders, an invalid order, or a negative/NaN ε
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

    /**
     * The orders α (a copy).
     *
     * @return the orders, each finite and &gt; 1
     */
    public double[] orders() {
        return orders.clone();
    }

    /**
     * ε(α) per order (a copy).
     *
     * @return the values, each ≥ 0 or +∞, index-aligned with {@link #orders()}
     */
    public double[] epsilons() {
        return epsilons.clone();
    }

    /**
     * Number of orders.
     *
     * @return the number of orders, ≥ 1
     */
    public int size() {
        return orders.length;
    }

    /**
     * Order at index i.
     *
     * @param i the index, in [0, {@link #size()})
     * @return the order α at that index
     * @throws ArrayIndexOutOfBoundsException if i is out of range
     */
    public double order(int i) {
        return orders[i];
    }

    /**
     * ε at index i.
     *
     * @param i the index, in [0, {@link #size()})
     * @return ε(α) at that index, ≥ 0 or +∞
     * @throws ArrayIndexOutOfBoundsException if i is out of range
     */
    public double epsilon(int i) {
        return epsilons[i];
    }

    /**
     * Composition: the pointwise sum (Mironov, "Rényi Differential Privacy", IEEE CSF 2017, arXiv:1702.07476,
     * Proposition 1). Grids must match.
     *
     * @param other the curve composed with this one, on the same orders
     * @return the curve of the composition
     * @throws IllegalArgumentException if the order grids differ
     */
    public RdpCurve plus(RdpCurve other) {
        requireSameGrid(other);
        double[] sum = new double[orders.length];
        for (int i = 0; i < sum.length; i++) {
            sum[i] = epsilons[i] + other.epsilons[i];
        }
        return new RdpCurve(orders, sum);
    }

    /**
     * k-fold self-composition: ε(α)·k (0·∞ is taken as 0).
     *
     * @param k the number of repetitions: finite and ≥ 0 (need not be an integer)
     * @return the scaled curve
     * @throws IllegalArgumentException if k is negative or not finite
     */
    public RdpCurve times(double k) {
        Checks.finiteNonNegative("k", k);
        double[] out = new double[orders.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = k == 0 ? 0 : epsilons[i] * k;
        }
        return new RdpCurve(orders, out);
    }

    /**
     * Pointwise maximum, e.g. over candidates with different curves (Koskela &amp; Kulkarni, "Practical Differentially
     * Private Hyperparameter Tuning with Subsampling", NeurIPS 2023, arXiv:2301.11989, Lemma 9).
     *
     * @param other the other curve, on the same orders
     * @return the pointwise maximum of the two curves
     * @throws IllegalArgumentException if the order grids differ
     */
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
