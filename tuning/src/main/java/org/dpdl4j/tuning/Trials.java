package org.dpdl4j.tuning;

import org.dpdl4j.release.PrivacyLedger;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.dpdl4j.accounting.PointwiseMaxEvent;
import org.dpdl4j.accounting.PrivacyEvent;

/** What every tuner does with trials and their events, written once (static helpers; not instantiable). */
public final class Trials {
    private Trials() {
    }

    /**
     * The event of one run on a candidate drawn from the space, whichever it is: the single event if every candidate
     * costs the same, else the pointwise maximum of the distinct events (Koskela &amp; Kulkarni, "Practical
     * Differentially Private Hyperparameter Tuning with Subsampling", NeurIPS 2023, arXiv:2301.11989, Lemma 9).
     *
     * @param space   the space whose candidates are enumerated (at most {@value HyperparameterSpace#MAX_CANDIDATES})
     * @param eventOf a candidate's event
     * @return the single event, or a {@link PointwiseMaxEvent} of the distinct events in enumeration order
     * @throws IllegalStateException    if the space holds more than {@value HyperparameterSpace#MAX_CANDIDATES}
     *                                  candidates
     * @throws IllegalArgumentException if {@code eventOf} rejects a candidate
     */
    public static PrivacyEvent worstCase(HyperparameterSpace space, Function<Candidate, PrivacyEvent> eventOf) {
        Set<PrivacyEvent> distinct = new LinkedHashSet<>();
        for (Candidate c : space.candidates()) {
            distinct.add(eventOf.apply(c));
        }
        return distinct.size() == 1 ? distinct.iterator().next() : new PointwiseMaxEvent(List.copyOf(distinct));
    }

    /**
     * Q's event uniformly over the space ({@link #worstCase} of Q's per-candidate events): the base of random search.
     *
     * @param space the space the tuner draws from
     * @param mechanism the base mechanism Q
     * @return an event that bounds one run of Q on any candidate of the space
     * @throws IllegalStateException    as {@link #worstCase}
     * @throws IllegalArgumentException if Q rejects a candidate
     */
    public static PrivacyEvent baseEvent(HyperparameterSpace space, TrainingMechanism mechanism) {
        return worstCase(space, mechanism::event);
    }

    /**
     * A final run's event ({@link #worstCase} of each candidate's DP-SGD event on the whole training split).
     *
     * @param space    the space the final candidate is chosen from
     * @param template the mechanism whose {@link RetrainableMechanism#trainingEvent} is charged
     * @return an event that bounds one training run (no score) on any candidate of the space
     * @throws IllegalStateException    as {@link #worstCase}
     * @throws IllegalArgumentException if the mechanism rejects a candidate
     */
    public static PrivacyEvent finalRunEvent(HyperparameterSpace space, RetrainableMechanism template) {
        return worstCase(space, template::trainingEvent);
    }

    /**
     * Q as a {@link RetrainableMechanism}, for the tuners that train on data of their own choosing.
     *
     * @param tuner the tuner's name, for the message
     * @throws IllegalArgumentException if Q is not one
     */
    static RetrainableMechanism retrainable(TrainingMechanism mechanism, String tuner) {
        if (mechanism instanceof RetrainableMechanism r) {
            return r;
        }
        throw new IllegalArgumentException(tuner + " trains Q on data of its own choosing, so Q must be a RetrainableMechanism "
                + "(such as DpSgdMechanism), got " + (mechanism == null ? "null" : mechanism.getClass().getName()));
    }

    /** The release note for a space whose candidates differ in cost. */
    static String pointwiseMaxNote(PointwiseMaxEvent m) {
        return "candidates differ in privacy cost (" + m.events().size() + " distinct events): one run is charged the "
                + "pointwise maximum of their RDP curves (Koskela & Kulkarni 2023, arXiv:2301.11989, Lemma 9)";
    }

    /**
     * One trial as every tuner runs it: recorded in the ledger under {@code covering} before it starts
     * (so a crash mid-trial is still on file), run, and turned into a failed result (score −∞) if Q throws.
     */
    static TrialResult trial(TrainingMechanism mechanism, Candidate c, long trialSeed, int index, PrivacyLedger ledger, Long covering,
                             TuningListener listener) {
        if (ledger != null) {
            ledger.chargeOrRecord("trial " + (index + 1) + ": " + c, mechanism.event(c), covering);
        }
        listener.onTrialStart(index, c);
        long start = System.nanoTime();
        TrialResult r;
        try {
            r = mechanism.run(c, trialSeed, listener, index).withIndex(index);
        } catch (RuntimeException e) {
            r = new TrialResult(index, c, null, Double.NEGATIVE_INFINITY, mechanism.event(c), (System.nanoTime() - start) / 1e9,
                    e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        listener.onTrialEnd(r);
        return r;
    }

    /**
     * Runs independent tasks on up to {@code threads} daemon threads (stopped before returning) and returns their
     * results in the tasks' order, so that what a tuning computes never depends on how many run at once.
     *
     * @throws RuntimeException the first failed task's exception, as thrown
     */
    static <T> List<T> inParallel(int threads, List<Callable<T>> tasks) {
        List<T> results = new ArrayList<>();
        if (tasks.isEmpty()) {
            return results;
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(threads, tasks.size())), r -> {
            Thread t = new Thread(r, "dpdl4j-trial");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (Callable<T> task : tasks) {
                futures.add(pool.submit(task));
            }
            for (Future<T> f : futures) {
                results.add(f.get());
            }
            return results;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("tuning interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        } finally {
            pool.shutdownNow();
        }
    }
}
