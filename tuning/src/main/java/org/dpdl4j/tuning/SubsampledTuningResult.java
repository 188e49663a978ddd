package org.dpdl4j.tuning;

import java.util.List;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.SubsampledTuningEvent;

/**
 * What {@link SubsampledTuner} releases and what it cost.
 *
 * @param tuning        the inner tuner's result on the subset X₁ (its trials are not released)
 * @param tuned         the winning candidate, optimiser and learning rate explicit
 * @param transferred   the candidate the final run used, after extrapolation
 * @param extrapolation the extrapolation rule's name
 * @param model         the final model
 * @param variant       which data the final run trained on
 * @param tuneFraction  q_tune
 * @param tuneSetSize   |X₁|
 * @param tuneTrainSize m, the examples each tuning run trained on (X₁ minus its validation split)
 * @param finalSetSize  n, the examples the final run trained on
 * @param event         the whole procedure's event (tuning on X₁ and the final run)
 * @param baselineEvent the same search run on all the data (Papernot–Steinke, no final run)
 * @param compute       gradient evaluations and wall time of both phases, and the baseline's expected cost
 * @param notes         statements the report should carry
 */
public record SubsampledTuningResult(TuningResult tuning, Candidate tuned, Candidate transferred, String extrapolation,
                                     MultiLayerNetwork model, SubsampledTuningEvent.Variant variant, double tuneFraction,
                                     int tuneSetSize, int tuneTrainSize, int finalSetSize, PrivacyEvent event,
                                     PrivacyEvent baselineEvent, Compute compute, List<String> notes) {
    /** Copies the notes. */
    public SubsampledTuningResult {
        notes = List.copyOf(notes);
    }

    /**
     * Compute of a subsampled tuning run (seed 003 Section 3.4). Gradient evaluations are expected
     * counts, q·(training-set size)·T per run, summed over the runs made: the realised batch sizes are
     * private.
     *
     * @param tuningGradients   expected per-example gradient evaluations of the K tuning runs
     * @param tuningSeconds     wall time of the tuning phase
     * @param finalGradients    expected gradient evaluations of the final run
     * @param finalSeconds      wall time of the final run
     * @param baselineGradients E[K] times the mean cost of one run on the full training split: the
     *                          baseline's expected gradient evaluations (seed 003: μ·n·E)
     */
    public record Compute(double tuningGradients, double tuningSeconds, double finalGradients, double finalSeconds,
                          double baselineGradients) {
        /** Baseline gradient evaluations over ours. */
        public double gradientRatio() {
            return baselineGradients / (tuningGradients + finalGradients);
        }
    }
}
