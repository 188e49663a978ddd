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
     * @param space the hyperparameter space the procedure draws candidates from
     * @param mechanism the base mechanism Q (one whole training run and its released score)
     * @return the privacy event of the whole procedure
     * @throws IllegalArgumentException if the space holds a candidate Q does not understand, or the procedure needs
     *                                  more of Q than it offers (see {@link RetrainableMechanism})
     */
    PrivacyEvent event(HyperparameterSpace space, TrainingMechanism mechanism);

    /**
     * Runs the procedure.
     *
     * @param space    the hyperparameter space the procedure draws candidates from
     * @param mechanism the base mechanism Q
     * @param ledger   if not null, the cost is written before any run of Q; may be null (nothing is recorded)
     * @param covering if not null, the sequence number of a ledger charge that already covers this
     *                 tuning run (the tuning is then recorded under it instead of charged again); may be null
     * @param listener progress (thread-safe; {@link TuningListener#NONE} for none)
     * @return the procedure's outcome: its event, its release and its operator record
     * @throws PrivacyLedger.BudgetExceededException if the ledger's budget does not allow it
     * @throws java.io.UncheckedIOException          if the ledger cannot be written (nothing runs unrecorded)
     * @throws IllegalArgumentException              if {@code covering} is not a charge in the ledger, or as
     *                                               {@link #event(HyperparameterSpace, TrainingMechanism)}
     */
    R tune(HyperparameterSpace space, TrainingMechanism mechanism, PrivacyLedger ledger, Long covering, TuningListener listener);

    /**
     * {@link #tune(HyperparameterSpace, TrainingMechanism, PrivacyLedger, Long, TuningListener)} charging its own cost
     * (no covering charge).
     *
     * @param space    the hyperparameter space the procedure draws candidates from
     * @param mechanism the base mechanism Q
     * @param ledger   if not null, the cost is charged to it before any run of Q; may be null
     * @param listener progress (thread-safe; {@link TuningListener#NONE} for none)
     * @return the procedure's outcome: its event, its release and its operator record
     * @throws PrivacyLedger.BudgetExceededException if the ledger's budget does not allow it
     * @throws java.io.UncheckedIOException          if the ledger cannot be written
     */
    default R tune(HyperparameterSpace space, TrainingMechanism mechanism, PrivacyLedger ledger, TuningListener listener) {
        return tune(space, mechanism, ledger, null, listener);
    }
}
