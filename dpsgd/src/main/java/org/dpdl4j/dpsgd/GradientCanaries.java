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
    /** @throws IllegalArgumentException on negative or repeated coordinates, or a bad norm */
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

    /** The number of canaries in the training set. */
    public int count() {
        return coordinates.length;
    }

    @Override
    public int[] coordinates() {
        return coordinates.clone();
    }
}
