package org.dpdl4j.tuning;

import java.util.LinkedHashMap;
import java.util.Map;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.accounting.PrivacyEvent;

/**
 * The outcome of one run of the base mechanism Q.
 *
 * @param index     the trial's position in the tuning run, 0-based
 * @param candidate its hyperparameters
 * @param model     the trained network (null for mechanisms that train none, or a failed run)
 * @param score     its (possibly noisy) score, higher is better; −∞ for a failed run
 * @param event     what the run cost
 * @param seconds   wall-clock time of the run, in seconds, &gt;= 0
 * @param failure   why the run failed (the exception's simple class name and message), or null
 */
public record TrialResult(int index, Candidate candidate, Model model, double score, PrivacyEvent event,
                          double seconds, String failure) {

    /**
     * Whether the run threw instead of returning a model and a score.
     *
     * @return true if {@code failure} is not null
     */
    public boolean failed() {
        return failure != null;
    }

    /**
     * The same result with another index.
     *
     * @param i the trial's position in the tuning run, 0-based
     * @return a copy with index {@code i} and every other component unchanged
     */
    public TrialResult withIndex(int i) {
        return new TrialResult(i, candidate, model, score, event, seconds, failure);
    }

    /**
     * What {@code --reveal-trials} releases of this trial: its candidate, its score (null if none) and whether
     * it failed; never its time, index or failure message, which depend on the data beyond the score.
     *
     * @return a new, JSON-ready map with keys {@code candidate}, {@code score} and {@code failed}, in that order
     */
    public Map<String, Object> releaseMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("candidate", candidate.toMap());
        m.put("score", Double.isFinite(score) ? score : null);
        m.put("failed", failed());
        return m;
    }

    /**
     * The operator's summary (no model): index, candidate, score, seconds and failure message; not covered by ε.
     *
     * @return a new, JSON-ready map with keys {@code index}, {@code candidate}, {@code score} (null unless finite),
     *         {@code seconds} and, for a failed run only, {@code failure}
     */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("index", index);
        m.put("candidate", candidate.toMap());
        m.put("score", Double.isFinite(score) ? score : null);
        m.put("seconds", seconds);
        if (failure != null) {
            m.put("failure", failure);
        }
        return m;
    }
}
