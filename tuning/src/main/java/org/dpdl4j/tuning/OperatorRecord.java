package org.dpdl4j.tuning;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a tuning procedure saw on the private data beyond its {@link Release}: for the person who holds the
 * data, NOT covered by the privacy guarantee, never to be published. It holds the realised number of runs
 * K, every trial's candidate, score, time and failure, and each procedure's own diagnostics (adaptive
 * density ratios, subset sizes, selection-loop iterations, wall-clock times).
 *
 * @param facts  named diagnostics (sizes, counts, times), JSON-ready values
 * @param trials every trial the procedure ran, in run order
 * @param notes  statements that depend on the data (observed ratios, sizes, whether a cap stopped a loop)
 */
public record OperatorRecord(Map<String, Object> facts, List<TrialResult> trials, List<String> notes) {
    /**
     * Copies the collections, keeping the facts' order.
     *
     * @param facts  named diagnostics (sizes, counts, times), JSON-ready values; values may be null
     * @param trials every trial the procedure ran, in run order (no null elements)
     * @param notes  statements that depend on the data (observed ratios, sizes, whether a cap stopped a loop)
     * @throws NullPointerException if a collection is null, or {@code trials} or {@code notes} holds null
     */
    public OperatorRecord {
        facts = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(facts));
        trials = List.copyOf(trials);
        notes = List.copyOf(notes);
    }

    /**
     * A JSON-ready copy: the facts, then {@code trials} (each with index, candidate, score, seconds, failure) and
     * {@code notes}.
     *
     * @return a new, modifiable map in that order
     */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>(facts);
        m.put("trials", trials.stream().map(TrialResult::toMap).toList());
        m.put("notes", notes);
        return m;
    }
}
