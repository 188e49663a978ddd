package org.dpdl4j.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.SubsampledTuningEvent;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.tuning.DpSgdMechanism;
import org.dpdl4j.tuning.Extrapolation;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.tuning.OperatorRecord;
import org.dpdl4j.tuning.Release;
import org.dpdl4j.tuning.PrivacyLedger;
import org.dpdl4j.tuning.Tuner;
import org.dpdl4j.tuning.SubsampledTuner;
import org.dpdl4j.tuning.SubsampledTuningResult;

/** {@code tune --tuner subsampled}: Koskela &amp; Kulkarni's procedure (arXiv:2301.11989) from the command line. */
final class SubsampledRun {
    private final TuneCommand c;
    private final RepetitionDistribution k;
    private final HyperparameterSpace space;
    private final DpSgdMechanism.Scoring scoring;
    private final boolean sigmaAxis;

    SubsampledRun(TuneCommand c, RepetitionDistribution k, HyperparameterSpace space, DpSgdMechanism.Scoring scoring, boolean sigmaAxis) {
        this.c = c;
        this.k = k;
        this.space = space;
        this.scoring = scoring;
        this.sigmaAxis = sigmaAxis;
    }

    /** The extrapolation rule a name on the command line stands for. */
    static Extrapolation extrapolation(String name) {
        return switch (name) {
            case "linear-lr" -> Extrapolation.LINEAR_LEARNING_RATE;
            case "none" -> Extrapolation.NONE;
            default -> throw new IllegalArgumentException("--extrapolation must be linear-lr or none, got '" + name + "'");
        };
    }

    Integer call() throws IOException {
        double tuneFraction = c.subsample.tuneFraction(true);
        SubsampledTuningEvent.Variant v = c.subsample.variant();
        Extrapolation rule = extrapolation(c.extrapolation);
        if (c.revealTrialScores) {
            throw new IllegalArgumentException("--reveal-trials is not available with --tuner subsampled (its bound covers "
                    + "the final model and the tuned candidate only)");
        }
        if (space.axes().stream().anyMatch(a -> a.name().equals("batch_size"))) {
            throw new IllegalArgumentException("--tuner subsampled keeps the DP-SGD sampling rate fixed: use a sampling_rate axis, "
                    + "not batch_size");
        }
        if (c.resuming() && c.t.secureNoise) { // X1 would be drawn anew: trials on the old X1 must not meet a final run on the new X \ X1
            throw new IllegalArgumentException("--resume: a subsampled tuning with --secure-noise cannot be resumed (its subset X1 "
                    + "cannot be drawn again); start it anew");
        }
        TrainTest data = c.t.load();
        int n = data.train().size();
        double expectedTuneTrain = tuneFraction * n * (1 - c.validationFraction);
        double q = c.t.batchSize / expectedTuneTrain;
        if (!(q <= 1)) {
            throw new IllegalArgumentException(String.format("--batch-size %d is the expected batch of the tuning runs, which train on "
                    + "about %.0f examples: it must be at most that", c.t.batchSize, expectedTuneTrain));
        }
        DpSgdMechanism template = c.mechanism(data, scoring).samplingRate(q).build();
        long seed = c.tunerSeed();
        Tuner search = c.tuner(k, c.inner);
        SubsampledTuner tuner = new SubsampledTuner(search, tuneFraction, v, rule, c.warmStart, seed * 0x9E3779B97F4A7C15L + 1,
                c.t.secureNoise);
        RdpAccountant acc = RdpAccountant.standard();
        if (c.noiseMultiplier == null && !sigmaAxis && c.candidateEpsilon == null) {
            DpSgdMechanism unscaled = template;
            double sigma = c.calibrate(s -> tuner.event(space, unscaled.withNoiseMultiplier(s)), "the distribution of K"
                    + (c.inner.equals("dp-hypo") ? " and the adaptivity cost log(C/c) of --density-bounds" : ""));
            template = template.withNoiseMultiplier(sigma);
            c.noiseMultiplier = sigma;
        }
        SubsampledTuningEvent event = tuner.event(space, template);
        System.out.printf("dpdl4j %s | subsampled tuning (Koskela & Kulkarni 2023, variant %d) on %s: q_tune = %s, inner %s K ~ %s "
                        + "(E[K] = %.4g), space %s, %d candidates%n", Cli.version(), v.number(), c.t.dataset, tuneFraction, c.inner,
                k.describe(), k.mean(), space, space.size());
        System.out.printf("each run: %s, DP-SGD q = %.5g (expected batch %d on the ~%.0f tuning examples), %.4g epochs, C = %s, "
                        + "sigma = %s; score noise %.4g correct-counts on X1%n", c.t.modelName(), q, c.t.batchSize, expectedTuneTrain,
                c.t.epochs, c.t.clip, c.noiseMultiplier == null ? "per candidate" : String.format("%.4f", c.noiseMultiplier),
                tuner.subsetScoreNoise(template));
        System.out.printf("epsilon at delta %s: whole procedure %.4f (planned)%n", c.t.delta, acc.epsilon(event, c.t.delta));

        if (c.dryRun) {
            System.out.printf("dry run: sigma %s; whole procedure epsilon %.4f at delta %s; nothing was trained or charged%n",
                    c.noiseMultiplier == null ? "per candidate" : String.format("%.4f", c.noiseMultiplier), acc.epsilon(event, c.t.delta),
                    c.t.delta);
            return 0;
        }
        Path out = c.t.outputDirectory("tune");
        PrivacyLedger ledger = c.openLedger();
        DpSgdMechanism charged = template;
        Long covering = c.chargeOnce(ledger, "subsampled tuning, variant " + v.number() + ", q_tune = " + tuneFraction,
                () -> tuner.event(space, charged), out);
        String run = c.runId;
        SubsampledTuningResult r;
        Cli.InterruptNotice notice = c.interruptNotice(out, ledger);
        try (TuneCommand.ProgressReporter progress = new TuneCommand.ProgressReporter(c.t.noProgress, false)) {
            r = tuner.tune(space, template, ledger, covering, progress,
                    m -> new org.dpdl4j.tuning.CheckpointedMechanism(m, TuneCommand.trialsDirectory(out), run));
        } finally {
            notice.remove();
            if (ledger != null) {
                ledger.close();
            }
        }
        c.finished(out);

        Release release = r.release();
        OperatorRecord record = r.operatorRecord();
        PrivacyGuarantee total = acc.guarantee(release.event(), c.t.delta);
        PrivacyGuarantee baseline = acc.guarantee(r.baselineEvent(), c.t.delta);
        PrivacyGuarantee single = acc.guarantee(SubsampledTuner.finalRunEvent(space, template), c.t.delta);
        double testAccuracy = DpSgdTrainer.accuracy(release.model(), data.test());
        SubsampledTuningResult.Compute cost = r.compute();
        double ours = cost.tuningGradients() + cost.finalGradients();
        double secondsPerGradient = (cost.tuningSeconds() + cost.finalSeconds()) / ours;

        Map<String, Object> report = new LinkedHashMap<>();
        report.put("tuner", "subsampled");
        report.put("variant", v.number());
        report.put("tune_fraction", tuneFraction);
        report.putAll(release.toMap());
        report.put("best_run", TuneCommand.runSettings(template, r.transferred()));
        report.put("test_accuracy", testAccuracy);
        report.put("epsilon_total", total.epsilon());
        report.put("epsilon_baseline", baseline.epsilon());
        report.put("epsilon_single_run", single.epsilon());
        report.put("delta", c.t.delta);
        report.put("rdp_order", total.order());
        report.put("distribution", k.describe());
        report.put("expected_repetitions", k.mean());
        report.put("noise_multiplier", c.noiseMultiplier);
        report.put("sampling_rate", q);
        report.put("dataset", c.t.dataset);
        report.put("dataset_size", n);
        report.put("model", c.t.modelName());
        report.put("config", c.releaseConfig(space));
        report.put("notes", release.notes());
        report.put("event", release.event().toMap());
        report.put("library_version", Cli.version());
        Map<String, Object> operator = new LinkedHashMap<>(record.toMap());
        operator.put("baseline_seconds_estimated", cost.baselineGradients() * secondsPerGradient);
        TuningOutput.write(out, release.model(), report, null, operator);

        System.out.printf("tuned on X1: best %s; final run with %s%n", r.tuned(), r.transferred());
        System.out.printf("final model test accuracy %.4f%n", testAccuracy);
        System.out.printf("epsilon at delta %s: whole procedure %.4f (variant %d, RDP order %s) | baseline: the same search on all "
                        + "the data (Papernot & Steinke 2022) %.4f | one run %.4f%n", c.t.delta, total.epsilon(), v.number(),
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
        for (String note : record.notes()) {
            System.out.println("[operator] " + note);
        }
        TuningOutput.printWhere(System.out, out, true, false);
        if (c.t.json) {
            report.remove("event");
            Cli.printJsonLine(System.out, report);
        }
        return 0;
    }
}
