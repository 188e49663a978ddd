package org.dpdl4j.tuning;

import org.dpdl4j.release.PrivacyLedger;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.PointwiseMaxEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.accounting.RepeatAndSelectEvent;
import org.dpdl4j.accounting.RepetitionDistribution;

/**
 * Papernot–Steinke random search (Papernot &amp; Steinke, Hyperparameter Tuning with Renyi Differential
 * Privacy, ICLR 2022, arXiv:2110.03620, Section 3): draw K from a data-independent distribution, run the
 * base mechanism Q K times with candidates drawn from the space's prior, and release only the best run.
 * Its event is {@link RepeatAndSelectEvent}(Q's event, distribution of K), which {@link RdpAccountant} bounds by
 * Theorem 6 of that paper for Poisson K and Theorem 2 for truncated negative binomial K (composition for a fixed K,
 * and Lemma 22 on top for a truncated distribution); when candidates differ in σ, q
 * or T, Q's event is the pointwise maximum over all candidates of the space (Koskela &amp; Kulkarni,
 * Practical Differentially Private Hyperparameter Tuning with Subsampling, NeurIPS 2023, arXiv:2301.11989,
 * Lemma 9). The bound covers the best run with K hidden: {@link TuningResult#release()} holds exactly
 * that, and K with the other trials stays in {@link TuningResult#operatorRecord()}.
 *
 * <p>K, every candidate and every trial's seed are drawn up front from one seeded generator, so the
 * result for a seed does not depend on the number of threads. A trial that throws counts as a run
 * with score −∞ (its outcome is "failed", ranked last), and tuning goes on.
 *
 * <p>With {@code revealTrials} K and every trial's outcome are released: K is drawn first (independently
 * of the data), the composition of the K drawn runs is charged, and only then do the runs start.
 */
public final class RandomSearchTuner implements Tuner<TuningResult> {
    private final RepetitionDistribution repetitions;
    private final long seed;
    private final int threads;
    private final boolean revealTrials;

    /**
     * A random search tuner; nothing runs until {@link #tune}.
     *
     * @param repetitions  the distribution of K (data-independent)
     * @param seed         seeds K, the candidates and each trial's seed; keep it secret when trials
     *                     use it for their noise
     * @param threads      trials run in parallel on this many threads (≥ 1)
     * @param revealTrials release K and every trial (charged as the composition of the K runs) instead of the best only
     * @throws IllegalArgumentException if threads &lt; 1
     * @throws NullPointerException     if {@code repetitions} is null
     */
    public RandomSearchTuner(RepetitionDistribution repetitions, long seed, int threads, boolean revealTrials) {
        this.repetitions = Objects.requireNonNull(repetitions, "repetitions");
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        this.seed = seed;
        this.threads = threads;
        this.revealTrials = revealTrials;
    }

    /**
     * The distribution of K.
     *
     * @return the distribution the number of runs is drawn from
     */
    public RepetitionDistribution repetitions() {
        return repetitions;
    }


    /**
     * The event of the whole tuning run when only the best is released.
     *
     * @param space the space candidates are drawn from
     * @param mechanism the base mechanism Q
     * @return {@link RepeatAndSelectEvent}({@link Trials#baseEvent}, distribution of K)
     * @throws IllegalStateException    if this tuner reveals every trial (the cost then depends on the
     *                                  realised K and is known only after the draw), or the space holds more than
     *                                  {@value HyperparameterSpace#MAX_CANDIDATES} candidates
     * @throws IllegalArgumentException if Q rejects a candidate of the space
     */
    @Override
    public PrivacyEvent event(HyperparameterSpace space, TrainingMechanism mechanism) {
        if (revealTrials) {
            throw new IllegalStateException("with revealed trials the cost is the composition over the realised K, "
                    + "known only after K is drawn");
        }
        return new RepeatAndSelectEvent(Trials.baseEvent(space, mechanism), repetitions);
    }

    /**
     * Runs random search: draws K, the K candidates and their seeds, charges (or records) the cost, runs the trials
     * on up to {@code threads} threads and keeps the best (highest score, the earliest on ties).
     *
     * @param space    the space candidates are drawn from (by its prior)
     * @param mechanism the base mechanism Q
     * @param ledger   if not null, the tuning cost is charged before any trial runs (all of it: K is
     *                 random, so the bound covers the whole procedure; with revealed trials, the
     *                 composition of the K drawn runs), and each trial is recorded under it before it starts
     * @param covering if not null, a ledger charge that covers this tuning run: it is recorded under it
     * @param listener progress (thread-safe)
     * @return the best trial, its candidate (the space's first when K = 0), every trial, K and the event
     * @throws PrivacyLedger.BudgetExceededException if the ledger's budget does not allow the tuning run
     * @throws java.io.UncheckedIOException                 if the ledger cannot be written (no trial runs unrecorded)
     * @throws IllegalArgumentException             if {@code covering} is given with revealed trials, is not a charge in
     *                                              the ledger, or Q rejects a candidate of the space
     * @throws IllegalStateException                if the drawn K exceeds {@code Integer.MAX_VALUE - 8}, the space
     *                                              holds more than {@value HyperparameterSpace#MAX_CANDIDATES}
     *                                              candidates, or the tuning is interrupted
     */
    @Override
    public TuningResult tune(HyperparameterSpace space, TrainingMechanism mechanism, PrivacyLedger ledger, Long covering,
                             TuningListener listener) {
        if (covering != null && revealTrials) {
            throw new IllegalArgumentException("a tuning run that reveals every trial cannot be covered by a charge "
                    + "made before K is drawn");
        }
        PrivacyEvent base = Trials.baseEvent(space, mechanism);
        List<String> notes = new ArrayList<>();
        List<String> operatorNotes = new ArrayList<>();
        if (base instanceof PointwiseMaxEvent m) {
            notes.add(Trials.pointwiseMaxNote(m));
        }
        SplittableRandom random = new SplittableRandom(seed);
        long k = repetitions.sample(random);
        if (k > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("drew K = " + k + " runs; truncate the distribution");
        }
        List<Candidate> candidates = new ArrayList<>();
        long[] seeds = new long[(int) k];
        for (int i = 0; i < k; i++) {
            candidates.add(space.sample(random));
            seeds[i] = random.nextLong();
        }
        // the candidates are drawn independently of the data, so revealing them costs their own events composed
        PrivacyEvent event = revealTrials
                ? new ComposedEvent(candidates.stream().map(mechanism::event).toList())
                : new RepeatAndSelectEvent(base, repetitions);
        notes.add(revealTrials
                ? "K and every trial are released: charged as the composition of the K runs drawn (K is drawn "
                        + "independently of the data, before any run)"
                : "only the best run is released, with K hidden: charged by " + RdpAccountant.repeatAndSelectBound(repetitions));
        Long tuningCharge = null;
        if (ledger != null) {
            String label = revealTrials ? "random search, K = " + k + " revealed trials" : "random search, K ~ " + repetitions.describe();
            Long entry = charge(ledger, label, event, covering);
            tuningCharge = covering != null ? covering : entry; // trials point at the charge that pays for them
        }
        listener.onStart(k);
        List<java.util.concurrent.Callable<TrialResult>> runs = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            int index = i;
            Long cover = tuningCharge;
            runs.add(() -> Trials.trial(mechanism, candidates.get(index), seeds[index], index, ledger, cover, listener));
        }
        List<TrialResult> trials = Trials.inParallel(threads, runs);
        TrialResult best = best(trials);
        if (k == 0) {
            operatorNotes.add("K = 0 (probability " + String.format("%.3g", repetitions.pmf(0)) + "): no run; the result is the "
                    + "data-independent default candidate and no model");
        }
        return new TuningResult(best, best != null ? best.candidate() : space.first(), trials, k, repetitions, base, event,
                revealTrials, notes, operatorNotes, tuningCharge);
    }

    /** The trial with the highest score, the earliest on ties; null for none. */
    static TrialResult best(List<TrialResult> trials) {
        TrialResult best = null;
        for (TrialResult t : trials) {
            if (best == null || t.score() > best.score()) {
                best = t;
            }
        }
        return best;
    }



    private static Long charge(PrivacyLedger ledger, String label, PrivacyEvent event, Long covering) {
        return ledger.chargeOrRecord(label, event, covering);
    }

}
