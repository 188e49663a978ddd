package org.dpdl4j.cli;

import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.tuning.DpHypoTuner;
import org.dpdl4j.tuning.GaussianProcess;
import org.dpdl4j.tuning.GpUcbSoftmax;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** DP-HyPO's options (Wang et al. 2023, arXiv:2306.05734): density bounds and the GP-UCB softmax rule. */
final class DpHypoOptions {
    @Mixin
    DensityBoundsOption density;

    @Option(names = "--ucb-tau", paramLabel = "τ", defaultValue = "0.1", description = "dp-hypo: UCB weight tau >= 0 (default ${DEFAULT-VALUE}).")
    double ucbTau;

    @Option(names = "--softmax-beta", paramLabel = "β", defaultValue = "1", description = "dp-hypo: softmax inverse temperature beta >= 0 (default ${DEFAULT-VALUE}).")
    double softmaxBeta;

    @Option(names = "--kernel", defaultValue = "matern52", description = "dp-hypo: GP kernel, matern52 or se (squared exponential) (default ${DEFAULT-VALUE}).")
    String kernel;

    /** tune's default density bounds: the paper's 0.75:2 alone costs about ε 3 by Theorem 1 (3·log(8/3)). */
    private static final double[] DEFAULT_BOUNDS = {0.8, 1.25};

    /** The density bounds {c, C} in use (tune's default when --density-bounds is absent). */
    double[] bounds() {
        return density.bounds(DEFAULT_BOUNDS);
    }

    /**
     * DP-HyPO over K with these options.
     *
     * @param reveal whether the trials are released (then the composition of the K runs is charged)
     * @throws IllegalArgumentException naming the option when one is invalid
     */
    DpHypoTuner tuner(RepetitionDistribution k, long seed, boolean reveal) {
        double[] b = bounds();
        density.densityBounds = b[0] + ":" + b[1];
        DpHypoTuner hypo = new DpHypoTuner(k, b[0], b[1], rule(), seed);
        return reveal ? hypo.withRevealedTrials() : hypo;
    }

    GpUcbSoftmax rule() {
        GaussianProcess.Kernel kern = switch (kernel) {
            case "matern52" -> GaussianProcess.Kernel.MATERN_52;
            case "se" -> GaussianProcess.Kernel.SQUARED_EXPONENTIAL;
            default -> throw new IllegalArgumentException("--kernel must be matern52 or se, got '" + kernel + "'");
        };
        try {
            return new GpUcbSoftmax(kern, ucbTau, softmaxBeta);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException((ucbTau < 0 || Double.isNaN(ucbTau) ? "--ucb-tau: " : "--softmax-beta: ") + e.getMessage());
        }
    }
}
