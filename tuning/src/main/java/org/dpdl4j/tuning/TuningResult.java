package org.dpdl4j.tuning;

import java.util.List;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RepetitionDistribution;

/**
 * What a tuning run releases, and what it cost.
 *
 * @param best         the best trial (highest score, the earliest on ties), or null when K = 0
 * @param candidate    the best trial's candidate, or the data-independent default when K = 0
 * @param trials       every trial in index order — not covered by {@code event} unless
 *                     {@code trialsRevealed}: only the best is released by random search
 * @param repetitions  the realised K
 * @param distribution the distribution K was drawn from
 * @param baseEvent    the event of one run of Q (the pointwise max over candidates when they differ)
 * @param event        the whole tuning run's event: repeat-and-select of {@code baseEvent}, or the
 *                     composition of every trial's event when {@code trialsRevealed}
 * @param trialsRevealed whether every trial's outcome is released (then {@code event} is their composition)
 * @param notes        statements the report should carry (which theorem, K = 0, privacy-affecting axes)
 */
public record TuningResult(TrialResult best, Candidate candidate, List<TrialResult> trials, long repetitions,
                           RepetitionDistribution distribution, PrivacyEvent baseEvent, PrivacyEvent event,
                           boolean trialsRevealed, List<String> notes) {
    /** Copies the lists. */
    public TuningResult {
        trials = List.copyOf(trials);
        notes = List.copyOf(notes);
    }
}
