package org.dpdl4j.tuning;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.dpdl4j.accounting.AdaptiveRepeatAndSelectEvent;
import org.dpdl4j.accounting.PointwiseMaxEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RepetitionDistribution;

/**
 * DP-HyPO (seed 000_c7b4708b63719d0e.txt, Framework 1 and Algorithm 3; ../shared/SPEC.md §3): draw K
 * from a data-independent distribution; before each run, project the rule's proposed density onto
 * {c·π⁰ ≤ p ≤ C·π⁰, Σp = 1} ({@link BoundedDensityProjection}), draw a candidate from it, run Q and
 * feed the score back to the rule; release the best run only. The cost is an
 * {@link AdaptiveRepeatAndSelectEvent}: log(C/c) is the price of adaptivity. Runs are sequential
 * (each density depends on the runs before it). K and the trial seeds are drawn up front from the
 * seed; a run that throws counts with score −∞ and is still charged.
 *
 * <p>The densities handed to the sampler can be observed ({@link #withDensityObserver}) to audit that
 * they stay within the bounds whatever the scores.
 */
public final class DpHypoTuner implements Tuner {
    private final RepetitionDistribution repetitions;
    private final double lower;
    private final double upper;
    private final AdaptiveRule rule;
    private final long seed;
    private final Consumer<double[]> observer;

    /**
     * @param repetitions the distribution of K (a truncated negative binomial for Theorem 1)
     * @param lower       c ∈ (0, 1] (paper default 0.75)
     * @param upper       C ∈ [1, ∞) (paper default 2)
     * @param rule        the adaptive rule ({@link GpUcbSoftmax#defaults()} is Algorithm 3)
     * @param seed        draws K, the candidates and the trial seeds; keep it secret
     * @throws IllegalArgumentException unless 0 &lt; c ≤ 1 ≤ C &lt; ∞
     */
    public DpHypoTuner(RepetitionDistribution repetitions, double lower, double upper, AdaptiveRule rule, long seed) {
        this(repetitions, lower, upper, rule, seed, null);
        new AdaptiveRepeatAndSelectEvent(new org.dpdl4j.accounting.NoOpEvent(), repetitions, lower, upper); // checks c, C
    }

    private DpHypoTuner(RepetitionDistribution repetitions, double lower, double upper, AdaptiveRule rule, long seed,
                        Consumer<double[]> observer) {
        this.repetitions = Objects.requireNonNull(repetitions, "repetitions");
        this.lower = lower;
        this.upper = upper;
        this.rule = Objects.requireNonNull(rule, "rule");
        this.seed = seed;
        this.observer = observer;
    }

    /** The same tuner, handing every projected sampling density (over {@link HyperparameterSpace#candidates()}) to {@code o}. */
    public DpHypoTuner withDensityObserver(Consumer<double[]> o) {
        return new DpHypoTuner(repetitions, lower, upper, rule, seed, Objects.requireNonNull(o, "observer"));
    }

    /** The distribution of K. */
    public RepetitionDistribution repetitions() {
        return repetitions;
    }

    @Override
    public PrivacyEvent event(HyperparameterSpace space, TrainingMechanism q) {
        return new AdaptiveRepeatAndSelectEvent(RandomSearchTuner.baseEvent(space, q), repetitions, lower, upper);
    }

    @Override
    public TuningResult tune(HyperparameterSpace space, TrainingMechanism q, PrivacyLedger ledger, Long covering,
                             TuningListener listener) {
        PrivacyEvent base = RandomSearchTuner.baseEvent(space, q);
        PrivacyEvent event = new AdaptiveRepeatAndSelectEvent(base, repetitions, lower, upper);
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
        Long charge = null;
        if (ledger != null) {
            String label = "DP-HyPO, K ~ " + repetitions.describe() + ", density bounds [" + lower + ", " + upper + "]";
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
            TrialResult r = RandomSearchTuner.trial(q, c, trialSeed, j, ledger, charge, listener);
            trials.add(r);
            if (Double.isFinite(r.score())) {
                history.add(new AdaptiveRule.Observation(index, r.score()));
            }
        }
        TrialResult best = null;
        for (TrialResult t : trials) {
            if (best == null || t.score() > best.score()) {
                best = t;
            }
        }
        List<String> notes = new ArrayList<>();
        if (base instanceof PointwiseMaxEvent m) {
            notes.add("candidates differ in privacy cost (" + m.events().size() + " distinct events): one run is charged "
                    + "the pointwise maximum of their RDP curves (seed 003 Lemma 9)");
        }
        notes.add("adaptive search (" + rule.name() + "): every sampling density stayed within [" + lower + ", " + upper
                + "] x prior" + (k > 0 ? String.format(" (observed ratios %.4f to %.4f)", minRatio, maxRatio) : "")
                + "; charged by seed 000 Theorem 1 with log(C/c) = " + String.format("%.4f", Math.log(upper / lower)));
        if (k == 0) {
            notes.add("K = 0: no run; the result is the data-independent default candidate and no model");
        }
        return new TuningResult(best, best != null ? best.candidate() : space.first(), trials, k, repetitions, base, event,
                false, notes);
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
