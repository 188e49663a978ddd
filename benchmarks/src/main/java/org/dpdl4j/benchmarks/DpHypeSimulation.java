package org.dpdl4j.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.SplittableRandom;
import org.dpdl4j.accounting.DpHypeVoting;

/**
 * DP-HYPE Figure 2 (Liebenow et al. 2025, arXiv:2510.04902, Sec. V.B): 100 candidates, n = 250 clients whose local losses are
 * N(0, s²) for good and N(1, s²) for bad candidates; the success rate (a good candidate wins) over
 * repetitions, (a) against s with |H_good| = 5 and (b) against |H_good| with s = 0.2, for several k and
 * ε ∈ {0.25, 1} (δ = 1e-5, σ from {@link DpHypeVoting#noiseMultiplier}). The n clients' noise is drawn
 * as its sum N(0, σ²), the same distribution.
 */
public final class DpHypeSimulation {
    static final int[] VOTES = {1, 2, 5, 10, 20, 100};
    static final double[] EPSILONS = {0.25, 1};
    static final double[] SPREADS = {0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0};
    static final int[] GOOD = {1, 2, 4, 8, 16, 32, 64};

    private DpHypeSimulation() {
    }

    /**
     * Simulates both panels, prints their success rates to stdout, writes dphype-figure2b itself and returns
     * dphype-figure2 (panel a).
     *
     * @param repetitions simulated votes per point (the success rate is the fraction won by a good candidate), ≥ 1
     * @param output      the directory to write dphype-figure2b.csv and .png into
     * @return the figure "dphype-figure2": success rate against the loss spread s, one series per k and ε
     * @throws IOException if panel b cannot be written
     */
    public static Figure figure2(int repetitions, Path output) throws IOException {
        Figure a = new Figure("dphype-figure2", "DP-HYPE Fig. 2a: success vs loss spread s (|H_good| = 5, n = 250, p = 100)",
                "loss spread s", "success rate", "votes_k", "epsilon");
        Figure b = new Figure("dphype-figure2b", "DP-HYPE Fig. 2b: success vs |H_good| (s = 0.2, n = 250, p = 100)",
                "good candidates", "success rate", "votes_k", "epsilon");
        b.logX();
        double[][] sigma = new double[EPSILONS.length][VOTES.length];
        for (int e = 0; e < EPSILONS.length; e++) {
            for (int v = 0; v < VOTES.length; v++) {
                sigma[e][v] = DpHypeVoting.noiseMultiplier(VOTES[v], EPSILONS[e], 1e-5);
            }
        }
        System.out.println("(a) |H_good| = 5: success rate by s (rows) and k (columns), epsilon 0.25 / 1");
        for (double s : SPREADS) {
            double[][] rate = simulate(5, s, sigma, repetitions, 11);
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "s = %-5s", s));
            for (int v = 0; v < VOTES.length; v++) {
                line.append(String.format(Locale.ROOT, " | k=%d %.3f/%.3f", VOTES[v], rate[0][v], rate[1][v]));
                for (int e = 0; e < EPSILONS.length; e++) {
                    a.add(String.format("k=%d, eps=%s", VOTES[v], EPSILONS[e]), s, rate[e][v], VOTES[v], EPSILONS[e]);
                }
            }
            System.out.println(line);
        }
        System.out.println("(b) s = 0.2: success rate by |H_good| (rows) and k (columns), epsilon 0.25 / 1");
        for (int g : GOOD) {
            double[][] rate = simulate(g, 0.2, sigma, repetitions, 13);
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "good = %-3d", g));
            for (int v = 0; v < VOTES.length; v++) {
                line.append(String.format(Locale.ROOT, " | k=%d %.3f/%.3f", VOTES[v], rate[0][v], rate[1][v]));
                for (int e = 0; e < EPSILONS.length; e++) {
                    b.add(String.format("k=%d, eps=%s", VOTES[v], EPSILONS[e]), g, rate[e][v], VOTES[v], EPSILONS[e]);
                }
            }
            System.out.println(line);
        }
        System.out.println("paper vs ours: the paper plots these curves without printing numbers; it reports that larger k helps when the"
                + " loss distributions overlap, that k = 100 falls to chance, and that the trade-off shows only at small epsilon.");
        b.write(output);
        System.out.println("wrote " + output.resolve("dphype-figure2b.csv") + " and " + output.resolve("dphype-figure2b.png"));
        return a;
    }

    /** Success rate [epsilon][k]: losses drawn once per repetition and shared by every k and epsilon. */
    static double[][] simulate(int good, double spread, double[][] sigma, int repetitions, long seed) {
        int p = 100;
        int n = 250;
        SplittableRandom r = new SplittableRandom(seed + good * 1000L + Double.doubleToLongBits(spread));
        double[][] wins = new double[EPSILONS.length][VOTES.length];
        double[] losses = new double[p];
        for (int rep = 0; rep < repetitions; rep++) {
            double[][] votes = new double[VOTES.length][p];
            for (int c = 0; c < n; c++) {
                for (int j = 0; j < p; j++) {
                    losses[j] = (j < good ? 0 : 1) + spread * r.nextGaussian();
                }
                double[] sorted = losses.clone();
                java.util.Arrays.sort(sorted); // one sort serves every k: continuous losses have no ties
                for (int v = 0; v < VOTES.length; v++) {
                    double threshold = sorted[VOTES[v] - 1];
                    for (int j = 0; j < p; j++) {
                        votes[v][j] += losses[j] <= threshold ? 1 : 0;
                    }
                }
            }
            for (int e = 0; e < EPSILONS.length; e++) {
                for (int v = 0; v < VOTES.length; v++) {
                    double[] noisy = votes[v].clone();
                    for (int j = 0; j < p; j++) {
                        noisy[j] += sigma[e][v] * r.nextGaussian();
                    }
                    wins[e][v] += DpHypeVoting.argmax(noisy) < good ? 1 : 0;
                }
            }
        }
        for (double[] row : wins) {
            for (int v = 0; v < row.length; v++) {
                row[v] /= repetitions;
            }
        }
        return wins;
    }
}
