package org.dpdl4j.tuning;

import java.util.List;

/**
 * How DP-HyPO's sampling density adapts to earlier runs (Wang et al. 2023, arXiv:2306.05734, Framework 1):
 * any rule may be used, because {@link DpHypoTuner} projects whatever density it proposes into
 * [c, C]·prior before sampling, and the privacy bound depends on those bounds only.
 */
public interface AdaptiveRule {
    /** The rule's name, reported with the result. */
    String name();

    /**
     * A fresh state for one tuning run over a grid.
     *
     * @param coordinates each grid candidate's position in the unit cube (see {@link HyperparameterSpace#unitCoordinates})
     * @param prior       the prior probability of each grid candidate
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
     * @param index grid index
     * @param score the (noisy) score, higher is better
     */
    record Observation(int index, double score) {
    }
}
