package org.dpdl4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.benchmarks.Reporting;
import org.junit.jupiter.api.Test;

/** The report schema: snake_case keys in declaration order, optional blocks absent, nulls written, no event on the --json line. */
class TuningReportsTest {
    private static final TuningReports.Provenance PROVENANCE = new TuningReports.Provenance("mnist", 60000, "cnn",
            new TuningReports.Config("lr=cat:0.5", 1, 256, 1, "sgd", null, "tanh", 0.1, 20.0), null,
            new GaussianEvent(2).toMap(), "0.1.0");

    private static List<String> keys(JsonNode n) {
        List<String> k = new ArrayList<>();
        n.fieldNames().forEachRemaining(k::add);
        return k;
    }

    @Test
    void randomSearchKeysInOrderWithOptionalBlocksAbsent() {
        var rs = new TuningReports.RandomSearch("random-search", Map.of("lr", 0.5), null, null,
                new TuningReports.RunSettings(0.01, 1.1, 1, 100), null, 2, 1.5, null, 1e-5, 12, "poisson(10)", 10, 1.1,
                "private-validation", false, PROVENANCE);
        JsonNode n = Reporting.JSON.valueToTree(rs);
        assertEquals(List.of("tuner", "best", "best_score", "best_run", "test_accuracy", "epsilon_total", "epsilon_single_run",
                "delta", "rdp_order", "distribution", "expected_repetitions", "noise_multiplier", "score", "trials_revealed",
                "dataset", "dataset_size", "model", "config", "event", "library_version"), keys(n));
        assertTrue(n.get("best_score").isNull() && n.get("test_accuracy").isNull(), n.toString());
        assertEquals(List.of("space", "epochs", "batch_size", "clip_norm", "optimizer", "learning_rate", "activation", "validation_fraction",
                "score_noise"), keys(n.get("config")));
        assertEquals(List.of("sampling_rate", "noise_multiplier", "clip_norm", "steps"), keys(n.get("best_run")));
        assertEquals("gaussian", n.get("event").get("type").asText());
        JsonNode line = TuningReports.jsonLine(rs);
        assertTrue(!line.has("event") && line.has("library_version"), line.toString());
    }

    @Test
    void dpHypoAddsItsAdaptivityBlockAndRevealedTrialsAddK() {
        var hypo = new TuningReports.RandomSearch("dp-hypo", Map.of("lr", 0.5), 0.9, 3L,
                new TuningReports.RunSettings(0.01, 1.1, 1, 100), 0.91, 2, 1.5,
                new TuningReports.Adaptivity(List.of(0.8, 1.25), 1.8, 0.2), 1e-5, 12, "poisson(10)", 10, 1.1,
                "private-validation", true, PROVENANCE);
        List<String> k = keys(Reporting.JSON.valueToTree(hypo));
        assertEquals(List.of("tuner", "best", "best_score", "repetitions", "best_run", "test_accuracy", "epsilon_total",
                "epsilon_single_run", "density_bounds", "epsilon_random_search", "adaptivity_cost", "delta"), k.subList(0, 12));
    }
}
