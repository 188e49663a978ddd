package org.dpdl4j.accounting;

import org.apache.commons.math3.special.Erf;
import org.apache.commons.math3.special.Gamma;

/** Log-space helpers shared by the RDP computations. */
final class LogMath {
    private LogMath() {
    }

    /** log(e^a + e^b), exact for infinite arguments. */
    static double logAdd(double a, double b) {
        if (a == Double.NEGATIVE_INFINITY) {
            return b;
        }
        if (b == Double.NEGATIVE_INFINITY) {
            return a;
        }
        double hi = Math.max(a, b);
        return hi + Math.log1p(Math.exp(Math.min(a, b) - hi));
    }

    /** log C(n, k) for real n ≥ k ≥ 0 (k integer), via log-gamma. */
    static double logBinomial(double n, int k) {
        return Gamma.logGamma(n + 1) - Gamma.logGamma(k + 1.0) - Gamma.logGamma(n - k + 1);
    }

    /** log erfc(x), accurate in the far tail (asymptotic series beyond x = 25). */
    static double logErfc(double x) {
        if (x < 25) {
            return Math.log(Erf.erfc(x));
        }
        // erfc(x) = exp(-x^2)/(x sqrt(pi)) * (1 - 1/(2x^2) + 3/(2x^2)^2 - 15/(2x^2)^3 + ...)
        double r = 1 / (2 * x * x);
        double series = 1 - r + 3 * r * r - 15 * r * r * r + 105 * r * r * r * r;
        return -x * x - Math.log(x) - 0.5 * Math.log(Math.PI) + Math.log(series);
    }
}
