package org.dpdl4j.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Datasets;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.tuning.DpSgdMechanism;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.release.PrivacyLedger;
import org.dpdl4j.tuning.RandomSearchTuner;
import org.dpdl4j.tuning.TrialResult;
import org.dpdl4j.tuning.TuningListener;
import org.dpdl4j.tuning.TuningResult;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Trials on a real Spark cluster on loopback: a master and two worker processes ({@code local-cluster}), each executor a
 * separate JVM started from this classpath. The tunings are compared bit for bit with the same tunings run locally.
 */
class SparkTrialsTest {
    private static LabeledData mnist;

    @BeforeAll
    static void load() throws Exception {
        mnist = Datasets.load("mnist", DatasetCache.root(), 28, 28, 1, 42).train();
    }

    /** MNIST's training split, a small MLP, one DP-SGD worker per trial (as one Spark task cpu). */
    private static DpSgdMechanism mechanism(String model, double epochs) {
        return mechanism(mnist, model, epochs);
    }

    private static DpSgdMechanism mechanism(org.dpdl4j.datasets.ExampleSource data, String model, double epochs) {
        return DpSgdMechanism.builder(data).model(model, ModelOptions.mnist()).noiseMultiplier(1.0).expectedBatchSize(256).epochs(epochs)
                .workers(1).validation(0.1, 42).build();
    }

    private static final HyperparameterSpace SPACE = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.1,0.5,1.0"));

    private static TuningResult tune(org.dpdl4j.tuning.TrainingMechanism q, PrivacyLedger ledger) {
        return new RandomSearchTuner(RepetitionDistribution.pointMass(4), 7, 2, false).tune(SPACE, q, ledger, TuningListener.NONE);
    }

    private static void assertSameResult(TuningResult local, TuningResult spark) {
        assertEquals(local.repetitions(), spark.repetitions());
        for (int i = 0; i < local.trials().size(); i++) {
            TrialResult a = local.trials().get(i);
            TrialResult b = spark.trials().get(i);
            assertEquals(a.candidate(), b.candidate());
            assertEquals(a.score(), b.score(), 0, "trial " + i + "'s noisy score (" + b.failure() + ")");
            assertArrayEquals(a.model().params().data().asFloat(), b.model().params().data().asFloat(), "trial " + i + "'s parameters");
            var ua = ((org.deeplearning4j.nn.multilayer.MultiLayerNetwork) a.model()).getUpdater().getStateViewArray();
            var ub = ((org.deeplearning4j.nn.multilayer.MultiLayerNetwork) b.model()).getUpdater().getStateViewArray();
            assertArrayEquals(ua == null ? new float[0] : ua.data().asFloat(), ub == null ? new float[0] : ub.data().asFloat(),
                    "trial " + i + "'s updater state");
        }
        assertEquals(local.best().index(), spark.best().index());
        assertEquals(local.candidate(), spark.candidate());
    }

    /** One core per trial, with this JVM's OpenMP threads (the local tunings' bits depend on them). */
    private static SparkCluster.Settings settings(String master, SparkCluster.DataSource data) {
        String omp = System.getenv().getOrDefault("OMP_NUM_THREADS", "1");
        return new SparkCluster.Settings(master, data, 1, 120, Map.of("spark.executorEnv.OMP_NUM_THREADS", omp));
    }

    /**
     * The same tuning locally and on the cluster, with the data broadcast or loaded from the executors' cache, and from
     * packed shards of 10,000 of the images on a path the executors read (the trials' splits travel as index sets)
     * against the local tuning of the same images in memory: the same trials, scores and parameters, bit for bit.
     */
    @Test
    void aClusterTuningEqualsTheLocalOneBitForBitWithDataFromTheBroadcastOrTheCache(@TempDir Path dir) {
        DpSgdMechanism q = mechanism("mlp", 0.05);
        TuningResult local = tune(q, null);
        LabeledData small = mnist.randomSubset(10000, 3);
        TuningResult localSmall = tune(mechanism(small, "mlp", 0.05), null);
        org.dpdl4j.datasets.PackedShards.pack(small, dir.resolve("shards"), 4000);
        try (var shards = org.dpdl4j.datasets.PackedShards.open(dir.resolve("shards"))) {
            for (SparkCluster.DataSource data : SparkCluster.DataSource.values()) {
                try (SparkCluster cluster = SparkCluster.start(settings("local-cluster[2,1,1536]", data))) {
                    assertEquals(2, cluster.parallelism());
                    cluster.trainingSplitOf(mnist, "mnist", 28, 28, 1, 42);
                    TuningResult spark = tune(cluster.place(q), null);
                    assertSameResult(local, spark);
                    Map<String, Object> summary = cluster.operatorSummary();
                    assertEquals(4L, summary.get("tasks_succeeded"), summary.toString());
                    assertEquals(0L, summary.get("task_attempts_failed"), summary.toString());
                    if (data == SparkCluster.DataSource.BROADCAST) {
                        assertSameResult(localSmall, tune(cluster.place(mechanism(shards, "mlp", 0.05)), null));
                    }
                }
            }
        }
    }

    @Test
    void anExecutorKilledMidTrialLeavesOneChargeAndTheSameResult(@TempDir Path dir) throws Exception {
        DpSgdMechanism q = mechanism("standard-cnn", 0.15);
        TuningResult local = tune(q, null);
        try (SparkCluster cluster = SparkCluster.start(settings("local-cluster[2,1,1536]", SparkCluster.DataSource.BROADCAST));
             PrivacyLedger ledger = PrivacyLedger.open(dir.resolve("ledger.jsonl"), "mnist", 1000, 1e-5)) {
            AtomicBoolean killed = new AtomicBoolean();
            cluster.context().sc().addSparkListener(new SparkListener() {
                @Override
                public void onTaskStart(SparkListenerTaskStart e) {
                    String executor = e.taskInfo().executorId();
                    if (killed.compareAndSet(false, true)) {
                        Thread killer = new Thread(() -> {
                            TestClusters.sleep(3000); // well inside the trial (a standard-CNN run of about 9 s with one worker)
                            TestClusters.executorProcess(executor).ifPresent(ProcessHandle::destroyForcibly);
                        });
                        killer.setDaemon(true);
                        killer.start();
                    }
                }
            });
            TuningResult spark = tune(cluster.place(q), ledger);
            Map<String, Object> summary = cluster.operatorSummary();
            assertTrue(killed.get());
            assertTrue((Long) summary.get("task_attempts_failed") >= 1, "the kill hit a running trial: " + summary);
            assertTrue((Integer) summary.get("executors_lost") >= 1, summary.toString());
            assertSameResult(local, spark);
            List<PrivacyLedger.Entry> entries = ledger.entries();
            assertEquals(1, entries.stream().filter(PrivacyLedger.Entry::charged).count(), "exactly one charge: " + entries);
            assertEquals(4, entries.stream().filter(e -> !e.charged()).count(), "each trial recorded once: " + entries);
        }
    }

    @Test
    void badOrUnreachableMastersAreRefusedBeforeAnythingRuns() throws Exception {
        for (String bad : List.of("spark:/host:7077", "local[0]", "mesos://host:5050", "local-cluster[2,1]", "")) {
            var e = assertThrows(IllegalArgumentException.class, () -> SparkCluster.checkMaster(bad));
            assertTrue(e.getMessage().contains("'" + bad + "'") && e.getMessage().contains("spark://HOST:PORT"), e.getMessage());
        }
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        String master = "spark://127.0.0.1:" + port;
        var e = assertThrows(IllegalStateException.class, () -> SparkCluster.start(settings(master, SparkCluster.DataSource.BROADCAST)));
        assertTrue(e.getMessage().contains("cannot reach the Spark master " + master), e.getMessage());
        var t = assertThrows(IllegalArgumentException.class, () -> new SparkCluster.Settings("local[2]", SparkCluster.DataSource.CACHE, 0, 60,
                Map.of()));
        assertTrue(t.getMessage().contains("spark.task.cpus"), t.getMessage());
    }

    @Test
    void aMechanismThatCannotTravelIsRefusedWhenPlaced() {
        try (SparkCluster cluster = SparkCluster.start(settings("local[1]", SparkCluster.DataSource.BROADCAST))) {
            org.dpdl4j.tuning.TrainingMechanism notSerializable = new org.dpdl4j.tuning.TrainingMechanism() {
                @Override
                public org.dpdl4j.accounting.PrivacyEvent event(org.dpdl4j.tuning.Candidate c) {
                    return new org.dpdl4j.accounting.GaussianEvent(1);
                }

                @Override
                public TrialResult run(org.dpdl4j.tuning.Candidate c, long seed, TuningListener l, int trial) {
                    throw new UnsupportedOperationException();
                }
            };
            var e = assertThrows(IllegalArgumentException.class, () -> cluster.place(notSerializable));
            assertTrue(e.getMessage().contains("not serializable"), e.getMessage());
            assertNotNull(cluster.place(mechanism("mlp", 0.01)));
        }
    }
}
