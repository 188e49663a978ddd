package org.dpdl4j.accounting;

/** Argument checks whose messages name the parameter, the value and what is allowed. */
final class Checks {
    private Checks() {
    }

    static double finiteNonNegative(String name, double value) {
        if (!(value >= 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(name + " must be finite and >= 0, got " + value);
        }
        return value;
    }

    static double finitePositive(String name, double value) {
        if (!(value > 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(name + " must be finite and > 0, got " + value);
        }
        return value;
    }

    static double probability(String name, double value) {
        if (!(value >= 0 && value <= 1)) {
            throw new IllegalArgumentException(name + " must be in [0, 1], got " + value);
        }
        return value;
    }

    static double delta(double delta) {
        if (!(delta > 0 && delta < 1)) {
            throw new IllegalArgumentException("delta must be in (0, 1), got " + delta);
        }
        return delta;
    }

    static double order(double alpha) {
        if (!(alpha > 1) || Double.isInfinite(alpha)) {
            throw new IllegalArgumentException("RDP order alpha must be finite and > 1, got " + alpha);
        }
        return alpha;
    }
}
