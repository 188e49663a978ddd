package org.dpdl4j.tuning;

import org.dpdl4j.accounting.PrivacyEvent;

/**
 * What every {@link Tuner} returns: the event it was charged, what that event covers ({@link #release()}) and what
 * only the operator may see ({@link #operatorRecord()}).
 */
public interface TuningOutcome {
    /**
     * The whole procedure's event, known before it ran (it does not depend on the data).
     *
     * @return the event the procedure was charged; an accountant turns it into (ε, δ)
     */
    PrivacyEvent event();

    /**
     * Exactly what {@link #event()} covers.
     *
     * @return the released outputs (chosen candidate, score, model and facts), never null
     */
    Release release();

    /**
     * Everything else the procedure saw: not covered by ε, never to be published.
     *
     * @return the operator-only record (realised K, trials, sizes, timings, data-dependent notes), never null
     */
    OperatorRecord operatorRecord();

    /**
     * The ledger charge that paid for this outcome: the covering charge the tuner was given, or the one it made itself
     * once it knew what it would release (a search that reveals its K trials charges their composition after drawing K).
     * A release of the outcome is bound to this charge ({@code PrivacyLedger.recordRelease}).
     *
     * @return the charge's sequence number in the ledger the tuner was given, or null when it was given none (the
     *         default, for tuners that do not say)
     */
    default Long ledgerCharge() {
        return null;
    }
}
