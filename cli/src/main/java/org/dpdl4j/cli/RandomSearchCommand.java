package org.dpdl4j.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.accounting.RepeatAndSelectEvent;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.SelfComposedEvent;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.tuning.Trials;
import org.dpdl4j.tuning.Candidate;
import org.dpdl4j.tuning.DpSgdMechanism;
import org.dpdl4j.models.Models;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.tuning.Release;
import org.dpdl4j.release.PrivateModel;
import org.dpdl4j.release.StagedRelease;
import org.dpdl4j.tuning.PrivateTuning;
import org.dpdl4j.tuning.DpHypoTuner;
import org.dpdl4j.tuning.RandomSearchTuner;
import org.dpdl4j.tuning.Tuner;
import org.dpdl4j.tuning.TuningResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code tune random-search}: Papernot &amp; Steinke, "Hyperparameter Tuning with Renyi Differential Privacy", ICLR 2022,
 * arXiv:2110.03620: K ~ --repetitions DP-SGD runs on uniformly drawn candidates, the best released, charged by
 * Theorem 2 (truncated negative binomial K) or Theorem 6 (Poisson K).
 */
@Command(name = "random-search", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Random search (Papernot & Steinke 2022): K ~ --repetitions DP-SGD runs on candidates drawn uniformly "
                        + "from --space; only the best run is released, and the tuning's epsilon covers it."})
class RandomSearchCommand extends TuningCommand {
    @Mixin
    RepetitionOptions repetitions;

    /** DP-HyPO's options, or null for random search. */
    @Override
    void checkOwnOptions() {
        repetitions.distribution(hypo() != null); // a malformed --repetitions is refused before a Spark cluster is started
    }

    DpHypoOptions hypo() {
        return null;
    }

    @Override
    Map<String, Object> ownSettings() {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        if (hypo() != null) {
            m.put("density_bounds", List.of(hypo().bounds()[0], hypo().bounds()[1]));
        }
        m.put("repetitions", repetitions.distribution(hypo() != null).toMap());
        return m;
    }

    /** The tuner: random search over K (DP-HyPO overrides this). */
    Tuner<TuningResult> tuner(RepetitionDistribution k) {
        return new RandomSearchTuner(k, tunerSeed(), threads, revealTrialScores);
    }

    @Override
    Integer run(HyperparameterSpace hs, DpSgdMechanism.Scoring scoring, boolean sigmaAxis) throws IOException {
        if (revealTrialScores && noiseMultiplier == null && !sigmaAxis && candidateEpsilon == null) {
            throw new IllegalArgumentException("--reveal-trials charges the realised K runs, which is unknown before "
                    + "they are drawn: give --noise-multiplier instead of --target-epsilon");
        }

        if (resumeState != null && revealTrialScores) {
            throw new IllegalArgumentException("--resume is not available for a tuning with --reveal-trials (its charge depends on K)");
        }
        RepetitionDistribution k = repetitions.distribution(hypo() != null);
        Tuner<TuningResult> search = tuner(k); // validates the tuner's options before the data is loaded
        TrainTest data = loadData();
        t.checkDelta(data.trainExamples().size());
        PrivateTuning tuning = tuning(search, hs, mechanism(data, scoring).build(), data, chargeLabel(search, k),
                (out, outcome, model) -> stage(out, (TuningResult) outcome, model, data, hs, k, scoring));
        mechanism = plan(tuning).mechanism();
        PrivacyAccountant acc = Accountants.standard();
        PrivacyEvent base = Trials.baseEvent(hs, mechanism);
        System.out.printf("dpdl4j %s | %s on %s: K ~ %s (E[K] = %.4g), space %s, %d candidates%n", Cli.version(),
                search instanceof DpHypoTuner ? "DP-HyPO (density bounds " + hypo().density.densityBounds + ", " + hypo().rule().name() + ")"
                        : "random search", t.dataset, k.describe(), k.mean(), hs, hs.size());
        System.out.printf("each run: %s, n=%d, B=%d, %.4g epochs, C=%s, sigma=%.4f, %s; one run epsilon %.4f%n",
                t.modelName(), data.trainExamples().size(), t.batchSize, t.epochs, t.clip,
                noiseMultiplier == null ? Double.NaN : noiseMultiplier,
                scoring == DpSgdMechanism.Scoring.PRIVATE_VALIDATION
                        ? String.format("score noise std %.4g", scoreNoise) : "score on a split declared public, no cost",
                acc.epsilon(base, t.delta));

        if (dryRun) {
            return dryRun(tuning.plan(), data, k);
        }
        run(tuning);

        Release release = result.release();
        PrivacyGuarantee total = acc.guarantee(release.event(), t.delta);
        PrivacyGuarantee single = acc.guarantee(result.baseEvent(), t.delta);
        System.out.printf("best: %s | validation score %s | test accuracy %s%n", release.candidate(),
                release.score() == null ? "n/a" : String.format("%.4f", release.score()),
                testAccuracy == null ? "n/a (no model)" : testAccuracy.console());
        System.out.printf("epsilon at delta %s:  one run %.4f | whole tuning %.4f (the honest number, RDP order %s)%n", t.delta,
                single.epsilon(), total.epsilon(), total.order());
        if (report.adaptivity() != null) {
            System.out.printf("adaptivity cost: %.4f (random search with the same runs would cost %.4f)%n",
                    report.adaptivity().adaptivityCost(), report.adaptivity().epsilonRandomSearch());
        }
        for (String note : release.notes()) {
            System.out.println("note: " + note);
        }
        if (!total.warning().isEmpty()) {
            System.out.println("warning: " + total.warning());
        }
        System.out.printf("[operator] K = %d runs (naive composition over them: epsilon %.4f)%n", result.repetitions(), naive);
        printEnd(t.outputDirectory("tune"), result.operatorRecord().notes(), release.model() != null, release.trialsRevealed(), report);
        return 0;
    }

    /** The base mechanism at the tuning's σ, its outcome, report and naive composition, for the console. */
    private DpSgdMechanism mechanism;
    private TuningResult result;
    private TuningReports.RandomSearch report;
    private double naive;
    private Cli.TestAccuracy testAccuracy;

    /** The release: tuning.json (the report), trials.json with --reveal-trials, and the operator record. */
    private StagedRelease stage(Path out, TuningResult r, PrivateModel model, TrainTest data, HyperparameterSpace hs,
                                RepetitionDistribution k, DpSgdMechanism.Scoring scoring) throws IOException {
        PrivacyAccountant acc = Accountants.standard();
        Release release = r.release();
        PrivacyGuarantee total = acc.guarantee(release.event(), t.delta);
        PrivacyGuarantee single = acc.guarantee(r.baseEvent(), t.delta);
        testAccuracy = release.model() != null ? Cli.TestAccuracy.of(release.model(), data) : null;
        TuningReports.Adaptivity adaptivity = null;
        if (hypo() != null && !release.trialsRevealed()) {
            double random = acc.epsilon(new RepeatAndSelectEvent(r.baseEvent(), k), t.delta);
            adaptivity = new TuningReports.Adaptivity(List.of(hypo().bounds()[0], hypo().bounds()[1]), random,
                    total.epsilon() - random);
        }
        result = r;
        naive = r.repetitions() == 0 ? 0 : acc.epsilon(new SelfComposedEvent(r.baseEvent(), r.repetitions()), t.delta);
        report = new TuningReports.RandomSearch(hypo() != null ? "dp-hypo" : "random-search",
                release.candidate().toMap(), release.score(), release.repetitions(), TuningReports.RunSettings.of(mechanism,
                release.candidate()), testAccuracy == null ? null : testAccuracy.release(), total.epsilon(), single.epsilon(), adaptivity, t.delta, total.order(),
                k.describe(), k.mean(), noiseMultiplier, score, release.trialsRevealed(),
                provenance(hs, data.trainExamples().size(), release.notes(), release.event()));
        Map<String, Object> operator = withExecutorRecord(r.operatorRecord().toMap());
        operator.put("epsilon_naive_composition", naive);
        if (testAccuracy != null) {
            testAccuracy.addTo(operator);
        }
        operator.put("train_split_size", mechanism.train().size());
        operator.put("validation_split_size", mechanism.validation().size());
        return TuningOutput.stage(out, model, report, release.trialsRevealed() ? release.trialMaps() : null, operator);
    }

    /** What --dry-run prints: σ, the tuning's ε, E[K] and the expected time from a short timing on random inputs. */
    private Integer dryRun(PrivateTuning.Plan plan, TrainTest data, RepetitionDistribution k) {
        PrivacyAccountant acc = Accountants.standard();
        PrivacyEvent event = plan.event(); // null with --reveal-trials: the composition of the K drawn runs
        Candidate c = plan.space().first();
        org.dpdl4j.dpsgd.DpSgdConfig cfg = plan.mechanism().config(c, 0);
        double perRun = Cli.estimateSecondsPerStep(Models.byName(t.modelName(), t.modelOptions(data)), plan.mechanism().train(), cfg)
                * cfg.steps();
        System.out.printf("dry run: sigma %.4f; whole tuning epsilon %s at delta %s; E[K] = %.4g runs of about %.0f s each (%s), "
                        + "about %.0f s in all; nothing was trained or charged%n", noiseMultiplier,
                event == null ? "(the composition of the K drawn runs)" : String.format("%.4f", acc.epsilon(event, t.delta)), t.delta,
                k.mean(), perRun, c, perRun * k.mean());
        if (t.json) {
            TuningReports.DryRun j = new TuningReports.DryRun(true, noiseMultiplier, event == null ? null : acc.epsilon(event, t.delta),
                    t.delta, k.mean(), perRun * k.mean());
            Cli.printJsonLine(System.out, j);
        }
        return 0;
    }

    private static String chargeLabel(Tuner<TuningResult> search, RepetitionDistribution k) {
        return (search instanceof DpHypoTuner ? "DP-HyPO" : "random search") + ", K ~ " + k.describe();
    }
}
