package org.dpdl4j.tuning;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.accounting.PrivacyEvent;

/**
 * Exactly what a tuning procedure's privacy guarantee covers: the chosen candidate, its (noisy) score,
 * the model, and the event that an accountant turns into (ε, δ). Everything else the procedure saw (the
 * realised number of runs K, the other trials, adaptive densities, subset sizes, timings) is in its
 * {@link OperatorRecord}, which the guarantee does not cover and which must not be published.
 *
 * <p>Papernot &amp; Steinke (Hyperparameter Tuning with Renyi Differential Privacy, ICLR 2022,
 * arXiv:2110.03620, Theorems 2 and 6) and Wang et al. (DP-HyPO, NeurIPS 2023, arXiv:2306.05734,
 * Theorem 1) bound the best run's output with K hidden: released together with K it is a best-of-k for
 * a known k, which those bounds do not cover. Only when every trial is revealed (then the event is the
 * composition of the realised K runs, valid because K is drawn independently of the data) do K and the
 * trials belong here.
 *
 * @param candidate   the candidate of the released model (the data-independent default when no run was made)
 * @param score       its released (noisy) score, or null when there is none
 * @param model       the released model, or null
 * @param event       what the whole procedure cost
 * @param repetitions the realised K (&gt;= 0), or null unless every trial is revealed
 * @param trials      every trial when revealed (candidate, score, failed), else empty
 * @param facts       further covered outputs of the procedure (for example the transferred candidate)
 * @param notes       data-independent statements (which theorem charged the event, and why)
 */
public record Release(Candidate candidate, Double score, Model model, PrivacyEvent event, Long repetitions,
                      List<TrialResult> trials, Map<String, Object> facts, List<String> notes) {
    /**
     * Copies the collections (they must not be null, nor hold null keys, values or elements).
     *
     * @param candidate   the candidate of the released model (the data-independent default when no run was made)
     * @param score       its released (noisy) score, or null when there is none
     * @param model       the released model, or null
     * @param event       what the whole procedure cost
     * @param repetitions the realised K (&gt;= 0), or null unless every trial is revealed
     * @param trials      every trial when revealed (candidate, score, failed), else empty
     * @param facts       further covered outputs of the procedure (for example the transferred candidate)
     * @param notes       data-independent statements (which theorem charged the event, and why)
     * @throws NullPointerException if a collection is null or holds null
     */
    public Release {
        trials = List.copyOf(trials);
        facts = Map.copyOf(facts);
        notes = List.copyOf(notes);
    }

    /**
     * Whether K and every trial are part of the release.
     *
     * @return true if {@code repetitions} is not null
     */
    public boolean trialsRevealed() {
        return repetitions != null;
    }

    /**
     * A JSON-ready summary (no model, no event): {@code best}, {@code best_score}, the facts, and when revealed
     * {@code repetitions}.
     *
     * @return a new map: {@code best} (the candidate's map), {@code best_score} (may be null), the facts in key order,
     *         then {@code repetitions} when the trials are revealed
     */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("best", candidate.toMap());
        m.put("best_score", score);
        new java.util.TreeMap<>(facts).forEach(m::put);
        if (repetitions != null) {
            m.put("repetitions", repetitions);
        }
        return m;
    }

    /**
     * The revealed trials as JSON-ready maps (candidate, score, failed), in run order; empty unless revealed.
     *
     * @return one {@link TrialResult#releaseMap()} per revealed trial, unmodifiable
     */
    public List<Map<String, Object>> trialMaps() {
        return trials.stream().map(TrialResult::releaseMap).toList();
    }
}
