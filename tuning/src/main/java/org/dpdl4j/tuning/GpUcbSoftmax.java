package org.dpdl4j.tuning;

import java.util.List;

/**
 * DP-HyPO's Algorithm 3 rule (Wang, Gao, Zhang, Su &amp; Shen, DP-HyPO: An Adaptive Private Hyperparameter
 * Optimization Framework, NeurIPS 2023, arXiv:2306.05734, Algorithm 3): fit a {@link GaussianProcess} to the
 * scores so far, score each grid point by the upper confidence bound s = μ + τσ, and propose the
 * density ∝ prior·exp(β·s) (for a uniform prior, the paper's softmax). Runs of the same candidate are
 * averaged (a GP with noise σ_n²/w for the mean of w runs gives the same posterior as the runs
 * themselves); kernel hyperparameters are refitted by maximum marginal likelihood whenever the number
 * of runs reaches a power of two, and reused in between. The paper's defaults: τ = 0.1, β = 1.
 *
 * @param kernel the GP kernel
 * @param tau    τ ≥ 0, the weight of the posterior standard deviation
 * @param beta   β ≥ 0, the softmax inverse temperature
 */
public record GpUcbSoftmax(GaussianProcess.Kernel kernel, double tau, double beta) implements AdaptiveRule {
    /**
     * Checks τ and β.
     *
     * @param kernel the GP kernel
     * @param tau    τ, finite and ≥ 0, the weight of the posterior standard deviation
     * @param beta   β, finite and ≥ 0, the softmax inverse temperature (0 proposes the prior itself)
     * @throws IllegalArgumentException if τ or β is negative or not finite
     */
    public GpUcbSoftmax {
        if (!(tau >= 0) || Double.isInfinite(tau)) {
            throw new IllegalArgumentException("UCB weight tau must be finite and >= 0, got " + tau);
        }
        if (!(beta >= 0) || Double.isInfinite(beta)) {
            throw new IllegalArgumentException("softmax beta must be finite and >= 0, got " + beta);
        }
    }

    /**
     * The paper's defaults (τ = 0.1, β = 1) with a Matérn-5/2 kernel.
     *
     * @return the rule of DP-HyPO's Algorithm 3 with these settings
     */
    public static GpUcbSoftmax defaults() {
        return new GpUcbSoftmax(GaussianProcess.Kernel.MATERN_52, 0.1, 1.0);
    }

    /**
     * The rule's name with its kernel, τ and β.
     *
     * @return for example {@code GP-UCB softmax (matern_52 kernel, tau = 0.1, beta = 1.0)}
     */
    @Override
    public String name() {
        return String.format("GP-UCB softmax (%s kernel, tau = %s, beta = %s)", kernel.name().toLowerCase(), tau, beta);
    }

    /**
     * A fresh session: with no history it proposes the prior; afterwards it averages the runs of each candidate, fits
     * or conditions the GP (starting from ℓ = 0.3, s² = 0.01, σ_n² = 0.001) and proposes the normalised density
     * prior·exp(β(μ + τσ)).
     *
     * @param coordinates each grid candidate's position in the unit cube, one row per candidate (not copied)
     * @param prior       the prior probability of each grid candidate, same order and length (not copied)
     * @return a session for one tuning run (used from one thread)
     */
    @Override
    public Session start(double[][] coordinates, double[] prior) {
        return new Session() {
            private GaussianProcess.Hyperparameters h = new GaussianProcess.Hyperparameters(0.3, 0.01, 0.001);
            private int fittedAt;

            @Override
            public double[] density(List<Observation> history) {
                if (history.isEmpty()) {
                    return prior.clone();
                }
                int n = coordinates.length;
                double[] sum = new double[n];
                int[] count = new int[n];
                for (Observation o : history) {
                    sum[o.index()] += o.score();
                    count[o.index()]++;
                }
                int m = 0;
                for (int c : count) {
                    m += c > 0 ? 1 : 0;
                }
                double[][] x = new double[m][];
                double[] y = new double[m];
                double[] w = new double[m];
                for (int i = 0, j = 0; i < n; i++) {
                    if (count[i] > 0) {
                        x[j] = coordinates[i];
                        y[j] = sum[i] / count[i];
                        w[j++] = count[i];
                    }
                }
                GaussianProcess gp;
                if (Integer.bitCount(history.size()) == 1 && history.size() != fittedAt) {
                    gp = GaussianProcess.fit(kernel, x, y, w, h);
                    h = gp.hyperparameters();
                    fittedAt = history.size();
                } else {
                    gp = GaussianProcess.condition(kernel, h, x, y, w);
                }
                double[] s = new double[n];
                double max = Double.NEGATIVE_INFINITY;
                for (int i = 0; i < n; i++) {
                    s[i] = beta * (gp.mean(coordinates[i]) + tau * gp.sd(coordinates[i]));
                    max = Math.max(max, s[i]);
                }
                double[] d = new double[n];
                double total = 0;
                for (int i = 0; i < n; i++) {
                    d[i] = prior[i] * Math.exp(s[i] - max); // shifted: no overflow
                    total += d[i];
                }
                for (int i = 0; i < n; i++) {
                    d[i] /= total;
                }
                return d;
            }
        };
    }
}
