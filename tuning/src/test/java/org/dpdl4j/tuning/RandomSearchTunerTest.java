package org.dpdl4j.tuning;

import org.dpdl4j.release.PrivacyLedger;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.PointwiseMaxEvent;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.accounting.RepeatAndSelectEvent;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RandomSearchTunerTest {
    private final HyperparameterSpace space = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=log:0.01:1:30"));

    @Test
    void sameSeedSameResultWhateverTheThreadCount() {
        TuningResult one = new RandomSearchTuner(RepetitionDistribution.poisson(12), 99, 1, false)
                .tune(space, new FakeMechanism(10), null, TuningListener.NONE);
        TuningResult four = new RandomSearchTuner(RepetitionDistribution.poisson(12), 99, 4, false)
                .tune(space, new FakeMechanism(10), null, TuningListener.NONE);
        assertTrue(one.repetitions() > 0);
        assertEquals(one.repetitions(), four.repetitions());
        assertEquals(one.trials().stream().map(TrialResult::score).toList(), four.trials().stream().map(TrialResult::score).toList());
        assertEquals(one.candidate(), four.candidate());
        double bestScore = one.trials().stream().mapToDouble(TrialResult::score).max().orElseThrow();
        assertEquals(bestScore, one.best().score(), 0);
        assertEquals(new RepeatAndSelectEvent(new GaussianEvent(5), RepetitionDistribution.poisson(12)), one.event());
    }

    @Test
    void zeroRunsReturnTheDefault() {
        TuningResult r = new RandomSearchTuner(RepetitionDistribution.poisson(1e-9), 1, 1, false)
                .tune(space, new FakeMechanism(10), null, TuningListener.NONE);
        assertEquals(0, r.repetitions());
        assertNull(r.best());
        assertEquals(space.first(), r.candidate());
        assertTrue(r.operatorNotes().stream().anyMatch(n -> n.contains("K = 0")));
        assertTrue(r.notes().stream().noneMatch(n -> n.contains("K = 0")), "K = 0 is operator-only");
        assertNull(r.release().model());
        assertNull(r.release().score());
    }

    /**
     * The release is exactly what Papernot &amp; Steinke's Theorem 6 covers: the best run's candidate and score,
     * with K and the other trials only in the operator record.
     */
    @Test
    void theReleaseHoldsTheBestRunAndNeitherKNorTheOtherTrials() {
        TuningResult r = new RandomSearchTuner(RepetitionDistribution.poisson(8), 5, 1, false)
                .tune(space, new FakeMechanism(10), null, TuningListener.NONE);
        assertTrue(r.repetitions() > 1, "a seed with several runs: " + r.repetitions());
        Release release = r.release();
        assertNull(release.repetitions());
        assertTrue(release.trials().isEmpty());
        assertTrue(!release.trialsRevealed());
        assertEquals(r.best().candidate(), release.candidate());
        assertEquals(r.best().score(), release.score(), 0);
        assertEquals(r.event(), release.event());
        assertTrue(!release.toMap().containsKey("repetitions") && !release.toMap().containsKey("trials"), release.toMap().toString());
        OperatorRecord record = r.operatorRecord();
        assertEquals(r.repetitions(), record.facts().get("repetitions"));
        assertEquals(r.repetitions(), record.trials().size());
        assertEquals(r.best().index(), record.facts().get("best_trial_index"));
    }

    @Test
    void privacyAffectingAxesUseThePointwiseMax() {
        HyperparameterSpace s = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=log:0.01:1:5"),
                HyperparameterSpace.parseAxis("sigma=cat:2,4,8"));
        var base = Trials.baseEvent(s, new FakeMechanism(10));
        assertTrue(base instanceof PointwiseMaxEvent);
        double[] orders = RdpAccountant.defaultOrders();
        double[] max = RdpAccountant.rdp(base, orders);
        double[] worst = RdpAccountant.rdp(new GaussianEvent(2), orders);
        for (int i = 0; i < orders.length; i++) {
            assertEquals(worst[i], max[i], 0);
        }
    }

    @Test
    void aFailingTrialIsChargedAndRankedLast(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ledger.jsonl");
        TuningResult r;
        try (PrivacyLedger ledger = PrivacyLedger.open(file, "toy", 100, 1e-5)) {
            r = new RandomSearchTuner(RepetitionDistribution.pointMass(20), 7, 2, false)
                    .tune(space, new FakeMechanism(0.5), ledger, TuningListener.NONE);
        }
        assertTrue(r.trials().stream().anyMatch(TrialResult::failed), "some lr > 0.5 is drawn in 20 trials");
        assertTrue(r.trials().stream().filter(TrialResult::failed).allMatch(t -> t.score() == Double.NEGATIVE_INFINITY));
        assertTrue(!r.best().failed());
        try (PrivacyLedger reopened = PrivacyLedger.open(file, "toy", 100, 1e-5)) {
            List<PrivacyLedger.Entry> e = reopened.entries();
            assertEquals(21, e.size(), "one charge for the tuning run, one record per trial (failed ones included)");
            assertTrue(e.get(0).charged());
            assertEquals(r.event(), e.get(0).event());
            assertTrue(e.stream().skip(1).allMatch(x -> !x.charged() && x.coveredBy() == 1L));
            assertEquals(RdpAccountant.standard().epsilon(r.event(), 1e-5), reopened.spent().epsilon(), 0);
        }
    }

    /**
     * --reveal-trials: K is drawn, the composition of the K drawn runs is charged once before the first trial
     * starts, each trial is recorded under that charge, and K with every trial is in the release.
     */
    @Test
    void revealedTrialsAreChargedAsCompositionBeforeTheFirstRun(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ledger.jsonl");
        List<Long> chargesAtFirstStart = new java.util.ArrayList<>();
        try (PrivacyLedger ledger = PrivacyLedger.open(file, "toy", 1000, 1e-5)) {
            TuningListener watch = new TuningListener() {
                @Override
                public synchronized void onTrialStart(int index, Candidate candidate) {
                    if (chargesAtFirstStart.isEmpty()) {
                        chargesAtFirstStart.add(ledger.entries().stream().filter(PrivacyLedger.Entry::charged).count());
                    }
                }
            };
            TuningResult r = new RandomSearchTuner(RepetitionDistribution.pointMass(4), 7, 1, true)
                    .tune(space, new FakeMechanism(10), ledger, watch);
            assertEquals(new ComposedEvent(List.of(new GaussianEvent(5), new GaussianEvent(5), new GaussianEvent(5),
                    new GaussianEvent(5))), r.event());
            assertEquals(List.of(1L), chargesAtFirstStart, "the whole composition is charged before the first run");
            assertEquals(1, ledger.entries().stream().filter(PrivacyLedger.Entry::charged).count());
            assertEquals(r.event(), ledger.entries().get(0).event());
            // the ledger composes the charge once more (nested): the PLD's grids differ in the last digits
            assertEquals(org.dpdl4j.accounting.Accountants.tightest(r.event(), 1e-5).epsilon(), ledger.spent().epsilon(), 1e-8);
            Release release = r.release();
            assertEquals(4L, release.repetitions());
            assertEquals(4, release.trialMaps().size());
            assertTrue(release.trialMaps().stream().allMatch(m -> m.keySet().equals(java.util.Set.of("candidate", "score", "failed"))),
                    "no index, time or failure message: " + release.trialMaps());
        }
        assertEquals(1 + 1 + 4, Files.readString(file).lines().count(), "header, the charge, four trial records");
    }
}
