package org.dpdl4j.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.tuning.Trials;
import org.dpdl4j.tuning.DpSgdMechanism;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.tuning.Release;
import org.dpdl4j.release.PrivateModel;
import org.dpdl4j.release.StagedRelease;
import org.dpdl4j.tuning.PrivateTuning;
import org.dpdl4j.tuning.ProposeTestTuner;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tune propose-test}: Ding &amp; Wu's Algorithm 1 (arXiv:2211.01852) from the command line. */
@Command(name = "propose-test", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Propose-test tuning (Ding & Wu 2022): k-part utilities and noisy thresholds with a doubling step "
                        + "select a candidate; its final model is trained on the training split.",
                "T_max iterations are charged in full."})
final class ProposeTestCommand extends TuningCommand {
    @Option(names = "--partitions", paramLabel = "k", defaultValue = "10", description = "propose-test: disjoint parts k (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--granularity", paramLabel = "g", defaultValue = "0.1", description = {"propose-test: utility granularity g in (0, 1); T_max = 2*ceil((1-u₀)/g)+2 iterations are charged "
                        + "(default ${DEFAULT-VALUE}: 22 iterations)."})
    double granularity;

    // defaults as initial values, not defaultValue, which picocli would write over what the older names set
    @Option(names = "--epsilon0", paramLabel = "ε₀", description = "propose-test: epsilon of one loop iteration (default 0.1).")
    double epsilon0 = 0.1;

    /** The older name of --epsilon0, read from older command lines (a saved tuning's too); not listed. */
    @Option(names = "--eps0", hidden = true, paramLabel = "ε₀")
    void oldEpsilon0Name(double e) {
        epsilon0 = e;
    }

    @Option(names = "--lower-utility", paramLabel = "u₀", description = "propose-test: utility lower bound u₀ in [0, 1) (default 0).")
    double lowerUtility = 0;

    /** The older name of --lower-utility; not listed. */
    @Option(names = "--u0", hidden = true, paramLabel = "u₀")
    void oldLowerUtilityName(double u) {
        lowerUtility = u;
    }

    @Option(names = "--max-iterations", paramLabel = "T_max", description = "propose-test: iteration cap, all of it charged (default 2*ceil((1-u₀)/g)+2).")
    Integer maxIterations;


    @Override
    Integer run(HyperparameterSpace space, DpSgdMechanism.Scoring scoring, boolean sigmaAxis) throws IOException {
        this.space = space;
        this.scoring = scoring;
        return runTuning();
    }

    private HyperparameterSpace space;
    private DpSgdMechanism.Scoring scoring;


    @Override
    Map<String, Object> ownSettings() { // as PrivateTuning.proposeTest writes them
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("partitions", partitions);
        m.put("granularity", granularity);
        m.put("epsilon0", epsilon0);
        m.put("lower_utility", lowerUtility);
        m.put("max_iterations", maxIterations != null ? maxIterations : ProposeTestTuner.defaultMaxIterations(lowerUtility, granularity));
        return m;
    }

    private Integer runTuning() throws IOException {
        if (revealTrialScores) {
            throw new IllegalArgumentException("--reveal-trials is not available with --tuner propose-test");
        }
        ProposeTestTuner tuner;
        try {
            tuner = new ProposeTestTuner(partitions, granularity, epsilon0, lowerUtility, maxIterations, tunerSeed()).withThreads(threads);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--partitions/--granularity/--epsilon0/--lower-utility/--max-iterations: " + e.getMessage());
        }
        TrainTest data = loadData();
        t.checkDelta(data.trainExamples().size());
        if (partitions > data.trainExamples().size()) { // each part must hold examples (and k arrays of that size would not fit)
            throw new IllegalArgumentException("--partitions must be at most the " + data.trainExamples().size() + " training examples, got "
                    + partitions);
        }
        DpSgdMechanism template = mechanism(data, scoring).build();
        try {
            tuner.checkData(template, t.batchSize);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--partitions/--batch-size: " + e.getMessage());
        }
        PrivateTuning tuning = tuning(tuner, space, template, data, "propose-test: " + tuner.maxIterations() + " x " + epsilon0
                + "-DP iterations + final run", (out, outcome, model) -> stage(out, (ProposeTestTuner.Result) outcome, model, data));
        template = plan(tuning).mechanism();
        PrivacyAccountant acc = Accountants.standard();
        System.out.printf("dpdl4j %s | propose-test tuning (Ding & Wu, Algorithm 1) on %s: %d candidates, k = %d parts, g = %s, epsilon0 = %s, "
                        + "lower utility = %s, T_max = %d (charged in full)%n", Cli.version(), t.dataset, space.size(), partitions, granularity,
                epsilon0, lowerUtility, tuner.maxIterations());
        if (dryRun) {
            System.out.printf("dry run: sigma %.4f; total epsilon %.4f at delta %s (RDP); nothing was trained or charged%n",
                    noiseMultiplier, acc.epsilon(tuning.plan().event(), t.delta), t.delta);
            return 0;
        }
        this.template = template;
        this.tuner = tuner;
        run(tuning); // on --resume the (non-private) utilities are computed again
        System.out.printf("selected %s | final model test accuracy %s%n", selected, testAccuracy.console());
        System.out.printf("epsilon at delta %s: total %.4f (%s) | RDP %.4f, advanced composition + RDP %.4f | selection loop alone "
                        + "%.4f (T_max = %d iterations) | final run alone %.4f%n", t.delta, report.epsilonTotal(),
                report.epsilonTotal() == report.epsilonTotalRdp() ? "RDP" : "advanced composition, delta split in halves",
                report.epsilonTotalRdp(), report.epsilonTotalAdvancedComposition(), report.epsilonSelectionLoop(), tuner.maxIterations(),
                report.epsilonFinalRun());
        for (String note : notes) {
            System.out.println("note: " + note);
        }
        printEnd(t.outputDirectory("tune"), operatorNotes, true, false, report);
        return 0;
    }

    /** The base mechanism at the tuning's σ, the tuner, and what the console prints of the outcome. */
    private DpSgdMechanism template;
    private ProposeTestTuner tuner;
    private TuningReports.ProposeTest report;
    private Cli.TestAccuracy testAccuracy;
    private List<String> notes;
    private org.dpdl4j.tuning.Candidate selected;
    private List<String> operatorNotes;

    /** The release: tuning.json (the report, ε by RDP and by advanced composition) and the operator record. */
    private StagedRelease stage(Path out, ProposeTestTuner.Result r, PrivateModel model, TrainTest data) throws IOException {
        PrivacyAccountant acc = Accountants.standard();
        double delta = t.delta;
        PrivacyEvent finalRun = Trials.finalRunEvent(space, template);
        PrivacyGuarantee total = acc.guarantee(r.event(), delta);
        PrivacyGuarantee loop = acc.guarantee(tuner.loopEvent(), delta);
        PrivacyGuarantee fin = acc.guarantee(finalRun, delta);
        double viaAdvanced = org.dpdl4j.accounting.AdvancedComposition.epsilon(tuner.maxIterations(), epsilon0, delta / 2) + acc.epsilon(finalRun, delta / 2);
        double best = Math.min(total.epsilon(), viaAdvanced);
        Release release = r.release();
        testAccuracy = Cli.TestAccuracy.of(release.model(), data);
        report = new TuningReports.ProposeTest("propose-test", release.candidate().toMap(), release.score(),
                TuningReports.RunSettings.of(template, release.candidate()), testAccuracy.release(), best, total.epsilon(), viaAdvanced,
                loop.epsilon(), fin.epsilon(), delta, tuner.maxIterations(), partitions, granularity, epsilon0, lowerUtility,
                noiseMultiplier, provenance(space, data.trainExamples().size(), release.notes(), release.event()));
        notes = release.notes();
        selected = release.candidate();
        operatorNotes = r.operatorRecord().notes();
        Map<String, Object> operator = withExecutorRecord(r.operatorRecord().toMap());
        testAccuracy.addTo(operator);
        return TuningOutput.stage(out, model, report, null, operator);
    }
}
