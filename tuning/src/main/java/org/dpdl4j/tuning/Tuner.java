package org.dpdl4j.tuning;

import org.dpdl4j.release.PrivacyLedger;
import org.dpdl4j.accounting.PrivacyEvent;

/**
 * A tuning procedure over whole runs of a base mechanism Q that releases one chosen run. Procedures
 * that build on other tuners (such as {@link SubsampledTuner}) take any implementation.
 *
 * @param <R> what a run of the procedure returns
 */
public interface Tuner<R extends TuningOutcome> {
    /**
     * What a whole tuning run costs, known before it starts (independent of the data).
     *
     * @throws IllegalArgumentException if the space holds a candidate Q does not understand, or the procedure needs
     *                                  more of Q than it offers (see {@link RetrainableMechanism})
     */
    PrivacyEvent event(HyperparameterSpace space, TrainingMechanism q);

    /**
     * Runs the procedure.
     *
     * @param ledger   if not null, the cost is written before any run of Q
     * @param covering if not null, the sequence number of a ledger charge that already covers this
     *                 tuning run (the tuning is then recorded under it instead of charged again)
     * @param listener progress (thread-safe)
     * @throws PrivacyLedger.BudgetExceededException if the ledger's budget does not allow it
     * @throws java.io.UncheckedIOException          if the ledger cannot be written (nothing runs unrecorded)
     */
    R tune(HyperparameterSpace space, TrainingMechanism q, PrivacyLedger ledger, Long covering, TuningListener listener);

    /** {@link #tune(HyperparameterSpace, TrainingMechanism, PrivacyLedger, Long, TuningListener)} charging its own cost. */
    default R tune(HyperparameterSpace space, TrainingMechanism q, PrivacyLedger ledger, TuningListener listener) {
        return tune(space, q, ledger, null, listener);
    }
}
