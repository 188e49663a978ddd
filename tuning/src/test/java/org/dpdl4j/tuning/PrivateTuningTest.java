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
        DpSgdMechanism.Builder common = DpSgdMechanism.builder(data).noiseMultiplier(1).batchSize(100).epochs(0.5).validation(0.1, 4);
        TuningResult byName = new RandomSearchTuner(RepetitionDistribution.pointMass(2), 9, 1, false)
                .tune(space, common.model("mlp", ModelOptions.mnist()).build(), null, TuningListener.NONE);
        TuningResult own = new RandomSearchTuner(RepetitionDistribution.pointMass(2), 9, 1, false)
                .tune(space, DpSgdMechanism.builder(data).noiseMultiplier(1).batchSize(100).epochs(0.5).validation(0.1, 4).network(MLP)
                        .build(), null, TuningListener.NONE);
        for (int i = 0; i < 2; i++) {
            assertEquals(byName.trials().get(i).candidate(), own.trials().get(i).candidate());
            assertEquals(byName.trials().get(i).score(), own.trials().get(i).score(), 0.0);
            assertArrayEquals(byName.trials().get(i).model().params().data().asFloat(), own.trials().get(i).model().params().data().asFloat());
        }
        var activation = assertThrows(IllegalArgumentException.class, () -> DpSgdMechanism.builder(data).network(MLP).build()
                .network(new Candidate(java.util.Map.of("activation", "relu")), 1));
        assertTrue(activation.getMessage().contains("activation"), activation.getMessage());
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
            best = search.run();
            assertThrows(IllegalStateException.class, search::run, "one search, one charge");
        }
        double epsilon = best.guarantee().epsilon();
        assertTrue(epsilon <= 3 && epsilon > 2.99, "calibrated to the target: " + epsilon);
        // K = 2 exactly: the search costs at most the 2-fold composition of one trial (run and score), and more than one
        var trial = Trials.baseEvent(HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.1,0.5")),
                DpSgdMechanism.builder(data).network(MLP).noiseMultiplier(((Number) best.sidecar().configuration()
                        .get("noise_multiplier")).doubleValue()).batchSize(100).epochs(1).validation(0.1, 7)
                        .scoring(DpSgdMechanism.Scoring.PRIVATE_VALIDATION, 0.05).build());
        var rdp = Accountants.standard();
        assertTrue(epsilon <= rdp.epsilon(new SelfComposedEvent(trial, 2), 1e-5) + 1e-9, "at most two trials composed");
        assertTrue(epsilon > rdp.epsilon(trial, 1e-5), "more than one trial");
        assertEquals("tuning", best.sidecar().kind());
        assertTrue(((java.util.Map<?, ?>) best.sidecar().configuration().get("best")).containsKey("lr"));
        PrivateModel loaded = PrivateModel.load(out, LoadPolicy.privateOnly());
        assertEquals(best.event(), loaded.event());
        assertEquals(((MultiLayerNetwork) best.network()).params(), ((MultiLayerNetwork) loaded.network()).params());
        assertFalse(Files.exists(out.resolve("operator")), "nothing of the search is left beside the release");
        try (PrivacyLedger l = PrivacyLedger.inspect(ledgerFile)) {
            var charges = l.entries().stream().filter(PrivacyLedger.Entry::charged).toList();
            assertEquals(1, charges.size(), "charged once: " + l.entries());
            assertEquals(best.event(), charges.get(0).event(), "the release is what was charged");
            assertEquals(1, l.entries().stream().filter(e -> e.kind() == PrivacyLedger.Kind.RELEASE).count());
        }
    }
}
