package org.dpdl4j.tuning;

import java.util.List;

/**
 * How DP-HyPO's sampling density adapts to earlier runs (Wang, Gao, Zhang, Su &amp; Shen, DP-HyPO: An
 * Adaptive Private Hyperparameter Optimization Framework, NeurIPS 2023, arXiv:2306.05734, Framework 1):
 * any rule may be used, because {@link DpHypoTuner} projects whatever density it proposes into
 * [c, C]·prior before sampling, and the privacy bound depends on those bounds only.
 */
public interface AdaptiveRule {
    /**
     * The rule's name, reported with the result.
     *
     * @return a human-readable name with the rule's settings
     */
    String name();

    /**
     * A fresh state for one tuning run over a grid.
     *
     * @param coordinates each grid candidate's position in the unit cube [0, 1]^d, one row per candidate in the order
     *                    of {@link HyperparameterSpace#candidates()} (see {@link HyperparameterSpace#unitCoordinates})
     * @param prior       the prior probability of each grid candidate, same order and length, entries &gt; 0 summing to 1
     * @return the session that proposes the densities of this tuning run
     */
    Session start(double[][] coordinates, double[] prior);

    /** The state of one tuning run (used from one thread). */
    interface Session {
        /**
         * The next (untruncated) density over the grid given every run so far.
         *
         * @param history the runs so far, in order (scores are finite; failed runs are left out)
         * @return non-negative weights, one per grid candidate (they need not sum to 1)
         */
        double[] density(List<Observation> history);
    }

    /**
     * One run: the grid index of its candidate and its released score.
     *
     * @param index grid index of the candidate, in [0, number of grid candidates)
     * @param score the (noisy) score, higher is better; finite
     */
    record Observation(int index, double score) {
    }
}
