package org.dpdl4j.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.tuning.DpSgdMechanism;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.tuning.OperatorRecord;
import org.dpdl4j.tuning.Release;
import org.dpdl4j.tuning.PrivacyLedger;
import org.dpdl4j.tuning.ProposeTestTuner;
import org.dpdl4j.tuning.SubsampledTuner;

/** {@code tune --tuner propose-test}: Ding &amp; Wu's Algorithm 1 (arXiv:2211.01852) from the command line. */
final class ProposeTestRun {
    private final TuneCommand c;
    private final HyperparameterSpace space;
    private final DpSgdMechanism.Scoring scoring;

    ProposeTestRun(TuneCommand c, HyperparameterSpace space, DpSgdMechanism.Scoring scoring) {
        this.c = c;
        this.space = space;
        this.scoring = scoring;
    }

    /**
     * ε of T ε₀-DP steps by the advanced composition theorem (Dwork, Rothblum &amp; Vadhan 2010):
     * √(2T log(1/δ′))·ε₀ + T·ε₀(e^{ε₀} − 1), at failure probability δ′.
     */
    static double advancedComposition(int steps, double epsilon0, double deltaPrime) {
        return Math.sqrt(2.0 * steps * Math.log(1 / deltaPrime)) * epsilon0 + steps * epsilon0 * Math.expm1(epsilon0);
    }

    Integer call() throws IOException {
        if (c.revealTrialScores) {
            throw new IllegalArgumentException("--reveal-trials is not available with --tuner propose-test");
        }
        ProposeTestTuner tuner;
        try {
            tuner = new ProposeTestTuner(c.partitions, c.granularity, c.epsilon0, c.lowerUtility, c.maxIterations, c.tunerSeed());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--partitions/--granularity/--eps0/--u0/--max-iterations: " + e.getMessage());
        }
        TrainTest data = c.t.load();
        DpSgdMechanism template = c.mechanism(data, scoring).build();
        RdpAccountant acc = RdpAccountant.standard();
        if (c.noiseMultiplier == null && c.candidateEpsilon == null && space.axes().stream().noneMatch(a -> a.name().equals("sigma"))) {
            DpSgdMechanism unscaled = template;
            double sigma = c.calibrate(s -> ComposedEvent.of(tuner.loopEvent(), SubsampledTuner.finalRunEvent(space,
                    unscaled.withNoiseMultiplier(s))), "the selection loop's T_max = " + tuner.maxIterations() + " iterations of "
                    + c.epsilon0 + "-DP (lower --eps0, or raise --granularity to lower T_max)");
            template = template.withNoiseMultiplier(sigma);
            c.noiseMultiplier = sigma;
        }
        PrivacyEvent finalRun = SubsampledTuner.finalRunEvent(space, template);
        System.out.printf("dpdl4j %s | propose-test tuning (Ding & Wu, Algorithm 1) on %s: %d candidates, k = %d parts, g = %s, eps0 = %s, "
                        + "u0 = %s, T_max = %d (charged in full)%n", Cli.version(), c.t.dataset, space.size(), c.partitions, c.granularity,
                c.epsilon0, c.lowerUtility, tuner.maxIterations());
        if (c.dryRun) {
            System.out.printf("dry run: sigma %.4f; total epsilon %.4f at delta %s (RDP); nothing was trained or charged%n",
                    c.noiseMultiplier, acc.epsilon(tuner.event(space, template), c.t.delta), c.t.delta);
            return 0;
        }
        Path out = c.t.outputDirectory("tune");
        PrivacyLedger ledger = c.openLedger();
        DpSgdMechanism charged = template;
        Long covering = c.chargeOnce(ledger, "propose-test: " + tuner.maxIterations() + " x " + c.epsilon0 + "-DP iterations + final run",
                () -> tuner.event(space, charged), out);
        ProposeTestTuner.Result r;
        Cli.InterruptNotice notice = c.interruptNotice(out, ledger);
        try (TuneCommand.ProgressReporter progress = new TuneCommand.ProgressReporter(c.t.noProgress, false)) {
            r = tuner.tune(space, template, ledger, covering, progress); // on --resume the (non-private) utilities are computed again
        } finally {
            notice.remove();
            if (ledger != null) {
                ledger.close();
            }
        }
        c.finished(out);
        double delta = c.t.delta;
        PrivacyGuarantee total = acc.guarantee(r.event(), delta);
        PrivacyGuarantee loop = acc.guarantee(tuner.loopEvent(), delta);
        PrivacyGuarantee fin = acc.guarantee(finalRun, delta);
        double viaAdvanced = advancedComposition(tuner.maxIterations(), c.epsilon0, delta / 2) + acc.epsilon(finalRun, delta / 2);
        double best = Math.min(total.epsilon(), viaAdvanced);
        Release release = r.release();
        double testAccuracy = DpSgdTrainer.accuracy(release.model(), data.test());
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("tuner", "propose-test");
        report.putAll(release.toMap());
        report.put("best_run", TuneCommand.runSettings(template, release.candidate()));
        report.put("test_accuracy", testAccuracy);
        report.put("epsilon_total", best);
        report.put("epsilon_total_rdp", total.epsilon());
        report.put("epsilon_total_advanced_composition", viaAdvanced);
        report.put("epsilon_selection_loop", loop.epsilon());
        report.put("epsilon_final_run", fin.epsilon());
        report.put("delta", delta);
        report.put("max_iterations", tuner.maxIterations());
        report.put("partitions", c.partitions);
        report.put("granularity", c.granularity);
        report.put("eps0", c.epsilon0);
        report.put("u0", c.lowerUtility);
        report.put("noise_multiplier", c.noiseMultiplier);
        report.put("dataset", c.t.dataset);
        report.put("dataset_size", data.train().size());
        report.put("model", c.t.modelName());
        report.put("config", c.releaseConfig(space));
        report.put("notes", release.notes());
        report.put("event", release.event().toMap());
        report.put("library_version", Cli.version());
        OperatorRecord record = r.operatorRecord();
        TuningOutput.write(out, release.model(), report, null, record.toMap());
        System.out.printf("selected %s | final model test accuracy %.4f%n", release.candidate(), testAccuracy);
        System.out.printf("epsilon at delta %s: total %.4f (%s) | RDP %.4f, advanced composition + RDP %.4f | selection loop alone "
                        + "%.4f (T_max = %d iterations) | final run alone %.4f%n", delta, best,
                best == total.epsilon() ? "RDP" : "advanced composition, delta split in halves", total.epsilon(), viaAdvanced,
                loop.epsilon(), tuner.maxIterations(), fin.epsilon());
        for (String note : release.notes()) {
            System.out.println("note: " + note);
        }
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
