package org.dpdl4j.cli;

import org.dpdl4j.benchmarks.Reporting;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.random.RandomGenerator;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.audit.CanaryAudit;
import org.dpdl4j.audit.OneRunAudit;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdSettings;
import org.dpdl4j.models.Models;
import org.dpdl4j.tuning.DpSgdMechanism;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.tuning.RandomSearchTuner;
import org.dpdl4j.tuning.Release;
import org.dpdl4j.tuning.TuningListener;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code dpdl4j audit}: a measured lower bound on ε from one training run (Steinke, Nasr &amp; Jagielski 2023,
 * arXiv:2305.08846), compared with the ε claimed for the same configuration. Exit status 4 when the lower bound
 * exceeds the claim: then the implementation does not deliver what it claims.
 */
@Command(name = "audit", mixinStandardHelpOptions = true, description = {"Audit a configuration empirically: insert canaries, train once, and measure a lower bound on "
                        + "epsilon; exit status 4 if it exceeds the claimed epsilon."},
        subcommands = {AuditCommand.Train.class, AuditCommand.Tune.class})
final class AuditCommand {
    /**
     * Refuses the train options an audit does not use, rather than ignoring them: it writes no files (--output) and
     * audits a noise-free run only as --noise-multiplier 0 with --allow-non-private and a claim (--non-private).
     */
    static void refuseUnused(TrainingOptions t) {
        if (t.output != null) {
            throw new IllegalArgumentException("--output does not apply: an audit writes no files (its result is printed, "
                    + "and with --json as a JSON line)");
        }
        if (t.nonPrivate) {
            throw new IllegalArgumentException("--non-private does not apply to an audit: audit a noise-free run with "
                    + "--noise-multiplier 0 --allow-non-private --claimed-epsilon E");
        }
    }

    private AuditCommand() {
    }

    /** The options every audit shares. */
    static final class AuditOptions {
        @Option(names = "--canaries", paramLabel = "m", defaultValue = "1000", description = "Canaries m, each included with probability 1/2 (default ${DEFAULT-VALUE}).")
        int canaries;

        @Option(names = "--canary-type", defaultValue = "gradient", description = {"gradient (white-box Dirac canaries in parameter space) or input (held-out images with a wrong label, "
                        + "scored by the released model's loss) (default ${DEFAULT-VALUE})."})
        String canaryType;

        @Option(names = "--canary-norm", description = "Raw norm of a gradient canary (default: the clip norm C; larger is clipped to C).")
        Double canaryNorm;

        @Option(names = "--confidence", defaultValue = "0.95", description = "Confidence of the lower bound, in (0, 1) (default ${DEFAULT-VALUE}).")
        double confidence;

        @Option(names = "--claimed-epsilon", paramLabel = "ε", description = "The claim to test (default: what the accountant computes for the configuration).")
        Double claimedEpsilon;

        @Option(names = "--allow-non-private", description = "Allow sigma = 0 (then --claimed-epsilon is required): an audit of a configuration that claims more than it delivers.")
        boolean allowNonPrivate;

        @Option(names = "--train-size", paramLabel = "n", description = "Train on a random subset of n examples (default: all).")
        Integer trainSize;

        CanaryAudit.Kind kind() {
            return switch (canaryType) {
                case "gradient" -> CanaryAudit.Kind.GRADIENT;
                case "input" -> CanaryAudit.Kind.INPUT;
                default -> throw new IllegalArgumentException("--canary-type must be gradient or input, got '" + canaryType + "'");
            };
        }

        void check() {
            kind();
            if (canaries < 2) {
                throw new IllegalArgumentException("--canaries must be >= 2, got " + canaries);
            }
            if (!(confidence > 0 && confidence < 1)) {
                throw new IllegalArgumentException("--confidence must be in (0, 1), got " + confidence);
            }
            if (claimedEpsilon != null && (!(claimedEpsilon >= 0) || claimedEpsilon.isInfinite())) {
                throw new IllegalArgumentException("--claimed-epsilon must be finite and >= 0, got " + claimedEpsilon);
            }
            if (canaryNorm != null && (!(canaryNorm > 0) || canaryNorm.isInfinite())) {
                throw new IllegalArgumentException("--canary-norm must be finite and > 0, got " + canaryNorm);
            }
            if (trainSize != null && trainSize < 1) {
                throw new IllegalArgumentException("--train-size must be >= 1, got " + trainSize);
            }
        }

        /**
         * Whether the run trains without noise (σ = 0), which needs --allow-non-private and a claim to test.
         *
         * @throws IllegalArgumentException naming the options when σ = 0 comes without them
         */
        boolean noiseFree(Double noiseMultiplier) {
            boolean zero = noiseMultiplier != null && noiseMultiplier == 0;
            if (zero && (!allowNonPrivate || claimedEpsilon == null)) {
                throw new IllegalArgumentException("--noise-multiplier 0 needs --allow-non-private and a --claimed-epsilon to test");
            }
            return zero;
        }

        /** The canaries' inclusion bits: from the seed (reproducible) or from SecureRandom. */
        RandomGenerator inclusion(Long seed) {
            return seed != null ? new SplittableRandom(seed ^ 0x3C6EF372FE94F82BL) : new SecureRandom();
        }

        /**
         * The audited run's training data: all of it, or --train-size of it drawn at random (index sets of data read by
         * index, the same examples in the same order as from memory).
         */
        org.dpdl4j.datasets.ExampleSource train(TrainTest data, long seed) {
            org.dpdl4j.datasets.ExampleSource all = data.trainExamples();
            if (trainSize == null) {
                return all;
            }
            if (trainSize > all.size()) {
                throw new IllegalArgumentException("--train-size " + trainSize + " exceeds the " + all.size() + " training examples");
            }
            return all.subset(org.dpdl4j.datasets.Splits.randomSubset(all.size(), trainSize, seed));
        }

        /**
         * The data set: in memory, or {@code shards:} read by index (each step reads its batch, the canaries are the last
         * indices).
         *
         * @throws IllegalArgumentException for {@code shards:} with a cluster
         */
        static TrainTest load(TrainingOptions t, boolean cluster) throws java.io.IOException {
            if (!t.dataset.startsWith("shards:")) {
                return t.load();
            }
            if (cluster) {
                throw new IllegalArgumentException("--dataset " + t.dataset + ": an audit of packed shards runs with --executor local "
                        + "(a cluster audit takes the data in memory)");
            }
            return t.loadReadByIndex();
        }

        /** Prints the verdict (and the JSON line) and returns the exit status: 0 passed, 4 the bound exceeds the claim. */
        int report(OneRunAudit.Result r, double claim, double delta, String design, Map<String, Object> extra, boolean json) {
            boolean passed = r.epsilonLowerBound() <= claim;
            System.out.printf("%s%naudit: epsilon lower bound %.4f at %.0f%% confidence (%d of %d guesses right: %d in, %d out; "
                            + "Bonferroni over %d guess counts) vs claimed epsilon %.4f at delta %s: %s%n", design,
                    r.epsilonLowerBound(), 100 * confidence, r.correct(), r.guesses(), r.guessesIn(), r.guessesOut(), r.pairsTried(),
                    claim, delta, passed ? "PASSED (no violation measured)" : "FAILED: the run leaks more than it claims");
            if (json) {
                Map<String, Object> j = new LinkedHashMap<>();
                j.put("epsilon_lower_bound", r.epsilonLowerBound());
                j.put("claimed_epsilon", claim);
                j.put("delta", delta);
                j.put("canaries", r.canaries());
                j.put("guesses", r.guesses());
                j.put("correct", r.correct());
                j.put("passed", passed);
                j.put("confidence", confidence);
                j.put("canary_type", canaryType);
                j.putAll(extra);
                Cli.printJsonLine(System.out, j);
            }
            return passed ? 0 : 4;
        }
    }

    /** {@code audit train}: one DP-SGD run with canaries. */
    @Command(name = "train", mixinStandardHelpOptions = true, sortOptions = false, description = {"Audit one DP-SGD run (train's options):",
            "canaries go through the same sampling, clipping and noise; the claim is the run's epsilon."})
    static final class Train implements Callable<Integer> {
        @Mixin
        TrainingOptions t;

        @Mixin
        AuditOptions a;

        @Option(names = "--noise-multiplier", paramLabel = "σ", description = "Noise multiplier sigma (or give --target-epsilon).")
        Double noiseMultiplier;

        @Option(names = "--target-epsilon", paramLabel = "ε", description = "Calibrate sigma to this epsilon (default 3 when --noise-multiplier is not given).")
        Double targetEpsilon;

        @Mixin
        DataNormalisationOption dataNorm;

        @Mixin
        AccountCommand.AccountantOption accountantOption;

        @Mixin
        ExecutorOptions executorOptions;

        @Mixin
        AugmultOption augmult;

        @Override
        public Integer call() throws Exception {
            a.check();
            t.checkRunSettings();
            refuseUnused(t);
            TrainingOptions.checkNoiseMultiplier(noiseMultiplier);
            dataNorm.check(t.modelName(), false, false);
            if (dataNorm.on() && a.kind() != CanaryAudit.Kind.GRADIENT) {
                // input canaries join the training data inside the audit, after the statistics would have been released
                throw new IllegalArgumentException("--data-normalisation is audited with --canary-type gradient, not " + a.canaryType
                        + ": input canaries join the training data after the statistics are released, so they would not be in them");
            }
            if (noiseMultiplier != null && targetEpsilon != null) {
                throw new IllegalArgumentException("give --noise-multiplier or --target-epsilon, not both");
            }
            if (accountantOption.name == null) { // the claim train would publish for the same run
                accountantOption.name = org.dpdl4j.dpsgd.PrivateTraining.DEFAULT_ACCOUNTANT;
            }
            accountantOption.accountant(); // a bad name is refused before a cluster starts or data loads
            org.dpdl4j.spark.SparkCluster.Settings spark = executorOptions.settings(executorOptions.spark(), "--executor spark");
            augmult.check(t.dataset, spark != null);
            if (spark == null) {
                return audit(null);
            }
            try (org.dpdl4j.spark.SparkCluster cluster = org.dpdl4j.spark.SparkCluster.start(spark)) {
                return audit(cluster); // the audited run's clipped sums on the cluster, as train --executor spark
            }
        }

        private Integer audit(org.dpdl4j.spark.SparkCluster cluster) throws Exception {
            boolean zero = a.noiseFree(noiseMultiplier);
            TrainTest data = AuditOptions.load(t, cluster != null);
            if (cluster != null) {
                ExecutorOptions.trainingSplitOn(cluster, t, data);
            }
            t.checkDelta(data.trainExamples().size());
            long seed = t.weightSeed();
            org.dpdl4j.datasets.ExampleSource train = a.train(data, seed);
            double q = t.samplingRate(train.size());
            long steps = DpSgdConfig.stepsForEpochs(t.epochs, q);
            PrivacyAccountant acc = accountantOption.accountant();
            DpSgdSettings run = TrainingOptions.byOptionName(() -> dataNorm.applyTo(DpSgdSettings.builder().delta(t.delta)
                    .targetEpsilon(targetEpsilon != null ? targetEpsilon : 3.0)).build());
            double sigma = noiseMultiplier != null ? noiseMultiplier : TrainingOptions.byOptionName(() -> run.calibrateNoise(q, steps, acc));
            // the claim covers what was released: with --data-normalisation the statistics, then DP-SGD
            double claim = a.claimedEpsilon != null ? a.claimedEpsilon : acc.epsilon(run.event(q, sigma, steps), t.delta);
            DpSgdConfig.Builder cfg = DpSgdConfig.builder().samplingRate(q).noiseMultiplier(sigma).clipNorm(t.clip).steps(steps)
                    .physicalBatchSize(t.physicalBatchSize).delta(t.delta).nonPrivate(zero).workers(Reporting.configureWorkers(null))
                    .emaDecay(t.ema); // the audited output is the released one
            if (t.seed != null) {
                cfg.seed(t.seed);
            }
            org.dpdl4j.models.FeatureStatistics statistics = null;
            if (dataNorm.on()) { // released from the training examples, as train does (gradient canaries have no input)
                long normSeed = t.seed != null ? t.seed : new SecureRandom().nextLong();
                statistics = org.dpdl4j.dpsgd.PrivateNormalisation.releaseScatterNet(train, dataNorm.sigma, normSeed, // shards: read in chunks
                        Reporting.configureWorkers(null)).statistics();
            }
            org.deeplearning4j.nn.api.Model net = Models.byName(t.modelName(), t.modelOptions(data).withFeatures(statistics));
            System.out.printf("dpdl4j %s | audit train: %s on %d examples of %s, q = %.5g, T = %d, C = %s, sigma = %.4f%s; %d %s canaries%n",
                    Cli.version(), t.modelName(), train.size(), t.dataset, q, steps, t.clip, sigma, dataNorm.on()
                            ? ", data normalisation sigma " + dataNorm.sigma : "", a.canaries, a.canaryType);
            CanaryAudit.Outcome o = CanaryAudit.run(net, train, data.test(), cfg.build(), a.kind(), a.canaries,
                    a.canaryNorm != null ? a.canaryNorm : t.clip, a.confidence, a.inclusion(t.seed),
                    cluster != null ? cluster.clippedSums(executorOptions.partitions != null ? executorOptions.partitions
                            : cluster.parallelism()) : augmult.clippedSums(t.dataset), augmult.augmentation(t.dataset));
            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put("noise_multiplier", sigma);
            extra.put("sampling_rate", q);
            extra.put("steps", steps);
            extra.put("data_normalisation", dataNorm.sigma);
            extra.put("augmult", augmult.k);
            extra.put("accountant", accountantOption.name());
            extra.put("design", o.design());
            return a.report(o.audit(), claim, t.delta, o.design(), extra, t.json);
        }
    }

    /**
     * {@code audit tune}: random search whose every trial trains with the same gradient canaries (from the same,
     * known weights); the scores come from the released best model only; the claim is the tuning's total ε.
     */
    @Command(name = "tune", mixinStandardHelpOptions = true, sortOptions = false, description = {"Audit a tuning (tune's main options):",
            "gradient canaries in every training it makes, scores read from the released model only, the claim is epsilon_total."})
    static final class Tune implements Callable<Integer> {
        @Mixin
        TrainingOptions t;

        @Mixin
        AuditOptions a;

        @Option(names = "--tuner", defaultValue = "random-search", description = {"random-search, dp-hypo, subsampled (variant 1, q_tune 0.1) or propose-test (k = 2, g = 0.2, eps0 = "
                        + "0.1) (default ${DEFAULT-VALUE}); dp-hype releases no model to audit."})
        String tuner;

        @Mixin
        DensityBoundsOption density;

        @Option(names = "--repetitions", defaultValue = "poisson:4", paramLabel = "SPEC", description = "Distribution of K (default ${DEFAULT-VALUE}).")
        String repetitions;

        @Option(names = "--max-repetitions", paramLabel = "m", description = "Truncate K at m runs.")
        Long maxRepetitions;

        @Option(names = "--space", paramLabel = "AXIS", description = "A hyperparameter axis, as for tune (default learning_rate=log:0.1:1:4).")
        List<String> space = new ArrayList<>();

        @Option(names = "--noise-multiplier", paramLabel = "σ", description = "Noise multiplier sigma of every trial (or give --target-epsilon).")
        Double noiseMultiplier;

        @Option(names = "--target-epsilon", paramLabel = "ε", description = "Calibrate sigma so the whole tuning is (epsilon, delta)-DP (default 3).")
        Double targetEpsilon;

        @Option(names = "--score-noise", defaultValue = "0.05", description = "Std of the noisy validation accuracy (default ${DEFAULT-VALUE}).")
        double scoreNoise;

        @Mixin
        AugmultOption augmult;

        @Override
        public Integer call() throws Exception {
            a.check();
            t.checkRunSettings();
            refuseUnused(t);
            TrainingOptions.checkNoiseMultiplier(noiseMultiplier);
            if (a.kind() != CanaryAudit.Kind.GRADIENT) {
                throw new IllegalArgumentException("audit tune takes --canary-type gradient (input canaries: audit train)");
            }
            if (!(scoreNoise > 0) || Double.isInfinite(scoreNoise)) {
                throw new IllegalArgumentException("--score-noise must be finite and > 0, got " + scoreNoise);
            }
            augmult.check(t.dataset, false);
            boolean zero = a.noiseFree(noiseMultiplier);
            RepetitionDistribution k = RepetitionSpec.parse(repetitions, maxRepetitions);
            List<HyperparameterSpace.Axis> axes = new ArrayList<>();
            for (String s : space.isEmpty() ? List.of("learning_rate=log:0.1:1:4") : space) {
                axes.add(HyperparameterSpace.parseAxis(s));
            }
            HyperparameterSpace hs = HyperparameterSpace.of(axes);
            TrainTest data = AuditOptions.load(t, false);
            t.checkDelta(data.trainExamples().size());
            long seed = t.weightSeed();
            org.dpdl4j.datasets.ExampleSource train = a.train(data, seed);
            RandomGenerator inclusion = a.inclusion(t.seed);
            org.deeplearning4j.nn.api.Model template = Models.byName(t.modelName(), t.modelOptions(data));
            CanaryAudit.GradientDesign design = CanaryAudit.gradientDesign(template, train,
                    CanaryAudit.inclusionBits(a.canaries, inclusion), inclusion.nextLong(), augmult.augmentation(t.dataset));
            DpSgdMechanism.Builder builder = DpSgdMechanism.builder(train).model(t.modelName(), t.modelOptions(data))
                    .settings(t.settings()).activation(t.activation).noiseMultiplier(1)
                    .workers(Reporting.configureWorkers(null)).validation(0.1, seed).scoring(DpSgdMechanism.Scoring.PRIVATE_VALIDATION, scoreNoise)
                    .gradientCanaries(design.canaries(a.canaryNorm != null ? a.canaryNorm : t.clip));
            if (augmult.k > 1) { // every trial averages k augmented copies of each example, as tune --augmult runs it
                builder.augmult(augmult.augmentation(t.dataset), augmult.k);
            }
            long tunerSeed = t.seed != null ? t.seed : new SecureRandom().nextLong();
            java.util.function.Function<DpSgdMechanism, org.dpdl4j.accounting.PrivacyEvent> eventOf;
            java.util.function.Function<DpSgdMechanism, Release> runOn;
            switch (this.tuner) {
                case "random-search", "dp-hypo" -> {
                    double[] b = density.bounds(new double[]{0.8, 1.25});
                    org.dpdl4j.tuning.Tuner<org.dpdl4j.tuning.TuningResult> search = this.tuner.equals("random-search") ? new RandomSearchTuner(k, tunerSeed, 1, false)
                            : new org.dpdl4j.tuning.DpHypoTuner(k, b[0], b[1], org.dpdl4j.tuning.GpUcbSoftmax.defaults(), tunerSeed);
                    eventOf = m -> search.event(hs, m);
                    runOn = m -> search.tune(hs, m, null, TuningListener.NONE).release();
                }
                case "subsampled" -> { // variant 1 on a Poisson subset of rate 0.1, learning rate scaled by n/m
                    builder.samplingRate(t.batchSize / (0.1 * 0.9 * train.size()));
                    org.dpdl4j.tuning.SubsampledTuner sub = new org.dpdl4j.tuning.SubsampledTuner(new RandomSearchTuner(k, tunerSeed, 1,
                            false), 0.1, org.dpdl4j.accounting.SubsampledTuningEvent.Variant.DISJOINT,
                            org.dpdl4j.tuning.Extrapolation.LINEAR_LEARNING_RATE, false, tunerSeed + 1, false);
                    eventOf = m -> sub.event(hs, m);
                    runOn = m -> sub.tune(hs, m, null, TuningListener.NONE).release();
                }
                case "propose-test" -> { // k = 2 parts, g = 0.2, eps0 = 0.1
                    org.dpdl4j.tuning.ProposeTestTuner pt = new org.dpdl4j.tuning.ProposeTestTuner(2, 0.2, 0.1, 0, null, tunerSeed);
                    eventOf = m -> pt.event(hs, m);
                    runOn = m -> pt.tune(hs, m, null, TuningListener.NONE).release();
                }
                default -> throw new IllegalArgumentException("--tuner must be random-search, dp-hypo, subsampled or propose-test, got '"
                        + this.tuner + "'");
            }
            DpSgdMechanism mechanism = builder.build();
            PrivacyAccountant acc = Accountants.standard();
            double sigma = noiseMultiplier != null ? noiseMultiplier : NoiseCalibration.smallestNoise(
                    s -> eventOf.apply(mechanism.withNoiseMultiplier(s)), targetEpsilon != null ? targetEpsilon : 3.0, t.delta, acc, 1e-3);
            DpSgdMechanism run = zero ? mechanism.nonPrivateCopy().withNoiseMultiplier(0) : mechanism.withNoiseMultiplier(sigma);
            double claim = a.claimedEpsilon != null ? a.claimedEpsilon : acc.epsilon(eventOf.apply(mechanism.withNoiseMultiplier(sigma)),
                    t.delta);
            System.out.printf("dpdl4j %s | audit tune: %s, K ~ %s, space %s, sigma = %.4f; %d gradient canaries in every training%n",
                    Cli.version(), this.tuner, k.describe(), hs, sigma, a.canaries);
            Release release = runOn.apply(run);
            // K = 0 releases no model: nothing is learnt about the canaries, a lower bound of 0 (not a re-run, which would
            // condition the audit on K >= 1)
            OneRunAudit.Result r = release.model() == null ? new OneRunAudit.Result(0, a.canaries, 0, 0, 0, 0, 0)
                    : OneRunAudit.audit(design.scores(run.network(release.candidate(), 0).params(), release.model().params()),
                    design.included(), t.delta, a.confidence);
            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put("noise_multiplier", sigma);
            extra.put("distribution", k.describe());
            extra.put("tuner", this.tuner);
            extra.put("augmult", augmult.k);
            extra.put("design", design.description());
            return a.report(r, claim, t.delta, design.description(), extra, t.json);
        }
    }
}
