package org.dpdl4j.audit;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A measured lower bound on ε from one training run (Steinke, Nasr &amp; Jagielski, Privacy Auditing with One
 * (1) Training Run, NeurIPS 2023, arXiv:2305.08846). m canaries are each included with probability ½
 * (S_i = ±1, independently of everything else); after training each gets a score; the auditor guesses "in"
 * for the k₊ highest scores and "out" for the k₋ lowest and abstains on the rest. With r = k₊ + k₋ guesses
 * of which v are correct, an (ε, δ)-DP mechanism makes v unlikely to be large: with p = e^ε/(1 + e^ε),
 * β = P[Binomial(r, p) ≥ v] and α = max over i = 1..v of (P[Binomial(r, p) ≥ v − i] − β)/i, the p-value
 * of v is at most min(1, β + 2mδα). The lower bound is the largest ε whose p-value is at most the
 * significance 1 − confidence: every smaller claim is rejected at that confidence.
 *
 * <p>Choosing k₊ and k₋ after seeing the scores is paid for by a Bonferroni correction over every pair
 * tried ({@link #audit}).
 */
public final class OneRunAudit {
    private OneRunAudit() {
    }

    /**
     * The p-value of v correct guesses out of r under (ε, δ)-DP.
     *
     * @param m       canaries, m ≥ r
     * @param r       guesses, r ≥ v
     * @param v       correct guesses, 0 ≤ v ≤ r
     * @param epsilon ε, finite and ≥ 0
     * @param delta   δ ∈ [0, 1)
     * @return a number in [0, 1] (β alone when δ = 0)
     * @throws IllegalArgumentException on values out of range
     */
    public static double pValue(int m, int r, int v, double epsilon, double delta) {
        if (r < 0 || v < 0 || v > r || m < r) {
            throw new IllegalArgumentException("need 0 <= v <= r <= m, got m = " + m + ", r = " + r + ", v = " + v);
        }
        if (!(epsilon >= 0) || Double.isInfinite(epsilon)) {
            throw new IllegalArgumentException("epsilon must be finite and >= 0, got " + epsilon);
        }
        if (!(delta >= 0 && delta < 1)) {
            throw new IllegalArgumentException("delta must be in [0, 1), got " + delta);
        }
        double logP = -Math.log1p(Math.exp(-epsilon)); // log of e^ε/(1 + e^ε)
        double logQ = -Math.log1p(Math.exp(epsilon));
        double[] tail = upperTails(r, logP, logQ); // tail[k] = P[Bin(r, p) ≥ k]
        double beta = tail[v];
        if (delta == 0) {
            return Math.min(1, beta);
        }
        double alpha = 0;
        for (int i = 1; i <= v; i++) {
            alpha = Math.max(alpha, (tail[v - i] - beta) / i);
        }
        return Math.min(1, beta + 2.0 * m * delta * alpha);
    }

    /** P[Binomial(r, p) ≥ k] for k = 0..r+1, summed from the top in log space (no cancellation). */
    private static double[] upperTails(int r, double logP, double logQ) {
        double[] tail = new double[r + 2];
        double logChoose = 0; // log C(r, k), from k = r down
        double acc = Double.NEGATIVE_INFINITY;
        for (int k = r; k >= 0; k--) {
            if (k < r) {
                logChoose += Math.log(k + 1) - Math.log(r - k); // C(r, k) = C(r, k + 1)(k + 1)/(r − k)
            }
            double term = logChoose + k * logP + (r - k) * logQ;
            acc = Math.max(acc, term) + Math.log1p(Math.exp(-Math.abs(acc - term)));
            tail[k] = Math.min(1, Math.exp(acc));
        }
        tail[r + 1] = 0;
        return tail;
    }

    /**
     * The largest ε (to 1e-6) whose p-value for (m, r, v) at δ is at most {@code significance}; 0 when even ε = 0
     * is not rejected. The p-value grows with ε, so this is a bisection (after doubling an upper end from 1; the search
     * stops, returning 8192, when ε = 8192 is still rejected).
     *
     * @param m            canaries, m ≥ r
     * @param r            guesses, r ≥ v
     * @param v            correct guesses, 0 ≤ v ≤ r
     * @param delta        δ of the claim, in [0, 1)
     * @param significance the test's level, in (0, 1), for example 1 − confidence
     * @return the lower bound on ε, in [0, 8192]
     * @throws IllegalArgumentException if significance ∉ (0, 1) or another value is out of range (see {@link #pValue})
     */
    public static double epsilonLowerBound(int m, int r, int v, double delta, double significance) {
        if (!(significance > 0 && significance < 1)) {
            throw new IllegalArgumentException("significance must be in (0, 1), got " + significance);
        }
        if (pValue(m, r, v, 0, delta) > significance) {
            return 0;
        }
        double lo = 0;
        double hi = 1;
        while (pValue(m, r, v, hi, delta) <= significance) {
            lo = hi;
            hi *= 2;
            if (hi > 1e4) {
                return lo;
            }
        }
        while (hi - lo > 1e-6) {
            double mid = (lo + hi) / 2;
            if (pValue(m, r, v, mid, delta) <= significance) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * The outcome of an audit.
     *
     * @param epsilonLowerBound the measured lower bound on ε (at the chosen guesses, Bonferroni-corrected), &gt;= 0
     * @param canaries          m, the number of canaries
     * @param guesses           r = k₊ + k₋ of the chosen pair (0 when no pair gives a bound above 0)
     * @param correct           v of the chosen pair
     * @param guessesIn         k₊, the guesses "in" (the highest scores)
     * @param guessesOut        k₋, the guesses "out" (the lowest scores)
     * @param pairsTried        how many (k₊, k₋) pairs the correction paid for
     */
    public record Result(double epsilonLowerBound, int canaries, int guesses, int correct, int guessesIn, int guessesOut,
                         int pairsTried) {
    }

    /**
     * Audits canary scores: for every (k₊, k₋) on a grid of guess counts (1, 2, 5 × powers of ten up to m, each side
     * at most half the canaries), the lower bound at significance (1 − confidence)/(pairs tried), and the best.
     *
     * @param scores     one score per canary, higher meaning "more likely included"
     * @param included   whether each canary was included (S_i = +1), same length as {@code scores}
     * @param delta      δ of the claim, in [0, 1)
     * @param confidence in (0, 1), for example 0.95
     * @return the pair with the largest lower bound (the first such on ties; a bound of 0 with no guesses when none is
     *         above 0)
     * @throws IllegalArgumentException if the arrays differ in length, are empty, or a parameter is out of range
     */
    public static Result audit(double[] scores, boolean[] included, double delta, double confidence) {
        int m = scores.length;
        if (m == 0 || included.length != m) {
            throw new IllegalArgumentException("need one inclusion bit per score, got " + m + " scores and " + included.length + " bits");
        }
        if (!(confidence > 0 && confidence < 1)) {
            throw new IllegalArgumentException("confidence must be in (0, 1), got " + confidence);
        }
        Integer[] order = new Integer[m];
        for (int i = 0; i < m; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Double.compare(scores[b], scores[a])); // highest first
        List<Integer> counts = new ArrayList<>();
        counts.add(0);
        for (long base = 1; base <= m / 2; base *= 10) {
            for (long k : new long[]{base, 2 * base, 5 * base}) {
                if (k <= m / 2) {
                    counts.add((int) k);
                }
            }
        }
        int pairs = counts.size() * counts.size() - 1;
        double significance = (1 - confidence) / pairs;
        Result best = new Result(0, m, 0, 0, 0, 0, pairs);
        for (int kIn : counts) {
            for (int kOut : counts) {
                if (kIn + kOut == 0) {
                    continue;
                }
                int correct = 0;
                for (int i = 0; i < kIn; i++) {
                    correct += included[order[i]] ? 1 : 0;
                }
                for (int i = 0; i < kOut; i++) {
                    correct += included[order[m - 1 - i]] ? 0 : 1;
                }
                double lb = epsilonLowerBound(m, kIn + kOut, correct, delta, significance);
                if (lb > best.epsilonLowerBound()) {
                    best = new Result(lb, m, kIn + kOut, correct, kIn, kOut, pairs);
                }
            }
        }
        return best;
    }
}
