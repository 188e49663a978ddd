package org.dpdl4j.tuning;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.SubsampledTuningEvent;

/**
 * What {@link SubsampledTuner} did: {@link #release()} is what its event covers (the tuned and the
 * transferred candidate, the final model); {@link #operatorRecord()} holds the rest (|X₁|, the realised K,
 * the trials on X₁, sizes and timings), which the guarantee does not cover.
 *
 * @param tuning        the inner tuner's result on the subset X₁ (its K and trials are operator-only)
 * @param tuned         the winning candidate, optimiser and learning rate explicit
 * @param transferred   the candidate the final run used, after extrapolation
 * @param extrapolation the extrapolation rule's name
 * @param model         the final model
 * @param variant       which data the final run trained on
 * @param tuneFraction  q_tune ∈ (0, 1), the Poisson sampling rate of X₁
 * @param tuneSetSize   |X₁| in examples, &gt;= 0 (a noisy count of the data: operator-only)
 * @param tuneTrainSize m, the examples each tuning run trained on (X₁ minus its validation split; operator-only)
 * @param finalSetSize  n, the examples the final run trained on (operator-only)
 * @param event         the whole procedure's event (tuning on X₁ and the final run)
 * @param baselineEvent the same search run on all the data (Papernot–Steinke, no final run)
 * @param compute       gradient evaluations and wall time of both phases, and the baseline's expected cost
 * @param notes         data-independent statements for the release
 * @param operatorNotes statements that depend on the data (sizes): operator-only
 */
public record SubsampledTuningResult(TuningResult tuning, Candidate tuned, Candidate transferred, String extrapolation,
                                     Model model, SubsampledTuningEvent.Variant variant, double tuneFraction,
                                     int tuneSetSize, int tuneTrainSize, int finalSetSize, PrivacyEvent event,
                                     PrivacyEvent baselineEvent, Compute compute, List<String> notes, List<String> operatorNotes)
        implements TuningOutcome {
    /**
     * Copies the notes.
     *
     * @param tuning        the inner tuner's result on the subset X₁ (its K and trials are operator-only)
     * @param tuned         the winning candidate, optimiser and learning rate explicit
     * @param transferred   the candidate the final run used, after extrapolation
     * @param extrapolation the extrapolation rule's name
     * @param model         the final model
     * @param variant       which data the final run trained on
     * @param tuneFraction  q_tune ∈ (0, 1), the Poisson sampling rate of X₁
     * @param tuneSetSize   |X₁| in examples, &gt;= 0 (a noisy count of the data: operator-only)
     * @param tuneTrainSize m, the examples each tuning run trained on (X₁ minus its validation split; operator-only)
     * @param finalSetSize  n, the examples the final run trained on (operator-only)
     * @param event         the whole procedure's event (tuning on X₁ and the final run)
     * @param baselineEvent the same search run on all the data (Papernot–Steinke, no final run)
     * @param compute       gradient evaluations and wall time of both phases, and the baseline's expected cost
     * @param notes         data-independent statements for the release (no null elements)
     * @param operatorNotes statements that depend on the data (sizes): operator-only (no null elements)
     * @throws NullPointerException if a list of notes is null or holds null
     */
    public SubsampledTuningResult {
        notes = List.copyOf(notes);
        operatorNotes = List.copyOf(operatorNotes);
    }

    /**
     * What {@link #event()} covers: the tuned candidate (as {@code best}), the transferred candidate the final
     * model was trained with ({@code final_candidate}), the extrapolation rule and the final model.
     *
     * @return the release: {@code tuned} as the candidate, no score, the final model, {@link #event()}, K hidden, and
     *         the facts {@code final_candidate} and {@code extrapolation}
     */
    @Override
    public Release release() {
        Map<String, Object> facts = Map.of("final_candidate", transferred.toMap(), "extrapolation", extrapolation);
        return new Release(tuned, null, model, event, null, List.of(), facts, notes);
    }

    /**
     * |X₁|, the split sizes, the inner tuning's K and trials, and the compute: not covered by ε.
     *
     * @return the operator record: the inner tuning's facts, then {@code tune_set_size}, {@code tune_train_size},
     *         {@code final_set_size} (examples), the gradient counts and the phases' times (seconds); the inner
     *         tuning's trials; its operator notes followed by this procedure's
     */
    @Override
    public OperatorRecord operatorRecord() {
        Map<String, Object> facts = new LinkedHashMap<>(tuning.operatorRecord().facts());
        facts.put("tune_set_size", tuneSetSize);
        facts.put("tune_train_size", tuneTrainSize);
        facts.put("final_set_size", finalSetSize);
        facts.put("tuning_gradients", compute.tuningGradients());
        facts.put("final_gradients", compute.finalGradients());
        facts.put("baseline_gradients_expected", compute.baselineGradients());
        facts.put("gradient_ratio", compute.gradientRatio());
        facts.put("tuning_seconds", compute.tuningSeconds());
        facts.put("final_seconds", compute.finalSeconds());
        List<String> all = new java.util.ArrayList<>(tuning.operatorNotes());
        all.addAll(operatorNotes);
        return new OperatorRecord(facts, tuning.trials(), all);
    }

    /**
     * Compute of a subsampled tuning run (Koskela &amp; Kulkarni, Practical Differentially Private Hyperparameter Tuning
     * with Subsampling, NeurIPS 2023, arXiv:2301.11989, Section 3.4). Gradient evaluations are expected
     * counts, q·(training-set size)·T per run, summed over the runs made: the realised batch sizes are
     * private.
     *
     * @param tuningGradients   expected per-example gradient evaluations of the K tuning runs, &gt;= 0
     * @param tuningSeconds     wall time of the tuning phase, in seconds
     * @param finalGradients    expected per-example gradient evaluations of the final run, &gt;= 0
     * @param finalSeconds      wall time of the final run, in seconds
     * @param baselineGradients E[K] times the mean cost of one run on the full training split: the
     *                          baseline's expected gradient evaluations (μ·n·E in Section 3.4); NaN when the inner
     *                          tuner is neither a {@link RandomSearchTuner} nor a {@link DpHypoTuner}
     */
    public record Compute(double tuningGradients, double tuningSeconds, double finalGradients, double finalSeconds,
                          double baselineGradients) {
        /**
         * Baseline gradient evaluations over ours: how many times cheaper subsampled tuning is.
         *
         * @return {@code baselineGradients / (tuningGradients + finalGradients)}; NaN when the baseline is NaN
         */
        public double gradientRatio() {
            return baselineGradients / (tuningGradients + finalGradients);
        }
    }
}
