package org.dpdl4j.tuning;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RepetitionDistribution;

/**
 * The outcome of a tuning run: what it releases ({@link #release()}) and what only its operator may see
 * ({@link #operatorRecord()}).
 *
 * @param best           the best trial (highest score, the earliest on ties), or null when K = 0
 * @param candidate      the best trial's candidate, or the data-independent default when K = 0
 * @param trials         every trial in index order: operator-only unless {@code trialsRevealed}
 * @param repetitions    the realised K, &gt;= 0: operator-only unless {@code trialsRevealed}
 * @param distribution   the distribution K was drawn from
 * @param baseEvent      the event of one run of Q (the pointwise max over candidates when they differ)
 * @param event          the whole tuning run's event: repeat-and-select of {@code baseEvent} (or its adaptive
 *                       form), or the composition of the realised K runs when {@code trialsRevealed}
 * @param trialsRevealed whether K and every trial's outcome are released (then {@code event} is their composition)
 * @param notes          data-independent statements for the release (which theorem, privacy-affecting axes)
 * @param operatorNotes  statements that depend on the run (K = 0, observed density ratios): operator-only
 * @param ledgerCharge   the ledger charge that paid for the run (the covering one, or the one the tuner made), or null
 *                       without a ledger
 */
public record TuningResult(TrialResult best, Candidate candidate, List<TrialResult> trials, long repetitions,
                           RepetitionDistribution distribution, PrivacyEvent baseEvent, PrivacyEvent event,
                           boolean trialsRevealed, List<String> notes, List<String> operatorNotes, Long ledgerCharge)
        implements TuningOutcome {
    /**
     * Copies the lists (they must not be null, nor hold null elements).
     *
     * @param best           the best trial (highest score, the earliest on ties), or null when K = 0
     * @param candidate      the best trial's candidate, or the data-independent default when K = 0
     * @param trials         every trial in index order: operator-only unless {@code trialsRevealed}
     * @param repetitions    the realised K, &gt;= 0: operator-only unless {@code trialsRevealed}
     * @param distribution   the distribution K was drawn from
     * @param baseEvent      the event of one run of Q (the pointwise max over candidates when they differ)
     * @param event          the whole tuning run's event: repeat-and-select of {@code baseEvent} (or its adaptive
     *                       form), or the composition of the realised K runs when {@code trialsRevealed}
     * @param trialsRevealed whether K and every trial's outcome are released (then {@code event} is their composition)
     * @param notes          data-independent statements for the release (which theorem, privacy-affecting axes)
     * @param operatorNotes  statements that depend on the run (K = 0, observed density ratios): operator-only
     * @param ledgerCharge   the ledger charge that paid for the run (the covering one, or the one the tuner made), or
     *                       null without a ledger
     * @throws NullPointerException if a list is null or holds null
     */
    public TuningResult {
        trials = List.copyOf(trials);
        notes = List.copyOf(notes);
        operatorNotes = List.copyOf(operatorNotes);
    }

    /**
     * Exactly what {@link #event()} covers: the best candidate, its noisy score and model; K and the trials
     * only when they were revealed and charged.
     *
     * @return the release: the best candidate, its score (null when K = 0 or the score is not finite), its model (or
     *         null), {@link #event()}, and K and the trials only when {@code trialsRevealed}
     */
    @Override
    public Release release() {
        Double score = best != null && Double.isFinite(best.score()) ? best.score() : null;
        return new Release(candidate, score, best != null ? best.model() : null, event, trialsRevealed ? repetitions : null,
                trialsRevealed ? trials : List.of(), Map.of(), notes);
    }

    /**
     * The realised K and every trial (candidate, score, time, failure), with the run's own notes: not covered by ε.
     *
     * @return the operator record, with facts {@code repetitions}, {@code best_trial_index} (null when K = 0) and
     *         {@code seconds} (the trials' summed wall-clock time, in seconds)
     */
    @Override
    public OperatorRecord operatorRecord() {
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("repetitions", repetitions);
        facts.put("best_trial_index", best != null ? best.index() : null);
        facts.put("seconds", trials.stream().mapToDouble(TrialResult::seconds).sum());
        return new OperatorRecord(facts, trials, operatorNotes);
    }
}
