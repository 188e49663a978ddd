package org.dpdl4j.tuning;

import org.dpdl4j.release.PrivacyLedger;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.dpdl4j.accounting.AdaptiveRepeatAndSelectEvent;
import org.dpdl4j.accounting.PointwiseMaxEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.SelfComposedEvent;

/**
 * DP-HyPO (Wang, Gao, Zhang, Su &amp; Shen, DP-HyPO: An Adaptive Private Hyperparameter Optimization
 * Framework, NeurIPS 2023, arXiv:2306.05734, Framework 1 and Algorithm 3): draw K
 * from a data-independent distribution; before each run, project the rule's proposed density onto
 * {c·π⁰ ≤ p ≤ C·π⁰, Σp = 1} ({@link BoundedDensityProjection}), draw a candidate from it, run Q and
 * feed the score back to the rule; release the best run only. The cost is an
 * {@link AdaptiveRepeatAndSelectEvent}, which {@link org.dpdl4j.accounting.RdpAccountant} bounds by the paper's
 * Theorem 1 for truncated negative binomial K (Theorem 2 for a pure-DP base): log(C/c) is the price of adaptivity.
 * Runs are sequential
 * (each density depends on the runs before it). K and the trial seeds are drawn up front from the
 * seed; a run that throws counts with score −∞ and is still charged.
 *
 * <p>The densities handed to the sampler can be observed ({@link #withDensityObserver}) to audit that
 * they stay within the bounds whatever the scores. Each candidate is drawn from a density that depends on
 * earlier noisy scores, so Theorem 1 covers the best run alone: the candidate sequence and the observed
 * density ratios are in the operator record, never in the release. With {@link #withRevealedTrials()} K and
 * every trial are released instead and the cost is the composition of the K drawn runs (each bounded by Q's
 * event uniformly over the space; adaptive composition), not Theorem 1.
 */
public final class DpHypoTuner implements Tuner<TuningResult> {
    private final RepetitionDistribution repetitions;
    private final double lower;
    private final double upper;
    private final AdaptiveRule rule;
    private final long seed;
    private final Consumer<double[]> observer;
    private final boolean revealTrials;

    /**
     * A DP-HyPO tuner releasing the best run only, with no density observer; nothing runs until {@link #tune}.
     *
     * @param repetitions the distribution of K (a truncated negative binomial for Theorem 1)
     * @param lower       c ∈ (0, 1], the smallest allowed ratio of a sampling density to the prior (paper default 0.75)
     * @param upper       C ∈ [1, ∞), the largest allowed ratio of a sampling density to the prior (paper default 2)
     * @param rule        the adaptive rule ({@link GpUcbSoftmax#defaults()} is Algorithm 3)
     * @param seed        draws K, the candidates and the trial seeds; keep it secret
     * @throws IllegalArgumentException unless 0 &lt; c ≤ 1 ≤ C &lt; ∞
     * @throws NullPointerException     if {@code repetitions} or {@code rule} is null
     */
    public DpHypoTuner(RepetitionDistribution repetitions, double lower, double upper, AdaptiveRule rule, long seed) {
        this(repetitions, lower, upper, rule, seed, null, false);
        new AdaptiveRepeatAndSelectEvent(new org.dpdl4j.accounting.NoOpEvent(), repetitions, lower, upper); // checks c, C
    }

    private DpHypoTuner(RepetitionDistribution repetitions, double lower, double upper, AdaptiveRule rule, long seed,
                        Consumer<double[]> observer, boolean revealTrials) {
        this.repetitions = Objects.requireNonNull(repetitions, "repetitions");
        this.lower = lower;
        this.upper = upper;
        this.rule = Objects.requireNonNull(rule, "rule");
        this.seed = seed;
        this.observer = observer;
        this.revealTrials = revealTrials;
    }

    /**
     * The same tuner, handing every projected sampling density (over {@link HyperparameterSpace#candidates()}) to {@code o}.
     *
     * @param o receives a copy of each run's projected density, one weight per grid candidate, before the candidate is
     *          drawn (called on the tuning thread); the densities depend on earlier scores and are operator-only
     * @return a new tuner with the same settings and this observer
     * @throws NullPointerException if {@code o} is null
     */
    public DpHypoTuner withDensityObserver(Consumer<double[]> o) {
        return new DpHypoTuner(repetitions, lower, upper, rule, seed, Objects.requireNonNull(o, "observer"), revealTrials);
    }

    /**
     * The same tuner releasing K and every trial, charged as the composition of the K drawn runs: K is drawn
     * first (independently of the data) and the charge is made before the first run.
     *
     * @return a new tuner with the same settings that reveals every trial
     */
    public DpHypoTuner withRevealedTrials() {
        return new DpHypoTuner(repetitions, lower, upper, rule, seed, observer, true);
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
     * @param space the space whose grid the densities are over
     * @param mechanism the base mechanism Q
     * @return {@link AdaptiveRepeatAndSelectEvent}({@link Trials#baseEvent}, distribution of K, c, C)
     * @throws IllegalStateException    if trials are revealed (the cost then depends on the realised K), or the space
     *                                  holds more than {@value HyperparameterSpace#MAX_CANDIDATES} candidates
     * @throws IllegalArgumentException if Q rejects a candidate of the space
     */
    @Override
    public PrivacyEvent event(HyperparameterSpace space, TrainingMechanism mechanism) {
        if (revealTrials) {
            throw new IllegalStateException("with revealed trials the cost is the composition over the realised K, "
                    + "known only after K is drawn");
        }
        return new AdaptiveRepeatAndSelectEvent(Trials.baseEvent(space, mechanism), repetitions, lower, upper);
    }

    /**
     * Runs DP-HyPO: draws K, charges (or records) the cost, then for each of the K runs in turn projects the rule's
     * density, draws a candidate and a seed, and runs Q; a run whose score is not finite is left out of the rule's
     * history. The best run (highest score, the earliest on ties) is the result.
     *
     * @param space    the space whose grid (every candidate, with its prior) the densities are over
     * @param mechanism the base mechanism Q
     * @param ledger   if not null, the whole cost is charged before any run (or recorded under {@code covering}),
     *                 and each trial is recorded under that charge before it starts
     * @param covering if not null, a ledger charge that covers this tuning run: it is recorded under it
     * @param listener progress
     * @return the best trial, its candidate (the space's first when K = 0), every trial, K and the event
     * @throws PrivacyLedger.BudgetExceededException if the ledger's budget does not allow the tuning run
     * @throws java.io.UncheckedIOException          if the ledger cannot be written
     * @throws IllegalArgumentException              if {@code covering} is given with revealed trials, is not a charge
     *                                               in the ledger, Q rejects a candidate, or the rule proposes an
     *                                               invalid density (negative or not finite)
     * @throws IllegalStateException                 if the drawn K exceeds {@code Integer.MAX_VALUE - 8}, or the space
     *                                               holds more than {@value HyperparameterSpace#MAX_CANDIDATES}
     *                                               candidates
     */
    @Override
    public TuningResult tune(HyperparameterSpace space, TrainingMechanism mechanism, PrivacyLedger ledger, Long covering,
                             TuningListener listener) {
        if (covering != null && revealTrials) {
            throw new IllegalArgumentException("a tuning run that reveals every trial cannot be covered by a charge "
                    + "made before K is drawn");
        }
        PrivacyEvent base = Trials.baseEvent(space, mechanism);
        List<Candidate> grid = space.candidates();
        double[] prior = space.priorProbabilities();
        double[][] coordinates = new double[grid.size()][];
        for (int i = 0; i < grid.size(); i++) {
            coordinates[i] = space.unitCoordinates(grid.get(i));
        }
        SplittableRandom random = new SplittableRandom(seed);
        long k = repetitions.sample(random);
        if (k > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("drew K = " + k + " runs; truncate the distribution");
        }
        PrivacyEvent event = revealTrials ? new SelfComposedEvent(base, k)
                : new AdaptiveRepeatAndSelectEvent(base, repetitions, lower, upper);
        Long charge = null;
        if (ledger != null) {
            String label = revealTrials ? "DP-HyPO, K = " + k + " revealed trials"
                    : "DP-HyPO, K ~ " + repetitions.describe() + ", density bounds [" + lower + ", " + upper + "]";
            long entry = ledger.chargeOrRecord(label, event, covering);
            charge = covering != null ? covering : entry;
        }
        listener.onStart(k);
        AdaptiveRule.Session session = rule.start(coordinates, prior);
        List<AdaptiveRule.Observation> history = new ArrayList<>();
        List<TrialResult> trials = new ArrayList<>();
        double minRatio = Double.POSITIVE_INFINITY;
        double maxRatio = 0;
        for (int j = 0; j < k; j++) {
            double[] proposed = history.isEmpty() ? prior : session.density(history);
            double[] p = BoundedDensityProjection.project(proposed, prior, lower, upper);
            double total = 0;
            for (int i = 0; i < p.length; i++) {
                if (!(p[i] >= lower * prior[i] && p[i] <= upper * prior[i])) {
                    throw new IllegalStateException("projected density left the bounds at " + grid.get(i)); // cannot happen
                }
                minRatio = Math.min(minRatio, p[i] / prior[i]);
                maxRatio = Math.max(maxRatio, p[i] / prior[i]);
                total += p[i];
            }
            if (observer != null) {
                observer.accept(p.clone());
            }
            int index = sample(p, total, random);
            long trialSeed = random.nextLong();
            Candidate c = grid.get(index);
            TrialResult r = Trials.trial(mechanism, c, trialSeed, j, ledger, charge, listener);
            trials.add(r);
            if (Double.isFinite(r.score())) {
                history.add(new AdaptiveRule.Observation(index, r.score()));
            }
        }
        TrialResult best = RandomSearchTuner.best(trials);
        List<String> notes = new ArrayList<>();
        List<String> operatorNotes = new ArrayList<>();
        if (base instanceof PointwiseMaxEvent m) {
            notes.add(Trials.pointwiseMaxNote(m));
        }
        notes.add(revealTrials
                ? "K and every trial are released: charged as the composition of the K adaptive runs drawn, each bounded "
                        + "by one run's event over the whole space"
                : "adaptive search (" + rule.name() + ") with every sampling density within [" + lower + ", " + upper
                        + "] x prior: only the best run is released, charged by Wang et al. 2023 (arXiv:2306.05734), "
                        + "Theorem 1, with log(C/c) = " + String.format("%.4f", Math.log(upper / lower)));
        if (k > 0) {
            operatorNotes.add(String.format("observed density ratios %.4f to %.4f of the prior", minRatio, maxRatio));
        } else {
            operatorNotes.add("K = 0: no run; the result is the data-independent default candidate and no model");
        }
        return new TuningResult(best, best != null ? best.candidate() : space.first(), trials, k, repetitions, base, event,
                revealTrials, notes, operatorNotes, charge);
    }

    private static int sample(double[] p, double total, SplittableRandom random) {
        double u = random.nextDouble() * total;
        double acc = 0;
        for (int i = 0; i < p.length; i++) {
            acc += p[i];
            if (u < acc) {
                return i;
            }
        }
        for (int i = p.length - 1; i >= 0; i--) { // rounding at the top end: the last positive entry
            if (p[i] > 0) {
                return i;
            }
        }
        throw new IllegalStateException("empty density");
    }
}
