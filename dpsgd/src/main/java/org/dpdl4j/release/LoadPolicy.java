package org.dpdl4j.release;

/**
 * What a loader accepts beyond a valid sidecar: at most ε {@code maxEpsilon}, δ at most {@code maxDelta}, and
 * whether a model without a privacy guarantee may be loaded at all.
 *
 * @param maxEpsilon       the largest claimed ε accepted, &gt; 0 (+∞: any finite ε)
 * @param maxDelta         the largest δ accepted, in (0, 1]
 * @param allowNonPrivate  whether a model whose sidecar says {@code non_private: true} is accepted
 */
public record LoadPolicy(double maxEpsilon, double maxDelta, boolean allowNonPrivate) {

    /**
     * Checks the ceilings.
     *
     * @param maxEpsilon      the largest claimed ε accepted, &gt; 0 (+∞: any finite ε)
     * @param maxDelta        the largest δ accepted, in (0, 1]
     * @param allowNonPrivate whether a model whose sidecar says {@code non_private: true} is accepted
     * @throws IllegalArgumentException if maxEpsilon is not &gt; 0 (or is NaN) or maxDelta is outside (0, 1]
     */
    public LoadPolicy {
        if (!(maxEpsilon > 0)) {
            throw new IllegalArgumentException("maxEpsilon must be > 0 (Infinity for any finite epsilon), got " + maxEpsilon);
        }
        if (!(maxDelta > 0 && maxDelta <= 1)) {
            throw new IllegalArgumentException("maxDelta must be in (0, 1], got " + maxDelta);
        }
    }

    /**
     * A policy accepting any private model (finite ε, any δ); non-private models are refused.
     *
     * @return the policy with ε ceiling +∞, δ ceiling 1 and {@code allowNonPrivate} false
     */
    public static LoadPolicy privateOnly() {
        return new LoadPolicy(Double.POSITIVE_INFINITY, 1, false);
    }

    /**
     * A policy accepting any model with a valid sidecar, private or not.
     *
     * @return the policy with ε ceiling +∞, δ ceiling 1 and {@code allowNonPrivate} true
     */
    public static LoadPolicy any() {
        return new LoadPolicy(Double.POSITIVE_INFINITY, 1, true);
    }

    /**
     * This policy with a ceiling on ε.
     *
     * @param epsilon the largest claimed ε accepted, &gt; 0 (+∞: any finite ε)
     * @return a new policy with {@code maxEpsilon = epsilon} and the other components of this one
     * @throws IllegalArgumentException if epsilon is not &gt; 0
     */
    public LoadPolicy withMaxEpsilon(double epsilon) {
        return new LoadPolicy(epsilon, maxDelta, allowNonPrivate);
    }

    /**
     * This policy with a ceiling on δ.
     *
     * @param delta the largest δ accepted, in (0, 1]
     * @return a new policy with {@code maxDelta = delta} and the other components of this one
     * @throws IllegalArgumentException if delta is outside (0, 1]
     */
    public LoadPolicy withMaxDelta(double delta) {
        return new LoadPolicy(maxEpsilon, delta, allowNonPrivate);
    }
}
