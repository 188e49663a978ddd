package org.dpdl4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.junit.jupiter.api.io.TempDir;

/** The command line end to end, its JSON, files and errors. */
class CliTest {
    @TempDir
    Path tmp;

    private record Run(int status, String out, String err) {
        JsonNode lastJson() throws Exception {
            String[] lines = out.strip().split("\n");
            return Cli.JSON.readTree(lines[lines.length - 1]);
        }
    }

    private static Run run(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int status = Main.run(args);
            return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

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

    @Test
    void badInputGivesExitCode2AndNamesTheParameter() {
        Run r = run("account", "dpsgd", "--sampling-rate", "1.5", "--steps", "10", "--noise-multiplier", "1");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--sampling-rate") && r.err().contains("1.5"), r.err());
        r = run("account", "dpsgd", "--sampling-rate", "0.1", "--noise-multiplier", "1");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--steps"), r.err());
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
                                       "steps", "epochs", "examples_per_second", "model_path"}) {
            assertTrue(j.has(key), "JSON line lacks " + key);
        }
        long steps = j.get("steps").asLong();
        assertEquals((long) Math.ceil(0.05 * 60000 / 256.0), steps);
        double eps = RdpAccountant.standard().epsilon(NoiseCalibration.dpSgd(256.0 / 60000, 1.0, steps), 1e-5);
        assertEquals(eps, j.get("epsilon").asDouble(), 1e-12);
        JsonNode privacy = Cli.JSON.readTree(Files.readString(out.resolve("privacy.json")));
        assertEquals(eps, privacy.get("epsilon").asDouble(), 1e-12);
        assertEquals(NoiseCalibration.dpSgd(256.0 / 60000, 1.0, steps),
                PrivacyEvents.fromMap(Cli.JSON.convertValue(privacy.get("event"), java.util.Map.class)));
        MultiLayerNetwork loaded = ModelSerializer.restoreMultiLayerNetwork(out.resolve("model.zip").toFile());
        LabeledData test = Mnist.load(DatasetCache.root().resolve("mnist")).test();
        assertEquals(j.get("test_accuracy").asDouble(), DpSgdTrainer.accuracy(loaded, test), 1e-12);
        assertTrue(j.get("test_accuracy").asDouble() > 0.3, "a few private steps already beat chance");
    }

    @Test
    void tuneReportsThreeEpsilonsAndChargesTheLedger() throws Exception {
        Path ledger = tmp.resolve("ledger.jsonl");
        Run r = run("tune", "--dataset", "mnist", "--epochs", "0.05", "--repetitions", "fixed:2", "--space", "lr=cat:0.5,1.0",
                "--target-epsilon", "2", "--seed", "3", "--ledger", ledger.toString(), "--ledger-budget", "5",
                "--output", tmp.resolve("tune").toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        for (String key : new String[]{"best", "test_accuracy", "epsilon_total", "epsilon_single_run", "epsilon_naive_composition",
                "delta", "repetitions", "distribution"}) {
            assertTrue(j.has(key), key);
        }
        assertEquals(2, j.get("repetitions").asLong());
        double total = j.get("epsilon_total").asDouble();
        assertTrue(total <= 2 && total > 1.9, "calibrated to the total target: " + total);
        // fixed K = 2 is composition: the total is the naive number, and one run costs less
        assertEquals(j.get("epsilon_naive_composition").asDouble(), total, 1e-9);
        assertTrue(j.get("epsilon_single_run").asDouble() < total);
        assertTrue(j.get("test_accuracy").asDouble() > 0.3, r.out());
        assertTrue(r.out().contains("score withheld"), r.out());
        JsonNode trials = Cli.JSON.readTree(tmp.resolve("tune").resolve("trials.json").toFile());
        assertEquals(2, trials.get("trials").size());
        assertTrue(!trials.get("trials").get(0).has("score"), "only the best score is released");
        assertTrue(Files.exists(tmp.resolve("tune").resolve("model.zip")));
        java.util.List<String> lines = Files.readAllLines(ledger);
        assertEquals(4, lines.size(), "header, the tuning charge, two trial records");
        JsonNode charge = Cli.JSON.readTree(lines.get(1));
        assertEquals(total, RdpAccountant.standard().epsilon(PrivacyEvents.fromMap(
                Cli.JSON.convertValue(charge.get("event"), java.util.Map.class)), 1e-5), 1e-12);
        // a costly second tuning run would take the ledger above its budget of 5: refused before any training
        Run again = run("tune", "--dataset", "mnist", "--epochs", "20", "--repetitions", "fixed:2", "--space", "lr=cat:0.5",
                "--noise-multiplier", "0.5", "--ledger", ledger.toString(), "--output", tmp.resolve("tune2").toString(), "--no-progress");
        assertTrue(again.status() != 0 && (again.err() + again.out()).contains("budget"), again.err() + again.out());
        assertEquals(4, Files.readAllLines(ledger).size(), "a refused charge writes nothing");
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
        assertEquals(60000, j.get("final_set_size").asInt(), "variant 2 trains the final model on all of X");
        assertEquals(j.get("best").get("lr").asDouble() / (0.05 * 0.9), j.get("final_candidate").get("lr").asDouble(), 1e-9,
                "scaled by the expected sizes n / (q_tune (1 - f) n)");
        assertTrue(j.get("test_accuracy").asDouble() > 0.3, r.out());
        assertTrue(j.get("gradient_ratio").asDouble() > 0);
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
        assertEquals(3, j.get("repetitions").asLong());
        assertTrue(j.get("test_accuracy").asDouble() > 0.3, r.out());
        assertEquals(1 + 1 + 3, Files.readAllLines(ledger).size(), "header, the charge, three trial records");
        Run bad = run("tune", "--tuner", "dp-hypo", "--ucb-tau", "-1", "--no-progress");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--ucb-tau"), bad.err());
        bad = run("tune", "--tuner", "propose-test", "--granularity", "2", "--no-progress");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--granularity") && bad.err().contains("2.0"), bad.err());
    }

    /** account dp-hype: the JSON's noise multiplier meets the target (Theorem IV.1 + II.1) and bad k is refused. */
    @Test
    void accountDpHypeGivesTheNoiseMultiplier() throws Exception {
        Run r = run("account", "dp-hype", "--votes", "5", "--target-epsilon", "1", "--delta", "1e-5", "--json");
        assertEquals(0, r.status(), r.err());
        double sigma = r.lastJson().get("noise_multiplier").asDouble();
        assertEquals(sigma, org.dpdl4j.tuning.DpHypeVoting.noiseMultiplier(5, 1, 1e-5), 0.0);
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
                "--epochs", "0.05", "--space", "lr=cat:0.001,0.5", "--seed", "4", "--ledger", ledger.toString(),
                "--output", tmp.resolve("hype").toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        double epsilon = j.get("epsilon_total").asDouble();
        assertTrue(epsilon <= 2 && epsilon > 1.99, "calibrated to the target: " + epsilon);
        assertEquals("[1,2,3]", j.get("participants").toString());
        assertEquals(1, j.get("rounds").asLong());
        double a0 = j.get("candidate_test_accuracies").get(0).asDouble();
        double a1 = j.get("candidate_test_accuracies").get(1).asDouble();
        assertEquals(Math.max(a0, a1), j.get("opt_accuracy").asDouble(), 0.0);
        assertEquals((a0 + a1) / 2, j.get("randguess_accuracy").asDouble(), 1e-12);
        assertEquals(j.get("winner_index").asInt() == 0 ? a0 : a1, j.get("test_accuracy").asDouble(), 0.0);
        java.util.List<String> lines = Files.readAllLines(ledger);
        assertEquals(2, lines.size(), "header and the vote's charge");
        assertEquals(epsilon, org.dpdl4j.tuning.DpHypeVoting.accountant().epsilon(PrivacyEvents.fromMap(
                Cli.JSON.convertValue(Cli.JSON.readTree(lines.get(1)).get("event"), java.util.Map.class)), 1e-5), 1e-12);

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

    private static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
