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
}
