package org.dpdl4j.cli;

import org.dpdl4j.release.CheckpointState;
import org.dpdl4j.benchmarks.Reporting;
import static org.dpdl4j.cli.CliRunner.concat;
import static org.dpdl4j.cli.CliRunner.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyEvents;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.Mnist;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.junit.jupiter.api.Test;
import org.dpdl4j.cli.CliRunner.Run;
import org.junit.jupiter.api.io.TempDir;

/** The command line end to end, its JSON, files and errors. */
class CliTest {
    @TempDir
    Path tmp;

    @Test
    void accountDpSgdPrintsTheAccountantsNumber() throws Exception {
        Run r = run("account", "dpsgd", "--dataset-size", "60000", "--batch-size", "256", "--epochs", "60",
                "--noise-multiplier", "1.1", "--delta", "1e-5", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        assertEquals(14063, j.get("steps").asLong());
        // dp_accounting 0.6.0 gives 2.596655529521983 for this setting
        assertEquals(2.596655529521983, j.get("epsilon").asDouble(), 1e-7);
        assertEquals(8.1, j.get("order").asDouble(), 1e-12);
    }

    /** bench dpsgd runs the phases asked for, reports them in its JSON, and leaves the others null; bad modes are refused. */
    @Test
    void benchDpSgdReportsTheEngineNonPrivateMode() throws Exception {
        Run r = run("bench", "dpsgd", "--model", "mlp", "--batch-size", "32", "--steps", "2", "--warmup", "1",
                "--modes", "engine,dp", "--workers", "2", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        assertTrue(j.get("engine_nonprivate_examples_per_second").asDouble() > 0, j.toString());
        assertTrue(j.get("dp_examples_per_second").asDouble() > 0, j.toString());
        assertEquals(j.get("dp_examples_per_second").asDouble() / j.get("engine_nonprivate_examples_per_second").asDouble(),
                j.get("ratio_dp_to_engine_nonprivate").asDouble(), 1e-12);
        assertTrue(j.get("nonprivate_examples_per_second").isNull() && j.get("dp_one_worker_examples_per_second").isNull(), j.toString());
        assertEquals(512, j.get("dp_chunk_rows").asInt(), "a small network's DP chunk is the physical batch: " + j);
        Run bad = run("bench", "dpsgd", "--modes", "fit,gpu");
        assertTrue(bad.status() != 0 && bad.err().contains("--modes") && bad.err().contains("gpu"), bad.err());
    }

    /** bench sequences times both epochs of a DL4J LSTM example's shape and reports their ratio; a bad example is named. */
    @Test
    void benchSequencesTimesFitAndPrivate() throws Exception {
        Run r = run("bench", "sequences", "--example", "uci", "--examples", "30", "--min-steps", "5", "--max-steps", "9", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        assertEquals(3, j.get("steps_per_epoch").asInt(), j.toString());
        assertTrue(j.get("fit_seconds").asDouble() > 0 && j.get("private_seconds").asDouble() > 0, j.toString());
        assertEquals(j.get("private_seconds").asDouble() / j.get("fit_seconds").asDouble(), j.get("ratio").asDouble(), 1e-12);
        Run bad = run("bench", "sequences", "--example", "timit");
        assertTrue(bad.status() != 0 && bad.err().contains("--example") && bad.err().contains("timit"), bad.err());
    }

    /** --accountant pld: dp_accounting 0.6.0's PLDAccountant (Δ = 1e-4) gives 2.3817788079120428 for the same run. */
    @Test
    void accountDpSgdWithThePldAccountant() throws Exception {
        Run r = run("account", "dpsgd", "--dataset-size", "60000", "--batch-size", "256", "--epochs", "60",
                "--noise-multiplier", "1.1", "--accountant", "pld", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        assertEquals("pld", j.get("accountant").asText());
        assertTrue(j.get("order").isNull(), j.toString());
        assertEquals(2.3817788079120428, j.get("epsilon").asDouble(), 2.4e-3);
        Run calibrated = run("account", "calibrate", "--sampling-rate", "0.01", "--steps", "1000", "--target-epsilon", "2",
                "--accountant", "pld", "--json");
        assertEquals(0, calibrated.status(), calibrated.err());
        double sigma = calibrated.lastJson().get("noise_multiplier").asDouble();
        var pld = org.dpdl4j.accounting.PldAccountant.standard();
        assertTrue(pld.epsilon(NoiseCalibration.dpSgd(0.01, sigma, 1000), 1e-5) <= 2.0);
        assertTrue(pld.epsilon(NoiseCalibration.dpSgd(0.01, sigma - 1e-5, 1000), 1e-5) > 2.0);
        assertTrue(sigma < NoiseCalibration.noiseMultiplier(0.01, 1000, 2, 1e-5, RdpAccountant.standard(), 1e-6), "PLD needs less noise");
        Run bad = run("account", "dpsgd", "--sampling-rate", "0.01", "--noise-multiplier", "1", "--steps", "10", "--accountant", "moments");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--accountant") && bad.err().contains("moments") && bad.err().contains("pld"), bad.err());
    }

    /** dp_accounting 0.6.0: geometric E[K] = 10 over DP-SGD (q = 0.01, σ = 1, T = 1000) gives 4.10327065640215. */
    @Test
    void accountTuningMatchesTheReference() throws Exception {
        Run r = run("account", "tuning", "--sampling-rate", "0.01", "--noise-multiplier", "1.0", "--steps", "1000",
                "--repetitions", "geometric:mean=10", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        assertEquals(4.10327065640215, j.get("epsilon").asDouble(), 1e-7);
        assertTrue(j.get("epsilon_single_run").asDouble() < j.get("epsilon").asDouble());
        assertTrue(j.get("epsilon").asDouble() < j.get("epsilon_naive_composition").asDouble());
        Run viaGamma = run("account", "tuning", "--sampling-rate", "0.01", "--noise-multiplier", "1.0", "--steps", "1000",
                "--repetitions", "geometric:gamma=0.1", "--json");
        assertEquals(j.get("epsilon").asDouble(), viaGamma.lastJson().get("epsilon").asDouble(), 1e-9);
        Run bad = run("account", "tuning", "--sampling-rate", "0.01", "--noise-multiplier", "1.0", "--steps", "1000",
                "--repetitions", "zipf:3");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--repetitions") && bad.err().contains("zipf"), bad.err());
    }

    @Test
    void calibrateMeetsTheTarget() throws Exception {
        Run r = run("account", "calibrate", "--sampling-rate", "0.01", "--steps", "1000", "--target-epsilon", "2",
                "--delta", "1e-5", "--json");
        assertEquals(0, r.status(), r.err());
        double sigma = r.lastJson().get("noise_multiplier").asDouble();
        RdpAccountant acc = RdpAccountant.standard();
        assertTrue(acc.epsilon(NoiseCalibration.dpSgd(0.01, sigma, 1000), 1e-5) <= 2.0);
        assertTrue(acc.epsilon(NoiseCalibration.dpSgd(0.01, sigma - 1e-5, 1000), 1e-5) > 2.0);
    }

    /**
     * An option's older name sets what its current name sets (and its value is not replaced by the current name's
     * default, as picocli's defaultValue would do): C, β, ε₀, u₀, reproduce's ε list, train size and epochs.
     */
    @Test
    void olderOptionNamesStillTakeEffect() {
        // each older name's value is refused by the check of the current one, before any data are read
        for (String name : new String[]{"--clip", "--clip-norm"}) {
            Run r = run("train", "--model", "mlp", name, "-0.37", "--dry-run");
            assertTrue(r.status() == 2 && r.err().contains("--clip-norm must be finite and > 0, got -0.37"), name + ": " + r.err());
        }
        Run ema = run("train", "--ema", "1", "--dry-run");
        assertTrue(ema.status() == 2 && ema.err().contains("--ema-decay must be in [0, 1)"), ema.err());
        for (String name : new String[]{"--eps0", "--epsilon0"}) {
            Run r = run("tune", "--tuner", "propose-test", name, "-0.37", "--dry-run");
            assertTrue(r.status() == 2 && r.err().contains("epsilon0 must be finite and > 0, got -0.37"), name + ": " + r.err());
        }
        Run reveal = run("tune", "--reveal-trial-scores", "--target-epsilon", "1", "--dry-run");
        assertTrue(reveal.status() == 2 && reveal.err().contains("--reveal-trials charges the realised K runs"), reveal.err());
        Run u0 = run("tune", "--tuner", "propose-test", "--u0", "2", "--dry-run");
        assertTrue(u0.status() == 2 && u0.err().contains("lower_utility u0 must be in [0, 1), got 2.0"), u0.err());
        Run epsilons = run("reproduce", "koskela-figure2", "--epsilons", "0", "--output", tmp.resolve("k").toString());
        assertTrue(epsilons.status() == 2 && epsilons.err().contains("--target-epsilons must be finite and > 0, got 0.0"), epsilons.err());
        Run size = run("reproduce", "audit-table", "--audit-train-size", "10", "--output", tmp.resolve("a").toString());
        assertTrue(size.status() == 2 && size.err().contains("--train-size must be in [400, 60000]"), size.err());
        Run epochs = run("reproduce", "audit-table", "--audit-epochs", "0", "--output", tmp.resolve("a").toString());
        assertTrue(epochs.status() == 2 && epochs.err().contains("--epochs must be in (0, 1000], got 0.0"), epochs.err());
    }

    @Test
    void badInputGivesExitCode2AndNamesTheParameter() {
        Run r = run("account", "dpsgd", "--sampling-rate", "1.5", "--steps", "10", "--noise-multiplier", "1");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--sampling-rate") && r.err().contains("1.5"), r.err());
        r = run("account", "dpsgd", "--sampling-rate", "0.1", "--noise-multiplier", "1");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--steps"), r.err());
        r = run("account", "dpsgd", "--noise-multiplier", "1"); // neither schedule
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--sampling-rate") && r.err().contains("--dataset-size"), r.err());
        r = run("account", "dpsgd", "--sampling-rate", "0.1", "--steps", "10", "--dataset-size", "100", "--batch-size", "10",
                "--epochs", "1", "--noise-multiplier", "1"); // both
        assertEquals(2, r.status());
        assertTrue(r.err().contains("mutually exclusive"), r.err());
        r = run("account", "dpsgd", "--sampling-rate", "0.1", "--steps", "10000000000000000", "--noise-multiplier", "1");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--steps must be in [1, 10^15]"), r.err());
        r = run("train", "--optimizer", "rmsprop", "--epochs", "0.01", "--no-progress", "--output", "unused");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--optimizer") && r.err().contains("rmsprop"), r.err());
        r = run("tune", "--space", "lr=foo:1:2", "--no-progress");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--space") && r.err().contains("foo"), r.err());
        r = run("tune", "--repetitions", "binomial:3", "--no-progress");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--repetitions") && r.err().contains("binomial"), r.err());
        r = run("tune", "--target-epsilon", "3", "--space", "sigma=cat:1,2", "--no-progress");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("sigma"), r.err());
        r = run("train", "--dataset", "imagenet", "--no-progress");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("imagenet"), r.err());
        r = run("train", "--augmult", "0", "--no-progress", "--output", "unused");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--augmult must be in [1, 64]") && r.err().contains("got 0"), r.err());
        r = run("train", "--augmult", "2", "--dataset", "folder:unused", "--no-progress", "--output", "unused");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--augmult 2 needs mnist") && r.err().contains("folder:unused"), r.err());
        r = run("tune", "--augmult", "2", "--dataset", "folder:unused", "--no-progress", "--output", "unused");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--augmult 2 needs mnist") && r.err().contains("folder:unused"), r.err());
        // the DP-SGD settings are checked by DpSgdSettings, and named by their options, in train and tune alike
        for (String command : new String[]{"train", "tune"}) {
            for (String[] bad : new String[][]{{"--clip-norm", "-1", "--clip-norm must be finite and > 0, got -1.0"},
                                               {"--ema-decay", "1", "--ema-decay must be in [0, 1)"},
                                               {"--physical-batch-size", "0", "--physical-batch-size must be >= 1, got 0"},
                                               {"--batch-size", "0", "--batch-size must be >= 1, got 0"},
                                               {"--delta", "1.5", "--delta must be in (0, 1), got 1.5"}}) {
                r = run(command, bad[0], bad[1], "--no-progress", "--output", "unused");
                assertEquals(2, r.status(), command + " " + bad[0] + ": " + r.err());
                assertTrue(r.err().contains(bad[2]), command + " " + bad[0] + ": " + r.err());
            }
        }
        r = run("reproduce", "scatternet-ablation", "--augmults", "1,65", "--output", "unused");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--augmults") && r.err().contains("65"), r.err());
        assertEquals(0, run("--help").status());
        assertEquals(0, run("train", "--help").status());
    }

    /** A very short real run: files written, ε from the run's event, the saved model serves like DL4J. */
    @Test
    void trainWritesModelPrivacyJsonAndJsonLine() throws Exception {
        Path out = tmp.resolve("run");
        Run r = run("train", "--dataset", "mnist", "--epochs", "0.05", "--noise-multiplier", "1.0", "--lr", "1.0",
                "--seed", "4", "--output", out.toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        for (String key : new String[]{"test_accuracy", "epsilon", "delta", "rdp_order", "noise_multiplier", "sampling_rate",
                                       "steps", "epochs", "model_path"}) {
            assertTrue(j.has(key), "JSON line lacks " + key);
        }
        assertTrue(!j.has("seconds") && !j.has("examples_per_second"), "timings stay with the operator: " + j);
        long steps = j.get("steps").asLong();
        assertEquals((long) Math.ceil(0.05 * 60000 / 256.0), steps);
        // one run: the PLD accountant by default (tighter than RDP's number, which the run is no longer reported with)
        assertEquals("pld", j.get("accountant").asText());
        double eps = org.dpdl4j.accounting.Accountants.byName("pld").epsilon(NoiseCalibration.dpSgd(256.0 / 60000, 1.0, steps), 1e-5);
        assertTrue(eps < RdpAccountant.standard().epsilon(NoiseCalibration.dpSgd(256.0 / 60000, 1.0, steps), 1e-5));
        assertEquals(eps, j.get("epsilon").asDouble(), 1e-12);
        JsonNode privacy = Reporting.JSON.readTree(Files.readString(out.resolve("privacy.json")));
        assertEquals(eps, privacy.get("epsilon").asDouble(), 1e-12);
        // the line states the sidecar's configuration as it is (the learning rate as it ran: --lr 1.0)
        privacy.get("configuration").fieldNames().forEachRemaining(k -> assertEquals(privacy.get("configuration").get(k),
                j.get(k), "JSON line's " + k));
        assertEquals(1.0, j.get("learning_rate").asDouble(), 0);
        assertEquals(256.0 / 60000, privacy.get("configuration").get("sampling_rate").asDouble(), 1e-15, "q as it ran");
        assertEquals("mnist", privacy.get("configuration").get("dataset").asText());
        assertEquals(NoiseCalibration.dpSgd(256.0 / 60000, 1.0, steps),
                PrivacyEvents.fromMap(Reporting.JSON.convertValue(privacy.get("event"), java.util.Map.class)));
        MultiLayerNetwork loaded = ModelSerializer.restoreMultiLayerNetwork(out.resolve("model.zip").toFile());
        var verified = org.dpdl4j.release.PrivateModel.load(out, org.dpdl4j.release.LoadPolicy.privateOnly()); // the sidecar checks out
        assertEquals(eps, verified.guarantee().epsilon(), 0.0);
        assertEquals(new org.dpdl4j.release.InputSpec(1, 28, 28, 255), verified.input());
        assertEquals(loaded.params(), ((MultiLayerNetwork) verified.network()).params());
        LabeledData test = Mnist.load(DatasetCache.root().resolve("mnist")).test();
        assertEquals(j.get("test_accuracy").asDouble(), DpSgdTrainer.accuracy(loaded, test), 1e-12);
        assertTrue(j.get("test_accuracy").asDouble() > 0.3, "a few private steps already beat chance");
        Run evaluated = run("evaluate", out.resolve("model.zip").toString(), "--dataset", "mnist", "--json");
        assertEquals(0, evaluated.status(), evaluated.err());
        assertEquals(j.get("test_accuracy").asDouble(), evaluated.lastJson().get("test_accuracy").asDouble(), 1e-12);
        Run notAModel = run("evaluate", out.resolve("privacy.json").toString());
        assertEquals(2, notAModel.status());
        assertTrue(notAModel.err().contains("MODEL") && notAModel.err().contains("privacy.json"), notAModel.err());
    }

    @Test
    void tuneReleasesOnlyWhatItsEpsilonCoversAndChargesTheLedger() throws Exception {
        Path ledger = tmp.resolve("ledger.jsonl");
        Path out = tmp.resolve("tune");
        Run r = run("tune", "--dataset", "mnist", "--epochs", "0.05", "--repetitions", "fixed:2", "--space", "lr=cat:0.5,1.0",
                "--target-epsilon", "2", "--seed", "3", "--ledger", ledger.toString(), "--ledger-budget", "5",
                "--output", out.toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        for (String key : new String[]{"best", "best_score", "test_accuracy", "epsilon_total", "epsilon_single_run", "delta",
                "distribution", "expected_repetitions", "best_run", "config"}) {
            assertTrue(j.has(key), key);
        }
        double total = j.get("epsilon_total").asDouble();
        assertTrue(total <= 2 && total > 1.9, "calibrated to the total target: " + total);
        JsonNode record = operatorRecord(out);
        assertEquals(2, record.get("repetitions").asLong());
        assertEquals(2, record.get("trials").size());
        // fixed K = 2 is composition: the total is the naive number, and one run costs less
        assertEquals(record.get("epsilon_naive_composition").asDouble(), total, 1e-9);
        assertTrue(j.get("epsilon_single_run").asDouble() < total);
        assertTrue(j.get("test_accuracy").asDouble() > 0.3, r.out());
        assertTrue(r.out().contains("score withheld"), r.out());
        assertReleaseOnly(out, j, RANDOM_SEARCH_RELEASE, false);
        assertTrue(Files.exists(out.resolve("model.zip")));
        // the sidecar's configuration is PrivateTuning's (PrivateTuning.releaseConfiguration) after the data set's name
        var sidecar = org.dpdl4j.release.PrivateModel.load(out, org.dpdl4j.release.LoadPolicy.privateOnly()).configuration();
        java.util.List<String> keys = new java.util.ArrayList<>(java.util.List.of("dataset", "best", "best_score", "tuner", "space",
                "repetitions"));
        keys.addAll(org.dpdl4j.dpsgd.DpSgdSettings.KEYS);
        keys.addAll(java.util.List.of("validation_fraction", "score_noise"));
        assertEquals(keys, java.util.List.copyOf(sidecar.keySet()));
        assertEquals(Reporting.JSON.convertValue(j.get("best"), java.util.Map.class), sidecar.get("best"));
        assertEquals(j.get("noise_multiplier").asDouble(), ((Number) sidecar.get("noise_multiplier")).doubleValue(), 0);
        assertEquals(2.0, sidecar.get("target_epsilon"));
        assertEquals("random-search", sidecar.get("tuner"));
        assertEquals(java.util.List.of("learning_rate=cat:0.5,1.0"), sidecar.get("space")); // lr: the older name
        assertTrue(!sidecar.containsKey("ledger_charge"), "a ledger entry's number counts earlier trials: not released");
        // score_noise is the standard deviation of the released validation accuracy (--score-noise, default 0.005): the
        // count of correct predictions on the f·n validation examples carries Gaussian noise of score_noise·f·n, which is
        // the noise multiplier of the event's Gaussian (a count's sensitivity is 1)
        JsonNode released = Reporting.JSON.readTree(out.resolve("tuning.json").toFile());
        JsonNode config = released.get("config");
        assertEquals(0.005, config.get("score_noise").asDouble(), 0);
        double countNoise = config.get("score_noise").asDouble() * config.get("validation_fraction").asDouble()
                * released.get("dataset_size").asInt();
        java.util.List<Double> gaussians = new java.util.ArrayList<>();
        released.get("event").findParents("type").forEach(n -> {
            if (n.get("type").asText().equals("gaussian")) {
                gaussians.add(n.get("noise_multiplier").asDouble());
            }
        });
        assertTrue(gaussians.stream().anyMatch(g -> Math.abs(g - countNoise) <= 1e-9 * countNoise),
                "the score's Gaussian " + gaussians + " against score_noise·f·n = " + countNoise);
        java.util.List<String> lines = Files.readAllLines(ledger);
        assertEquals(6, lines.size(), "header, the tuning's charge, the tuning and two trials recorded under it, its release");
        assertTrue(lines.get(5).contains("\"kind\":\"release\"") && lines.get(5).contains("\"covered_by\":1"), lines.get(5));
        JsonNode charge = Reporting.JSON.readTree(lines.get(1));
        assertEquals(total, RdpAccountant.standard().epsilon(PrivacyEvents.fromMap(
                Reporting.JSON.convertValue(charge.get("event"), java.util.Map.class)), 1e-5), 1e-12);
        // a costly second tuning run would take the ledger above its budget of 5: refused before any training
        Run again = run("tune", "--dataset", "mnist", "--epochs", "20", "--repetitions", "fixed:2", "--space", "lr=cat:0.5",
                "--noise-multiplier", "0.5", "--ledger", ledger.toString(), "--output", tmp.resolve("tune2").toString(), "--no-progress");
        assertTrue(again.status() != 0 && (again.err() + again.out()).contains("budget"), again.err() + again.out());
        assertEquals(6, Files.readAllLines(ledger).size(), "a refused charge writes nothing");
        assertTrue(!Files.exists(tmp.resolve("tune2")), "nor leaves an output behind");
    }

    /**
     * --reveal-trials: K and every trial (candidate, score, failed) are released in trials.json, charged once,
     * before the first run, as the composition of the K drawn runs; the release is bound to that charge.
     */
    @Test
    void tuneRevealTrialsReleasesKAndEveryTrialAndChargesTheirComposition() throws Exception {
        Path ledger = tmp.resolve("reveal-ledger.jsonl");
        Path out = tmp.resolve("reveal");
        Run r = run("tune", "--dataset", "mnist", "--epochs", "0.03", "--repetitions", "poisson:2", "--max-repetitions", "3",
                "--space", "lr=cat:0.5,1.0", "--noise-multiplier", "1.5", "--reveal-trials", "--seed", "5",
                "--ledger", ledger.toString(), "--output", out.toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        long k = j.get("repetitions").asLong();
        assertEquals(operatorRecord(out).get("repetitions").asLong(), k);
        JsonNode trials = Reporting.JSON.readTree(out.resolve("trials.json").toFile());
        assertEquals(k, trials.get("repetitions").asLong());
        assertEquals(k, trials.get("trials").size());
        for (JsonNode t : trials.get("trials")) {
            assertEquals(java.util.Set.of("candidate", "score", "failed"), fieldNames(t), t.toString());
        }
        double single = j.get("epsilon_single_run").asDouble();
        RdpAccountant acc = RdpAccountant.standard();
        var event = PrivacyEvents.fromMap(Reporting.JSON.convertValue(Reporting.JSON.readTree(out.resolve("tuning.json").toFile())
                .get("event"), java.util.Map.class));
        assertTrue(event instanceof org.dpdl4j.accounting.ComposedEvent c && c.events().size() == k, event.toString());
        var parts = ((org.dpdl4j.accounting.ComposedEvent) event).events();
        if (k > 0) {
            assertEquals(single, acc.epsilon(parts.get(0), 1e-5), 1e-12);
            assertEquals(acc.epsilon(new org.dpdl4j.accounting.SelfComposedEvent(parts.get(0), k), 1e-5),
                    j.get("epsilon_total").asDouble(), 1e-9);
        }
        assertTrue(k <= 1 || j.get("epsilon_total").asDouble() > single, "K runs composed cost more than one");
        java.util.List<String> lines = Files.readAllLines(ledger);
        assertEquals(1, lines.stream().skip(1).filter(l -> l.contains("\"charged\":true")).count(), String.join("\n", lines));
        assertTrue(lines.get(1).contains("\"charged\":true"), "the composition is charged before any trial is recorded");
        assertEquals(3 + k, lines.size(), "header, charge, K trial records, release: " + String.join("\n", lines));
        JsonNode released = Reporting.JSON.readTree(lines.get(lines.size() - 1));
        assertEquals("release", released.get("kind").asText());
        assertEquals(1, released.get("covered_by").asLong(), "the release is bound to the tuner's charge");
        java.util.Set<String> allowed = new java.util.HashSet<>(RANDOM_SEARCH_RELEASE);
        allowed.add("repetitions");
        assertReleaseOnly(out, j, allowed, true);
    }

    /**
     * account subsampled-tuning against the accountant's events built by hand, and the Remark 7 limit:
     * a tuning fraction near 1 (variant 1) costs what the baseline costs.
     */
    @Test
    void accountSubsampledTuningReportsVariantAndBaseline() throws Exception {
        Run r = run("account", "subsampled-tuning", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "5000",
                "--repetitions", "poisson:15", "--tune-fraction", "0.1", "--variant", "1", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        var run = NoiseCalibration.dpSgd(0.01, 2, 5000);
        var search = new org.dpdl4j.accounting.RepeatAndSelectEvent(run, org.dpdl4j.accounting.RepetitionDistribution.poisson(15));
        RdpAccountant acc = RdpAccountant.standard();
        assertEquals(acc.epsilon(new org.dpdl4j.accounting.SubsampledTuningEvent(search, run, 0.1,
                org.dpdl4j.accounting.SubsampledTuningEvent.Variant.DISJOINT), 1e-5), j.get("epsilon").asDouble(), 1e-12);
        assertEquals(acc.epsilon(search, 1e-5), j.get("baseline_epsilon").asDouble(), 1e-12);
        assertTrue(j.has("order"));
        assertTrue(j.get("epsilon").asDouble() < j.get("baseline_epsilon").asDouble());
        Run v2 = run("account", "subsampled-tuning", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "5000",
                "--repetitions", "poisson:15", "--tune-fraction", "0.1", "--variant", "2", "--json");
        assertTrue(v2.lastJson().get("epsilon").asDouble() > j.get("epsilon").asDouble(), "at mu = 15, variant 1 is tighter");
        Run near1 = run("account", "subsampled-tuning", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "5000",
                "--repetitions", "poisson:15", "--tune-fraction", "0.999999", "--json");
        double atNear1 = near1.lastJson().get("epsilon").asDouble(); // Remark 7: tends to the tuning alone
        assertTrue(atNear1 <= j.get("baseline_epsilon").asDouble() + 1e-12 && atNear1 > j.get("baseline_epsilon").asDouble() - 1e-3,
                atNear1 + " vs " + j.get("baseline_epsilon"));
        Run bad = run("account", "subsampled-tuning", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "5000",
                "--repetitions", "poisson:15", "--variant", "3");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--variant") && bad.err().contains("3"), bad.err());
        bad = run("account", "subsampled-tuning", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "5000",
                "--repetitions", "poisson:15", "--tune-fraction", "1.5");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--tune-fraction") && bad.err().contains("1.5"), bad.err());
    }

    /** A very short real subsampled tuning run: calibrated to the total, ledger charged once, compute reported. */
    @Test
    void tuneSubsampledReportsTotalBaselineAndCompute() throws Exception {
        Path ledger = tmp.resolve("sub-ledger.jsonl");
        Run r = run("tune", "--tuner", "subsampled", "--dataset", "mnist", "--epochs", "0.3", "--batch-size", "64",
                "--repetitions", "fixed:2", "--space", "lr=cat:0.05,0.1", "--tune-fraction", "0.05", "--variant", "2",
                "--target-epsilon", "2", "--seed", "4", "--ledger", ledger.toString(), "--output", tmp.resolve("sub").toString(),
                "--no-progress", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        double total = j.get("epsilon_total").asDouble();
        assertTrue(total <= 2 && total > 1.9, "calibrated to the total target: " + total);
        assertTrue(j.get("epsilon_baseline").asDouble() > 0);
        JsonNode record = operatorRecord(tmp.resolve("sub"));
        assertEquals(60000, record.get("final_set_size").asInt(), "variant 2 trains the final model on all of X");
        assertTrue(record.get("tune_set_size").asInt() > 0 && record.get("repetitions").asLong() == 2, record.toString());
        assertEquals(j.get("best").get("learning_rate").asDouble() / (0.05 * 0.9), j.get("final_candidate").get("learning_rate").asDouble(), 1e-9,
                "scaled by the expected sizes n / (q_tune (1 - f) n)");
        assertTrue(j.get("test_accuracy").asDouble() > 0.3, r.out());
        assertTrue(record.get("gradient_ratio").asDouble() > 0);
        assertReleaseOnly(tmp.resolve("sub"), j, SUBSAMPLED_RELEASE, false);
        java.util.List<String> lines = Files.readAllLines(ledger);
        assertEquals(1, lines.stream().skip(1).filter(l -> l.contains("\"charged\":true")).count(), String.join("\n", lines));
        Run bad = run("tune", "--tuner", "subsampled", "--space", "batch_size=cat:64,128", "--no-progress");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("sampling_rate"), bad.err());
    }

    /** --density-bounds 1:1 prints exactly the random-search number; 0.75:2 adds Theorem 1's adaptivity cost. */
    @Test
    void accountTuningWithDensityBounds() throws Exception {
        String[] base = {"account", "tuning", "--sampling-rate", "0.00427", "--steps", "2344", "--noise-multiplier", "0.71",
                "--repetitions", "geometric:gamma=0.01", "--json"};
        double random = run(base).lastJson().get("epsilon").asDouble();
        Run same = run(concat(base, "--density-bounds", "1:1"));
        assertEquals(0, same.status(), same.err());
        assertEquals(random, same.lastJson().get("epsilon").asDouble(), 0.0);
        JsonNode j = run(concat(base, "--density-bounds", "0.75:2")).lastJson();
        var run = NoiseCalibration.dpSgd(0.00427, 0.71, 2344);
        var k = new org.dpdl4j.accounting.TruncatedNegativeBinomial(1, 0.01);
        assertEquals(RdpAccountant.standard().epsilon(new org.dpdl4j.accounting.AdaptiveRepeatAndSelectEvent(run, k, 0.75, 2), 1e-5),
                j.get("epsilon").asDouble(), 1e-12);
        assertEquals(j.get("epsilon").asDouble() - random, j.get("adaptivity_cost").asDouble(), 1e-12);
        assertTrue(j.get("adaptivity_cost").asDouble() > 0);
        Run bad = run(concat(base, "--density-bounds", "2:3"));
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--density-bounds") && bad.err().contains("2:3"), bad.err());
    }

    /** A very short real DP-HyPO run: total calibrated, adaptivity cost reported, every trial recorded in the ledger. */
    @Test
    void tuneDpHypoReportsTheAdaptivityCost() throws Exception {
        Path ledger = tmp.resolve("hypo-ledger.jsonl");
        Run r = run("tune", "--tuner", "dp-hypo", "--dataset", "mnist", "--epochs", "0.05", "--repetitions", "fixed:3",
                "--density-bounds", "0.75:2", "--space", "lr=cat:0.5,1.0", "--space", "clip=cat:0.5,1", "--target-epsilon", "2",
                "--seed", "3", "--ledger", ledger.toString(), "--output", tmp.resolve("hypo").toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        assertTrue(j.get("epsilon_total").asDouble() <= 2);
        assertEquals("dp-hypo", j.get("tuner").asText());
        assertEquals(0.0, j.get("adaptivity_cost").asDouble(), 1e-12, "a fixed number of runs composes: adaptivity is free");
        assertEquals(3, operatorRecord(tmp.resolve("hypo")).get("repetitions").asLong());
        assertTrue(j.get("test_accuracy").asDouble() > 0.3, r.out());
        assertEquals(1 + 1 + 1 + 3 + 1, Files.readAllLines(ledger).size(), "header, the charge, the tuning and three trials "
                + "recorded, its release");
        assertReleaseOnly(tmp.resolve("hypo"), j, DP_HYPO_RELEASE, false);
        assertTrue(r.out().contains("[operator] observed density ratios"), r.out());
        Run bad = run("tune", "--tuner", "dp-hypo", "--ucb-tau", "-1", "--no-progress");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--ucb-tau"), bad.err());
        bad = run("tune", "--tuner", "propose-test", "--granularity", "2", "--no-progress");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--granularity") && bad.err().contains("2.0"), bad.err());
        Path untouched = tmp.resolve("untouched-ledger.jsonl");
        bad = run("tune", "--tuner", "propose-test", "--partitions", "300", "--batch-size", "256",
                "--ledger", untouched.toString(), "--ledger-budget", "10", "--output", tmp.resolve("pt-refused").toString(), "--no-progress");
        assertEquals(2, bad.status(), bad.err() + bad.out());
        assertTrue(bad.err().contains("--partitions/--batch-size: batch_size 256 must fit in each of the k = 300 parts"), bad.err());
        assertFalse(Files.exists(untouched) || Files.exists(tmp.resolve("pt-refused")), "refused before any charge or output");
        // its loop alone (22 iterations of 0.5-DP) costs more than the target: refused by the library's calibration, named
        bad = run("tune", "--tuner", "propose-test", "--epsilon0", "0.5", "--target-epsilon", "3", "--ledger", untouched.toString(),
                "--ledger-budget", "10", "--output", tmp.resolve("pt-floor").toString(), "--no-progress");
        assertEquals(2, bad.status(), bad.err() + bad.out());
        assertTrue(bad.err().contains("--target-epsilon 3.0 cannot be met: with any noise the procedure costs at least epsilon"), bad.err());
        assertFalse(Files.exists(untouched) || Files.exists(tmp.resolve("pt-floor")), "refused before any charge or output");
    }

    /** account dp-hype: the JSON's noise multiplier meets the target (Theorem IV.1 + II.1) and bad k is refused. */
    @Test
    void accountDpHypeGivesTheNoiseMultiplier() throws Exception {
        Run r = run("account", "dp-hype", "--votes", "5", "--target-epsilon", "1", "--delta", "1e-5", "--json");
        assertEquals(0, r.status(), r.err());
        double sigma = r.lastJson().get("noise_multiplier").asDouble();
        assertEquals(sigma, org.dpdl4j.accounting.DpHypeVoting.noiseMultiplier(5, 1, 1e-5), 0.0);
        assertTrue(r.lastJson().get("epsilon").asDouble() <= 1.0);
        Run bad = run("account", "dp-hype", "--votes", "0", "--target-epsilon", "1");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--votes") && bad.err().contains("0"), bad.err());
    }

    /**
     * tune --tuner dp-hype in process on MNIST: the vote meets its target through the distributed discrete
     * Gaussian, every client takes part, the ledger holds the vote's event, and OPT and RANDGUESS are the max
     * and mean of the candidates' test accuracies.
     */
    @Test
    void tuneDpHypeVotesInProcessAndReportsOptAndRandGuess() throws Exception {
        Path ledger = tmp.resolve("hype-ledger.jsonl");
        Run r = run("tune", "--tuner", "dp-hype", "--clients", "3", "--votes", "1", "--target-epsilon", "2", "--model", "mlp",
                "--epochs", "0.05", "--space", "lr=cat:0.001,0.5", "--seed", "4", "--ledger", ledger.toString(), "--evaluate",
                "--output", tmp.resolve("hype").toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        double epsilon = j.get("epsilon_total").asDouble();
        assertTrue(epsilon <= 2 && epsilon > 1.99, "calibrated to the target: " + epsilon);
        JsonNode record = operatorRecord(tmp.resolve("hype"));
        assertEquals("[1,2,3]", record.get("participants").toString());
        assertEquals(1, record.get("rounds").asLong());
        JsonNode evaluation = record.get("evaluation");
        assertTrue(evaluation.get("non_private").asText().contains("WITHOUT privacy"), evaluation.toString());
        double a0 = evaluation.get("candidate_test_accuracies").get(0).asDouble();
        double a1 = evaluation.get("candidate_test_accuracies").get(1).asDouble();
        assertEquals(Math.max(a0, a1), evaluation.get("opt_accuracy").asDouble(), 0.0);
        assertEquals((a0 + a1) / 2, evaluation.get("randguess_accuracy").asDouble(), 1e-12);
        assertEquals(j.get("winner_index").asInt() == 0 ? a0 : a1, evaluation.get("winner_test_accuracy").asDouble(), 0.0);
        assertReleaseOnly(tmp.resolve("hype"), j, DP_HYPE_RELEASE, false);
        java.util.List<String> lines = Files.readAllLines(ledger);
        assertEquals(3, lines.size(), "header, the vote's charge and its release");
        assertEquals(epsilon, org.dpdl4j.accounting.DpHypeVoting.accountant().epsilon(PrivacyEvents.fromMap(
                Reporting.JSON.convertValue(Reporting.JSON.readTree(lines.get(1)).get("event"), java.util.Map.class)), 1e-5), 1e-12);

        Run bad = run("tune", "--tuner", "dp-hype", "--clients", "1", "--no-progress");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--clients") && bad.err().contains("1"), bad.err());
        bad = run("tune", "--tuner", "dp-hype", "--transport", "carrier-pigeon", "--no-progress");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--transport"), bad.err());
        bad = run("tune", "--tuner", "dp-hype", "--partition", "dirichlet:-1", "--no-progress");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--partition") && bad.err().contains("dirichlet:-1"), bad.err());
        bad = run("tune", "--tuner", "dp-hype", "--coordinator-port", "70000", "--no-progress");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--coordinator-port") && bad.err().contains("70000"), bad.err());
        bad = run("tune", "--tuner", "dp-hype", "--votes", "9", "--space", "lr=cat:0.1,0.2", "--no-progress");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--votes") && bad.err().contains("9"), bad.err());
    }

    /**
     * Bad outputs, σ = 0 without --non-private and bad space values are refused by name before anything is
     * charged or trained: the ledger is byte-identical afterwards. A corrupt ledger is one line with exit 5.
     */
    @Test
    void badInputIsRefusedBeforeTheLedgerChanges() throws Exception {
        Path ledger = tmp.resolve("guard.jsonl");
        try (var l = org.dpdl4j.release.PrivacyLedger.open(ledger, "mnist", 10, 1e-5)) {
            l.charge("earlier", new org.dpdl4j.accounting.GaussianEvent(5));
        }
        byte[] before = Files.readAllBytes(ledger);
        Path aFile = tmp.resolve("a-file");
        Files.writeString(aFile, "x");
        Path earlier = tmp.resolve("earlier");
        Files.createDirectories(earlier);
        Files.writeString(earlier.resolve("model.zip"), "an earlier model");
        String[] tune = {"tune", "--epochs", "0.01", "--repetitions", "fixed:1", "--noise-multiplier", "1", "--ledger",
                ledger.toString(), "--no-progress"};
        String[][] cases = {
                concat(tune, "--space", "lr=cat:0.5", "--output", aFile.toString()), {"--output", "is a file"},
                concat(tune, "--space", "lr=cat:0.5", "--output", aFile.resolve("sub").toString()), {"--output", "not a writable"},
                concat(tune, "--space", "lr=cat:0.5", "--output", ""), {"--output", "must name a directory"},
                concat(tune, "--space", "lr=cat:0.5", "--output", earlier.toString()), {"--output", "--overwrite"},
                concat(tune, "--space", "lr=cat:-1,0.5", "--output", tmp.resolve("o1").toString()), {"learning_rate", "-1"},
                concat(tune, "--space", "optimizer=cat:sgd,rmsprop", "--output", tmp.resolve("o2").toString()), {"optimizer", "rmsprop"},
                concat(tune, "--space", "sigma=cat:0,1", "--output", tmp.resolve("o3").toString()), {"sigma", "--non-private"},
                {"tune", "--noise-multiplier", "0", "--ledger", ledger.toString(), "--output", tmp.resolve("o4").toString()},
                {"--noise-multiplier 0", "--non-private"},
                {"tune", "--non-private", "--ledger", ledger.toString(), "--output", tmp.resolve("o5").toString()},
                {"--non-private", "--ledger"},
                {"train", "--output", aFile.resolve("sub").toString()}, {"--output", "not a writable"},
                {"train", "--noise-multiplier", "0", "--output", tmp.resolve("o6").toString()}, {"--non-private"},
        };
        for (int c = 0; c < cases.length; c += 2) {
            Run r = run(cases[c]);
            String what = String.join(" ", cases[c]);
            assertEquals(2, r.status(), what + "\n" + r.err());
            for (String expected : cases[c + 1]) {
                assertTrue(r.err().contains(expected), what + ": " + r.err());
            }
            assertEquals(1, r.err().strip().lines().filter(l -> !l.startsWith("note:")).count(), "one line: " + r.err());
            assertTrue(java.util.Arrays.equals(before, Files.readAllBytes(ledger)), what + " changed the ledger");
        }
        assertEquals("an earlier model", Files.readString(earlier.resolve("model.zip")));

        Files.writeString(ledger, "{\"seq\":9,garbage\n", java.nio.file.StandardOpenOption.APPEND);
        Run corrupt = run(concat(tune, "--space", "lr=cat:0.5", "--output", tmp.resolve("o7").toString()));
        assertEquals(5, corrupt.status(), corrupt.err());
        assertTrue(corrupt.err().startsWith("ledger: ") && corrupt.err().contains("line 3") && corrupt.err().strip().lines().count() == 1,
                corrupt.err());
    }

    /** train --non-private runs without noise and says so: epsilon infinite, privacy.json marked. */
    @Test
    void trainNonPrivateIsExplicitAndReportsInfiniteEpsilon() throws Exception {
        Path out = tmp.resolve("np");
        Run r = run("train", "--non-private", "--epochs", "0.01", "--output", out.toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err());
        assertTrue(Double.isInfinite(r.lastJson().get("epsilon").asDouble()), r.lastJson().toString());
        JsonNode privacy = Reporting.JSON.readTree(out.resolve("privacy.json").toFile());
        assertTrue(privacy.get("non_private").asBoolean());
        Run again = run("train", "--non-private", "--epochs", "0.01", "--output", out.toString(), "--no-progress");
        assertEquals(2, again.status(), "an earlier run's results are not overwritten");
        assertEquals(0, run("train", "--non-private", "--epochs", "0.01", "--output", out.toString(), "--overwrite", "--no-progress")
                .status());
    }

    /** A truncated K is never charged more than the composition of its limit m (here m = 2). */
    @Test
    void accountTuningCapsATruncatedKByComposition() throws Exception {
        Run r = run("account", "tuning", "--sampling-rate", "0.004", "--noise-multiplier", "1", "--steps", "1000",
                "--repetitions", "poisson:10", "--max-repetitions", "2", "--json");
        assertEquals(0, r.status(), r.err());
        double twoRuns = RdpAccountant.standard().epsilon(new org.dpdl4j.accounting.SelfComposedEvent(
                NoiseCalibration.dpSgd(0.004, 1, 1000), 2), 1e-5);
        assertEquals(twoRuns, r.lastJson().get("epsilon").asDouble(), 1e-9);
    }

    /** ledger show: every entry, the spent total as the accountant computes it, and the remaining budget. */
    @Test
    void ledgerShowPrintsWhatWasSpent() throws Exception {
        Path ledger = tmp.resolve("show.jsonl");
        var a = new org.dpdl4j.accounting.GaussianEvent(4);
        var b = NoiseCalibration.dpSgd(0.01, 1, 100);
        try (var l = org.dpdl4j.release.PrivacyLedger.open(ledger, "mnist", 8, 1e-5)) {
            long charge = l.charge("a", a).sequence();
            l.record("trial under a", a, charge);
            l.charge("b", b);
        }
        Run r = run("ledger", "show", ledger.toString(), "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        var both = new org.dpdl4j.accounting.ComposedEvent(java.util.List.of(a, b));
        double spent = org.dpdl4j.accounting.Accountants.tightest(both, 1e-5).epsilon();
        assertTrue(spent < RdpAccountant.standard().epsilon(both, 1e-5), "the PLD's number, below RDP's");
        assertEquals(spent, j.get("epsilon_spent").asDouble(), 1e-12);
        assertTrue(r.out().contains("by PLD"), r.out());
        assertEquals(8 - spent, j.get("epsilon_remaining").asDouble(), 1e-12);
        assertEquals(3, j.get("entries").size());
        assertEquals(1, j.get("entries").get(1).get("covered_by").asLong(), "the record points at the first charge");
        assertEquals(2, run("ledger", "show", tmp.resolve("missing.jsonl").toString()).status());
    }


    /**
     * SIGKILL after a checkpoint, then train --resume: the run ends at its planned T, its epsilon and privacy.json
     * are those of the whole T-step run, and the checkpoint is gone. The moving average (--ema) is checkpointed
     * beside the model and continued.
     */
    @Test
    void trainResumesAfterSigkillToThePlannedSteps() throws Exception {
        Path out = tmp.resolve("ckpt");
        Path log = tmp.resolve("ckpt.log");
        Path ledger = tmp.resolve("train-ledger.jsonl");
        Process p = CliRunner.startCli(log, "train", "--model", "mlp", "--epochs", "0.6", "--noise-multiplier", "1.1",
                "--checkpoint-every", "20", "--seed", "7", "--ledger", ledger.toString(), "--output", out.toString(), "--no-progress",
                "--ema", "0.9");
        Path checkpoint = out.resolve("operator").resolve("checkpoint");
        CliRunner.awaitCheckpoint(checkpoint.resolve("state.json"), 20, p, log); // a step-0 checkpoint comes first (the run is charged)
        assertTrue(p.isAlive(), "killed mid-run");
        p.destroyForcibly(); // SIGKILL
        assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
        assertTrue(!Files.exists(out.resolve("model.zip")), "the killed run finished nothing");
        JsonNode state = Reporting.JSON.readTree(checkpoint.resolve("state.json").toFile());
        long done = state.get("steps_done").asLong();
        assertTrue(done >= 20 && done % 20 == 0, "checkpoint at " + done);
        assertEquals("ema-step-" + done + ".bin", state.get("ema_file").asText());
        assertEquals(org.nd4j.linalg.factory.Nd4j.readBinary(checkpoint.resolve(state.get("ema_file").asText()).toFile())
                .length(), org.deeplearning4j.util.ModelSerializer.restoreMultiLayerNetwork(checkpoint
                .resolve(state.get("model_file").asText()).toFile()).numParams(), "one average per parameter");
        checkpointEditsAreRefused(out);

        Run r = run("train", "--resume", out.toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err() + r.out());
        JsonNode j = r.lastJson();
        long planned = (long) Math.ceil(0.6 * 60000 / 256.0);
        assertEquals(planned, j.get("steps").asLong());
        assertEquals(done, j.get("resumed_from_step").asLong());
        var event = NoiseCalibration.dpSgd(256.0 / 60000, 1.1, planned);
        // the accountant of the interrupted run (train's default, PLD) is kept by the resumed one
        assertEquals(org.dpdl4j.accounting.Accountants.byName("pld").epsilon(event, 1e-5), j.get("epsilon").asDouble(), 1e-12);
        JsonNode privacy = Reporting.JSON.readTree(out.resolve("privacy.json").toFile());
        assertEquals(planned, privacy.get("configuration").get("steps").asLong());
        assertEquals(0.9, privacy.get("configuration").get("ema_decay").asDouble(), 0.0);
        assertEquals(0.9, j.get("ema_decay").asDouble(), 0.0);
        assertEquals(event, PrivacyEvents.fromMap(Reporting.JSON.convertValue(privacy.get("event"), java.util.Map.class)));
        assertTrue(!Files.exists(checkpoint) && !Files.exists(out.resolve("operator")), "the final model supersedes the checkpoint");
        java.util.List<String> charges = Files.readAllLines(ledger).stream().filter(l -> l.contains("\"charged\":true")).toList();
        assertEquals(1, charges.size(), "train --ledger charges the whole run once, before it starts, not again on resume");
        assertEquals(event, PrivacyEvents.fromMap(Reporting.JSON.convertValue(Reporting.JSON.readTree(charges.get(0)).get("event"),
                java.util.Map.class)));
        assertTrue(j.get("test_accuracy").asDouble() > 0.3, r.out());
        Run again = run("train", "--resume", out.toString(), "--no-progress");
        assertEquals(2, again.status());
        assertTrue(again.err().contains("finished"), again.err());
    }

    /**
     * The rough edges: each refused with the option or file named, exit 2, and no empty --output left behind.
     */
    @Test
    void badInputsAreRefusedByNameAndLeaveNoEmptyOutput() throws Exception {
        Run tuner = run("tune", "foo");
        assertEquals(2, tuner.status(), tuner.err());
        assertTrue(tuner.err().contains("no tuner 'foo'") && tuner.err().contains("random-search"), tuner.err());
        Run ledgerDir = run("ledger", "show", tmp.toString());
        assertEquals(2, ledgerDir.status(), ledgerDir.err());
        assertTrue(ledgerDir.err().contains("is a directory"), ledgerDir.err());
        Run landscape = run("reproduce", "ps-figure7", "--landscape", tmp.resolve("missing.json").toString(), "--output",
                tmp.resolve("fig7").toString());
        assertEquals(2, landscape.status(), landscape.err());
        assertTrue(landscape.err().contains("--landscape"), landscape.err());
        Path out = tmp.resolve("not-made").resolve("run");
        Run delta = run("train", "--delta", "0.001", "--epochs", "0.01", "--output", out.toString(), "--no-progress");
        assertEquals(2, delta.status(), delta.err());
        assertTrue(delta.err().contains("--delta") && delta.err().contains("--allow-large-delta"), delta.err());
        Run epochs = run("train", "--epochs", "-1", "--output", out.toString(), "--no-progress");
        assertEquals(2, epochs.status(), epochs.err());
        assertTrue(!Files.exists(out) && !Files.exists(out.getParent()), "a refused run leaves no empty --output folder");
        // a damaged tuning state names its file and field
        Path tuning = tmp.resolve("damaged-tuning");
        Path state = Files.createDirectories(TuningOutput.operatorDirectory(tuning)).resolve("state.json");
        Files.writeString(state, "{\"args\":[\"--model\",\"mlp\"],\"tuner_seed\":\"12\",\"ledger_charge\":\"x\",\"run\":\"r\"}");
        Run badCharge = run("tune", "--resume", tuning.toString());
        assertEquals(2, badCharge.status(), badCharge.err());
        assertTrue(badCharge.err().contains("state.json") && badCharge.err().contains("'ledger_charge'"), badCharge.err());
        Files.writeString(state, "{\"args\":[\"--mo");
        Run truncated = run("tune", "--resume", tuning.toString());
        assertTrue(truncated.status() == 2 && truncated.err().contains("not a complete JSON object"), truncated.err());
        // an edited saved command line: --resume inside it (recursed before), a charge without its --ledger
        Files.writeString(state, "{\"args\":[\"--resume\",\"x\"],\"tuner_seed\":\"12\",\"ledger_charge\":null,\"run\":\"r\"}");
        Run recursive = run("tune", "--resume", tuning.toString());
        assertTrue(recursive.status() == 2 && recursive.err().contains("'--resume'"), recursive.err());
        Files.writeString(state, "{\"args\":[\"--model\",\"mlp\",\"--epochs\",\"0.01\",\"--space\",\"lr=cat:0.1\","
                + "\"--repetitions\",\"fixed:1\",\"--noise-multiplier\",\"1\",\"--no-progress\"],\"tuner_seed\":\"12\","
                + "\"ledger_charge\":3,\"run\":\"r\"}");
        Run uncharged = run("tune", "--resume", tuning.toString());
        assertTrue(uncharged.status() == 2 && uncharged.err().contains("without its charge"), uncharged.err());
        assertTrue(!Files.exists(tuning.resolve("tuning.json")), "nothing was released");
        // options an audit does not use are refused, and T beyond what a long holds is refused
        Run audit = run("audit", "train", "--output", tmp.resolve("x").toString(), "--canaries", "10", "--canary-type", "gradient");
        assertTrue(audit.status() == 2 && audit.err().contains("--output"), audit.err());
        Run huge = run("account", "dpsgd", "--dataset-size", "60000", "--batch-size", "1", "--epochs", "1e15", "--noise-multiplier", "1");
        assertTrue(huge.status() == 2 && huge.err().contains("--epochs"), huge.err());
        Run parse = run("train", "--epochs", "abc");
        assertTrue(parse.status() == 2 && parse.err().strip().lines().count() == 1 && parse.err().startsWith("error:")
                && parse.err().contains("--epochs"), parse.err());
    }


    /**
     * The edits of a checkpoint, each on a copy of the run folder, each refused before anything trains: steps
     * raised (the state's hash), σ raised with every hash recomputed (the ledger's charge), a model file outside the
     * folder, a missing field, a truncated state.json.
     */
    private void checkpointEditsAreRefused(Path out) throws Exception {
        java.util.Map<String, java.util.function.Consumer<java.util.Map<String, Object>>> edits = new java.util.LinkedHashMap<>();
        edits.put("state_sha256", m -> m.put("steps", 150));
        edits.put("ledger", m -> {
            m.put("noise_multiplier", 5.0);
            m.put("event_so_far", org.dpdl4j.dpsgd.DpSgdTrainer.event((Double) m.get("sampling_rate"), 5.0,
                    ((Number) m.get("steps_done")).longValue()).toMap());
            m.put("plan_sha256", CheckpointState.planHash(m));
            m.put(CheckpointState.STATE_HASH, CheckpointState.stateHash(m));
        });
        edits.put("model_file", m -> {
            m.put("model_file", "../../x.zip");
            m.put(CheckpointState.STATE_HASH, CheckpointState.stateHash(m));
        });
        edits.put("'sampling_rate' is missing", m -> m.remove("sampling_rate"));
        int i = 0;
        for (var edit : edits.entrySet()) {
            Path copy = tmp.resolve("edited-" + i++);
            copyTree(out, copy);
            Path stateFile = copy.resolve("operator").resolve("checkpoint").resolve("state.json");
            @SuppressWarnings("unchecked")
            java.util.Map<String, Object> m = Reporting.JSON.readValue(stateFile.toFile(), java.util.LinkedHashMap.class);
            edit.getValue().accept(m);
            Reporting.JSON.writeValue(stateFile.toFile(), m);
            Run r = run("train", "--resume", copy.toString(), "--no-progress");
            assertEquals(2, r.status(), edit.getKey() + ": " + r.err() + r.out());
            assertTrue(r.err().contains("refused") && r.err().contains(edit.getKey()), edit.getKey() + ": " + r.err());
            assertTrue(!Files.exists(copy.resolve("model.zip")) && !Files.exists(copy.resolve("privacy.json")));
        }
        Path copy = tmp.resolve("edited-truncated");
        copyTree(out, copy);
        Path stateFile = copy.resolve("operator").resolve("checkpoint").resolve("state.json");
        String text = Files.readString(stateFile);
        Files.writeString(stateFile, text.substring(0, text.length() / 2));
        Run r = run("train", "--resume", copy.toString(), "--no-progress");
        assertEquals(2, r.status(), r.err());
        assertTrue(r.err().contains("state.json") && r.err().contains("not a complete JSON object"), r.err());
    }

    private static void copyTree(Path from, Path to) throws java.io.IOException {
        try (var files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else if (!f.getFileName().toString().equals(".lock")) {
                    Files.copy(f, target);
                }
            }
        }
    }

    /**
     * Killed after the ledger's charge but before any --checkpoint-every checkpoint: the step-0 checkpoint written right
     * after the charge lets --resume train the whole run under that one charge.
     */
    @Test
    void aChargedRunKilledBeforeItsFirstCheckpointResumesFromStepZero() throws Exception {
        Path out = tmp.resolve("step0");
        Path log = tmp.resolve("step0.log");
        Path ledger = tmp.resolve("step0-ledger.jsonl");
        Process p = CliRunner.startCli(log, "train", "--model", "mlp", "--epochs", "0.3", "--noise-multiplier", "1.1", "--seed", "5",
                "--ledger", ledger.toString(), "--output", out.toString(), "--no-progress");
        CliRunner.awaitFile(out.resolve("operator").resolve("checkpoint").resolve("state.json"), p, log);
        p.destroyForcibly();
        assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
        if (Files.exists(out.resolve("model.zip"))) {
            return; // it finished before the kill landed: nothing to resume (rare on a fast machine)
        }
        Run r = run("train", "--resume", out.toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err() + r.out());
        long planned = (long) Math.ceil(0.3 * 60000 / 256.0);
        assertEquals(planned, r.lastJson().get("steps").asLong());
        assertEquals(1, Files.readAllLines(ledger).stream().filter(l -> l.contains("\"charged\":true")).count(), "charged once");
    }

    /**
     * SIGKILL after the first finished trial, then tune --resume: the ledger holds exactly one charge, and the
     * release equals that of an uninterrupted tuning with the same seed (same best, score and model parameters).
     */
    @Test
    void tuneResumesAfterSigkillWithOneChargeAndTheSameRelease() throws Exception {
        String[] args = {"tune", "--model", "mlp", "--epochs", "0.15", "--repetitions", "fixed:4", "--space", "lr=cat:0.05,0.2,0.8",
                "--noise-multiplier", "1.0", "--seed", "11", "--no-progress"};
        Path ledger = tmp.resolve("resume-ledger.jsonl");
        Path out = tmp.resolve("resumed");
        Path log = tmp.resolve("tune.log");
        Process p = CliRunner.startCli(log, concat(args, "--ledger", ledger.toString(), "--output", out.toString()));
        CliRunner.awaitFile(out.resolve("operator").resolve("trials").resolve("trial-0.json"), p, log);
        assertTrue(p.isAlive(), "killed mid-tuning");
        p.destroyForcibly();
        assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
        assertTrue(!Files.exists(out.resolve("tuning.json")));
        java.util.function.Supplier<Long> charges = () -> {
            try {
                return Files.readAllLines(ledger).stream().filter(l -> l.contains("\"charged\":true")).count();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        };
        assertEquals(1L, charges.get());

        Run resumed = run("tune", "--resume", out.toString(), "--json");
        assertEquals(0, resumed.status(), resumed.err() + resumed.out());
        assertEquals(1L, charges.get(), "nothing is charged twice");
        Run clean = run(concat(args, "--ledger", tmp.resolve("clean-ledger.jsonl").toString(), "--output",
                tmp.resolve("clean").toString(), "--json"));
        assertEquals(0, clean.status(), clean.err());
        assertEquals(clean.lastJson().get("best"), resumed.lastJson().get("best"));
        assertEquals(clean.lastJson().get("best_score").asDouble(), resumed.lastJson().get("best_score").asDouble(), 0.0);
        assertEquals(clean.lastJson().get("epsilon_total").asDouble(), resumed.lastJson().get("epsilon_total").asDouble(), 0.0);
        MultiLayerNetwork a = ModelSerializer.restoreMultiLayerNetwork(out.resolve("model.zip").toFile());
        MultiLayerNetwork b = ModelSerializer.restoreMultiLayerNetwork(tmp.resolve("clean").resolve("model.zip").toFile());
        assertEquals(0, a.params().sub(b.params()).amaxNumber().doubleValue(), 0.0, "the same model as without the crash");
        assertTrue(!Files.exists(out.resolve("operator").resolve("state.json")), "the seed is not kept after the tuning ends");
        assertEquals(2, run("tune", "--resume", out.toString()).status(), "a finished tuning is not resumed");
    }

    /**
     * A fresh tuning never reuses an earlier tuning's trials (here: noise-free ones written with the same seed into the
     * same directory), and --resume never adopts a charge that another command made after a refused tuning.
     */
    @Test
    void aFreshTuningNeverReusesTrialsAndResumeNeverAdoptsAForeignCharge() throws Exception {
        Path out = tmp.resolve("reuse");
        String[] base = {"tune", "--model", "mlp", "--epochs", "0.05", "--repetitions", "fixed:1", "--space", "lr=cat:0.5", "--seed", "7",
                "--no-progress", "--json"};
        Run noiseFree = run(concat(base, "--non-private", "--output", out.toString()));
        assertEquals(0, noiseFree.status(), noiseFree.err());
        Run noisy = run(concat(base, "--noise-multiplier", "200", "--output", out.toString(), "--overwrite"));
        assertEquals(0, noisy.status(), noisy.err());
        assertTrue(noisy.lastJson().get("test_accuracy").asDouble() != noiseFree.lastJson().get("test_accuracy").asDouble()
                || noisy.lastJson().get("best_score").asDouble() != noiseFree.lastJson().get("best_score").asDouble(),
                "the noisy tuning trained its own model: " + noisy.lastJson() + " vs " + noiseFree.lastJson());

        Path ledger = tmp.resolve("foreign.jsonl");
        Path refusedOut = tmp.resolve("refused");
        Run refused = run(concat(base, "--noise-multiplier", "0.5", "--ledger", ledger.toString(), "--ledger-budget", "1",
                "--output", refusedOut.toString()));
        assertEquals(3, refused.status(), refused.err());
        assertEquals(0, run("train", "--model", "mlp", "--epochs", "0.01", "--target-epsilon", "0.3", "--ledger", ledger.toString(),
                "--output", tmp.resolve("foreign-train").toString(), "--no-progress").status());
        Run resumed = run("tune", "--resume", refusedOut.toString());
        assertEquals(2, resumed.status(), "a tuning that was never charged is not resumed under another command's charge");
        assertTrue(resumed.err().contains("no tuning to resume"), resumed.err());
    }

    /**
     * The same crash and resume for subsampled tuning (killed after its first trial on X1) and propose-test (killed
     * once its state is saved): one charge, and the release of an uninterrupted run with the same seed.
     */
    @Test
    void subsampledAndProposeTestResumeAfterSigkill() throws Exception {
        String[][] tuners = {
                {"tune", "--tuner", "subsampled", "--model", "mlp", "--epochs", "0.15", "--batch-size", "64", "--repetitions", "fixed:3",
                        "--space", "lr=cat:0.05,0.1", "--tune-fraction", "0.05", "--noise-multiplier", "1.0", "--seed", "4", "--no-progress"},
                {"tune", "--tuner", "propose-test", "--model", "mlp", "--epochs", "0.05", "--partitions", "2", "--granularity", "0.2",
                        "--eps0", "0.1", "--space", "lr=cat:0.5,1.0", "--noise-multiplier", "1.0", "--seed", "2", "--no-progress"}};
        String[] awaited = {"trials/trial-0.json", "state.json"};
        for (int k = 0; k < tuners.length; k++) {
            Path ledger = tmp.resolve("l" + k + ".jsonl");
            Path out = tmp.resolve("r" + k);
            Path log = tmp.resolve("r" + k + ".log");
            Process p = CliRunner.startCli(log, concat(tuners[k], "--ledger", ledger.toString(), "--output", out.toString()));
            CliRunner.awaitFile(out.resolve("operator").resolve(awaited[k]), p, log);
            assertTrue(p.isAlive(), tuners[k][2] + " killed mid-tuning");
            p.destroyForcibly();
            assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
            Run resumed = run("tune", "--resume", out.toString(), "--json");
            assertEquals(0, resumed.status(), tuners[k][2] + ": " + resumed.err() + resumed.out());
            assertEquals(1, Files.readAllLines(ledger).stream().filter(l -> l.contains("\"charged\":true")).count(), tuners[k][2]);
            Run clean = run(concat(tuners[k], "--output", tmp.resolve("c" + k).toString(), "--json"));
            assertEquals(0, clean.status(), clean.err());
            assertEquals(clean.lastJson().get("best"), resumed.lastJson().get("best"), tuners[k][2]);
            MultiLayerNetwork a = ModelSerializer.restoreMultiLayerNetwork(out.resolve("model.zip").toFile());
            MultiLayerNetwork b = ModelSerializer.restoreMultiLayerNetwork(tmp.resolve("c" + k).resolve("model.zip").toFile());
            assertEquals(0, a.params().sub(b.params()).amaxNumber().doubleValue(), 0.0, tuners[k][2] + ": the same model");
        }
    }

    /** A short propose-test run: the release holds the selection and the final model, the loop's count is operator-only. */
    @Test
    void tuneProposeTestReleasesTheSelectionOnly() throws Exception {
        Path out = tmp.resolve("pt");
        Run r = run("tune", "--tuner", "propose-test", "--dataset", "mnist", "--epochs", "0.03", "--partitions", "2",
                "--granularity", "0.2", "--eps0", "0.1", "--space", "lr=cat:0.5,1.0", "--target-epsilon", "4", "--seed", "2",
                "--output", out.toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        assertTrue(j.get("epsilon_total").asDouble() <= 4, j.toString());
        JsonNode record = operatorRecord(out);
        assertTrue(record.get("iterations").asInt() >= 1 && record.get("part_sizes").size() == 2, record.toString());
        assertReleaseOnly(out, j, PROPOSE_TEST_RELEASE, false);
    }

    private static final java.util.Set<String> COMMON_RELEASE = java.util.Set.of("tuner", "best", "best_score", "best_run",
            "test_accuracy", "epsilon_total", "delta", "rdp_order", "noise_multiplier", "dataset", "dataset_size", "model", "config",
            "notes", "event", "library_version");
    private static final java.util.Set<String> RANDOM_SEARCH_RELEASE = union(COMMON_RELEASE, "epsilon_single_run", "distribution",
            "expected_repetitions", "score", "trials_revealed");
    private static final java.util.Set<String> DP_HYPO_RELEASE = union(RANDOM_SEARCH_RELEASE, "density_bounds",
            "epsilon_random_search", "adaptivity_cost");
    private static final java.util.Set<String> SUBSAMPLED_RELEASE = union(COMMON_RELEASE, "variant", "tune_fraction",
            "final_candidate", "extrapolation", "epsilon_baseline", "epsilon_single_run", "distribution", "expected_repetitions",
            "sampling_rate");
    private static final java.util.Set<String> PROPOSE_TEST_RELEASE = union(COMMON_RELEASE, "epsilon_total_rdp",
            "epsilon_total_advanced_composition", "epsilon_selection_loop", "epsilon_final_run", "max_iterations", "partitions",
            "granularity", "epsilon0", "lower_utility");
    private static final java.util.Set<String> DP_HYPE_RELEASE = java.util.Set.of("tuner", "best", "winner_index", "noisy_votes",
            "epsilon_total", "delta", "rdp_order", "clients", "min_clients", "votes", "candidates", "partition", "transport",
            "local_sigma", "vote_scale", "summed_noise_votes", "dataset", "dataset_size", "model", "config", "event", "library_version");
    private static final java.util.Set<String> CONFIG_KEYS = java.util.Set.of("space", "epochs", "batch_size", "clip_norm", "optimizer",
            "learning_rate", "activation", "validation_fraction", "score_noise");
    private static final java.util.Set<String> RUN_KEYS = java.util.Set.of("sampling_rate", "noise_multiplier", "clip_norm", "steps");

    private static java.util.Set<String> union(java.util.Set<String> a, String... more) {
        java.util.Set<String> s = new java.util.HashSet<>(a);
        s.addAll(java.util.List.of(more));
        return java.util.Set.copyOf(s);
    }

    private static java.util.Set<String> fieldNames(JsonNode n) {
        java.util.Set<String> s = new java.util.HashSet<>();
        n.fieldNames().forEachRemaining(s::add);
        return s;
    }

    private static JsonNode operatorRecord(Path out) throws Exception {
        Path readme = out.resolve("operator").resolve("README.txt");
        assertTrue(Files.readString(readme).contains("NOT COVERED BY THE PRIVACY GUARANTEE"), readme.toString());
        return Reporting.JSON.readTree(out.resolve("operator").resolve("record.json").toFile());
    }

    /**
     * The release audit: every file under {@code out} outside {@code operator/} is a release file, and tuning.json
     * and the --json line hold only allowed keys (candidates as axis values, the event, the configuration); no trial
     * other than the best one appears as a candidate anywhere in the release unless trials are revealed.
     */
    private static void assertReleaseOnly(Path out, JsonNode jsonLine, java.util.Set<String> allowed, boolean trialsRevealed)
            throws Exception {
        java.util.Set<String> files = new java.util.TreeSet<>();
        try (var walk = Files.walk(out)) {
            walk.filter(Files::isRegularFile).map(out::relativize).map(Path::toString)
                    .filter(f -> !f.startsWith("operator")).forEach(files::add);
        }
        java.util.Set<String> allowedFiles = new java.util.HashSet<>(java.util.Set.of("model.zip", "privacy.json", "tuning.json"));
        if (trialsRevealed) {
            allowedFiles.add("trials.json");
        }
        assertTrue(allowedFiles.containsAll(files), "files outside operator/: " + files);
        JsonNode file = Reporting.JSON.readTree(out.resolve("tuning.json").toFile());
        assertEquals(files.contains("model.zip"), files.contains("privacy.json"), "a released model comes with its sidecar: " + files);
        if (files.contains("model.zip")) { // the sidecar: the tuning's whole event, loadable, its epsilon no smaller than the reported one
            var sidecar = org.dpdl4j.release.PrivateModel.load(out, org.dpdl4j.release.LoadPolicy.privateOnly()).sidecar();
            assertEquals("tuning", sidecar.kind());
            assertEquals(new java.util.TreeSet<>(sidecar.released()), files, "the sidecar lists the release");
            assertEquals(PrivacyEvents.fromMap(Reporting.JSON.convertValue(file.get("event"), java.util.Map.class)),
                    sidecar.event());
            assertTrue(sidecar.epsilon() >= jsonLine.get("epsilon_total").asDouble() - 1e-12, sidecar.epsilon() + " vs " + jsonLine);
        }
        for (JsonNode report : new JsonNode[]{file, jsonLine}) {
            for (String key : fieldNames(report)) {
                assertTrue(allowed.contains(key), "release key '" + key + "' is not in the allow-list: " + report);
            }
            if (report.has("config")) {
                assertTrue(CONFIG_KEYS.containsAll(fieldNames(report.get("config"))), report.get("config").toString());
            }
            if (report.has("best_run")) {
                assertTrue(RUN_KEYS.equals(fieldNames(report.get("best_run"))), report.get("best_run").toString());
            }
            for (String candidateKey : new String[]{"best", "final_candidate"}) {
                if (report.has(candidateKey)) {
                    assertTrue(org.dpdl4j.tuning.DpSgdSpace.AXES.containsAll(fieldNames(report.get(candidateKey))),
                            report.get(candidateKey).toString());
                }
            }
        }
        JsonNode record = Reporting.JSON.readTree(out.resolve("operator").resolve("record.json").toFile());
        if (!trialsRevealed && record.has("trials")) {
            String release = file.toString() + jsonLine.toString();
            for (JsonNode t : record.get("trials")) {
                JsonNode c = t.get("candidate");
                if (!c.equals(file.get("best"))) {
                    assertTrue(!release.contains(c.toString()), "a non-best trial's candidate " + c + " is in the release");
                }
            }
        }
    }

    /**
     * scatternet-ablation refuses an unknown normalisation, a learning-rate factor outside (0, 1000], a batch factor outside
     * (0, 8] and an ε outside (0, 100] before it trains; other IDs refuse its options, and tramer-boneh (the paper's ε = 3) refuses --epsilon.
     */
    @Test
    void scatternetAblationRefusesBadLevers(@TempDir Path dir) throws Exception {
        Run badNorm = run("reproduce", "scatternet-ablation", "--normalisations", "groupnorm,batchnorm", "--output", dir.resolve("a").toString());
        assertEquals(2, badNorm.status());
        assertTrue(badNorm.err().contains("--normalisations must be groupnorm and/or datanorm, got 'batchnorm'"), badNorm.err());
        Run badFactor = run("reproduce", "scatternet-ablation", "--lr-factors", "0.5,0", "--output", dir.resolve("b").toString());
        assertEquals(2, badFactor.status());
        assertTrue(badFactor.err().contains("--lr-factors must each be in (0, 1000], got 0.0"), badFactor.err());
        Run badBatch = run("reproduce", "scatternet-ablation", "--batch-factors", "2,9", "--output", dir.resolve("e").toString());
        assertEquals(2, badBatch.status());
        assertTrue(badBatch.err().contains("--batch-factors must each be in (0, 8], got 9.0"), badBatch.err());
        Run badSchedule = run("reproduce", "scatternet-ablation", "--lr-schedules", "cosine", "--output", dir.resolve("f").toString());
        assertEquals(2, badSchedule.status());
        assertTrue(badSchedule.err().contains("--lr-schedules must be constant and/or linear, got 'cosine'"), badSchedule.err());
        Run elsewhere = run("reproduce", "honest-mnist", "--lr-factors", "1", "--output", dir.resolve("c").toString());
        assertEquals(2, elsewhere.status());
        assertTrue(elsewhere.err().contains("Unknown options: '--lr-factors'") && elsewhere.err().contains("dpdl4j reproduce honest-mnist --help"),
                elsewhere.err());
        Run badEpsilon = run("reproduce", "scatternet-ablation", "--epsilon", "0", "--output", dir.resolve("d").toString());
        assertEquals(2, badEpsilon.status());
        assertTrue(badEpsilon.err().contains("--target-epsilon (or --epsilon) must be in (0, 100], got 0.0"), badEpsilon.err());
        Run epsilonElsewhere = run("reproduce", "tramer-boneh", "--target-epsilon", "1", "--output", dir.resolve("e").toString());
        assertEquals(2, epsilonElsewhere.status());
        assertTrue(epsilonElsewhere.err().contains("Unknown options: '--target-epsilon'")
                && epsilonElsewhere.err().contains("dpdl4j reproduce tramer-boneh --help"), epsilonElsewhere.err());
        for (String d : List.of("a", "b", "c", "d", "e")) {
            assertTrue(!Files.exists(dir.resolve(d)), "nothing written for a refused command: " + d);
        }
    }

    /**
     * data pack writes MNIST as shards; train, tune subsampled and audit train with --dataset shards: read them by index
     * and release what --dataset mnist releases with the same seed, as tune dp-hype does; missing shards are refused by
     * name.
     */
    @Test
    void dataPackThenTrainFromShardsIsTrainingFromMnist(@TempDir Path tmp) throws Exception {
        Path shards = tmp.resolve("mnist-shards");
        Run pack = run("data", "pack", "--dataset", "mnist", "--records-per-shard", "20000", "--output", shards.toString());
        assertEquals(0, pack.status(), pack.err());
        assertTrue(pack.out().contains("packed mnist: 60000 training and 10000 test images of 28x28x1"), pack.out());
        assertTrue(Files.exists(shards.resolve("train").resolve("shard-00002.bin")) && !Files.exists(tmp.resolve("mnist-shards.partial")));
        Run again = run("data", "pack", "--dataset", "mnist", "--output", shards.toString());
        assertEquals(2, again.status());
        assertTrue(again.err().contains("exists"), again.err());
        String[] common = {"train", "--epochs", "0.02", "--batch-size", "256", "--target-epsilon", "3", "--accountant", "rdp", "--seed", "4", "--no-progress",
                "--json", "--output"};
        Run fromMnist = run(concat(concat(common, tmp.resolve("a").toString()), "--dataset", "mnist"));
        Run fromShards = run(concat(concat(common, tmp.resolve("b").toString()), "--dataset", "shards:" + shards, "--public-test"));
        assertEquals(0, fromShards.status(), fromShards.err());
        // shards' test split is private unless declared: these hold MNIST's, declared public, so its accuracy is released
        assertEquals(fromMnist.lastJson().get("test_accuracy"), fromShards.lastJson().get("test_accuracy"));
        MultiLayerNetwork a = ModelSerializer.restoreMultiLayerNetwork(tmp.resolve("a").resolve("model.zip").toFile());
        MultiLayerNetwork b = ModelSerializer.restoreMultiLayerNetwork(tmp.resolve("b").resolve("model.zip").toFile());
        assertEquals(a.params(), b.params(), "the same parameters, bit for bit");
        Run cached = run(concat(concat(common, tmp.resolve("cached").toString()), "--dataset", "shards:" + shards, "--read-cache-mb", "64"));
        assertEquals(0, cached.status(), cached.err());
        assertEquals(a.params(), ModelSerializer.restoreMultiLayerNetwork(tmp.resolve("cached").resolve("model.zip").toFile()).params(),
                "a bounded cache of the records read changes nothing");
        Run badCache = run(concat(concat(common, tmp.resolve("bad-cache").toString()), "--dataset", "shards:" + shards, "--read-cache-mb",
                "-1"));
        assertEquals(2, badCache.status());
        assertTrue(badCache.err().contains("--read-cache-mb must be in [0, 16777216], got -1"), badCache.err());
        assertTrue(!Files.exists(tmp.resolve("bad-cache")));
        JsonNode sidecar = Reporting.JSON.readTree(tmp.resolve("b").resolve("privacy.json").toFile());
        assertEquals("shards:" + shards, sidecar.get("configuration").get("dataset").asText());
        // killed after a checkpoint, resumed from the shards: one charge, one release, the planned T steps
        Path out = tmp.resolve("killed");
        Path ledger = tmp.resolve("ledger.jsonl");
        assertEquals(137, CliRunner.crashAt(tmp.resolve("killed.log"), "train:checkpoint:2", concat(concat(common, out.toString()),
                "--dataset", "shards:" + shards, "--checkpoint-every", "2", "--ledger", ledger.toString())),
                Files.readString(tmp.resolve("killed.log")));
        Run resumed = run("train", "--resume", out.toString(), "--no-progress", "--json");
        assertEquals(0, resumed.status(), resumed.err());
        assertEquals(fromShards.lastJson().get("steps"), resumed.lastJson().get("steps"));
        assertTrue(resumed.lastJson().get("test_accuracy").isNull() && resumed.out().contains("[operator: on a private test split"),
                "shards' test split, not declared public: its accuracy is not released: " + resumed.lastJson());
        try (org.dpdl4j.release.PrivacyLedger l = org.dpdl4j.release.PrivacyLedger.inspect(ledger)) {
            assertEquals(1, l.entries().stream().filter(e -> e.kind() == org.dpdl4j.release.PrivacyLedger.Kind.CHARGE).count());
            assertEquals(1, l.entries().stream().filter(e -> e.kind() == org.dpdl4j.release.PrivacyLedger.Kind.RELEASE).count());
        }
        // a subsampled tuning reads its splits, X1 and every run's batches from the shards, and releases what it releases
        // from memory
        String[] tuning = {"tune", "subsampled", "--model", "mlp", "--tune-fraction", "0.1", "--epochs", "0.05", "--batch-size", "64",
                "--repetitions", "fixed:2", "--space", "lr=cat:0.1,0.5", "--noise-multiplier", "1.0", "--seed", "5", "--no-progress",
                "--json", "--output"};
        Run tunedFromMnist = run(concat(concat(tuning, tmp.resolve("t-mnist").toString()), "--dataset", "mnist"));
        Run tunedFromShards = run(concat(concat(tuning, tmp.resolve("t-shards").toString()), "--dataset", "shards:" + shards,
                "--public-test")); // MNIST's test split, packed: public as declared, so its accuracy is released as MNIST's is
        assertEquals(0, tunedFromShards.status(), tunedFromShards.err());
        var memoryLine = (com.fasterxml.jackson.databind.node.ObjectNode) tunedFromMnist.lastJson();
        var shardsLine = (com.fasterxml.jackson.databind.node.ObjectNode) tunedFromShards.lastJson();
        assertEquals("shards:" + shards, shardsLine.remove("dataset").asText());
        memoryLine.remove("dataset");
        assertEquals(memoryLine, shardsLine, "the --json lines but for the dataset's name");
        assertEquals(ModelSerializer.restoreMultiLayerNetwork(tmp.resolve("t-mnist").resolve("model.zip").toFile()).params(),
                ModelSerializer.restoreMultiLayerNetwork(tmp.resolve("t-shards").resolve("model.zip").toFile()).params(),
                "the same released model, bit for bit");
        // an audit of the shards (1,000 examples drawn at random, read by index) measures what it measures from memory
        String[] audit = {"audit", "train", "--model", "mlp", "--train-size", "1000", "--batch-size", "100", "--epochs", "2",
                "--canaries", "100", "--canary-type", "gradient", "--seed", "3", "--noise-multiplier", "0", "--allow-non-private",
                "--claimed-epsilon", "1", "--no-progress", "--json", "--dataset"};
        Run auditMnist = run(concat(audit, "mnist"));
        Run auditShards = run(concat(audit, "shards:" + shards));
        assertEquals(4, auditShards.status(), "no noise fails the claim: " + auditShards.err() + auditShards.out());
        assertTrue(auditShards.lastJson().get("epsilon_lower_bound").asDouble() > 1, auditShards.out());
        assertEquals(auditMnist.lastJson(), auditShards.lastJson());
        // DP-HYPE's clients train on their parts (Dirichlet label skew: the labels read in chunks) by index, and vote as
        // they vote from memory
        String[] hype = {"tune", "dp-hype", "--clients", "3", "--votes", "1", "--target-epsilon", "2", "--model", "mlp", "--epochs",
                "0.02", "--space", "lr=cat:0.001,0.5", "--partition", "dirichlet:0.5", "--seed", "4", "--no-progress", "--json",
                "--output"};
        Run hypeMnist = run(concat(concat(hype, tmp.resolve("h-mnist").toString()), "--dataset", "mnist"));
        Run hypeShards = run(concat(concat(hype, tmp.resolve("h-shards").toString()), "--dataset", "shards:" + shards));
        assertEquals(0, hypeShards.status(), hypeShards.err());
        var hypeMemoryLine = (com.fasterxml.jackson.databind.node.ObjectNode) hypeMnist.lastJson();
        var hypeShardsLine = (com.fasterxml.jackson.databind.node.ObjectNode) hypeShards.lastJson();
        assertEquals("shards:" + shards, hypeShardsLine.remove("dataset").asText());
        hypeMemoryLine.remove("dataset");
        assertEquals(hypeMemoryLine, hypeShardsLine, "the same noisy votes and winner");
        Run missing = run("train", "--dataset", "shards:" + tmp.resolve("none"), "--no-progress", "--output", tmp.resolve("d").toString());
        assertEquals(2, missing.status());
        assertTrue(missing.err().contains("manifest.json does not exist"), missing.err());
        assertTrue(!Files.exists(tmp.resolve("d")), "nothing written for a refused command");
    }

    /** bench data reads Poisson batches from packed shards and from memory, and leaves no temporary shards behind. */
    @Test
    void benchDataReadsBatchesFromShardsAndMemory() throws Exception {
        long before;
        try (var s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            before = s.filter(p -> p.getFileName().toString().startsWith("dpdl4j-bench-data")).count();
        }
        Run r = run("bench", "data", "--records", "3000", "--image-size", "8x8x3", "--batch-sizes", "64,512", "--batches", "3", "--cold",
                "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        assertEquals(3000, j.get("records").asInt());
        assertEquals(2, j.get("rows").size());
        for (JsonNode row : j.get("rows")) {
            assertTrue(row.get("shards_examples_per_second").asDouble() > 0 && row.get("memory_examples_per_second").asDouble() > 0
                    && row.get("shards_cold_examples_per_second").asDouble() > 0, j.toString());
        }
        try (var s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            assertEquals(before, s.filter(p -> p.getFileName().toString().startsWith("dpdl4j-bench-data")).count(), "removed");
        }
        for (String from : List.of("shards", "memory")) {
            Run train = run("bench", "data", "--train-from", from, "--records", "600", "--memory-records", "300", "--image-size",
                    "28x28x1", "--model", "mlp", "--steps", "2", "--json");
            assertEquals(0, train.status(), train.err());
            assertEquals(from.equals("shards") ? 600 : 300, train.lastJson().get("n").asInt());
            assertTrue(train.lastJson().get("dp_examples_per_second").asDouble() > 0, train.out());
        }
        Path folder = Files.createTempDirectory("dpdl4j-cli-folder");
        try {
            for (int i = 0; i < 40; i++) { // 40 distinct 6x6 colour PNGs in 2 classes
                java.awt.image.BufferedImage png = new java.awt.image.BufferedImage(6, 6, java.awt.image.BufferedImage.TYPE_INT_RGB);
                png.setRGB(i % 6, i / 6 % 6, 0x010203 * (i + 1));
                Path f = folder.resolve("c" + (i % 2)).resolve(i + ".png");
                Files.createDirectories(f.getParent());
                javax.imageio.ImageIO.write(png, "png", f.toFile());
            }
            Run fromFolder = run("bench", "data", "--folder", folder.toString(), "--image-size", "6x6x3", "--batch-sizes", "4,16",
                    "--batches", "2", "--json");
            assertEquals(0, fromFolder.status(), fromFolder.err());
            assertEquals(org.dpdl4j.datasets.ImageFolder.load(folder, 6, 6, 3, 0).train().size(), fromFolder.lastJson().get("images").asInt(),
                    "the training part: each image held out with probability 0.2 by a hash of its bytes");
            for (JsonNode row : fromFolder.lastJson().get("rows")) {
                assertTrue(row.get("folder_examples_per_second").asDouble() > 0, fromFolder.out());
            }
            Run trainFromFolder = run("bench", "data", "--train-from", "folder", "--folder", folder.toString(), "--image-size", "6x6x3",
                    "--model", "mlp", "--steps", "2", "--json");
            assertEquals(0, trainFromFolder.status(), trainFromFolder.err());
            assertEquals(org.dpdl4j.datasets.ImageFolder.load(folder, 6, 6, 3, 0).train().size(), trainFromFolder.lastJson().get("n").asInt());
            assertTrue(trainFromFolder.lastJson().get("dp_examples_per_second").asDouble() > 0
                    && trainFromFolder.lastJson().get("read_ahead").asBoolean(), trainFromFolder.out());
        } finally {
            org.dpdl4j.datasets.PackedShards.deleteTree(folder);
        }
        Run badFrom = run("bench", "data", "--train-from", "disk");
        assertEquals(2, badFrom.status());
        assertTrue(badFrom.err().contains("--train-from must be shards, folder or memory, got 'disk'"), badFrom.err());
        Run bad = run("bench", "data", "--records", "100", "--batch-sizes", "200");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--batch-sizes must each be in [1, --records = 100], got 200"), bad.err());
    }

    @Test
    void reproduceWritesCsvAndPng(@TempDir Path dir) throws Exception {
        assertEquals(0, Main.run("reproduce", "ps-figure6", "--output", dir.toString()));
        List<String> csv = Files.readAllLines(dir.resolve("ps-figure6.csv"));
        assertEquals("series,epsilon_at_delta_1e_6,success_probability_1_f_1_1_100,expected_repetitions", csv.get(0));
        assertTrue(csv.size() > 50);
        byte[] png = Files.readAllBytes(dir.resolve("ps-figure6.png"));
        assertTrue(png.length > 1000 && png[1] == 'P' && png[2] == 'N' && png[3] == 'G');
        Run unknown = run("reproduce", "ps-figure9", "--output", dir.toString());
        assertEquals(2, unknown.status());
        assertTrue(unknown.err().contains("ps-figure9"), unknown.err());
        Run none = run("reproduce");
        assertEquals(2, none.status());
        assertTrue(none.err().contains("name an experiment: reproduce ") && none.err().contains("|ps-figure2|")
                && none.err().contains("|scatternet-ablation"), none.err());
        Run help = run("reproduce", "honest-mnist", "--help");
        assertEquals(0, help.status());
        assertTrue(help.out().contains("--recipe") && help.out().contains("--tuned-only") && !help.out().contains("--lr-factors")
                && !help.out().contains("--landscape"), "each experiment lists only its own options: " + help.out());
    }
}
