package org.dpdl4j.tuning;

import org.dpdl4j.accounting.PrivacyEvent;

/**
 * What every {@link Tuner} returns: the event it was charged, what that event covers ({@link #release()}) and what
 * only the operator may see ({@link #operatorRecord()}).
 */
public interface TuningOutcome {
    /** The whole procedure's event (known before it ran). */
    PrivacyEvent event();

    /** Exactly what {@link #event()} covers. */
    Release release();

    /** Everything else the procedure saw: not covered by ε, never to be published. */
    OperatorRecord operatorRecord();
}
