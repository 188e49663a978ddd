package org.dpdl4j.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import org.dpdl4j.accounting.AdaptiveRepeatAndSelectEvent;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.accounting.RepeatAndSelectEvent;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.TruncatedNegativeBinomial;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Datasets;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.tuning.DpHypoTuner;
import org.dpdl4j.tuning.GaussianProcess;
import org.dpdl4j.tuning.GpUcbSoftmax;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.tuning.RandomSearchTuner;
import org.dpdl4j.tuning.Tuner;
import org.dpdl4j.tuning.TuningListener;
import org.dpdl4j.tuning.TuningResult;

/** DP-HyPO (Wang et al. 2023, arXiv:2306.05734): Table 1 and Figure 1 (left) by semi-real simulation on a landscape cache. */
public final class DpHypoFigures {
    /** The paper's γ columns and Table 1 (MNIST, white-box, mean of 200 runs). */
    static final double[] GAMMAS = {0.001, 0.002, 0.003, 0.005, 0.01, 0.02, 0.025, 0.03};
    static final double[] PAPER_GP = {0.946, 0.948, 0.948, 0.947, 0.943, 0.937, 0.934, 0.932};
    static final double[] PAPER_UNIFORM = {0.943, 0.945, 0.945, 0.944, 0.940, 0.935, 0.932, 0.929};
    static final int[] FIXED_T = {1, 2, 4, 8, 16, 32, 64};
    static final double DELTA = 1e-5;
    static final double LOWER = 0.75;
    static final double UPPER = 2;

    private DpHypoFigures() {
    }

    /**
     * Settings of the reproduction.
     *
     * @param trainSize     MNIST training examples used (a seeded subset), ≥ 1; the expected batch is 256 examples, so
     *                      q = 256/trainSize
     * @param lr            learning-rate axis, in the command line's axis syntax
     *                      ({@link org.dpdl4j.tuning.HyperparameterSpace#parseAxis}, e.g. {@code lr=log:0.01:1:5})
     * @param clip          clipping-norm axis, in the same syntax
     * @param runs          runs per grid point, ≥ 1
     * @param epochs        epochs per run, &gt; 0
     * @param targetEpsilon the white-box total ε (δ = 1e-5) both methods meet at the reference γ = 0.01, finite and
     *                      &gt; 0
     * @param replays       simulated tuning runs per table entry, ≥ 1
     * @param seed          seeds landscapes and replays
     * @param cache         directory of the landscape files ({@code landscape-sigma-<σ>.json})
     * @param beta          the GP rule's softmax β (paper 1)
     */
    public record Settings(int trainSize, String lr, String clip, int runs, double epochs, double targetEpsilon, int replays, long seed,
                    Path cache, double beta) {
    }

    /**
     * White-box Table 1: σ_GP and σ_U are calibrated so that DP-HyPO (C = 2, c = 0.75, Theorem 1) and
     * uniform random search (Papernot &amp; Steinke 2022, arXiv:2110.03620, Theorem 2) each meet the total ε at γ = 0.01; a landscape is built
     * for each σ; then for every γ both procedures are replayed, a visited candidate scoring its cached
     * mean plus N(0, 0.1²), and the actual (cached-mean) accuracy of the output is averaged. Also
     * replays fixed numbers of runs T (Figure 1, left), written as {@code dphypo-figure1.csv/.png}.
     * Prints both tables to stdout.
     *
     * @param s      the settings
     * @param output the directory to write dphypo-figure1.csv and .png into
     * @return the figure "dphypo-table1": actual accuracy against γ for GP and Uniform, with 95 % half-widths and
     *         total ε
     * @throws IOException if MNIST cannot be loaded, a landscape cache cannot be read or written, or Figure 1 cannot be
     *                     written
     * @throws IllegalArgumentException if a landscape cache file was built with other settings, or an axis is
     *                                  malformed
     */
    public static Figure table1(Settings s, Path output) throws IOException {
        TrainTest data = Datasets.load("mnist", DatasetCache.root(), 28, 28, 1, s.seed());
        int batch = 256;
        double q = (double) batch / s.trainSize();
        long steps = DpSgdConfig.stepsForEpochs(s.epochs(), q);
        RdpAccountant acc = RdpAccountant.standard();
        RepetitionDistribution ref = new TruncatedNegativeBinomial(1, 0.01);
        double sigmaGp = NoiseCalibration.smallestNoise(x -> new AdaptiveRepeatAndSelectEvent(NoiseCalibration.dpSgd(q, x, steps), ref,
                LOWER, UPPER), s.targetEpsilon(), DELTA, acc, 1e-3);
        double sigmaU = NoiseCalibration.smallestNoise(x -> new RepeatAndSelectEvent(NoiseCalibration.dpSgd(q, x, steps), ref),
                s.targetEpsilon(), DELTA, acc, 1e-3);
        System.out.printf("white-box: total epsilon %s at delta %s with geometric(gamma = 0.01): sigma_GP = %.4f, sigma_Uniform = %.4f "
                + "(q = %.4f, T = %d; MNIST subset of %d, %s epochs)%n", s.targetEpsilon(), DELTA, sigmaGp, sigmaU, q, steps, s.trainSize(),
                s.epochs());
        Landscape gp = Landscape.build(new Landscape.Settings("mnist", s.trainSize(), s.lr(), s.clip(), s.runs(), s.epochs(), batch,
                sigmaGp, s.seed()), data, s.cache().resolve(String.format(Locale.ROOT, "landscape-sigma-%.4f.json", sigmaGp)),
                System.out::println);
        Landscape uniform = Landscape.build(new Landscape.Settings("mnist", s.trainSize(), s.lr(), s.clip(), s.runs(), s.epochs(),
                batch, sigmaU, s.seed()), data, s.cache().resolve(String.format(Locale.ROOT, "landscape-sigma-%.4f.json", sigmaU)),
                System.out::println);
        HyperparameterSpace space = gp.settings().space();
        System.out.printf("GP rule: Matern-5/2, tau = 0.1, beta = %s%n", s.beta());
        System.out.printf("landscapes: best mean accuracy %.4f (sigma_GP) and %.4f (sigma_Uniform) over %d candidates%n", gp.best(),
                uniform.best(), gp.grid().size());
        PrivacyEvent runGp = NoiseCalibration.dpSgd(q, sigmaGp, steps);
        PrivacyEvent runU = NoiseCalibration.dpSgd(q, sigmaU, steps);

        Figure table = new Figure("dphypo-table1", "DP-HyPO Table 1 at our scale: MNIST, white-box, geometric(gamma)", "gamma",
                "actual accuracy", "ci95", "epsilon_total", "paper");
        table.logX();
        System.out.printf("%-8s | %-22s | %-22s | %-26s | %s%n", "gamma", "GP (paper)", "Uniform (paper)", "GP - Uniform [95% CI]",
                "total epsilon GP / Uniform");
        boolean gpAhead = true;
        for (int g = 0; g < GAMMAS.length; g++) {
            RepetitionDistribution k = new TruncatedNegativeBinomial(1, GAMMAS[g]);
            double[] a = replay(gp, runGp, space, k, true, s);
            double[] b = replay(uniform, runU, space, k, false, s);
            double diff = a[0] - b[0];
            double ci = 1.96 * Math.sqrt(a[2] / s.replays() + b[2] / s.replays());
            gpAhead &= diff > 0;
            double epsGp = acc.epsilon(new AdaptiveRepeatAndSelectEvent(runGp, k, LOWER, UPPER), DELTA);
            double epsU = acc.epsilon(new RepeatAndSelectEvent(runU, k), DELTA);
            table.add("GP", GAMMAS[g], a[0], a[1], epsGp, PAPER_GP[g]);
            table.add("Uniform", GAMMAS[g], b[0], b[1], epsU, PAPER_UNIFORM[g]);
            System.out.printf(Locale.ROOT, "%-8s | %.4f ± %.4f (%.3f) | %.4f ± %.4f (%.3f) | %+.4f [%+.4f, %+.4f] | %.3f / %.3f%n",
                    GAMMAS[g], a[0], a[1], PAPER_GP[g], b[0], b[1], PAPER_UNIFORM[g], diff, diff - ci, diff + ci, epsGp, epsU);
        }
        System.out.println("paper vs ours: the paper reports GP above Uniform at every gamma (by 0.002-0.003); ours: GP "
                + (gpAhead ? "above" : "NOT above") + " Uniform at every gamma (means of " + s.replays() + " replays; ± is the 95% "
                + "half-width of each mean, the bracket that of the difference).");

        Figure fixed = new Figure("dphypo-figure1", "DP-HyPO Fig. 1 (left) at our scale: accuracy vs fixed number of runs T",
                "runs T", "actual accuracy", "ci95");
        fixed.logX();
        for (int t : FIXED_T) {
            RepetitionDistribution k = RepetitionDistribution.pointMass(t);
            double[] a = replay(gp, runGp, space, k, true, s);
            double[] b = replay(uniform, runU, space, k, false, s);
            fixed.add("GP", t, a[0], a[1]);
            fixed.add("Uniform", t, b[0], b[1]);
            System.out.printf(Locale.ROOT, "T = %3d: GP %.4f ± %.4f | Uniform %.4f ± %.4f%n", t, a[0], a[1], b[0], b[1]);
        }
        fixed.write(output);
        System.out.println("wrote " + output.resolve("dphypo-figure1.csv") + " and " + output.resolve("dphypo-figure1.png"));
        return table;
    }

    /** Mean, 95% half-width and variance of the output's actual accuracy over the replays. */
    private static double[] replay(Landscape l, PrivacyEvent run, HyperparameterSpace space, RepetitionDistribution k, boolean adaptive,
                                   Settings s) {
        double sum = 0;
        double sumSq = 0;
        for (int r = 0; r < s.replays(); r++) {
            long seed = s.seed() * 1_000_003L + r;
            Tuner<TuningResult> t = adaptive ? new DpHypoTuner(k, LOWER, UPPER, new GpUcbSoftmax(GaussianProcess.Kernel.MATERN_52, 0.1, s.beta()), seed)
                    : new RandomSearchTuner(k, seed, 1, false);
            TuningResult res = t.tune(space, l.replay(run, 0.1), null, TuningListener.NONE);
            double actual = l.actual(res.candidate());
            sum += actual;
            sumSq += actual * actual;
        }
        double mean = sum / s.replays();
        double var = Math.max(0, (sumSq / s.replays() - mean * mean) * s.replays() / Math.max(1, s.replays() - 1));
        return new double[]{mean, 1.96 * Math.sqrt(var / s.replays()), var};
    }
}
