package org.dpdl4j.dpsgd;

import java.util.Arrays;

/**
 * White-box audit canaries ("Dirac" canaries in parameter space, Steinke, Nasr &amp; Jagielski, Privacy
 * Auditing with One (1) Training Run, NeurIPS 2023, arXiv:2305.08846, Section 6): extra members of the
 * training set whose gradient is {@code norm}·e_j for their own parameter coordinate j. They pass through
 * the same Poisson sampling (rate q, independently every step), the same clipping (to min(norm, C)) and the
 * same noise as every example, and they count in n when the update is divided by q·n.
 *
 * @param coordinates the included canaries' coordinates in the flattened parameter vector (distinct, &gt;= 0)
 * @param norm        the L2 norm of each canary's raw gradient (finite, &gt; 0)
 */
public record GradientCanaries(int[] coordinates, double norm) implements java.io.Serializable {
    /**
     * Checks and creates the canaries (the coordinates are copied).
     *
     * @param coordinates the canaries' coordinates in the flattened parameter vector, distinct and &gt;= 0; not null
     * @param norm        the L2 norm of each canary's raw gradient, finite and &gt; 0
     * @throws IllegalArgumentException on negative or repeated coordinates, or a bad norm
     * @throws NullPointerException     if coordinates is null
     */
    public GradientCanaries {
        coordinates = coordinates.clone();
        if (!(norm > 0) || Double.isInfinite(norm)) {
            throw new IllegalArgumentException("canary gradient norm must be finite and > 0, got " + norm);
        }
        int[] sorted = coordinates.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            if (sorted[i] < 0 || i > 0 && sorted[i] == sorted[i - 1]) {
                throw new IllegalArgumentException("canary coordinates must be distinct and >= 0, got " + sorted[i]);
            }
        }
    }

    /**
     * The number of canaries in the training set.
     *
     * @return the number of coordinates, &gt;= 0
     */
    public int count() {
        return coordinates.length;
    }

    /**
     * The canaries' coordinates in the flattened parameter vector.
     *
     * @return a copy of the coordinates, in the order given
     */
    @Override
    public int[] coordinates() {
        return coordinates.clone();
    }
}
