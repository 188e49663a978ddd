package org.dpdl4j.tuning;

import org.apache.commons.math3.analysis.MultivariateFunction;
import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.ArrayRealVector;
import org.apache.commons.math3.linear.CholeskyDecomposition;
import org.apache.commons.math3.linear.DecompositionSolver;
import org.apache.commons.math3.linear.NonPositiveDefiniteMatrixException;
import org.apache.commons.math3.linear.RealMatrix;
import org.apache.commons.math3.linear.RealVector;
import org.apache.commons.math3.optim.InitialGuess;
import org.apache.commons.math3.optim.MaxEval;
import org.apache.commons.math3.optim.SimpleBounds;
import org.apache.commons.math3.optim.nonlinear.scalar.GoalType;
import org.apache.commons.math3.optim.nonlinear.scalar.ObjectiveFunction;
import org.apache.commons.math3.optim.nonlinear.scalar.noderiv.BOBYQAOptimizer;

/**
 * Gaussian-process regression for DP-HyPO's adaptive rule (Wang, Gao, Zhang, Su &amp; Shen, DP-HyPO: An
 * Adaptive Private Hyperparameter Optimization Framework, NeurIPS 2023, arXiv:2306.05734, Algorithm 3; the paper leaves the GP's settings open, these are ours): inputs in the unit cube,
 * an isotropic squared-exponential or Matérn-5/2 kernel with length scale ℓ and signal variance s²,
 * Gaussian observation noise σ_n²/w_i for an observation that averages w_i runs, a constant mean
 * (the weighted mean of the observations). Hyperparameters maximise the log marginal likelihood
 * (Rasmussen &amp; Williams, Gaussian Processes for Machine Learning, MIT Press 2006, eq. 2.30) with Commons
 * Math's BOBYQA over log ℓ, log s², log σ_n²; linear algebra is Commons Math's Cholesky decomposition. Immutable.
 */
public final class GaussianProcess {
    /** The covariance function k(r) of the distance r = ‖x − x′‖. */
    public enum Kernel {
        /** s²·exp(−r²/(2ℓ²)). */
        SQUARED_EXPONENTIAL,
        /** s²·(1 + u + u²/3)·e^{−u}, u = √5·r/ℓ. */
        MATERN_52;

        double value(double r, double lengthScale, double signalVariance) {
            if (this == SQUARED_EXPONENTIAL) {
                return signalVariance * Math.exp(-r * r / (2 * lengthScale * lengthScale));
            }
            double u = Math.sqrt(5) * r / lengthScale;
            return signalVariance * (1 + u + u * u / 3) * Math.exp(-u);
        }

        /** ∂k/∂log ℓ. */
        double dLogLength(double r, double lengthScale, double signalVariance) {
            if (this == SQUARED_EXPONENTIAL) {
                return value(r, lengthScale, signalVariance) * r * r / (lengthScale * lengthScale);
            }
            double u = Math.sqrt(5) * r / lengthScale;
            return signalVariance * u * u * (1 + u) / 3 * Math.exp(-u);
        }
    }

    /**
     * Kernel hyperparameters.
     *
     * @param lengthScale    ℓ &gt; 0, finite, in unit-cube units
     * @param signalVariance s² &gt; 0, finite, in squared score units
     * @param noiseVariance  σ_n² &gt; 0, finite, the variance of one observation (of one run), in squared score units
     */
    public record Hyperparameters(double lengthScale, double signalVariance, double noiseVariance) {
        /**
         * Checks that every value is finite and positive.
         *
         * @param lengthScale    ℓ &gt; 0, finite, in unit-cube units
         * @param signalVariance s² &gt; 0, finite, in squared score units
         * @param noiseVariance  σ_n² &gt; 0, finite, the variance of one observation, in squared score units
         * @throws IllegalArgumentException if a value is not finite and &gt; 0
         */
        public Hyperparameters {
            for (double v : new double[]{lengthScale, signalVariance, noiseVariance}) {
                if (!(v > 0) || Double.isInfinite(v)) {
                    throw new IllegalArgumentException("GP hyperparameters must be finite and > 0, got " + lengthScale + ", "
                            + signalVariance + ", " + noiseVariance);
                }
            }
        }
    }

    private final Kernel kernel;
    private final Hyperparameters h;
    private final double[][] x;
    private final double mean;
    private final DecompositionSolver solver;
    private final RealVector alpha;

    private GaussianProcess(Kernel kernel, Hyperparameters h, double[][] x, double[] y, double[] weights) {
        this.kernel = kernel;
        this.h = h;
        this.x = x;
        this.mean = weightedMean(y, weights);
        CholeskyDecomposition chol = new CholeskyDecomposition(covariance(kernel, h, x, weights), 1e-10, 1e-14);
        this.solver = chol.getSolver();
        this.alpha = solver.solve(centred(y, mean));
    }

    /**
     * The posterior given fixed hyperparameters.
     *
     * @param kernel  the covariance function
     * @param h       the kernel hyperparameters
     * @param x       n ≥ 1 points, each of the same dimension d ≥ 1 (unit cube); not copied
     * @param y       n observations (finite)
     * @param weights n positive, finite weights: observation i has noise variance σ_n²/w_i (the mean of w_i runs)
     * @return the posterior GP
     * @throws IllegalArgumentException on empty or mismatched input, a non-finite observation or a bad weight
     * @throws NonPositiveDefiniteMatrixException if the covariance matrix is numerically not positive definite
     */
    public static GaussianProcess condition(Kernel kernel, Hyperparameters h, double[][] x, double[] y, double[] weights) {
        check(x, y, weights);
        return new GaussianProcess(kernel, h, x, y, weights);
    }

    /**
     * The posterior with hyperparameters that maximise the log marginal likelihood, searched by
     * BOBYQA over ℓ ∈ [0.01, 10], s² ∈ [1e-4, 100]·v, σ_n² ∈ [1e-6, 10]·v (v = the observations'
     * variance about their weighted mean, or 1e-4 when it is smaller, as when they are all equal), starting from
     * {@code start} (clamped into those bounds). At most 2000 evaluations; the best point evaluated is kept even when
     * BOBYQA gives up early.
     *
     * @param kernel  the covariance function
     * @param x       n ≥ 1 points, each of the same dimension d ≥ 1 (unit cube); not copied
     * @param y       n observations (finite)
     * @param weights n positive, finite weights: observation i has noise variance σ_n²/w_i
     * @param start   the hyperparameters the search starts from
     * @return the posterior GP with the fitted hyperparameters
     * @throws IllegalArgumentException on empty or mismatched input, a non-finite observation or a bad weight
     * @throws NonPositiveDefiniteMatrixException if the covariance matrix at the fitted hyperparameters is numerically
     *                                            not positive definite
     */
    public static GaussianProcess fit(Kernel kernel, double[][] x, double[] y, double[] weights, Hyperparameters start) {
        check(x, y, weights);
        double m = weightedMean(y, weights);
        double v = 0;
        for (double yi : y) {
            v += (yi - m) * (yi - m);
        }
        v = Math.max(v / y.length, 1e-4);
        double[] lower = {Math.log(0.01), Math.log(1e-4 * v), Math.log(1e-6 * v)};
        double[] upper = {Math.log(10), Math.log(100 * v), Math.log(10 * v)};
        double[] guess = {Math.log(start.lengthScale()), Math.log(start.signalVariance()), Math.log(start.noiseVariance())};
        for (int i = 0; i < 3; i++) {
            guess[i] = Math.max(lower[i] + 1e-9, Math.min(upper[i] - 1e-9, guess[i]));
        }
        double[] bestPoint = guess.clone();
        double[] bestValue = {Double.NEGATIVE_INFINITY};
        MultivariateFunction f = p -> {
            double value;
            try {
                value = logMarginalLikelihood(kernel, x, y, weights, fromLog(p));
            } catch (NonPositiveDefiniteMatrixException e) {
                value = -1e300;
            }
            if (value > bestValue[0]) { // remember the best point evaluated, whatever the optimiser ends with
                bestValue[0] = value;
                System.arraycopy(p, 0, bestPoint, 0, 3);
            }
            return value;
        };
        f.value(guess);
        try {
            new BOBYQAOptimizer(7, 0.5, 1e-6).optimize(new MaxEval(2000), new ObjectiveFunction(f), GoalType.MAXIMIZE,
                    new InitialGuess(guess), new SimpleBounds(lower, upper));
        } catch (org.apache.commons.math3.exception.MathIllegalStateException e) {
            // BOBYQA gives up on flat or noisy likelihoods; the best point evaluated so far stands
        }
        Hyperparameters best = fromLog(bestPoint);
        return new GaussianProcess(kernel, best, x, y, weights);
    }

    /**
     * The log marginal likelihood log p(y | X, θ) = −½ (y − m)ᵀ K⁻¹ (y − m) − ½ log|K| − (n/2) log 2π with
     * K = k(X, X) + diag(σ_n²/w) and m the weighted mean of y (Rasmussen &amp; Williams eq. 2.30, with a constant mean).
     *
     * @param kernel  the covariance function
     * @param x       n ≥ 1 points, each of the same dimension d ≥ 1
     * @param y       n observations (finite)
     * @param weights n positive, finite weights: observation i has noise variance σ_n²/w_i
     * @param h       the hyperparameters θ
     * @return the log marginal likelihood, in nats
     * @throws IllegalArgumentException on empty or mismatched input, a non-finite observation or a bad weight
     * @throws NonPositiveDefiniteMatrixException if K is numerically not positive definite
     */
    public static double logMarginalLikelihood(Kernel kernel, double[][] x, double[] y, double[] weights, Hyperparameters h) {
        check(x, y, weights);
        CholeskyDecomposition chol = new CholeskyDecomposition(covariance(kernel, h, x, weights), 1e-10, 1e-14);
        RealVector r = centred(y, weightedMean(y, weights));
        RealVector a = chol.getSolver().solve(r);
        double logDet = 0;
        RealMatrix l = chol.getL();
        for (int i = 0; i < y.length; i++) {
            logDet += 2 * Math.log(l.getEntry(i, i));
        }
        return -0.5 * r.dotProduct(a) - 0.5 * logDet - 0.5 * y.length * Math.log(2 * Math.PI);
    }

    /**
     * The gradient of {@link #logMarginalLikelihood} with respect to (log ℓ, log s², log σ_n²):
     * ½ tr((aaᵀ − K⁻¹) ∂K/∂θ), a = K⁻¹(y − m) (Rasmussen &amp; Williams eq. 5.9; the mean is held fixed).
     *
     * @param kernel  the covariance function
     * @param x       n ≥ 1 points, each of the same dimension d ≥ 1
     * @param y       n observations (finite)
     * @param weights n positive, finite weights: observation i has noise variance σ_n²/w_i
     * @param h       the hyperparameters θ
     * @return a new array of the three partial derivatives, in the order (log ℓ, log s², log σ_n²)
     * @throws IllegalArgumentException on empty or mismatched input, a non-finite observation or a bad weight
     * @throws NonPositiveDefiniteMatrixException if K is numerically not positive definite
     */
    public static double[] logMarginalLikelihoodGradient(Kernel kernel, double[][] x, double[] y, double[] weights,
                                                         Hyperparameters h) {
        check(x, y, weights);
        int n = y.length;
        CholeskyDecomposition chol = new CholeskyDecomposition(covariance(kernel, h, x, weights), 1e-10, 1e-14);
        RealMatrix inv = chol.getSolver().getInverse();
        RealVector a = chol.getSolver().solve(centred(y, weightedMean(y, weights)));
        double[] g = new double[3];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                double w = a.getEntry(i) * a.getEntry(j) - inv.getEntry(i, j);
                double r = distance(x[i], x[j]);
                g[0] += w * kernel.dLogLength(r, h.lengthScale(), h.signalVariance());
                g[1] += w * kernel.value(r, h.lengthScale(), h.signalVariance());
                if (i == j) {
                    g[2] += w * h.noiseVariance() / weights[i];
                }
            }
        }
        for (int k = 0; k < 3; k++) {
            g[k] *= 0.5;
        }
        return g;
    }

    /**
     * The hyperparameters in use.
     *
     * @return the given or fitted hyperparameters
     */
    public Hyperparameters hyperparameters() {
        return h;
    }

    /**
     * Posterior mean μ(x*) = m + k*ᵀ K⁻¹ (y − m).
     *
     * @param at x*, a point of the same dimension as the inputs
     * @return the posterior mean at x*, in score units
     */
    public double mean(double[] at) {
        return mean + cross(at).dotProduct(alpha);
    }

    /**
     * Posterior standard deviation of the latent function, √(k(x*, x*) − k*ᵀ K⁻¹ k*) (no observation noise).
     *
     * @param at x*, a point of the same dimension as the inputs
     * @return the posterior standard deviation at x*, in score units, &gt;= 0 (a negative variance from rounding
     *         counts as 0)
     */
    public double sd(double[] at) {
        RealVector k = cross(at);
        double var = kernel.value(0, h.lengthScale(), h.signalVariance()) - k.dotProduct(solver.solve(k));
        return Math.sqrt(Math.max(0, var));
    }

    private RealVector cross(double[] at) {
        double[] k = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            k[i] = kernel.value(distance(at, x[i]), h.lengthScale(), h.signalVariance());
        }
        return new ArrayRealVector(k, false);
    }

    private static RealMatrix covariance(Kernel kernel, Hyperparameters h, double[][] x, double[] weights) {
        int n = x.length;
        double[][] k = new double[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j <= i; j++) {
                k[i][j] = kernel.value(distance(x[i], x[j]), h.lengthScale(), h.signalVariance());
                k[j][i] = k[i][j];
            }
            k[i][i] += h.noiseVariance() / weights[i];
        }
        return new Array2DRowRealMatrix(k, false);
    }

    private static Hyperparameters fromLog(double[] p) {
        return new Hyperparameters(Math.exp(p[0]), Math.exp(p[1]), Math.exp(p[2]));
    }

    private static RealVector centred(double[] y, double m) {
        double[] r = new double[y.length];
        for (int i = 0; i < y.length; i++) {
            r[i] = y[i] - m;
        }
        return new ArrayRealVector(r, false);
    }

    private static double weightedMean(double[] y, double[] w) {
        double s = 0;
        double sw = 0;
        for (int i = 0; i < y.length; i++) {
            s += w[i] * y[i];
            sw += w[i];
        }
        return s / sw;
    }

    private static double distance(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += (a[i] - b[i]) * (a[i] - b[i]);
        }
        return Math.sqrt(s);
    }

    private static void check(double[][] x, double[] y, double[] weights) {
        if (x.length == 0 || x.length != y.length || y.length != weights.length) {
            throw new IllegalArgumentException("GP needs n >= 1 points with as many observations and weights, got " + x.length
                    + ", " + y.length + ", " + weights.length);
        }
        for (int i = 0; i < y.length; i++) {
            if (!Double.isFinite(y[i]) || !(weights[i] > 0) || Double.isInfinite(weights[i]) || x[i].length != x[0].length) {
                throw new IllegalArgumentException("GP observation " + i + " is invalid: y = " + y[i] + ", weight = " + weights[i]);
            }
        }
    }
}
