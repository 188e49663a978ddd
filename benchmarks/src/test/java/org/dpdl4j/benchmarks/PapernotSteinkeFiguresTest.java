package org.dpdl4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.TruncatedNegativeBinomial;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reproductions' numbers against independent computations, and their files. */
class PapernotSteinkeFiguresTest {
    /** Figure 2: our grid Theorem 2 never falls below the paper's closed form (Corollary 4) and stays within 1 %. */
    @Test
    void figure2IsCorollary4FromAbove() {
        double[] orders = RdpAccountant.defaultOrders();
        for (double mean : new double[]{10, 1e3, 1e6}) {
            TruncatedNegativeBinomial d = TruncatedNegativeBinomial.withMean(0, mean);
            double[] ours = PapernotSteinkeFigures.repeatedCurve(d);
            for (int i = 0; i < orders.length && orders[i] <= 50; i++) {
                double paper = PapernotSteinkeFigures.corollary4(orders[i], d);
                assertTrue(ours[i] >= paper * (1 - 1e-12) && ours[i] <= paper * 1.01, "mean " + mean + " order " + orders[i]
                        + ": ours " + ours[i] + " paper " + paper);
            }
        }
    }

    /** E[best] from the PGF equals a Monte-Carlo mean of the best of K draws (fixed seed, 5 standard errors). */
    @Test
    void expectedBestMatchesMonteCarlo() {
        double[] sorted = {0.1, 0.1, 0.2, 0.5, 0.7, 0.9, 0.95, 0.95, 0.96, 0.99};
        for (RepetitionDistribution k : List.of(RepetitionDistribution.poisson(2), RepetitionDistribution.logarithmic(4),
                RepetitionDistribution.geometric(3), RepetitionDistribution.pointMass(3))) {
            SplittableRandom r = new SplittableRandom(8);
            int n = 200_000;
            double sum = 0;
            double sumSq = 0;
            for (int i = 0; i < n; i++) {
                long draws = k.sample(r);
                double best = 0; // K = 0 scores 0
                for (long j = 0; j < draws; j++) {
                    best = Math.max(best, sorted[r.nextInt(sorted.length)]);
                }
                sum += best;
                sumSq += best * best;
            }
            double mean = sum / n;
            double se = Math.sqrt((sumSq / n - mean * mean) / n);
            assertEquals(mean, PapernotSteinkeFigures.expectedBest(sorted, k), 5 * se, k.describe());
        }
    }

    /** Eq. (8)'s integral by quadrature equals E[1/(K+1)] summed from the pmf. */
    @Test
    void quantileIntegralMatchesThePmf() {
        for (RepetitionDistribution k : List.of(RepetitionDistribution.poisson(5), TruncatedNegativeBinomial.withMean(0.5, 20),
                RepetitionDistribution.logarithmic(50))) {
            double direct = 0;
            for (int j = 0; j < 200_000; j++) {
                direct += k.pmf(j) / (j + 1.0);
            }
            assertEquals(direct, PapernotSteinkeFigures.integralOfPgf(k::pgf), 1e-8, k.describe());
        }
    }
}
