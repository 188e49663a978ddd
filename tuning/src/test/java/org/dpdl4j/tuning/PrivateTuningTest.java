package org.dpdl4j.tuning;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.SelfComposedEvent;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.Mnist;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.dpdl4j.release.LoadPolicy;
import org.dpdl4j.release.PrivacyLedger;
import org.dpdl4j.release.PrivateModel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tuning the user's own network: a network factory trains exactly what the same model by name trains, and the one-call
 * search calibrates σ to the whole search's target, charges its ledger once, and releases the best model bound to that
 * charge.
 */
class PrivateTuningTest {
    private static LabeledData data;

    @BeforeAll
    static void load() throws Exception {
        data = Mnist.load(DatasetCache.root().resolve("mnist")).train().randomSubset(2000, 3);
    }

    /** The MLP by name, built by the user: the same network for the same optimiser and seed. */
    private static final DpSgdMechanism.NetworkFactory MLP = (updater, seed) -> Models.mlp(ModelOptions.mnist().withUpdater(updater)
            .withActivation(ModelOptions.activationNamed("tanh")).withSeed(seed));

    @Test
    void aNetworkFactoryTrainsWhatTheModelByNameTrains() {
        HyperparameterSpace space = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.1,0.5"));
        DpSgdMechanism.Builder common = DpSgdMechanism.builder(data).noiseMultiplier(1).expectedBatchSize(100).epochs(0.5).validation(0.1, 4);
        TuningResult byName = new RandomSearchTuner(RepetitionDistribution.pointMass(2), 9, 1, false)
                .tune(space, common.model("mlp", ModelOptions.mnist()).build(), null, TuningListener.NONE);
        TuningResult own = new RandomSearchTuner(RepetitionDistribution.pointMass(2), 9, 1, false)
                .tune(space, DpSgdMechanism.builder(data).noiseMultiplier(1).expectedBatchSize(100).epochs(0.5).validation(0.1, 4).network(MLP)
                        .build(), null, TuningListener.NONE);
        for (int i = 0; i < 2; i++) {
            assertEquals(byName.trials().get(i).candidate(), own.trials().get(i).candidate());
            assertEquals(byName.trials().get(i).score(), own.trials().get(i).score(), 0.0);
            assertArrayEquals(byName.trials().get(i).model().params().data().asFloat(), own.trials().get(i).model().params().data().asFloat());
        }
        var activation = assertThrows(IllegalArgumentException.class, () -> DpSgdMechanism.builder(data).network(MLP).build()
                .network(new Candidate(java.util.Map.of("activation", "relu")), 1));
        assertTrue(activation.getMessage().contains("activation"), activation.getMessage());
        // the optimiser and its learning rate are settings: the candidates' defaults, which an axis overrides
        DpSgdMechanism momentum = DpSgdMechanism.builder(data).network(MLP).optimizer("momentum").learningRate(0.02).build();
        assertEquals("momentum", momentum.optimizer(new Candidate(java.util.Map.of())));
        assertEquals(0.02, momentum.learningRate(new Candidate(java.util.Map.of())), 0);
        assertEquals(0.3, momentum.learningRate(new Candidate(java.util.Map.of("lr", 0.3))), 0);
        assertEquals("sgd", DpSgdMechanism.builder(data).network(MLP).build().optimizer(new Candidate(java.util.Map.of())));
        // a trial's event has no feature statistics in it: a tuning refuses the setting rather than leave them uncounted
        var normalised = assertThrows(IllegalArgumentException.class, () -> DpSgdMechanism.builder(data).network(MLP)
                .dataNormalisation(8).build());
        assertTrue(normalised.getMessage().startsWith("data_normalisation 8.0 is a setting of one training run"), normalised.getMessage());
        var search = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.randomSearch(MLP, data).space("lr=cat:0.1,0.5")
                .targetEpsilon(3).epochs(0.5).expectedBatchSize(100).dataNormalisation(8).run());
        assertTrue(search.getMessage().startsWith("data_normalisation 8.0 is a setting of one training run"), search.getMessage());
    }

    @Test
    void theOneCallSearchMeetsItsTargetChargesOnceAndReleasesBoundToTheCharge(@TempDir Path tmp) throws Exception {
        Path ledgerFile = tmp.resolve("ledger.jsonl");
        Path out = tmp.resolve("search");
        PrivateModel best;
        try (PrivacyLedger ledger = PrivacyLedger.open(ledgerFile, "mnist-2000", 10, 1e-5)) {
            var refused = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.randomSearch(MLP, data)
                    .space("activation=cat:relu,tanh").targetEpsilon(3).epochs(1).expectedBatchSize(100).ledger(ledger)
                    .output(tmp.resolve("x")).run());
            assertTrue(refused.getMessage().contains("activation"), refused.getMessage());
            assertEquals(0, ledger.entries().stream().filter(PrivacyLedger.Entry::charged).count(), "refused before any charge");
            PrivateTuning search = PrivateTuning.randomSearch(MLP, data).space("lr=cat:0.1,0.5")
                    .repetitions(RepetitionDistribution.pointMass(2)).targetEpsilon(3).delta(1e-5).epochs(1).expectedBatchSize(100)
                    .scoreNoise(0.05).seed(7).ledger(ledger).output(out); // 200 validation examples: noise 10 examples' worth
            java.util.List<String> told = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
            best = search.listener(new TuningListener() {
                @Override
                public void onStart(long trials) {
                    told.add("start " + trials);
                }

                @Override
                public void onTrialEnd(TrialResult result) {
                    told.add("trial " + result.candidate().toMap().get("learning_rate"));
                }
            }).run();
            assertEquals("start 2", told.get(0), "the listener is told K: " + told);
            assertEquals(3, told.size(), "and each of the K = 2 trials: " + told);
            assertTrue(told.stream().skip(1).noneMatch(t -> t.equals("trial null")), "each trial with its learning rate: " + told);
            assertThrows(IllegalStateException.class, search::run, "one search, one charge");
        }
        double epsilon = best.guarantee().epsilon();
        assertTrue(epsilon <= 3 && epsilon > 2.99, "calibrated to the target: " + epsilon);
        // K = 2 exactly: the search costs at most the 2-fold composition of one trial (run and score), and more than one
        var trial = Trials.baseEvent(HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.1,0.5")),
                DpSgdMechanism.builder(data).network(MLP).noiseMultiplier(((Number) best.sidecar().configuration()
                        .get("noise_multiplier")).doubleValue()).expectedBatchSize(100).epochs(1).validation(0.1, 7)
                        .scoring(DpSgdMechanism.Scoring.PRIVATE_VALIDATION, 0.05).build());
        var rdp = Accountants.standard();
        assertTrue(epsilon <= rdp.epsilon(new SelfComposedEvent(trial, 2), 1e-5) + 1e-9, "at most two trials composed");
        assertTrue(epsilon > rdp.epsilon(trial, 1e-5), "more than one trial");
        assertEquals("tuning", best.sidecar().kind());
        assertTrue(((java.util.Map<?, ?>) best.sidecar().configuration().get("best")).containsKey("learning_rate"));
        // the keys that tune random-search writes too (CliTest), and what only the Java search keeps for its resume
        java.util.List<String> keys = new java.util.ArrayList<>(java.util.List.of("dataset", "best", "best_score", "tuner", "space",
                "repetitions"));
        keys.addAll(org.dpdl4j.dpsgd.DpSgdSettings.KEYS);
        keys.addAll(java.util.List.of("validation_fraction", "score_noise", "workers", "input")); // no ledger_charge: it counts entries
        assertEquals(keys, java.util.List.copyOf(best.sidecar().configuration().keySet()));
        assertEquals(java.util.List.of("learning_rate=cat:0.1,0.5"), best.sidecar().configuration().get("space"));
        assertReleasedOnce(out, ledgerFile, best);
    }

    /**
     * A tuner of one's own through {@link PrivateTuning#of} (as {@code dpdl4j tune} runs every procedure): given the
     * mechanism that the one-call search builds, the same seed and the same target, it calibrates the same σ and releases
     * the same model, bit for bit, charged once and bound to the charge; its release writer sees the outcome and writes the
     * release. With neither σ nor a target, σ is each candidate's: the claim is the tuner's event at the mechanism as
     * given, and the sidecar's noise_multiplier is null. A tuner that charges itself (one that reveals its trials) is the
     * ledger's only charge, and the release is bound to it; a tuner that was to charge but names no charge releases
     * nothing, and such a search is not resumed. Settings that are the tuner's are refused.
     */
    @Test
    void aTunerOfOnesOwnRunsThroughTheSameLifecycle(@TempDir Path tmp) throws Exception {
        PrivateModel oneCall;
        try (PrivacyLedger l = PrivacyLedger.open(tmp.resolve("a.jsonl"), "mnist-2000", 10, 1e-5)) {
            oneCall = PrivateTuning.randomSearch(MLP, data).space("lr=cat:0.1,0.5").repetitions(RepetitionDistribution.pointMass(2))
                    .targetEpsilon(3).epochs(0.5).expectedBatchSize(100).scoreNoise(0.05).seed(11).ledger(l).output(tmp.resolve("a")).run();
        }
        HyperparameterSpace space = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.1,0.5"));
        DpSgdMechanism runs = DpSgdMechanism.builder(data).network(MLP).expectedBatchSize(100).epochs(0.5).noiseMultiplier(1)
                .validation(0.1, 11).scoring(DpSgdMechanism.Scoring.PRIVATE_VALIDATION, 0.05).build();
        java.util.List<TuningOutcome> seen = new java.util.ArrayList<>();
        Path ledgerFile = tmp.resolve("b.jsonl");
        Path out = tmp.resolve("b");
        PrivateModel own;
        try (PrivacyLedger l = PrivacyLedger.open(ledgerFile, "mnist-2000", 10, 1e-5)) {
            own = PrivateTuning.of(new RandomSearchTuner(RepetitionDistribution.pointMass(2), 11, 1, false), space, runs,
                            java.util.Map.of("tuner", "my-search")).targetEpsilon(3).seed(11).ledger(l).output(out)
                    .releaseWriter((dir, outcome, model) -> {
                        seen.add(outcome);
                        return org.dpdl4j.release.StagedRelease.stage(dir, model.releaseFiles(java.util.Map.of("notes.txt",
                                "two trials".getBytes(java.nio.charset.StandardCharsets.UTF_8))), java.util.List.of());
                    }).run();
        }
        assertEquals(oneCall.configuration().get("noise_multiplier"), own.configuration().get("noise_multiplier"));
        assertEquals(oneCall.event(), own.event());
        assertEquals(((MultiLayerNetwork) oneCall.network()).params(), ((MultiLayerNetwork) own.network()).params());
        assertEquals(1, seen.size());
        assertEquals(own.event(), seen.get(0).release().event());
        assertEquals("two trials", Files.readString(out.resolve("notes.txt")));
        assertEquals("my-search", own.configuration().get("tuner"));
        assertEquals("data", own.configuration().get("dataset"));
        assertReleasedOnce(out, ledgerFile, own);

        // a candidate without a learning rate, on settings without one, trains with the optimiser's default (an
        // unboxed null failed every such trial before)
        assertEquals(ModelOptions.updaterNamed("sgd", null).getLearningRate(0, 0), ((MultiLayerNetwork) runs.network(
                new Candidate(java.util.Map.of()), 1)).getLayerWiseConfigurations().getConf(0).getLayer().getUpdaterByParam("W")
                .getLearningRate(0, 0), 0);
        HyperparameterSpace sigmas = HyperparameterSpace.of(HyperparameterSpace.parseAxis("noise_multiplier=cat:1.5,3"));
        PrivateModel perCandidate = PrivateTuning.of(new RandomSearchTuner(RepetitionDistribution.pointMass(1), 5, 1, false), sigmas,
                runs, java.util.Map.of("tuner", "sigma-axis")).seed(5).run();
        assertEquals(null, perCandidate.configuration().get("noise_multiplier"));
        assertEquals(new RandomSearchTuner(RepetitionDistribution.pointMass(1), 5, 1, false).event(sigmas, runs), perCandidate.event());

        Path revealLedger = tmp.resolve("c.jsonl");
        PrivateModel revealed;
        try (PrivacyLedger l = PrivacyLedger.open(revealLedger, "mnist-2000", 10, 1e-5)) {
            revealed = PrivateTuning.of(new RandomSearchTuner(RepetitionDistribution.pointMass(1), 7, 1, true), space, runs,
                    java.util.Map.of("tuner", "revealing")).noiseMultiplier(2).seed(7).tunerCharges(true).ledger(l)
                    .output(tmp.resolve("c")).run();
        }
        // the tuner's own charge is the only one, of what is released, and the release is bound to it (it was not, before)
        assertReleasedOnce(tmp.resolve("c"), revealLedger, revealed);
        assertTrue(!revealed.configuration().containsKey("ledger_charge"), "the ledger binds it; the sidecar names no entry number");
        // a tuner that was to charge but names no charge (here: it charges nothing) releases nothing
        RandomSearchTuner inner = new RandomSearchTuner(RepetitionDistribution.pointMass(1), 7, 1, true);
        Tuner<TuningResult> silent = new Tuner<>() {
            @Override
            public org.dpdl4j.accounting.PrivacyEvent event(HyperparameterSpace sp, TrainingMechanism m) {
                return inner.event(sp, m);
            }

            @Override
            public TuningResult tune(HyperparameterSpace sp, TrainingMechanism m, PrivacyLedger ledger, Long covering,
                                     TuningListener listener) {
                return inner.tune(sp, m, null, null, listener);
            }
        };
        Path silentLedger = tmp.resolve("d.jsonl");
        try (PrivacyLedger l = PrivacyLedger.open(silentLedger, "mnist-2000", 10, 1e-5)) {
            var unnamedCharge = assertThrows(IllegalStateException.class, () -> PrivateTuning.of(silent, space, runs,
                    java.util.Map.of("tuner", "silent")).noiseMultiplier(2).seed(7).tunerCharges(true).ledger(l)
                    .output(tmp.resolve("d")).run());
            assertTrue(unnamedCharge.getMessage().contains("names no charge"), unnamedCharge.getMessage());
            assertTrue(l.entries().isEmpty(), "nothing charged, nothing released: " + l.entries());
        }
        assertFalse(Files.exists(tmp.resolve("d").resolve(PrivateModel.MODEL_FILE)), "nothing released");
        assertFalse(Files.exists(tmp.resolve("d").resolve(PrivateModel.SIDECAR_FILE)), "nothing released");
        // nor is such a search resumed: its charge was for the K it drew
        var resumed = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.of(new RandomSearchTuner(
                        RepetitionDistribution.pointMass(1), 7, 1, true), space, runs, java.util.Map.of("tuner", "revealing"))
                .noiseMultiplier(2).seed(7).tunerCharges(true).output(tmp.resolve("e"))
                .resumeFrom(new java.util.LinkedHashMap<>(java.util.Map.of("tuner_seed", "7", "run", "r"))).run());
        assertTrue(resumed.getMessage().contains("is not resumed"), resumed.getMessage());
        var spaceHere = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.of(new RandomSearchTuner(
                RepetitionDistribution.pointMass(1), 1, 1, false), space, runs, java.util.Map.of("tuner", "x")).space("lr=cat:0.1").run());
        assertTrue(spaceHere.getMessage().startsWith("space and repetitions are the tuner's"), spaceHere.getMessage());
        var both = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.of(new RandomSearchTuner(
                RepetitionDistribution.pointMass(1), 1, 1, false), space, runs, java.util.Map.of("tuner", "x")).noiseMultiplier(2)
                .targetEpsilon(3).run());
        assertTrue(both.getMessage().startsWith("noise_multiplier is calibrated for the whole search"), both.getMessage());
        // the plan is made once while the settings stay, and again when one changes
        PrivateTuning planned = PrivateTuning.of(new RandomSearchTuner(RepetitionDistribution.pointMass(1), 1, 1, false), space, runs,
                java.util.Map.of("tuner", "x")).noiseMultiplier(2);
        PrivateTuning.Plan first = planned.plan();
        assertTrue(first == planned.plan(), "the same plan while nothing changed");
        assertEquals(2.0, first.noiseMultiplier());
        assertEquals(new RandomSearchTuner(RepetitionDistribution.pointMass(1), 1, 1, false).event(space, runs.withNoiseMultiplier(3)),
                planned.noiseMultiplier(3).plan().event());
        var unnamed = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.of(new RandomSearchTuner(
                RepetitionDistribution.pointMass(1), 1, 1, false), space, runs, java.util.Map.of("space", "lr")));
        assertTrue(unnamed.getMessage().startsWith("configuration must name its procedure under \"tuner\""), unnamed.getMessage());
    }

    /**
     * σ given instead of a target (as tune --noise-multiplier): every run uses it, and the claim is the search's event at
     * that σ, rebuilt here from a mechanism of its own; both or neither of target and σ, and σ = 0, are refused by name.
     */
    @Test
    void aSearchWithTheNoiseGivenClaimsWhatItGives() {
        PrivateModel m = PrivateTuning.randomSearch(MLP, data).space("lr=cat:0.1,0.5").repetitions(RepetitionDistribution.pointMass(1))
                .noiseMultiplier(2).epochs(0.5).expectedBatchSize(100).scoreNoise(0.05).seed(3).run();
        DpSgdMechanism atTwo = DpSgdMechanism.builder(data).network(MLP).noiseMultiplier(2).expectedBatchSize(100).epochs(0.5)
                .validation(0.1, 3).scoring(DpSgdMechanism.Scoring.PRIVATE_VALIDATION, 0.05).build();
        assertEquals(new RandomSearchTuner(RepetitionDistribution.pointMass(1), 1, 1, false)
                .event(HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.1,0.5")), atTwo), m.event());
        assertEquals(2.0, m.configuration().get("noise_multiplier"));
        assertEquals(null, m.configuration().get("target_epsilon"));
        var both = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.randomSearch(MLP, data).space("lr=cat:0.1")
                .noiseMultiplier(2).targetEpsilon(3).epochs(0.5).expectedBatchSize(100).run());
        assertTrue(both.getMessage().startsWith("noise_multiplier is calibrated for the whole search from target_epsilon: set one"),
                both.getMessage());
        var neither = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.randomSearch(MLP, data).space("lr=cat:0.1")
                .epochs(0.5).expectedBatchSize(100).run());
        assertTrue(neither.getMessage().startsWith("target_epsilon (the whole search's) must be set"), neither.getMessage());
        var zero = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.randomSearch(MLP, data).space("lr=cat:0.1")
                .noiseMultiplier(0).epochs(0.5).expectedBatchSize(100).run());
        assertTrue(zero.getMessage().startsWith("noise_multiplier 0 gives a search without privacy"), zero.getMessage());
    }

    /**
     * Subsampled tuning in one call (Koskela &amp; Kulkarni 2023, arXiv:2301.11989): it meets its target, costs less at its
     * σ than the random search over all the data at the same σ (Papernot &amp; Steinke's bound, computed apart), charges once
     * and releases its final model bound to the charge; a {@code batch_size} axis is refused before any charge.
     */
    @Test
    void theOneCallSubsampledTuningMeetsItsTargetAndCostsLessThanTheSearchOnAllData(@TempDir Path tmp) throws Exception {
        Path ledgerFile = tmp.resolve("ledger.jsonl");
        Path out = tmp.resolve("subsampled");
        PrivateModel best;
        try (PrivacyLedger ledger = PrivacyLedger.open(ledgerFile, "mnist-2000", 10, 1e-5)) {
            var refused = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.subsampled(MLP, data)
                    .space("batch_size=cat:50,100").targetEpsilon(3).epochs(1).expectedBatchSize(50).ledger(ledger)
                    .output(tmp.resolve("x")).run());
            assertTrue(refused.getMessage().contains("sampling_rate"), refused.getMessage());
            assertEquals(0, ledger.entries().stream().filter(PrivacyLedger.Entry::charged).count(), "refused before any charge");
            best = PrivateTuning.subsampled(MLP, data).tuneFraction(0.25).variant(1).space("lr=cat:0.1,0.5")
                    .repetitions(RepetitionDistribution.pointMass(2)).targetEpsilon(3).epochs(1).expectedBatchSize(50)
                    .scoreNoise(0.05).seed(5).ledger(ledger).output(out).run();
        }
        double epsilon = best.guarantee().epsilon();
        assertTrue(epsilon <= 3 && epsilon > 2.99, "calibrated to the target: " + epsilon);
        var configuration = best.sidecar().configuration();
        assertEquals("subsampled", configuration.get("tuner"));
        assertEquals(0.25, ((Number) configuration.get("tune_fraction")).doubleValue());
        double sigma = ((Number) configuration.get("noise_multiplier")).doubleValue();
        // the same two trials (run and score) on all of X at this σ, with q = B over the expected training split of X1
        HyperparameterSpace space = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.1,0.5"));
        DpSgdMechanism onAll = DpSgdMechanism.builder(data).network(MLP).noiseMultiplier(sigma).samplingRate(50 / (0.25 * 2000 * 0.9))
                .epochs(1).validation(0.1, 5).scoring(DpSgdMechanism.Scoring.PRIVATE_VALIDATION, 0.05).build();
        double searchOnAll = Accountants.standard().epsilon(new RandomSearchTuner(RepetitionDistribution.pointMass(2), 1, 1, false)
                .event(space, onAll), 1e-5);
        assertTrue(epsilon < searchOnAll, "subsampling pays less: " + epsilon + " against " + searchOnAll);
        assertReleasedOnce(out, ledgerFile, best);
    }

    /**
     * DP-HyPO in one call (Wang et al. 2023, arXiv:2306.05734): it meets its target, charges once and releases bound to the
     * charge; with K fixed its trials compose as the random search's (a density fixed before each trial is a mixture no
     * worse than its worst candidate: Koskela &amp; Kulkarni 2023, Lemma 9), so at its σ it costs exactly the random
     * search's ε, computed apart from a {@code RepeatAndSelectEvent}; a setting of another procedure is refused.
     */
    @Test
    void theOneCallDpHypoMeetsItsTargetAndWithFixedKCostsTheRandomSearch(@TempDir Path tmp) throws Exception {
        Path ledgerFile = tmp.resolve("ledger.jsonl");
        Path out = tmp.resolve("dp-hypo");
        var refused = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.randomSearch(MLP, data).densityBounds(0.5, 2)
                .space("lr=cat:0.1,0.5").targetEpsilon(3).epochs(1).expectedBatchSize(100).run());
        assertTrue(refused.getMessage().contains("densityBounds"), refused.getMessage());
        PrivateModel best;
        try (PrivacyLedger ledger = PrivacyLedger.open(ledgerFile, "mnist-2000", 10, 1e-5)) {
            best = PrivateTuning.dpHypo(MLP, data).densityBounds(0.8, 1.25).space("lr=cat:0.05,0.1,0.5,1")
                    .repetitions(RepetitionDistribution.pointMass(2)).targetEpsilon(3).epochs(1).expectedBatchSize(100)
                    .scoreNoise(0.05).seed(9).ledger(ledger).output(out).run();
        }
        double epsilon = best.guarantee().epsilon();
        assertTrue(epsilon <= 3 && epsilon > 2.99, "calibrated to the target: " + epsilon);
        assertEquals("dp-hypo", best.sidecar().configuration().get("tuner"));
        double sigma = ((Number) best.sidecar().configuration().get("noise_multiplier")).doubleValue();
        DpSgdMechanism atSigma = DpSgdMechanism.builder(data).network(MLP).noiseMultiplier(sigma).expectedBatchSize(100).epochs(1)
                .validation(0.1, 9).scoring(DpSgdMechanism.Scoring.PRIVATE_VALIDATION, 0.05).build();
        double randomSearch = Accountants.standard().epsilon(new RandomSearchTuner(RepetitionDistribution.pointMass(2), 1, 1, false)
                .event(HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.05,0.1,0.5,1")), atSigma), 1e-5);
        assertEquals(randomSearch, epsilon, 1e-9);
        assertReleasedOnce(out, ledgerFile, best);
    }

    /**
     * Propose-test tuning in one call (Ding &amp; Wu 2022, arXiv:2211.01852, Algorithm 1): it meets its target, and what it
     * charged and released is T_max = 2⌈1/g⌉ + 2 = 22 iterations of ε₀-DP, whatever the loop ran, composed with the final
     * run at the calibrated σ (rebuilt here from a mechanism of its own); the realised iterations stay out of the release;
     * settings of the other procedures are refused by name, and too many parts before any charge.
     */
    @Test
    void theOneCallProposeTestChargesItsWholeLoopAndItsFinalRun(@TempDir Path tmp) throws Exception {
        Path ledgerFile = tmp.resolve("ledger.jsonl");
        Path out = tmp.resolve("propose-test");
        var k = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.proposeTest(MLP, data)
                .repetitions(RepetitionDistribution.pointMass(2)).space("lr=cat:0.1,0.5").targetEpsilon(3).epochs(1)
                .expectedBatchSize(100).run());
        assertTrue(k.getMessage().startsWith("repetitions"), k.getMessage());
        var other = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.randomSearch(MLP, data).partitions(4)
                .space("lr=cat:0.1,0.5").targetEpsilon(3).epochs(1).expectedBatchSize(100).run());
        assertTrue(other.getMessage().contains("partitions"), other.getMessage());
        PrivateModel best;
        try (PrivacyLedger ledger = PrivacyLedger.open(ledgerFile, "mnist-2000", 10, 1e-5)) {
            for (int parts : new int[]{19, 1000}) { // 19 parts of ~1,800 training examples hold fewer than B = 100
                var refused = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.proposeTest(MLP, data)
                        .partitions(parts).space("lr=cat:0.1,0.5").targetEpsilon(3).epochs(1).expectedBatchSize(100)
                        .seed(5).ledger(ledger).output(tmp.resolve("x")).run());
                assertTrue(refused.getMessage().contains(parts == 19 ? "batch_size 100 must fit in each of the k = 19 parts"
                        : "validation examples"), refused.getMessage());
            }
            // the loop alone, 22 iterations of 0.5-DP, costs more than the target: refused with that floor, nothing charged
            var floor = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.proposeTest(MLP, data).partitions(4)
                    .epsilon0(0.5).space("lr=cat:0.1,0.5").targetEpsilon(3).epochs(1).expectedBatchSize(100).seed(5).ledger(ledger)
                    .output(tmp.resolve("y")).run());
            var m = java.util.regex.Pattern.compile("^target_epsilon 3.0 cannot be met: with any noise the procedure costs at least "
                    + "epsilon ([0-9.]+) at delta 1.0E-5, from its selection loop's T_max = 22 iterations of 0.5-DP").matcher(floor.getMessage());
            assertTrue(m.find(), floor.getMessage());
            double loop = Accountants.standard().epsilon(new SelfComposedEvent(new org.dpdl4j.accounting.PureDpEvent(0.5), 22), 1e-5);
            assertEquals(loop, Double.parseDouble(m.group(1)), 1e-4, "the floor is the loop's epsilon (the run at sigma = 1e6 adds ~0)");
            assertTrue(ledger.entries().isEmpty(), "refused before any charge");
            best = PrivateTuning.proposeTest(MLP, data).partitions(4).epsilon0(0.1).space("lr=cat:0.1,0.5").targetEpsilon(3)
                    .epochs(1).expectedBatchSize(100).seed(5).ledger(ledger).output(out).run();
        }
        double epsilon = best.guarantee().epsilon();
        assertTrue(epsilon <= 3 && epsilon > 2.99, "calibrated to the target: " + epsilon);
        var config = best.sidecar().configuration();
        assertEquals("propose-test", config.get("tuner"));
        assertEquals(22, ((Number) config.get("max_iterations")).intValue());
        assertFalse(config.containsKey("iterations") || config.containsKey("repetitions"), "no realised count, no K: " + config);
        double sigma = ((Number) config.get("noise_multiplier")).doubleValue();
        DpSgdMechanism atSigma = DpSgdMechanism.builder(data).network(MLP).noiseMultiplier(sigma).expectedBatchSize(100).epochs(1)
                .validation(0.1, 5).build();
        var finalRun = Trials.finalRunEvent(HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.1,0.5")), atSigma);
        var charged = org.dpdl4j.accounting.ComposedEvent.of(new SelfComposedEvent(new org.dpdl4j.accounting.PureDpEvent(0.1), 22),
                finalRun);
        assertEquals(charged, best.event());
        assertEquals(Accountants.standard().epsilon(charged, 1e-5), epsilon, 1e-9);
        assertTrue(epsilon > Accountants.standard().epsilon(finalRun, 1e-5), "the loop costs something");
        assertReleasedOnce(out, ledgerFile, best);
    }

    /**
     * The release in {@code out} is the returned model (its event and parameters, read back by the verified loader),
     * nothing of the procedure is left beside it, and the ledger holds exactly one charge, for that event, and one release.
     */
    private static void assertReleasedOnce(Path out, Path ledgerFile, PrivateModel released) throws Exception {
        PrivateModel loaded = PrivateModel.load(out, LoadPolicy.privateOnly());
        assertEquals(released.event(), loaded.event());
        assertEquals(((MultiLayerNetwork) released.network()).params(), ((MultiLayerNetwork) loaded.network()).params());
        assertFalse(Files.exists(out.resolve("operator")), "nothing of the procedure is left beside the release");
        try (PrivacyLedger l = PrivacyLedger.inspect(ledgerFile)) {
            var charges = l.entries().stream().filter(PrivacyLedger.Entry::charged).toList();
            assertEquals(1, charges.size(), "charged once: " + l.entries());
            assertEquals(released.event(), charges.get(0).event(), "the release is what was charged");
            var releases = l.entries().stream().filter(e -> e.kind() == PrivacyLedger.Kind.RELEASE).toList();
            assertEquals(1, releases.size(), "released once: " + l.entries());
            assertEquals(charges.get(0).sequence(), releases.get(0).coveredBy(), "the release is bound to the charge");
        }
    }

    /** The child: the search ({@code args[2]}: random-search or subsampled), halted (as kill -9 would) before its release. */
    public static void main(String[] args) throws Exception {
        data = Mnist.load(DatasetCache.root().resolve("mnist")).train().randomSubset(2000, 3);
        try (PrivacyLedger ledger = PrivacyLedger.open(Path.of(args[1]), "mnist-2000", 10, 1e-5)) {
            search(args[2], Path.of(args[0])).ledger(ledger).run();
        }
    }

    private static PrivateTuning search(String procedure, Path out) {
        PrivateTuning p = procedure.equals("subsampled") ? PrivateTuning.subsampled(MLP, data).tuneFraction(0.25).expectedBatchSize(50)
                : PrivateTuning.randomSearch(MLP, data).expectedBatchSize(100);
        return p.space("lr=cat:0.1,0.5").repetitions(RepetitionDistribution.pointMass(2)).targetEpsilon(3).epochs(1).scoreNoise(0.05)
                .seed(11).output(out);
    }

    /**
     * Killed after its trials and before its release (a child JVM halted as kill -9 would), the search resumes from its
     * saved state: its trials are read back, it releases what the uninterrupted search releases (bit for bit), and its
     * ledger holds one charge and one release; a second resume finds nothing to resume.
     */
    @Test
    void aKilledSearchResumesUnderItsChargeAndReleasesWhatItWouldHave(@TempDir Path tmp) throws Exception {
        killedAndResumed("random-search", tmp);
    }

    /**
     * The same for subsampled tuning, whose trials on X₁ are read back on resume and whose final run on the whole data
     * is trained again from the saved seed: the release is the uninterrupted tuning's, bit for bit, under one charge.
     */
    @Test
    void aKilledSubsampledTuningResumesUnderItsChargeAndReleasesWhatItWouldHave(@TempDir Path tmp) throws Exception {
        killedAndResumed("subsampled", tmp);
    }

    private static void killedAndResumed(String procedure, Path tmp) throws Exception {
        Path out = tmp.resolve("killed");
        Path ledgerFile = tmp.resolve("ledger.jsonl");
        Path log = tmp.resolve("child.log");
        String javaBinary = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(javaBinary, "-Xmx1g", "-D" + org.dpdl4j.release.CrashPoint.PROPERTY + "=tune:before-release", "-cp",
                System.getProperty("java.class.path"), PrivateTuningTest.class.getName(), out.toString(), ledgerFile.toString(), procedure)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            assertTrue(p.waitFor(300, java.util.concurrent.TimeUnit.SECONDS), "the child ends");
        } finally {
            p.destroyForcibly(); // whatever happens, the child does not outlive the test
        }
        assertEquals(137, p.exitValue(), Files.readString(log));
        assertTrue(Files.exists(out.resolve(org.dpdl4j.release.PrivateRun.TUNING_STATE)), "the state outlives the trials");
        assertFalse(Files.exists(out.resolve(PrivateModel.SIDECAR_FILE)));
        try (var trials = Files.list(out.resolve(org.dpdl4j.release.PrivateRun.TUNING_TRIALS))) {
            assertTrue(trials.count() >= 2, "the finished trials are on disk");
        }
        PrivateModel resumed = PrivateTuning.resume(out, MLP, data).run();
        PrivateModel uninterrupted = search(procedure, tmp.resolve("whole")).run();
        assertEquals(uninterrupted.sidecar().configuration().get("best"), resumed.sidecar().configuration().get("best"));
        assertEquals(uninterrupted.sidecar().configuration().get("best_score"), resumed.sidecar().configuration().get("best_score"));
        assertEquals(((MultiLayerNetwork) uninterrupted.network()).params(), ((MultiLayerNetwork) resumed.network()).params(),
                "the release the uninterrupted search makes, bit for bit");
        assertEquals(uninterrupted.event(), resumed.event());
        assertFalse(Files.exists(out.resolve("operator")), "the trials and the state go once the release is out");
        try (PrivacyLedger l = PrivacyLedger.inspect(ledgerFile)) {
            var charges = l.entries().stream().filter(PrivacyLedger.Entry::charged).toList();
            assertEquals(1, charges.size(), "charged once: " + l.entries());
            var releases = l.entries().stream().filter(e -> e.kind() == PrivacyLedger.Kind.RELEASE).toList();
            assertEquals(1, releases.size(), "released once: " + l.entries());
            assertEquals(charges.get(0).sequence(), releases.get(0).coveredBy(), "the release is bound to the charge");
        }
        var again = assertThrows(IllegalArgumentException.class, () -> PrivateTuning.resume(out, MLP, data));
        assertTrue(again.getMessage().contains("no tuning to resume"), again.getMessage());
    }
}
