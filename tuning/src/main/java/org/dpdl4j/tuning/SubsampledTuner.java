package org.dpdl4j.tuning;

import org.dpdl4j.release.PrivacyLedger;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.dpdl4j.accounting.SubsampledTuningEvent;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.Splits;
import org.dpdl4j.dpsgd.TrainingResult;

/**
 * Tuning on a random subset (Koskela &amp; Kulkarni, Practical Differentially Private Hyperparameter Tuning
 * with Subsampling, NeurIPS 2023, arXiv:2301.11989, Section 3.1):
 * <ol>
 *   <li>draw X₁ ⊂ X by Poisson sampling with rate q_tune;</li>
 *   <li>run the inner tuner (any {@link Tuner}; Papernot–Steinke random search with Poisson K by
 *       default) with Q = the DP-SGD mechanism on X₁ (its own validation split carved from X₁);</li>
 *   <li>extrapolate the winner with a pluggable {@link Extrapolation};</li>
 *   <li>train the final model on X \ X₁ (variant 1) or X (variant 2), from scratch or warm-started from
 *       the tuned model (Remark 8; covered by both analyses).</li>
 * </ol>
 * The cost is a {@link SubsampledTuningEvent}: variant 1 by Theorem 6, variant 2 by Theorem 4 plus
 * composition. Its final-run part is the pointwise maximum over the space of each candidate's DP-SGD
 * event (Lemma 9), since the chosen candidate may set σ, q or T.
 *
 * <p>Runs keep σ, C, the DP-SGD sampling rate q and T (Section 3.2), so the mechanism must fix q
 * ({@link DpSgdMechanism.Builder#samplingRate} or a {@code sampling_rate} axis, never
 * {@code batch_size}); the score noise on X₁ is fixed in correct-counts to q_tune times the
 * template's, matching X₁'s expected validation size. As everywhere in dpdl4j, dataset sizes are
 * treated as public: the learning rate is scaled by the expected sizes q_tune·(1 − f)·n and
 * (1 − q_tune)·n or n, never by the realised |X₁|; the realised sizes still normalise each DP-SGD
 * run's expected batch, as DP-SGD does with n.
 */
public final class SubsampledTuner implements Tuner<SubsampledTuningResult> {
    private static final String NAME = "subsampled tuning";
    private final Tuner<TuningResult> inner;
    private final double tuneFraction;
    private final SubsampledTuningEvent.Variant variant;
    private final Extrapolation extrapolation;
    private final boolean warmStart;
    private final long seed;
    private final boolean secureRandom;

    /**
     * A subsampled tuner; nothing runs until {@link #tune(HyperparameterSpace, TrainingMechanism, PrivacyLedger, Long,
     * TuningListener)}.
     *
     * @param inner         the tuner run on X₁ (one that releases the best run only: its event must be known in advance)
     * @param tuneFraction  q_tune ∈ (0, 1)
     * @param variant       which data the final run uses
     * @param extrapolation how the winner is transferred
     * @param warmStart     start the final run from the tuned model (when there is one)
     * @param seed          draws X₁ and the final run's seed; keep it secret, or use {@code secureRandom}
     * @param secureRandom  draw X₁ from {@link SecureRandom} instead of the seed
     * @throws IllegalArgumentException if q_tune ∉ (0, 1)
     * @throws NullPointerException     if {@code inner}, {@code variant} or {@code extrapolation} is null
     */
    public SubsampledTuner(Tuner<TuningResult> inner, double tuneFraction, SubsampledTuningEvent.Variant variant, Extrapolation extrapolation,
                           boolean warmStart, long seed, boolean secureRandom) {
        this.inner = Objects.requireNonNull(inner, "inner");
        if (!(tuneFraction > 0 && tuneFraction < 1)) {
            throw new IllegalArgumentException("tune fraction q_tune must be in (0, 1), got " + tuneFraction);
        }
        this.tuneFraction = tuneFraction;
        this.variant = Objects.requireNonNull(variant, "variant");
        this.extrapolation = Objects.requireNonNull(extrapolation, "extrapolation");
        this.warmStart = warmStart;
        this.seed = seed;
        this.secureRandom = secureRandom;
    }

    /**
     * The score noise (correct-counts) the mechanism on X₁ uses: q_tune times the template's.
     *
     * @param template the mechanism over all of X
     * @return q_tune·s, the standard deviation of the noise on X₁'s released correct-count, in correct validation
     *         examples (0 when the template's score is free)
     */
    public double subsetScoreNoise(RetrainableMechanism template) {
        return template.scoreNoiseCount() * tuneFraction;
    }

    /**
     * The whole procedure's event, known before X₁ is drawn: the inner tuner's event for Q with the subset's score
     * noise, the final run's event ({@link Trials#finalRunEvent}), q_tune and the variant.
     *
     * @param space the space the inner tuner draws from and the final candidate comes from
     * @param mechanism the template Q over all of X: a {@link RetrainableMechanism}
     * @return the {@link SubsampledTuningEvent} of the whole procedure
     * @throws IllegalArgumentException if Q is not retrainable, or the DP-SGD sampling rate is not fixed (see the class comment)
     * @throws IllegalStateException    if the inner tuner's cost is not known in advance (it reveals its trials), or the
     *                                  space holds more than {@value HyperparameterSpace#MAX_CANDIDATES} candidates
     */
    @Override
    public SubsampledTuningEvent event(HyperparameterSpace space, TrainingMechanism mechanism) {
        RetrainableMechanism template = Trials.retrainable(mechanism, NAME);
        checkFixedRate(space, template);
        return new SubsampledTuningEvent(inner.event(space, template.withScoreNoiseCount(subsetScoreNoise(template))), Trials.finalRunEvent(space, template), tuneFraction, variant);
    }


    /**
     * Runs the procedure on the template's private data.
     *
     * @param space    the space the inner tuner draws from
     * @param mechanism the template Q over all of X: a {@link RetrainableMechanism}
     * @param ledger   if not null, the whole event is charged before anything runs (or recorded under
     *                 {@code covering}); the inner tuning and the final run are recorded under that charge before they start
     * @param covering if not null, a ledger charge that covers this procedure: it is recorded under it
     * @param listener progress
     * @return the tuned and transferred candidates, the final model, the sizes, the compute and the event
     * @throws PrivacyLedger.BudgetExceededException if the budget does not allow the procedure
     * @throws IllegalArgumentException             if Q is not retrainable, the sampling rate is not fixed, or X₁ is too
     *                                              small to split
     * @throws IllegalStateException                as {@link #event}, or if a check that what runs is what was charged
     *                                              fails (a cost that depends on the data's size, an extrapolation
     *                                              that changes the cost)
     */
    @Override
    public SubsampledTuningResult tune(HyperparameterSpace space, TrainingMechanism mechanism, PrivacyLedger ledger, Long covering,
                                       TuningListener listener) {
        return tune(space, mechanism, ledger, covering, listener, java.util.function.UnaryOperator.identity());
    }

    /**
     * {@link #tune(HyperparameterSpace, TrainingMechanism, PrivacyLedger, Long, TuningListener)} with the mechanism on X₁
     * wrapped before the inner tuner runs it (for example by a {@link CheckpointedMechanism}, so that a resumed tuning
     * re-runs no finished trial).
     *
     * @param space    the space the inner tuner draws from
     * @param mechanism the template Q over all of X: a {@link RetrainableMechanism}
     * @param ledger   if not null, the whole event is charged before anything runs (or recorded under
     *                 {@code covering}); the inner tuning and the final run are recorded under that charge before they start
     * @param covering if not null, a ledger charge that covers this procedure: it is recorded under it
     * @param listener progress
     * @param trials   wraps the mechanism on X₁ before the inner tuner runs it ({@code UnaryOperator.identity()} for
     *                 none); the wrapper must not change its events
     * @return the tuned and transferred candidates, the final model, the sizes, the compute and the event
     * @throws PrivacyLedger.BudgetExceededException if the budget does not allow the procedure
     * @throws java.io.UncheckedIOException          if the ledger cannot be written
     * @throws IllegalArgumentException             if Q is not retrainable, the sampling rate is not fixed, or X₁ is too
     *                                              small to split
     * @throws IllegalStateException                as {@link #event}, or if a check that what runs is what was charged
     *                                              fails (a cost that depends on the data's size, an extrapolation
     *                                              that changes the cost, a final run that cost other than charged)
     */
    public SubsampledTuningResult tune(HyperparameterSpace space, TrainingMechanism mechanism, PrivacyLedger ledger, Long covering,
                                       TuningListener listener, java.util.function.UnaryOperator<TrainingMechanism> trials) {
        RetrainableMechanism template = Trials.retrainable(mechanism, NAME);
        SubsampledTuningEvent event = event(space, template);
        List<String> notes = new ArrayList<>();
        Long charge = null;
        if (ledger != null) {
            long entry = ledger.chargeOrRecord("subsampled tuning, variant " + variant.number() + ", q_tune = " + tuneFraction, event,
                    covering);
            charge = covering != null ? covering : entry;
        }
        ExampleSource x = template.privateData();
        RandomGenerator coins = secureRandom ? new SecureRandom() : new SplittableRandom(seed);
        int[][] part = Splits.poisson(x.size(), tuneFraction, coins); // X1 and X \ X1 as index sets of X
        long finalSeed = coins.nextLong();
        RetrainableMechanism onSubset = template.withData(x.subset(part[0]), subsetScoreNoise(template));
        RetrainableMechanism charged = template.withScoreNoiseCount(subsetScoreNoise(template));
        for (Candidate c : space.candidates()) { // defensive: what runs must be what was charged
            if (!onSubset.event(c).equals(charged.event(c))) {
                throw new IllegalStateException("the cost of " + c + " depends on the data's size");
            }
        }
        long start = System.nanoTime();
        TuningResult tuning = inner.tune(space, trials.apply(onSubset), ledger, charge, listener);
        double tuningSeconds = (System.nanoTime() - start) / 1e9;
        double tuningGradients = 0;
        for (TrialResult t : tuning.trials()) {
            tuningGradients += onSubset.expectedGradients(t.candidate());
        }
        Candidate tuned = template.explicit(tuning.candidate());
        int m = onSubset.train().size();
        ExampleSource finalData = variant == SubsampledTuningEvent.Variant.DISJOINT ? x.subset(part[1]) : x;
        // expected sizes from the public n: the transfer must not depend on the realised |X1|
        double expectedTune = tuneFraction * (1 - template.validationFraction()) * x.size();
        double expectedFinal = (variant == SubsampledTuningEvent.Variant.DISJOINT ? 1 - tuneFraction : 1) * x.size();
        Candidate transferred = extrapolation.transfer(tuned, expectedTune, expectedFinal);
        if (!template.trainingEvent(transferred).equals(template.trainingEvent(tuned))) {
            throw new IllegalStateException("extrapolation '" + extrapolation.name() + "' changed the privacy cost of " + tuned);
        }
        if (ledger != null) {
            ledger.chargeOrRecord("final run (variant " + variant.number() + "): " + transferred, template.trainingEvent(transferred),
                    charge);
        }
        listener.onFinalRunStart(transferred);
        boolean warm = warmStart && tuning.best() != null && tuning.best().model() != null;
        TrainingResult fin = template.train(transferred, finalData, finalSeed, warm ? tuning.best().model() : null,
                listener::onFinalRunStep);
        if (!fin.event().equals(template.trainingEvent(transferred))) { // what ran must be what was charged
            throw new IllegalStateException("the final run cost " + fin.event() + ", not the charged " + template.trainingEvent(transferred));
        }
        double baselinePerRun = 0;
        List<Candidate> all = space.candidates();
        for (Candidate c : all) {
            baselinePerRun += template.expectedGradients(c) / all.size();
        }
        SubsampledTuningResult.Compute compute = new SubsampledTuningResult.Compute(tuningGradients, tuningSeconds,
                fin.expectedExamples(), fin.seconds(), inner instanceof RandomSearchTuner r ? r.repetitions().mean() * baselinePerRun
                        : inner instanceof DpHypoTuner d ? d.repetitions().mean() * baselinePerRun
                        : Double.NaN);
        notes.addAll(tuning.notes());
        notes.add("tuned on a Poisson subset X1 with q_tune = " + tuneFraction + "; final run on "
                + (variant == SubsampledTuningEvent.Variant.DISJOINT
                ? "X \\ X1 (variant 1, Koskela & Kulkarni 2023, arXiv:2301.11989, Theorem 6)"
                : "all of X (variant 2, Koskela & Kulkarni 2023, arXiv:2301.11989, Theorem 4 + composition)")
                + (warmStart ? ", warm-started from the tuned model when there is one" : ""));
        notes.add(String.format("extrapolation: %s (expected sizes m = %.0f, n = %.0f from the public dataset size)",
                extrapolation.name(), expectedTune, expectedFinal));
        List<String> operatorNotes = new ArrayList<>();
        operatorNotes.add("|X1| = " + part[0].length + ", m = " + m + ", final run on " + finalData.size() + " examples"
                + (warm ? ", warm-started" : ""));
        if (tuning.best() == null) {
            operatorNotes.add("K = 0: the final run used the data-independent default candidate");
        }
        return new SubsampledTuningResult(tuning, tuned, transferred, extrapolation.name(), fin.network(), variant, tuneFraction,
                part[0].length, m, finalData.size(), event, inner.event(space, template), compute, notes, operatorNotes);
    }

    private static void checkFixedRate(HyperparameterSpace space, RetrainableMechanism template) {
        boolean batchAxis = space.axes().stream().anyMatch(a -> a.name().equals("batch_size"));
        boolean rateAxis = space.axes().stream().anyMatch(a -> a.name().equals("sampling_rate"));
        if (batchAxis || !rateAxis && !template.hasFixedSamplingRate()) {
            throw new IllegalArgumentException("subsampled tuning keeps the DP-SGD sampling rate q fixed between the subset and "
                    + "the final data (Koskela & Kulkarni 2023, Sec. 3.2): set the mechanism's samplingRate(q) or tune a 'sampling_rate' axis, "
                    + "not 'batch_size'");
        }
    }
}
