package org.dpdl4j.cli;

import static org.dpdl4j.cli.CliRunner.concat;
import static org.dpdl4j.cli.CliRunner.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.benchmarks.Reporting;
import org.dpdl4j.cli.CliRunner.Run;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code train --executor spark} on a real cluster on loopback ({@code local-cluster}): the release (privacy.json, the
 * --json line's privacy fields) is the local run's, the parameters agree to float tolerance, the ledger is charged once,
 * and a run begun locally and killed resumes on the cluster to its planned steps.
 */
class SparkTrainTest {
    private static final String CLUSTER = "local-cluster[2,1,1536]";
    private static final String OMP = "spark.executorEnv.OMP_NUM_THREADS=" + System.getenv().getOrDefault("OMP_NUM_THREADS", "1");

    @TempDir
    Path tmp;

    private static String[] spark(String... args) {
        return on(CLUSTER, args);
    }

    private static String[] on(String master, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--executor", "spark", "--spark-master", master, "--spark-conf", OMP));
        return all.toArray(String[]::new);
    }

    private static float[] params(Path out) throws Exception {
        MultiLayerNetwork model = ModelSerializer.restoreMultiLayerNetwork(out.resolve("model.zip").toFile(), false);
        return model.params().data().asFloat();
    }

    @Test
    void trainOnSparkReleasesWhatALocalRunReleases() throws Exception {
        Run[] runs = new Run[2];
        Path[] outs = new Path[2];
        for (int i = 0; i < 2; i++) {
            outs[i] = tmp.resolve("run-" + i);
            String[] args = {"train", "--dataset", "mnist", "--model", "mlp", "--epochs", "0.05", "--noise-multiplier", "1.1", "--seed",
                    "5", "--ema", "0.9", "--checkpoint-every", "4", "--ledger", tmp.resolve("ledger-" + i + ".jsonl").toString(),
                    "--output", outs[i].toString(), "--no-progress", "--json"};
            runs[i] = run(i == 0 ? args : spark(concat(args, "--spark-partitions", "3")));
            assertEquals(0, runs[i].status(), runs[i].err() + runs[i].out());
        }
        long planned = (long) Math.ceil(0.05 * 60000 / 256.0);
        JsonNode local = runs[0].lastJson();
        JsonNode cluster = runs[1].lastJson();
        for (String f : List.of("epsilon", "delta", "steps", "noise_multiplier", "sampling_rate", "ema_decay", "accountant")) {
            assertEquals(local.get(f), cluster.get(f), f);
        }
        assertEquals(planned, cluster.get("steps").asLong());
        assertEquals(local.get("test_accuracy").asDouble(), cluster.get("test_accuracy").asDouble(), 0.005);
        // the same claim; only the model's hash differs (the parameters agree to float tolerance, below)
        var localPrivacy = (com.fasterxml.jackson.databind.node.ObjectNode) Reporting.JSON.readTree(outs[0].resolve("privacy.json").toFile());
        var clusterPrivacy = (com.fasterxml.jackson.databind.node.ObjectNode) Reporting.JSON.readTree(outs[1].resolve("privacy.json").toFile());
        localPrivacy.remove("model");
        clusterPrivacy.remove("model");
        assertEquals(localPrivacy, clusterPrivacy, "privacy.json");
        assertFalse(Files.readString(outs[1].resolve("privacy.json")).contains("spark"), "the release does not say where it ran");
        float[] a = params(outs[0]);
        float[] b = params(outs[1]);
        double diff = 0;
        double scale = 0;
        for (int k = 0; k < a.length; k++) {
            diff = Math.max(diff, Math.abs(a[k] - b[k]));
            scale = Math.max(scale, Math.abs(a[k]));
        }
        assertTrue(diff <= 1e-5 * scale, "parameters differ by " + diff / scale + " (relative)");
        JsonNode record = Reporting.JSON.readTree(outs[1].resolve("operator").resolve("record.json").toFile());
        assertEquals(planned, record.get("clipped_sums").get("steps").asLong(), record.toString());
        assertEquals(3, record.get("clipped_sums").get("partitions").asInt(), record.toString());
        assertEquals(3 * planned, record.get("executor").get("tasks_succeeded").asLong(), record.toString());
        assertFalse(Files.exists(outs[1].resolve("operator").resolve("checkpoint")), "the final model supersedes the checkpoints");
        assertFalse(Files.exists(outs[0].resolve("operator")), "a local run writes no operator record");
        for (int i = 0; i < 2; i++) {
            assertEquals(1, Files.readAllLines(tmp.resolve("ledger-" + i + ".jsonl")).stream()
                    .filter(l -> l.contains("\"charged\":true")).count(), "charged once");
        }
    }

    /**
     * A run begun on this JVM and SIGKILLed after a checkpoint continues on Spark to its planned T, charged once (on a
     * {@code local[2]} master: the same tasks, broadcasts and aggregation without starting executor JVMs).
     */
    @Test
    void aRunKilledLocallyResumesOnTheCluster() throws Exception {
        Path out = tmp.resolve("resume");
        Path log = tmp.resolve("resume.log");
        Path ledger = tmp.resolve("resume-ledger.jsonl");
        Process p = CliRunner.startCli(log, "train", "--model", "mlp", "--epochs", "0.3", "--noise-multiplier", "1.1",
                "--checkpoint-every", "20", "--seed", "7", "--ledger", ledger.toString(), "--output", out.toString(), "--no-progress");
        CliRunner.awaitCheckpoint(out.resolve("operator").resolve("checkpoint").resolve("state.json"), 20, p, log);
        p.destroyForcibly();
        assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
        if (Files.exists(out.resolve("model.zip"))) {
            return; // it finished before the kill landed (rare): nothing to resume
        }
        long done = Reporting.JSON.readTree(out.resolve("operator").resolve("checkpoint").resolve("state.json").toFile())
                .get("steps_done").asLong();
        Run r = run(on("local[2]", "train", "--resume", out.toString(), "--no-progress", "--json"));
        assertEquals(0, r.status(), r.err() + r.out());
        long planned = (long) Math.ceil(0.3 * 60000 / 256.0);
        JsonNode j = r.lastJson();
        assertEquals(planned, j.get("steps").asLong());
        assertEquals(done, j.get("resumed_from_step").asLong());
        assertEquals(Accountants.byName("pld").epsilon(NoiseCalibration.dpSgd(256.0 / 60000, 1.1, planned), 1e-5),
                j.get("epsilon").asDouble(), 1e-12);
        JsonNode record = Reporting.JSON.readTree(out.resolve("operator").resolve("record.json").toFile());
        assertEquals(planned - done, record.get("clipped_sums").get("steps").asLong(), "the steps after the checkpoint ran on Spark");
        assertEquals(1, Files.readAllLines(ledger).stream().filter(l -> l.contains("\"charged\":true")).count(), "charged once");
        assertTrue(j.get("test_accuracy").asDouble() > 0.3, r.out());
    }

    /**
     * audit train with its run's sums on Spark: an honest run reports what the local audit reports (the same guesses and
     * bound), a noise-free run claiming ε = 1 fails (exit 4), as locally.
     */
    @Test
    void auditTrainOnSparkPassesAnHonestRunAndFailsAnOverclaim() throws Exception {
        String[] base = {"audit", "train", "--model", "mlp", "--train-size", "2000", "--batch-size", "200", "--epochs", "6",
                "--canaries", "1000", "--seed", "3", "--no-progress", "--json"};
        Run local = run(concat(base, "--target-epsilon", "2"));
        Run honest = run(on("local[2]", concat(base, "--target-epsilon", "2")));
        assertEquals(0, honest.status(), honest.err() + honest.out());
        assertEquals(local.lastJson(), honest.lastJson(), "the audit of the same run");
        assertTrue(honest.lastJson().get("passed").asBoolean(), honest.out());
        Run overclaim = run(on("local[2]", concat(base, "--noise-multiplier", "0", "--allow-non-private", "--claimed-epsilon", "1")));
        assertEquals(4, overclaim.status(), overclaim.err() + overclaim.out());
        assertTrue(overclaim.lastJson().get("epsilon_lower_bound").asDouble() > 1, overclaim.lastJson().toString());
    }

    /** Combinations that make no sense are refused before anything starts, naming the options. */
    @Test
    void nonsensicalExecutorCombinationsAreRefused() {
        Path out = tmp.resolve("never");
        String[][] cases = {
                {"--spark-partitions needs --executor spark", "train", "--spark-partitions", "2"},
                {"--spark-data needs --executor spark", "train", "--spark-data", "cache"},
                {"--spark-task-cpus needs --executor spark or --train-executor spark", "tune", "--spark-task-cpus", "2"},
                {"--workers", "train", "--executor", "spark", "--spark-master", "local[1]", "--workers", "2"},
                {"--spark-partitions must be >= 1, got 0", "train", "--executor", "spark", "--spark-master", "local[1]",
                        "--spark-partitions", "0"},
                {"cannot start Spark jobs", "tune", "--executor", "spark", "--train-executor", "spark", "--spark-master", "local[1]"},
                {"--threads 2", "tune", "--train-executor", "spark", "--threads", "2", "--spark-master", "local[1]"},
                {"dp-hype", "tune", "dp-hype", "--train-executor", "spark", "--spark-master", "local[1]"},
                {"needs --train-executor spark", "tune", "--executor", "spark", "--spark-master", "local[1]", "--spark-partitions", "2"},
                {"--train-executor must be local or spark, got 'yarn'", "tune", "--train-executor", "yarn"},
        };
        for (String[] c : cases) {
            String[] args = concat(java.util.Arrays.copyOfRange(c, 1, c.length), "--output", out.toString(), "--no-progress");
            Run r = run(args);
            assertEquals(2, r.status(), String.join(" ", args) + ": " + r.err());
            assertTrue(r.err().contains(c[0]), String.join(" ", args) + ": " + r.err());
            assertFalse(Files.exists(out), "nothing written: " + String.join(" ", args));
        }
    }
}
