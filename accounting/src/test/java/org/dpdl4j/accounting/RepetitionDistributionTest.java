package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** pmf, mean, PGF, f′ and sampling of the distributions of K, each checked against another route. */
class RepetitionDistributionTest {
    private static final List<RepetitionDistribution> ALL = List.of(
            RepetitionDistribution.poisson(4.5), RepetitionDistribution.logarithmic(6), RepetitionDistribution.geometric(6),
            TruncatedNegativeBinomial.withMean(0.5, 6), TruncatedNegativeBinomial.withMean(-0.5, 6),
            RepetitionDistribution.pointMass(5), RepetitionDistribution.poisson(6).truncatedAt(7),
            RepetitionDistribution.logarithmic(6).truncatedAt(10));

    /** The pmf sums to 1, and its moments and Σ p_k x^k match mean(), pgf() and pgfDerivative(). */
    @Test
    void pmfAgreesWithClosedForms() {
        for (RepetitionDistribution d : ALL) {
            double total = 0;
            double mean = 0;
            double f = 0;
            double df = 0;
            double x = 0.7;
            for (int k = 0; k < 20_000; k++) {
                double p = d.pmf(k);
                total += p;
                mean += k * p;
                f += p * Math.pow(x, k);
                df += k > 0 ? k * p * Math.pow(x, k - 1) : 0;
            }
            assertEquals(1, total, 1e-9, d.describe());
            assertEquals(d.mean(), mean, 1e-8 * d.mean(), d.describe());
            assertEquals(d.pgf(x), f, 1e-10, d.describe());
            assertEquals(d.pgfDerivative(x), df, 1e-9, d.describe());
            assertEquals(1, d.pgf(1), 1e-12, d.describe());
            assertEquals(d.mean(), d.pgfDerivative(1), 1e-9 * d.mean(), d.describe() + ": f'(1) = E[K]");
        }
        // the geometric pmf by hand: gamma (1 - gamma)^(k - 1)
        TruncatedNegativeBinomial geo = new TruncatedNegativeBinomial(1, 0.2);
        assertEquals(0.2 * Math.pow(0.8, 3), geo.pmf(4), 1e-15);
        // the logarithmic pmf by hand: (1 - gamma)^k / (k log(1/gamma))
        TruncatedNegativeBinomial log = new TruncatedNegativeBinomial(0, 0.1);
        assertEquals(Math.pow(0.9, 3) / (3 * Math.log(10)), log.pmf(3), 1e-15);
    }

    /** With a fixed seed, 200,000 draws give the mean and the first pmf values within 5 standard errors. */
    @Test
    void samplesFollowThePmf() {
        for (RepetitionDistribution d : ALL) {
            SplittableRandom random = new SplittableRandom(17);
            int n = 200_000;
            int[] counts = new int[12];
            double sum = 0;
            double sumSq = 0;
            for (int i = 0; i < n; i++) {
                long k = d.sample(random);
                sum += k;
                sumSq += (double) k * k;
                if (k < counts.length) {
                    counts[(int) k]++;
                }
            }
            double mean = sum / n;
            double sd = Math.sqrt(sumSq / n - mean * mean);
            assertEquals(d.mean(), mean, 5 * sd / Math.sqrt(n) + 1e-12, d.describe() + " sample mean");
            for (int k = 0; k < counts.length; k++) {
                double p = d.pmf(k);
                double se = Math.sqrt(p * (1 - p) / n);
                assertEquals(p, counts[k] / (double) n, 5 * se + 1e-12, d.describe() + " P[K = " + k + "]");
            }
        }
    }

    @Test
    void validationAndRoundTrip() {
        for (RepetitionDistribution d : ALL) {
            assertEquals(d, RepetitionDistribution.fromMap(d.toMap()));
        }
        assertTrue(RepetitionDistribution.poisson(3).allowsZero());
        assertTrue(!RepetitionDistribution.geometric(3).allowsZero());
        var e = assertThrows(IllegalArgumentException.class, () -> RepetitionDistribution.poisson(-1));
        assertTrue(e.getMessage().contains("mu"));
        e = assertThrows(IllegalArgumentException.class, () -> RepetitionDistribution.pointMass(0));
        assertTrue(e.getMessage().contains("K"));
        e = assertThrows(IllegalArgumentException.class, () -> RepetitionDistribution.poisson(3).truncatedAt(0));
        assertTrue(e.getMessage().contains("limit"));
        e = assertThrows(IllegalArgumentException.class, () -> RepetitionDistribution.pointMass(5).truncatedAt(3));
        assertTrue(e.getMessage().contains("P[K <= 3]"));
    }
}
