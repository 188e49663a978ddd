package org.dpdl4j.tuning;

import org.dpdl4j.release.PrivacyLedger;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PureDpEvent;
import org.dpdl4j.accounting.SelfComposedEvent;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.Splits;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.TrainingResult;

/**
 * Propose-test tuning with a doubling step (Ding &amp; Wu, Revisiting Hyperparameter Tuning with
 * Differential Privacy, 2022, arXiv:2211.01852, Algorithm 1). The training data is cut into k disjoint parts (record by record, so one
 * example touches one part); every candidate is trained on each part and scored on the validation
 * split, and u_s is the mean over the parts (sensitivity 1/k when the validation split has at least
 * k examples). The loop proposes a threshold û = u + step·g + Lap(2/(kε₀)), takes the first candidate
 * with u_s + Lap(4/(kε₀)) ≥ û (AboveThreshold), and then doubles the step and raises u, or halves the
 * step; it stops when the step reaches 0 or u ≥ 1. A private DP-SGD run with the selected candidate on
 * all the training data follows.
 *
 * <p>Each iteration is ε₀-DP (the paper's proof, eq. 1). The number of iterations depends on the
 * data, so charging the realised count would itself leak: the loop is capped at a data-independent
 * T_max (default 2⌈(1 − u₀)/g⌉ + 2, the paper's worst case of one accumulation every two iterations,
 * plus the final halvings) and T_max iterations are always charged, as T_max-fold composition of
 * ε₀-DP (RDP via ε₀-DP ⇒ ½ε₀²-zCDP, Bun &amp; Steinke 2016, Prop. 3.3, as {@link PureDpEvent} is accounted).
 * If the cap is reached the current s* is kept.
 *
 * <p>The final run trains with exactly the sampling rate q it is charged for
 * ({@link RetrainableMechanism#trainOnTrainingSplit}, which Q must offer): q comes from the public dataset size, never from the size
 * of the (randomly split) training split. The realised iteration count and the parts' sizes are in the
 * operator record only.
 */
public final class ProposeTestTuner implements Tuner<ProposeTestTuner.Result> {
    private static final String NAME = "propose-test tuning";
    private final int partitions;
    private final double granularity;
    private final double epsilon0;
    private final double lowerBound;
    private final int maxIterations;
    private final long seed;
    private int threads = 1;

    /**
     * The same tuner training the (candidate, part) utilities on up to this many threads at once (default 1); the
     * result does not depend on it (every training's seed is drawn up front, in order).
     *
     * @param threads the number of trainings run at once, &gt;= 1
     * @return a new tuner with the same settings and this many threads
     * @throws IllegalArgumentException if threads &lt; 1
     */
    public ProposeTestTuner withThreads(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        ProposeTestTuner t = new ProposeTestTuner(partitions, granularity, epsilon0, lowerBound, maxIterations, seed);
        t.threads = threads;
        return t;
    }

    /**
     * A propose-test tuner on one thread; nothing runs until {@link #tune}.
     *
     * @param partitions    k ≥ 1, the number of disjoint parts of the training data
     * @param granularity   g ∈ (0, 1), the utility step
     * @param epsilon0      ε₀ &gt; 0 per iteration, finite
     * @param lowerBound    u₀ ∈ [0, 1), the starting utility threshold
     * @param maxIterations T_max ≥ 1, or null for {@link #defaultMaxIterations}
     * @param seed          draws the partition, the trainings' seeds, the Laplace noise and the final run's seed;
     *                      keep it secret
     * @throws IllegalArgumentException if a parameter is out of range (the message names it)
     */
    public ProposeTestTuner(int partitions, double granularity, double epsilon0, double lowerBound, Integer maxIterations, long seed) {
        if (partitions < 1) {
            throw new IllegalArgumentException("number of partitions k must be >= 1, got " + partitions);
        }
        if (!(granularity > 0 && granularity < 1)) {
            throw new IllegalArgumentException("granularity g must be in (0, 1), got " + granularity);
        }
        if (!(epsilon0 > 0) || Double.isInfinite(epsilon0)) {
            throw new IllegalArgumentException("epsilon0 must be finite and > 0, got " + epsilon0);
        }
        if (!(lowerBound >= 0 && lowerBound < 1)) {
            throw new IllegalArgumentException("lower_utility u0 must be in [0, 1), got " + lowerBound);
        }
        if (maxIterations != null && maxIterations < 1) {
            throw new IllegalArgumentException("maximum iterations T_max must be >= 1, got " + maxIterations);
        }
        this.partitions = partitions;
        this.granularity = granularity;
        this.epsilon0 = epsilon0;
        this.lowerBound = lowerBound;
        this.maxIterations = maxIterations != null ? maxIterations : defaultMaxIterations(lowerBound, granularity);
        this.seed = seed;
    }

    /**
     * 2⌈(1 − u₀)/g⌉ + 2: one accumulation of at least g every two iterations until u ≥ 1, plus the last halvings.
     * The ceiling is taken with a tolerance of 1e-9, so that a quotient (1 − u₀)/g that is a whole number up to
     * rounding error is not rounded up to the next one.
     *
     * @param lowerBound  u₀ ∈ [0, 1)
     * @param granularity g ∈ (0, 1)
     * @return the default T_max, &gt;= 2 for arguments in range
     */
    public static int defaultMaxIterations(double lowerBound, double granularity) {
        return 2 * (int) Math.ceil((1 - lowerBound) / granularity - 1e-9) + 2;
    }

    /**
     * T_max, the number of iterations charged.
     *
     * @return T_max, &gt;= 1
     */
    public int maxIterations() {
        return maxIterations;
    }

    /**
     * ε₀, the privacy loss of one iteration of the selection loop.
     *
     * @return ε₀ &gt; 0, finite
     */
    public double epsilon0() {
        return epsilon0;
    }

    /**
     * Refuses, before anything is charged, data that k parts cannot be cut from: k above the training split's or the
     * validation split's examples (each utility's sensitivity is 1/k only with k validation examples), or an expected
     * batch B larger than a part (every candidate is trained on each part).
     *
     * @param mechanism         Q, whose training and validation splits are used
     * @param expectedBatchSize B of the runs, ≥ 0 (0, or a Q with a fixed sampling rate: not checked)
     * @throws IllegalArgumentException naming {@code partitions} or {@code batch_size}, the values and the sizes
     */
    public void checkData(RetrainableMechanism mechanism, int expectedBatchSize) {
        int n = mechanism.train().size();
        int v = mechanism.validation().size();
        if (n < partitions || v < partitions) {
            throw new IllegalArgumentException("partitions k = " + partitions + " must be at most the " + n + " training and the "
                    + v + " validation examples (each utility's sensitivity is 1/k)");
        }
        if (!mechanism.hasFixedSamplingRate() && (long) expectedBatchSize * partitions > n) {
            throw new IllegalArgumentException("batch_size " + expectedBatchSize + " must fit in each of the k = " + partitions
                    + " parts of the " + n + " training examples that every candidate is trained on: lower batch_size or "
                    + "partitions, or set sampling_rate");
        }
    }

    /**
     * The loop's cost: T_max compositions of an ε₀-DP iteration, whatever the realised count.
     *
     * @return a {@link SelfComposedEvent} of T_max {@link PureDpEvent}s of ε₀
     */
    public PrivacyEvent loopEvent() {
        return new SelfComposedEvent(new PureDpEvent(epsilon0), maxIterations);
    }

    /**
     * The selection loop on given utilities (lines 12–32 of Algorithm 1).
     *
     * @param utilities u_s ∈ [0, 1], one per candidate (sensitivity 1/k)
     * @param random    the Laplace noise (its state advances)
     * @return the selected index (−1 if no candidate was ever accepted), the iterations run, whether the cap stopped the loop
     */
    public Selection select(double[] utilities, RandomGenerator random) {
        int selected = -1;
        double u = lowerBound;
        long step = 1;
        int iterations = 0;
        double thresholdScale = 2 / (partitions * epsilon0);
        double candidateScale = 4 / (partitions * epsilon0);
        while (step != 0 && iterations < maxIterations) {
            iterations++;
            double threshold = u + step * granularity + laplace(random, thresholdScale);
            boolean accumulated = false;
            for (int s = 0; s < utilities.length; s++) {
                if (utilities[s] + laplace(random, candidateScale) >= threshold) {
                    selected = s;
                    u += step * granularity;
                    accumulated = true;
                    step *= 2;
                    break;
                }
            }
            if (!accumulated) {
                step /= 2;
            }
            if (u >= 1) {
                break;
            }
        }
        boolean capped = iterations == maxIterations && step != 0 && u < 1;
        return new Selection(selected, iterations, capped, u);
    }

    /**
     * Outcome of the loop.
     *
     * @param index      the selected candidate's index, or −1
     * @param iterations iterations run, in [1, T_max] (not released: only s* is)
     * @param capped     whether T_max stopped the loop
     * @param utility    the final accumulated u (u₀ plus the accepted steps)
     */
    public record Selection(int index, int iterations, boolean capped, double utility) {
    }

    /**
     * The whole procedure's cost, known before it runs: T_max ε₀-DP iterations composed with the final run.
     *
     * @param space the space the final candidate is chosen from
     * @param mechanism Q, a {@link RetrainableMechanism}
     * @return {@link #loopEvent()} composed with {@link Trials#finalRunEvent}
     * @throws IllegalArgumentException if Q is not retrainable, or rejects a candidate of the space
     * @throws IllegalStateException    if the space holds more than {@value HyperparameterSpace#MAX_CANDIDATES} candidates
     */
    @Override
    public PrivacyEvent event(HyperparameterSpace space, TrainingMechanism mechanism) {
        return ComposedEvent.of(loopEvent(), Trials.finalRunEvent(space, Trials.retrainable(mechanism, NAME)));
    }

    /**
     * Algorithm 1 end to end: utilities from k-part training (with the mechanism's settings but σ = 0
     * and C = 10⁶, i.e. non-private SGD inside the estimate, which the paper allows), the loop, and the
     * final DP-SGD run with the selected candidate on all of the mechanism's training split.
     *
     * @param space     the candidates (every one is trained on every part)
     * @param mechanism Q, a {@link RetrainableMechanism}
     * @param ledger    if not null, the loop (T_max iterations) and the final run are charged before anything runs (or
     *                  recorded under {@code covering}), and the loop is recorded under that charge
     * @param covering  if not null, a ledger charge that covers this procedure: it is recorded under it
     * @param listener  progress: one "trial" per (candidate, part) training, then the final run
     * @return the selected candidate (the space's first when none passed a threshold), the final model and the event
     * @throws IllegalArgumentException if Q is not retrainable, or its training or validation split has fewer than k
     *                                  examples (checked before the ledger is charged), or {@code covering} is not a
     *                                  charge in the ledger
     * @throws PrivacyLedger.BudgetExceededException if the ledger's budget does not allow the procedure
     * @throws java.io.UncheckedIOException          if the ledger cannot be written
     * @throws IllegalStateException    if the final run cost other than charged, the space holds more than
     *                                  {@value HyperparameterSpace#MAX_CANDIDATES} candidates, or the tuning is interrupted
     */
    @Override
    public Result tune(HyperparameterSpace space, TrainingMechanism mechanism, PrivacyLedger ledger, Long covering,
                       TuningListener listener) {
        RetrainableMechanism retrainable = Trials.retrainable(mechanism, NAME);
        List<Candidate> grid = space.candidates();
        PrivacyEvent finalRun = Trials.finalRunEvent(space, retrainable);
        PrivacyEvent event = event(space, retrainable);
        checkData(retrainable, 0);
        if (ledger != null) {
            long entry = ledger.chargeOrRecord("propose-test: " + maxIterations + " x " + epsilon0 + "-DP iterations + final run",
                    event, covering);
            ledger.chargeOrRecord("propose-test selection loop (T_max = " + maxIterations + ")", loopEvent(),
                    covering != null ? covering : entry);
        }
        SplittableRandom random = new SplittableRandom(seed);
        List<ExampleSource> parts = new ArrayList<>();
        for (int[] part : Splits.partitionByRecord(retrainable.train(), partitions, random.nextLong())) {
            parts.add(retrainable.train().subset(part));
        }
        int[] partSizes = parts.stream().mapToInt(ExampleSource::size).toArray();
        long start = System.nanoTime();
        listener.onStart((long) grid.size() * partitions);
        RetrainableMechanism nonPrivate = retrainable.nonPrivateCopy(); // the utilities train without noise, as the paper allows
        // every training's seed drawn up front, in the order of the loop, so threads do not change the result
        List<java.util.concurrent.Callable<Double>> trainings = new ArrayList<>();
        int trial = 0;
        for (Candidate candidate : grid) {
            Candidate c = candidate.with("noise_multiplier", 0.0).with("clip_norm", 1e6);
            for (ExampleSource part : parts) {
                int t = trial++;
                long partSeed = part.size() > 0 ? random.nextLong() : 0;
                trainings.add(() -> {
                    listener.onTrialStart(t, candidate);
                    long trialStart = System.nanoTime();
                    double accuracy = 0;
                    if (part.size() > 0) {
                        TrainingResult r = nonPrivate.train(c, part, partSeed, null, info -> listener.onTrialStep(t, info));
                        accuracy = DpSgdTrainer.accuracy(r.network(), retrainable.validation());
                    }
                    listener.onTrialEnd(new TrialResult(t, candidate, null, Double.NEGATIVE_INFINITY, finalRun,
                            (System.nanoTime() - trialStart) / 1e9, null));
                    return Double.isFinite(accuracy) ? accuracy : 0;
                });
            }
        }
        List<Double> accuracies = Trials.inParallel(threads, trainings);
        double[] u = new double[grid.size()];
        for (int i = 0; i < accuracies.size(); i++) {
            u[i / partitions] += accuracies.get(i) / partitions;
        }
        Selection sel = select(u, random);
        Candidate chosen = sel.index() >= 0 ? grid.get(sel.index()) : space.first();
        listener.onFinalRunStart(chosen);
        TrainingResult fin = retrainable.trainOnTrainingSplit(chosen, random.nextLong(), listener::onFinalRunStep);
        if (!fin.event().equals(retrainable.trainingEvent(chosen))) { // what ran must be what was charged
            throw new IllegalStateException("the final run cost " + fin.event() + ", not the charged " + retrainable.trainingEvent(chosen));
        }
        List<String> notes = new ArrayList<>();
        notes.add("selection loop charged as T_max = " + maxIterations + " iterations of " + epsilon0 + "-DP (Ding & Wu, "
                + "arXiv:2211.01852, Algorithm 1), whatever the realised count");
        List<String> operatorNotes = new ArrayList<>();
        operatorNotes.add(sel.iterations() + " iterations ran" + (sel.capped() ? "; the cap T_max stopped the loop" : ""));
        if (sel.index() < 0) {
            operatorNotes.add("no candidate passed a threshold: the final run used the data-independent default " + chosen);
        }
        return new Result(chosen, fin.network(), sel, event, finalRun, fin.event(), partSizes, (System.nanoTime() - start) / 1e9,
                notes, operatorNotes);
    }

    /**
     * What the propose-test tuner did.
     *
     * @param candidate     the selected candidate (released)
     * @param model         the final DP-SGD model (released)
     * @param selection     the loop's outcome (its iteration count and utility are operator-only)
     * @param event         the whole cost: T_max ε₀-DP iterations composed with the final run
     * @param finalRun      the final run's charged event (pointwise maximum over the space)
     * @param trainedEvent  the event of the final run as it was trained (equal to the chosen candidate's charged event)
     * @param partSizes     the k parts' sizes, in examples (operator-only)
     * @param seconds       wall-clock time, in seconds (operator-only)
     * @param notes         data-independent statements for the release
     * @param operatorNotes statements that depend on the data: operator-only
     */
    public record Result(Candidate candidate, org.deeplearning4j.nn.api.Model model, Selection selection,
                         PrivacyEvent event, PrivacyEvent finalRun, PrivacyEvent trainedEvent, int[] partSizes, double seconds,
                         List<String> notes, List<String> operatorNotes) implements TuningOutcome {
        /**
         * Copies the part sizes and the notes.
         *
         * @param candidate     the selected candidate (released); not null
         * @param model         the final DP-SGD model (released)
         * @param selection     the loop's outcome (its iteration count and utility are operator-only)
         * @param event         the whole cost: T_max ε₀-DP iterations composed with the final run
         * @param finalRun      the final run's charged event (pointwise maximum over the space)
         * @param trainedEvent  the event of the final run as it was trained (equal to the chosen candidate's charged event)
         * @param partSizes     the k parts' sizes, in examples (operator-only)
         * @param seconds       wall-clock time, in seconds (operator-only)
         * @param notes         data-independent statements for the release
         * @param operatorNotes statements that depend on the data: operator-only
         * @throws NullPointerException if {@code candidate}, {@code partSizes} or a list of notes is null, or a list
         *                              holds null
         */
        public Result {
            Objects.requireNonNull(candidate, "candidate");
            partSizes = partSizes.clone();
            notes = List.copyOf(notes);
            operatorNotes = List.copyOf(operatorNotes);
        }

        /**
         * What {@link #event()} covers: the selected candidate and the final model.
         *
         * @return the release: the candidate, no score, the final model and {@link #event()}
         */
        @Override
        public Release release() {
            return new Release(candidate, null, model, event, null, List.of(), java.util.Map.of(), notes);
        }

        /**
         * Iterations run, whether the cap stopped the loop, the accumulated utility, the parts' sizes and the time: not
         * covered by ε.
         *
         * @return the operator record, with facts {@code iterations}, {@code capped}, {@code accumulated_utility},
         *         {@code part_sizes} and {@code seconds}, and no trials
         */
        @Override
        public OperatorRecord operatorRecord() {
            java.util.Map<String, Object> facts = new java.util.LinkedHashMap<>();
            facts.put("iterations", selection.iterations());
            facts.put("capped", selection.capped());
            facts.put("accumulated_utility", selection.utility());
            facts.put("part_sizes", java.util.Arrays.stream(partSizes).boxed().toList());
            facts.put("seconds", seconds);
            return new OperatorRecord(facts, List.of(), operatorNotes);
        }
    }

    private static double laplace(RandomGenerator r, double scale) {
        double u = r.nextDouble() - 0.5;
        return -scale * Math.signum(u) * Math.log1p(-2 * Math.abs(u));
    }
}
