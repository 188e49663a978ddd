package org.dpdl4j.cli;

import static org.dpdl4j.cli.CliRunner.run;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.dpdl4j.benchmarks.Reporting;
import org.dpdl4j.cli.CliRunner.Run;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tune --executor spark} on a real cluster on loopback ({@code local-cluster}: a master and two worker
 * processes started from this classpath): the release equals the one of {@code --executor local} bit for bit.
 */
class SparkTuneTest {
    private static final String CLUSTER = "local-cluster[2,1,1536]";

    @TempDir
    Path tmp;

    /** The same tuning twice, locally and on the cluster, with the same seed and one DP-SGD worker per trial. */
    private void assertSameRelease(String name, String... args) throws Exception {
        JsonNode[] json = new JsonNode[2];
        float[][] params = new float[2][];
        // the executors run OpenMP with this JVM's threads, on which the local trials' last bits depend
        String omp = "spark.executorEnv.OMP_NUM_THREADS=" + System.getenv().getOrDefault("OMP_NUM_THREADS", "1");
        String[][] executors = {{"--executor", "local", "--threads", "2"}, {"--executor", "spark", "--spark-master", CLUSTER, "--spark-conf",
                omp}};
        for (int i = 0; i < 2; i++) {
            Path out = tmp.resolve(name + "-" + i);
            List<String> all = new ArrayList<>(List.of(args));
            int data = all.indexOf("--spark-data");
            if (i == 0 && data >= 0) { // a Spark option: a local tuning refuses it
                all.subList(data, data + 2).clear();
            }
            all.addAll(List.of("--dataset", "mnist", "--model", "mlp", "--seed", "5", "--trial-workers", "1", "--no-progress", "--json",
                    "--output", out.toString()));
            all.addAll(List.of(executors[i]));
            Run r = run(all.toArray(String[]::new));
            assertEquals(0, r.status(), name + " " + executors[i][1] + ": " + r.err() + r.out());
            json[i] = r.lastJson();
            MultiLayerNetwork model = ModelSerializer.restoreMultiLayerNetwork(out.resolve("model.zip").toFile(), true);
            params[i] = model.params().data().asFloat();
            JsonNode operator = Reporting.JSON.readTree(TuningOutput.operatorDirectory(out).resolve("record.json").toFile());
            assertEquals(executors[i][1].equals("spark") ? CLUSTER : "local",
                    operator.get("executor").has("master") ? operator.get("executor").get("master").asText()
                            : operator.get("executor").get("name").asText(), operator.toString());
            if (i == 1) {
                assertTrue(operator.get("executor").get("tasks_succeeded").asLong() >= 2, operator.toString());
            }
            assertFalse(Files.readString(out.resolve("tuning.json")).contains("spark"), "the release does not say where it ran");
        }
        assertEquals(json[0], json[1], name + ": the --json lines");
        assertArrayEquals(params[0], params[1], name + ": the released model's parameters");
    }

    @Test
    void randomSearchOnSparkReleasesWhatLocalTrialsRelease() throws Exception {
        assertSameRelease("random-search", "tune", "random-search", "--epochs", "0.05", "--repetitions", "fixed:3",
                "--space", "lr=cat:0.1,0.5,1.0", "--noise-multiplier", "1.0", "--spark-data", "cache");
    }

    @Test
    void subsampledAndProposeTestOnSparkReleaseWhatLocalTrialsRelease() throws Exception {
        assertSameRelease("subsampled", "tune", "subsampled", "--tune-fraction", "0.2", "--epochs", "0.05", "--batch-size", "64",
                "--repetitions", "fixed:2", "--space", "sampling_rate=cat:0.01,0.02", "--noise-multiplier", "1.0");
        assertSameRelease("propose-test", "tune", "propose-test", "--partitions", "2", "--granularity", "0.5", "--epsilon0", "1",
                "--epochs", "0.03", "--space", "lr=cat:0.1,0.5", "--noise-multiplier", "1.0");
    }

    @Test
    void badOrUnreachableMastersFailBeforeAnyCharge() throws Exception {
        Path ledger = tmp.resolve("ledger.jsonl");
        Run bad = run("tune", "--executor", "spark", "--spark-master", "spark:/nowhere", "--ledger", ledger.toString(), "--no-progress");
        assertNotEquals(0, bad.status());
        assertTrue(bad.err().contains("--spark-master") && bad.err().contains("'spark:/nowhere'"), bad.err());
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Run down = run("tune", "--executor", "spark", "--spark-master", "spark://127.0.0.1:" + port, "--ledger", ledger.toString(),
                "--epochs", "0.01", "--no-progress");
        assertNotEquals(0, down.status());
        assertTrue(down.err().contains("cannot reach the Spark master spark://127.0.0.1:" + port), down.err());
        assertFalse(Files.exists(ledger) && Files.readString(ledger).contains("\"charged\":true"), "nothing was charged");
        Run secure = run("tune", "--executor", "spark", "--spark-master", "local[1]", "--secure-noise", "--no-progress");
        assertTrue(secure.status() != 0 && secure.err().contains("--secure-noise"), secure.err());
        Run hype = run("tune", "dp-hype", "--executor", "spark", "--spark-master", "local[1]", "--no-progress");
        assertTrue(hype.status() != 0 && hype.err().contains("dp-hype"), hype.err());
        Run local = run("tune", "--spark-master", "local[2]", "--no-progress");
        assertTrue(local.status() != 0 && local.err().contains("--executor spark"), local.err());
    }
}
