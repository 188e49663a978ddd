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

    /** @throws IllegalArgumentException if maxEpsilon is not &gt; 0 or maxDelta is outside (0, 1] */
    public LoadPolicy {
        if (!(maxEpsilon > 0)) {
            throw new IllegalArgumentException("maxEpsilon must be > 0 (Infinity for any finite epsilon), got " + maxEpsilon);
        }
        if (!(maxDelta > 0 && maxDelta <= 1)) {
            throw new IllegalArgumentException("maxDelta must be in (0, 1], got " + maxDelta);
        }
    }

    /** Any private model (finite ε, any δ); non-private models are refused. */
    public static LoadPolicy privateOnly() {
        return new LoadPolicy(Double.POSITIVE_INFINITY, 1, false);
    }

    /** Any model with a valid sidecar, private or not. */
    public static LoadPolicy any() {
        return new LoadPolicy(Double.POSITIVE_INFINITY, 1, true);
    }

    /** This policy with a ceiling on ε. */
    public LoadPolicy withMaxEpsilon(double epsilon) {
        return new LoadPolicy(epsilon, maxDelta, allowNonPrivate);
    }

    /** This policy with a ceiling on δ. */
    public LoadPolicy withMaxDelta(double delta) {
        return new LoadPolicy(maxEpsilon, delta, allowNonPrivate);
    }
}
