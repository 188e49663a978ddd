package org.dpdl4j.cli;

import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.tuning.Tuner;
import org.dpdl4j.tuning.TuningResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code tune dp-hypo}: Wang, Gao, Zhang, Su &amp; Shen, "DP-HyPO: An Adaptive Private Hyperparameter Optimization
 * Framework", NeurIPS 2023, arXiv:2306.05734: random search whose sampling density adapts to the released scores by a GP
 * within [c, C] x the prior, charged by Theorem 1 (the random-search bound plus the adaptivity cost).
 */
@Command(name = "dp-hypo", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"DP-HyPO (Wang et al. 2023): random search whose sampling density adapts (GP-UCB softmax) within "
                        + "--density-bounds of the prior; K ~ --repetitions (default geometric:mean=10)."})
final class DpHypoCommand extends RandomSearchCommand {
    @Mixin
    DpHypoOptions hypo;

    @Override
    DpHypoOptions hypo() {
        return hypo;
    }

    @Override
    Tuner<TuningResult> tuner(RepetitionDistribution k) {
        return hypo.tuner(k, tunerSeed(), revealTrialScores);
    }
}
