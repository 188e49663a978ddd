package org.dpdl4j.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.SplittableRandom;
import org.apache.commons.math3.distribution.BinomialDistribution;
import org.junit.jupiter.api.Test;

/** The one-run audit's p-value and lower bound against exact sums, a closed form and a Monte-Carlo ε-DP mechanism. */
class OneRunAuditTest {
    private static final MathContext MC = new MathContext(60);

    /** β + 2mδα with every binomial tail summed exactly in BigDecimal (p rounded to 60 digits). */
    private static double exactPValue(int m, int r, int v, double eps, double delta) {
        BigDecimal p = BigDecimal.valueOf(Math.exp(eps)).divide(BigDecimal.ONE.add(BigDecimal.valueOf(Math.exp(eps))), MC);
        BigDecimal q = BigDecimal.ONE.subtract(p);
        BigDecimal[] tail = new BigDecimal[r + 2];
        tail[r + 1] = BigDecimal.ZERO;
        for (int k = r; k >= 0; k--) {
            BigDecimal term = new BigDecimal(binomial(r, k)).multiply(p.pow(k, MC), MC).multiply(q.pow(r - k, MC), MC);
            tail[k] = tail[k + 1].add(term, MC);
        }
        BigDecimal alpha = BigDecimal.ZERO;
        for (int i = 1; i <= v; i++) {
            alpha = alpha.max(tail[v - i].subtract(tail[v], MC).divide(BigDecimal.valueOf(i), MC));
        }
        BigDecimal value = tail[v].add(alpha.multiply(BigDecimal.valueOf(2.0 * m * delta), MC), MC);
        return Math.min(1, value.doubleValue());
    }

    private static java.math.BigInteger binomial(int n, int k) {
        java.math.BigInteger b = java.math.BigInteger.ONE;
        for (int i = 0; i < k; i++) {
            b = b.multiply(java.math.BigInteger.valueOf(n - i)).divide(java.math.BigInteger.valueOf(i + 1));
        }
        return b;
    }

    @Test
    void pValueMatchesExactSums() {
        int[][] cases = {{100, 20, 15}, {1000, 200, 150}, {1000, 100, 100}, {50, 10, 3}, {5000, 400, 390}};
        for (int[] c : cases) {
            for (double eps : new double[]{0, 0.5, 1, 2, 4}) {
                for (double delta : new double[]{0, 1e-5, 1e-3}) {
                    double exact = exactPValue(c[0], c[1], c[2], eps, delta);
                    double got = OneRunAudit.pValue(c[0], c[1], c[2], eps, delta);
                    assertEquals(exact, got, 1e-10 * Math.max(exact, 1e-300) + 1e-300, java.util.Arrays.toString(c) + " eps " + eps
                            + " delta " + delta);
                }
            }
        }
        // delta = 0 is the binomial tail itself (Commons Math, an independent implementation)
        BinomialDistribution b = new BinomialDistribution(200, Math.exp(1) / (1 + Math.exp(1)));
        assertEquals(1 - b.cumulativeProbability(149), OneRunAudit.pValue(1000, 200, 150, 1, 0), 1e-12);
    }

    /** All r guesses right at δ = 0: the bound solves p^r = significance, ε = logit(significance^(1/r)). */
    @Test
    void perfectGuessingHasAClosedForm() {
        for (int r : new int[]{10, 100, 1000}) {
            double p = Math.pow(0.05, 1.0 / r);
            assertEquals(Math.log(p / (1 - p)), OneRunAudit.epsilonLowerBound(r, r, r, 0, 0.05), 1e-5, "r = " + r);
        }
        assertEquals(0, OneRunAudit.epsilonLowerBound(100, 100, 50, 1e-5, 0.05), 0.0, "chance-level guessing proves nothing");
        assertTrue(OneRunAudit.epsilonLowerBound(1000, 1000, 1000, 1e-5, 0.05) <= OneRunAudit.epsilonLowerBound(1000, 1000, 1000, 0, 0.05),
                "delta > 0 only weakens the bound");
    }

    /**
     * Randomized response is exactly ε₀-DP for each canary: the score is S_i with probability e^ε₀/(1 + e^ε₀), else
     * −S_i (plus tie-breaking jitter). The measured bound must exceed ε₀ in at most about 5% of runs (here: 0 or a
     * few of 100), and it should come close to ε₀ (the audit has power).
     */
    @Test
    void aRandomizedResponseMechanismIsNeverOverclaimed() {
        double eps0 = 1.0;
        double keep = Math.exp(eps0) / (1 + Math.exp(eps0));
        SplittableRandom random = new SplittableRandom(42);
        int above = 0;
        double sum = 0;
        int runs = 100;
        for (int run = 0; run < runs; run++) {
            int m = 1000;
            double[] scores = new double[m];
            boolean[] included = new boolean[m];
            for (int i = 0; i < m; i++) {
                included[i] = random.nextBoolean();
                double s = included[i] ? 1 : -1;
                scores[i] = (random.nextDouble() < keep ? s : -s) + 1e-3 * random.nextDouble();
            }
            double lb = OneRunAudit.audit(scores, included, 0, 0.95).epsilonLowerBound();
            above += lb > eps0 ? 1 : 0;
            sum += lb;
        }
        assertTrue(above <= 10, above + " of " + runs + " runs claimed more than the true epsilon");
        assertTrue(sum / runs > 0.6 * eps0, "mean lower bound " + sum / runs + " should approach " + eps0);
    }

    @Test
    void badInputNamesTheParameter() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> OneRunAudit.pValue(10, 20, 5, 1, 0)).getMessage().contains("r <= m"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> OneRunAudit.pValue(10, 5, 5, -1, 0)).getMessage().contains("epsilon"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> OneRunAudit.audit(new double[2], new boolean[3], 0, 0.95))
                .getMessage().contains("inclusion"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> OneRunAudit.audit(new double[2], new boolean[2], 0, 1.5))
                .getMessage().contains("confidence"));
    }
}
