package org.dpdl4j.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.SubsampledTuningEvent;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.tuning.Trials;
import org.dpdl4j.tuning.DpSgdMechanism;
import org.dpdl4j.tuning.Extrapolation;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.tuning.Release;
import org.dpdl4j.release.PrivateModel;
import org.dpdl4j.release.StagedRelease;
import org.dpdl4j.tuning.PrivateTuning;
import org.dpdl4j.tuning.RandomSearchTuner;
import org.dpdl4j.tuning.Tuner;
import org.dpdl4j.tuning.TuningResult;
import org.dpdl4j.tuning.SubsampledTuner;
import org.dpdl4j.tuning.SubsampledTuningResult;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code tune subsampled}: Koskela &amp; Kulkarni's procedure (arXiv:2301.11989) from the command line. */
@Command(name = "subsampled", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Subsampled tuning (Koskela & Kulkarni 2023): tune with --inner on a Poisson subset X1 of the "
                        + "training data, then train the final model with the best candidate on X \\ X1 (variant 1) or X "
                        + "(variant 2)."})
final class SubsampledCommand extends TuningCommand {
    @Mixin
    RepetitionOptions repetitions;

    @Mixin
    DpHypoOptions hypo;

    @Mixin
    SubsampleOptions subsample;

    @Option(names = "--inner", defaultValue = "random-search", description = "subsampled: the tuner run on X1, random-search or dp-hypo (default ${DEFAULT-VALUE}).")
    String inner;

    @Option(names = "--extrapolation", defaultValue = "linear-lr", description = {"subsampled: linear-lr (learning rate x n/m for sgd and momentum, kept for adam; Koskela & Kulkarni "
                        + "2023, arXiv:2301.11989, Sec. 3.2) or none (default ${DEFAULT-VALUE})."})
    String extrapolation;

    @Option(names = "--warm-start", description = "subsampled: start the final run from the tuned model (Koskela & Kulkarni 2023, arXiv:2301.11989, Remark 8).")
    boolean warmStart;


    @Override
    void checkOwnOptions() {
        if (!inner.equals("random-search") && !inner.equals("dp-hypo")) {
            throw new IllegalArgumentException("--inner must be random-search or dp-hypo, got '" + inner + "'");
        }
        repetitions.distribution(inner.equals("dp-hypo")); // a malformed --repetitions is refused before a Spark cluster starts
    }

    @Override
    Integer run(HyperparameterSpace space, DpSgdMechanism.Scoring scoring, boolean sigmaAxis) throws IOException {
        this.k = repetitions.distribution(inner.equals("dp-hypo"));
        this.space = space;
        this.scoring = scoring;
        this.sigmaAxis = sigmaAxis;
        return runTuning();
    }

    @Override
    Map<String, Object> ownSettings() { // as PrivateTuning.subsampled writes them, and the inner tuner
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("tune_fraction", subsample.tuneFraction);
        m.put("variant", subsample.variant);
        m.put("extrapolation", extrapolation);
        m.put("warm_start", warmStart);
        m.put("inner", inner);
        if (inner.equals("dp-hypo")) {
            m.put("density_bounds", List.of(hypo.bounds()[0], hypo.bounds()[1]));
        }
        m.put("repetitions", k.toMap());
        return m;
    }

    /** The inner tuner --inner names, with this command's options. */
    private Tuner<TuningResult> tuner(RepetitionDistribution k, String name) {
        if (name.equals("dp-hypo")) {
            return hypo.tuner(k, tunerSeed(), revealTrialScores);
        }
        if (hypo.density.densityBounds != null) {
            throw new IllegalArgumentException("--density-bounds is for --inner dp-hypo");
        }
        return new RandomSearchTuner(k, tunerSeed(), threads, revealTrialScores);
    }

    private RepetitionDistribution k;
    private HyperparameterSpace space;
    private DpSgdMechanism.Scoring scoring;
    private boolean sigmaAxis;


    /** The extrapolation rule a name on the command line stands for. */
    static Extrapolation extrapolation(String name) {
        return switch (name) {
            case "linear-lr" -> Extrapolation.LINEAR_LEARNING_RATE;
            case "none" -> Extrapolation.NONE;
            default -> throw new IllegalArgumentException("--extrapolation must be linear-lr or none, got '" + name + "'");
        };
    }

    private Integer runTuning() throws IOException {
        double tuneFraction = subsample.tuneFraction(true);
        SubsampledTuningEvent.Variant v = subsample.variant();
        Extrapolation rule = extrapolation(extrapolation);
        if (revealTrialScores) {
            throw new IllegalArgumentException("--reveal-trials is not available with --tuner subsampled (its bound covers "
                    + "the final model and the tuned candidate only)");
        }
        if (space.axes().stream().anyMatch(a -> a.name().equals("batch_size"))) {
            throw new IllegalArgumentException("--tuner subsampled keeps the DP-SGD sampling rate fixed: use a sampling_rate axis, "
                    + "not batch_size");
        }
        if (resuming() && t.secureNoise) { // X1 would be drawn anew: trials on the old X1 must not meet a final run on the new X \ X1
            throw new IllegalArgumentException("--resume: a subsampled tuning with --secure-noise cannot be resumed (its subset X1 "
                    + "cannot be drawn again); start it anew");
        }
        TrainTest data = loadData();
        t.checkDelta(data.trainExamples().size());
        int n = data.trainExamples().size();
        double expectedTuneTrain = tuneFraction * n * (1 - validationFraction);
        double q = t.batchSize / expectedTuneTrain;
        if (!(q <= 1)) {
            throw new IllegalArgumentException(String.format("--batch-size %d is the expected batch of the tuning runs, which train on "
                    + "about %.0f examples: it must be at most that", t.batchSize, expectedTuneTrain));
        }
        long seed = tunerSeed();
        Tuner<TuningResult> search = tuner(k, inner);
        SubsampledTuner tuner = new SubsampledTuner(search, tuneFraction, v, rule, warmStart, seed * 0x9E3779B97F4A7C15L + 1,
                t.secureNoise);
        PrivateTuning tuning = tuning(tuner, space, mechanism(data, scoring).samplingRate(q).build(), data,
                "subsampled tuning, variant " + v.number() + ", q_tune = " + tuneFraction,
                (out, outcome, model) -> stage(out, (SubsampledTuningResult) outcome, model, data, q));
        template = plan(tuning).mechanism();
        PrivacyAccountant acc = Accountants.standard();
        double planned = acc.epsilon(tuning.plan().event(), t.delta);
        System.out.printf("dpdl4j %s | subsampled tuning (Koskela & Kulkarni 2023, variant %d) on %s: q_tune = %s, inner %s K ~ %s "
                        + "(E[K] = %.4g), space %s, %d candidates%n", Cli.version(), v.number(), t.dataset, tuneFraction, inner,
                k.describe(), k.mean(), space, space.size());
        System.out.printf("each run: %s, DP-SGD q = %.5g (expected batch %d on the ~%.0f tuning examples), %.4g epochs, C = %s, "
                        + "sigma = %s; score noise %.4g correct-counts on X1%n", t.modelName(), q, t.batchSize, expectedTuneTrain,
                t.epochs, t.clip, noiseMultiplier == null ? "per candidate" : String.format("%.4f", noiseMultiplier),
                tuner.subsetScoreNoise(template));
        System.out.printf("epsilon at delta %s: whole procedure %.4f (planned)%n", t.delta, planned);

        if (dryRun) {
            System.out.printf("dry run: sigma %s; whole procedure epsilon %.4f at delta %s; nothing was trained or charged%n",
                    noiseMultiplier == null ? "per candidate" : String.format("%.4f", noiseMultiplier), planned, t.delta);
            return 0;
        }
        run(tuning);

        SubsampledTuningResult r = result;
        Release release = r.release();
        PrivacyGuarantee total = acc.guarantee(release.event(), t.delta);
        PrivacyGuarantee baseline = acc.guarantee(r.baselineEvent(), t.delta);
        PrivacyGuarantee single = acc.guarantee(Trials.finalRunEvent(space, template), t.delta);
        SubsampledTuningResult.Compute cost = r.compute();
        double ours = cost.tuningGradients() + cost.finalGradients();
        double secondsPerGradient = (cost.tuningSeconds() + cost.finalSeconds()) / ours;
        System.out.printf("tuned on X1: best %s; final run with %s%n", r.tuned(), r.transferred());
        System.out.printf("final model test accuracy %s%n", testAccuracy.console());
        System.out.printf("epsilon at delta %s: whole procedure %.4f (variant %d, RDP order %s) | baseline: the same search on all "
                        + "the data (Papernot & Steinke 2022) %.4f | one run %.4f%n", t.delta, total.epsilon(), v.number(),
                total.order(), baseline.epsilon(), single.epsilon());
        for (String note : release.notes()) {
            System.out.println("note: " + note);
        }
        if (!total.warning().isEmpty()) {
            System.out.println("warning: " + total.warning());
        }
        System.out.printf("[operator] K = %d runs on X1; compute: %.3g gradient evaluations (tuning %.3g in %.0f s, final %.3g in "
                        + "%.0f s); the baseline expects %.3g (%.2fx ours, about %.0f s at our measured rate)%n",
                r.tuning().repetitions(), ours, cost.tuningGradients(), cost.tuningSeconds(), cost.finalGradients(),
                cost.finalSeconds(), cost.baselineGradients(), cost.gradientRatio(), cost.baselineGradients() * secondsPerGradient);
        printEnd(t.outputDirectory("tune"), r.operatorRecord().notes(), true, false, report);
        return 0;
    }

    /** The base mechanism at the tuning's σ, the outcome and its report, for the console. */
    private DpSgdMechanism template;
    private SubsampledTuningResult result;
    private TuningReports.Subsampled report;
    private Cli.TestAccuracy testAccuracy;

    /** The release: tuning.json (the report) and the operator record, with the baseline's estimated time. */
    private StagedRelease stage(Path out, SubsampledTuningResult r, PrivateModel model, TrainTest data, double q) throws IOException {
        PrivacyAccountant acc = Accountants.standard();
        Release release = r.release();
        PrivacyGuarantee total = acc.guarantee(release.event(), t.delta);
        PrivacyGuarantee baseline = acc.guarantee(r.baselineEvent(), t.delta);
        PrivacyGuarantee single = acc.guarantee(Trials.finalRunEvent(space, template), t.delta);
        testAccuracy = Cli.TestAccuracy.of(release.model(), data);
        SubsampledTuningResult.Compute cost = r.compute();
        double secondsPerGradient = (cost.tuningSeconds() + cost.finalSeconds()) / (cost.tuningGradients() + cost.finalGradients());
        result = r;
        report = new TuningReports.Subsampled("subsampled", subsample.variant().number(), subsample.tuneFraction,
                release.candidate().toMap(), release.score(), r.extrapolation(), r.transferred().toMap(),
                TuningReports.RunSettings.of(template, r.transferred()), testAccuracy.release(), total.epsilon(), baseline.epsilon(),
                single.epsilon(), t.delta, total.order(), k.describe(), k.mean(), noiseMultiplier, q,
                provenance(space, data.trainExamples().size(), release.notes(), release.event()));
        Map<String, Object> operator = withExecutorRecord(r.operatorRecord().toMap());
        operator.put("baseline_seconds_estimated", cost.baselineGradients() * secondsPerGradient);
        testAccuracy.addTo(operator);
        return TuningOutput.stage(out, model, report, null, operator);
    }
}
