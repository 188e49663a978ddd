package org.dpdl4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Datasets;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.TrainingResult;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One DP-SGD run across a real Spark cluster on loopback ({@code local-cluster}: two worker processes, each executor a
 * JVM of its own) against the same run on this JVM: the same event and ε, the same batches, the same noise (drawn on
 * the driver), and parameters equal up to the summation order of the clipped gradients.
 */
class SparkTrainingTest {
    private static LabeledData mnist;
    private static SparkCluster cluster;

    /**
     * Largest |Δθ| allowed after the MLP runs below, relative to max |θ|. The runs differ only in rounding: the order in
     * which float32 clipped gradients are added (per part, then across parts in double, against one running float32 sum
     * locally) and the executors' thread counts. Each step's sum of about 256 gradients differs by a few float32 roundings
     * (~1e-7 relative), and 20–40 steps of SGD through smooth layers (dense, tanh) carry that through without
     * amplification. Measured: 6e-8 to 1e-7.
     */
    private static final double TOLERANCE = 1e-5;

    /**
     * The same for the standard CNN after 20 steps. Its max-pooling is not smooth: when two inputs of a pooling window
     * are nearly tied, a forward pass that rounds differently can pick the other one and route part of one example's
     * gradient elsewhere, and later steps carry that on. Measured over seeds 11–13 and two thread settings: 4.5e-8 to
     * 4.8e-5. Each step's sum at the same parameters is compared much more tightly below.
     */
    private static final double CNN_TOLERANCE = 1e-3;

    @BeforeAll
    static void start() throws Exception {
        mnist = Datasets.load("mnist", DatasetCache.root(), 28, 28, 1, 42).train();
        String omp = System.getenv().getOrDefault("OMP_NUM_THREADS", "1");
        cluster = SparkCluster.start(new SparkCluster.Settings("local-cluster[2,1,2048]", SparkCluster.DataSource.BROADCAST, 1, 120,
                Map.of("spark.executorEnv.OMP_NUM_THREADS", omp)));
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static DpSgdConfig config(long steps, long seed) {
        return DpSgdConfig.builder().samplingRate(256.0 / mnist.size()).noiseMultiplier(1.1).clipNorm(1.0).steps(steps)
                .physicalBatchSize(128).seed(seed).workers(1).delta(1e-5).build();
    }

    private static MultiLayerNetwork cnn() {
        return Models.standardCnn(ModelOptions.mnist().withSeed(7));
    }

    private static double relativeDifference(org.deeplearning4j.nn.api.Model a, org.deeplearning4j.nn.api.Model b) {
        double scale = a.params().amaxNumber().doubleValue();
        return a.params().sub(b.params()).amaxNumber().doubleValue() / scale;
    }

    /**
     * Every step's sum on the cluster against the local sum at the same parameters: the same realised batch size (the same
     * examples were drawn: a different batch changes it almost surely over 20 steps), the same summed loss, and the same
     * clipped sum to 1e-5 in L2 norm relative to the sum's.
     */
    @Test
    void everyStepsSumOnTheClusterIsTheLocalSum() {
        SparkClippedSums spark = cluster.clippedSums(4);
        java.util.List<double[]> compared = new java.util.ArrayList<>();
        org.dpdl4j.dpsgd.ClippedSums both = (network, data, c, sampler) -> {
            org.dpdl4j.dpsgd.ClippedSums.Session local = org.dpdl4j.dpsgd.ClippedSums.local().open(network, data, c, sampler);
            org.dpdl4j.dpsgd.ClippedSums.Session remote = spark.open(network, data, c, sampler);
            return new org.dpdl4j.dpsgd.ClippedSums.Session() {
                @Override
                public org.dpdl4j.dpsgd.ClippedSums.Sum step(long t, org.nd4j.linalg.api.ndarray.INDArray target) {
                    org.nd4j.linalg.api.ndarray.INDArray mine = target.dup();
                    org.dpdl4j.dpsgd.ClippedSums.Sum l = local.step(t, mine);
                    org.dpdl4j.dpsgd.ClippedSums.Sum r = remote.step(t, target);
                    compared.add(new double[]{l.batchSize(), r.batchSize(), l.lossSum(), r.lossSum(),
                            mine.sub(target).norm2Number().doubleValue() / mine.norm2Number().doubleValue()});
                    return r;
                }

                @Override
                public void close() {
                    local.close();
                    remote.close();
                }
            };
        };
        new DpSgdTrainer().withClippedSums(both).train(cnn(), mnist, config(20, 11));
        assertEquals(20, compared.size());
        double worst = 0;
        for (double[] c : compared) {
            assertEquals(c[0], c[1], 0, "the same batch size");
            assertEquals(c[2], c[3], 1e-4 * Math.abs(c[2]), "the same summed loss");
            worst = Math.max(worst, c[4]);
        }
        System.out.printf("standard CNN, 20 steps, 4 parts: largest |sum_spark - sum_local| / |sum_local| = %.3g%n", worst);
        assertTrue(worst <= 1e-5, "a step's clipped sum differs by " + worst + " (relative L2)");
    }

    @Test
    void aClusterRunHasTheLocalEventAndParameters() {
        PrivacyAccountant pld = Accountants.byName("pld");
        DpSgdConfig config = config(20, 11);
        MultiLayerNetwork local = cnn();
        TrainingResult l = new DpSgdTrainer(pld).train(local, mnist, config);
        SparkClippedSums sums = cluster.clippedSums(4);
        MultiLayerNetwork remote = cnn();
        TrainingResult r = new DpSgdTrainer(pld).withClippedSums(sums).train(remote, mnist, config);

        assertEquals(l.event(), r.event());
        assertEquals(l.stepsTaken(), r.stepsTaken());
        assertEquals(pld.epsilon(l.event(), 1e-5), pld.epsilon(r.event(), 1e-5), 0, "the same epsilon, exactly");
        double diff = relativeDifference(local, remote);
        System.out.printf("local vs Spark (4 parts on 2 executors), standard CNN, 20 steps: max |dtheta| / max |theta| = %.3g%n", diff);
        assertTrue(diff <= CNN_TOLERANCE, "parameters differ by " + diff + " (relative)");
        Map<String, Object> summary = sums.operatorSummary();
        assertEquals(4, summary.get("partitions"), summary.toString());
        assertEquals(20, summary.get("steps"), summary.toString());
        System.out.println("operator summary: " + summary);

        MultiLayerNetwork otherSeed = cnn(); // what a different batch and noise do: the tolerance is far below it
        new DpSgdTrainer(pld).train(otherSeed, mnist, config(20, 12));
        assertTrue(relativeDifference(local, otherSeed) > 10 * CNN_TOLERANCE, "another seed: " + relativeDifference(local, otherSeed));
    }

    /**
     * Packed shards on a path every executor reads: each executor opens only its part's shards, verified against the
     * driver's manifest, and reads only the rows of each batch that lie in its part; nothing of the data is shipped. The
     * run ends bit for bit where the same run from memory on the cluster ends (the same rows, sums and summation order),
     * and a manifest changed after the driver opened the shards stops the run before its first step (step 1) is applied.
     */
    @Test
    void aRunFromSharedShardsIsTheRunFromMemory(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) throws Exception {
        LabeledData part = mnist.randomSubset(10000, 3);
        org.dpdl4j.datasets.PackedShards.pack(part, tmp.resolve("shards"), 3000);
        DpSgdConfig config = DpSgdConfig.builder().samplingRate(256.0 / part.size()).noiseMultiplier(1.1).clipNorm(1.0).steps(8)
                .physicalBatchSize(128).seed(4).workers(1).delta(1e-5).build();
        MultiLayerNetwork fromMemory = Models.mlp(ModelOptions.mnist().withSeed(7));
        TrainingResult m = new DpSgdTrainer().withClippedSums(cluster.clippedSums(4)).train(fromMemory, part, config);
        MultiLayerNetwork fromShards = Models.mlp(ModelOptions.mnist().withSeed(7));
        try (var shards = org.dpdl4j.datasets.PackedShards.open(tmp.resolve("shards"))) {
            TrainingResult r = new DpSgdTrainer().withClippedSums(cluster.clippedSums(4)).train(fromShards, shards, config);
            assertEquals(m.event(), r.event());
            assertEquals(fromMemory.params(), fromShards.params(), "the same parameters, bit for bit");

            // the same shards on a Hadoop file system (a stand-in scheme whose paths are not local paths): the driver
            // opens them through Hadoop's FileSystem, the executors with the driver's settings, shipped with the part
            var hadoop = cluster.context().hadoopConfiguration();
            hadoop.set("fs.rooted.impl", RootedFileSystem.class.getName());
            hadoop.set("rooted.root", tmp.toString());
            hadoop.setBoolean("fs.rooted.impl.disable.cache", true);
            MultiLayerNetwork fromHadoop = Models.mlp(ModelOptions.mnist().withSeed(7));
            try (var remote = org.dpdl4j.datasets.PackedShards.open(HadoopShardStorage.of("rooted:///shards", hadoop))) {
                assertEquals(shards.manifestSha256(), remote.manifestSha256());
                TrainingResult h = new DpSgdTrainer().withClippedSums(cluster.clippedSums(4)).train(fromHadoop, remote, config);
                assertEquals(m.event(), h.event());
                assertEquals(fromMemory.params(), fromHadoop.params(), "through Hadoop's FileSystem: the same parameters, bit for bit");
            } finally {
                hadoop.unset("fs.rooted.impl");
                hadoop.unset("rooted.root");
            }
            // a trial's split (an index set of the shards, in the split's order): each executor opens the shard set and
            // reads its part's rows of the split; the run is the run from the same rows in memory
            int[] split = org.dpdl4j.datasets.Splits.randomSubset(part.size(), 6000, 11);
            MultiLayerNetwork subsetFromMemory = Models.mlp(ModelOptions.mnist().withSeed(7));
            TrainingResult sm = new DpSgdTrainer().withClippedSums(cluster.clippedSums(3)).train(subsetFromMemory, part.rows(split),
                    config);
            MultiLayerNetwork subsetFromShards = Models.mlp(ModelOptions.mnist().withSeed(7));
            TrainingResult ss = new DpSgdTrainer().withClippedSums(cluster.clippedSums(3)).train(subsetFromShards, shards.subset(split),
                    config);
            assertEquals(sm.event(), ss.event());
            assertEquals(subsetFromMemory.params(), subsetFromShards.params(), "a subset of the shards: the same parameters, bit for bit");

            var unknown = assertThrows(IllegalArgumentException.class, () -> org.dpdl4j.datasets.ShardStorage.of("nosuchfs://host/x"));
            assertTrue(unknown.getMessage().contains("nosuchfs://host/x") && unknown.getMessage().contains("nosuchfs"), unknown.getMessage());

            java.nio.file.Path manifest = tmp.resolve("shards").resolve(org.dpdl4j.datasets.PackedShards.MANIFEST);
            java.nio.file.Files.writeString(manifest, java.nio.file.Files.readString(manifest) + "\n");
            MultiLayerNetwork refused = Models.mlp(ModelOptions.mnist().withSeed(7));
            org.nd4j.linalg.api.ndarray.INDArray before = refused.params().dup();
            var e = assertThrows(IllegalStateException.class,
                    () -> new DpSgdTrainer().withClippedSums(cluster.clippedSums(2)).train(refused, shards, config));
            assertTrue(e.getMessage().contains("step 1's clipped sum could not be computed") && e.getMessage().contains("nothing of step 1 was applied")
                    && String.valueOf(e.getCause()).contains("not the shards the run was planned on"), e.getMessage() + " / " + e.getCause());
            assertEquals(before, refused.params(), "nothing applied");
        }
    }

    /**
     * An executor killed while a step's tasks run: Spark re-runs the lost tasks elsewhere, they recompute the same
     * sums, and the run ends with its planned steps, its event and the local parameters.
     */
    @Test
    void anExecutorKilledMidRunLeavesTheStepsTheEventAndTheParameters() {
        PrivacyAccountant rdp = Accountants.standard();
        DpSgdConfig config = config(30, 5);
        MultiLayerNetwork local = Models.mlp(ModelOptions.mnist().withSeed(7));
        TrainingResult l = new DpSgdTrainer(rdp).train(local, mnist, config);

        AtomicInteger jobs = new AtomicInteger();
        AtomicBoolean killed = new AtomicBoolean();
        SparkListener killer = new SparkListener() {
            @Override
            public void onJobStart(SparkListenerJobStart e) {
                jobs.incrementAndGet();
            }

            @Override
            public void onTaskStart(SparkListenerTaskStart e) {
                if (jobs.get() >= 10 && killed.compareAndSet(false, true)) { // a task of step 10 or so, as it starts
                    TestClusters.executorProcess(e.taskInfo().executorId()).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
        };
        cluster.context().sc().addSparkListener(killer);
        long failedBefore = (Long) cluster.operatorSummary().get("task_attempts_failed");
        int lostBefore = (Integer) cluster.operatorSummary().get("executors_lost");
        try {
            MultiLayerNetwork remote = Models.mlp(ModelOptions.mnist().withSeed(7));
            TrainingResult r = new DpSgdTrainer(rdp).withClippedSums(cluster.clippedSums(4)).train(remote, mnist, config);
            Map<String, Object> summary = cluster.operatorSummary();
            assertTrue(killed.get());
            assertTrue((Integer) summary.get("executors_lost") > lostBefore, summary.toString());
            assertTrue((Long) summary.get("task_attempts_failed") > failedBefore, "the kill hit a running task: " + summary);
            assertEquals(30, r.stepsTaken());
            assertEquals(l.event(), r.event());
            double diff = relativeDifference(local, remote);
            System.out.printf("after a killed executor, 30 steps (MLP): max |dtheta| / max |theta| = %.3g; %s%n", diff, summary);
            assertTrue(diff <= TOLERANCE, "parameters differ by " + diff + " (relative)");
        } finally {
            cluster.context().sc().removeSparkListener(killer);
        }
    }

    /**
     * A white-box audit's canaries (added on the driver, sampled there like examples) compose with sums on the cluster:
     * the canaries' coordinates end where a local audited run puts them.
     */
    @Test
    void anAuditedRunOnTheClusterMovesItsCanariesAsALocalOneDoes() {
        LabeledData small = mnist.randomSubset(3000, 3); // q = 0.2: each canary is sampled about 4 times in 20 steps
        DpSgdConfig config = DpSgdConfig.builder().samplingRate(0.2).noiseMultiplier(1.1).clipNorm(1.0).steps(20)
                .physicalBatchSize(256).seed(21).workers(1).delta(1e-5).build();
        org.dpdl4j.dpsgd.GradientCanaries canaries = new org.dpdl4j.dpsgd.GradientCanaries(new int[]{3, 500, 9000}, 50.0);
        MultiLayerNetwork local = Models.mlp(ModelOptions.mnist().withSeed(7));
        new DpSgdTrainer().withGradientCanaries(canaries).train(local, small, config);
        MultiLayerNetwork remote = Models.mlp(ModelOptions.mnist().withSeed(7));
        new DpSgdTrainer().withGradientCanaries(canaries).withClippedSums(cluster.clippedSums(3)).train(remote, small, config);
        assertTrue(relativeDifference(local, remote) <= TOLERANCE, "parameters differ by " + relativeDifference(local, remote));
        MultiLayerNetwork plain = Models.mlp(ModelOptions.mnist().withSeed(7));
        new DpSgdTrainer().withClippedSums(cluster.clippedSums(3)).train(plain, small, config);
        double moved = 0; // the canaries' coordinates, against the same run without canaries: they were sampled and added
        for (int j : canaries.coordinates()) {
            moved = Math.max(moved, Math.abs(remote.params().getDouble(j) - plain.params().getDouble(j)));
            assertEquals(local.params().getDouble(j), remote.params().getDouble(j), 1e-6, "canary coordinate " + j);
        }
        assertTrue(moved > 1e-3, "the canaries moved their coordinates by " + moved);
    }

    /**
     * A tuning's base mechanism whose runs compute their sums on the cluster (tune --train-executor spark) trains the
     * trial a local mechanism trains, and is refused as a trial to send to the cluster (no nested Spark jobs).
     */
    @Test
    void aMechanismWithClusterSumsTrainsTheLocalTrialAndCannotItselfTravel() {
        org.dpdl4j.tuning.DpSgdMechanism.Builder b = org.dpdl4j.tuning.DpSgdMechanism.builder(mnist).model("mlp", ModelOptions.mnist())
                .noiseMultiplier(1.0).expectedBatchSize(256).epochs(0.03).workers(1).validation(0.1, 42);
        org.dpdl4j.tuning.Candidate c = new org.dpdl4j.tuning.Candidate(Map.of("lr", 0.5));
        var local = b.build().run(c, 99, org.dpdl4j.tuning.TuningListener.NONE, 0);
        org.dpdl4j.tuning.DpSgdMechanism remote = b.clippedSums(cluster.clippedSums(2)).build();
        var onCluster = remote.run(c, 99, org.dpdl4j.tuning.TuningListener.NONE, 0);
        assertEquals(local.event(), onCluster.event());
        assertTrue(relativeDifference(local.model(), onCluster.model()) <= TOLERANCE,
                "parameters differ by " + relativeDifference(local.model(), onCluster.model()));
        assertEquals(local.score(), onCluster.score(), 0.01, "the noisy score, computed on the driver from nearly equal models");
        var e = assertThrows(IllegalArgumentException.class, () -> cluster.place(remote));
        assertTrue(e.getMessage().contains("not serializable") && e.getMessage().contains("clippedSums"), e.getMessage());
    }

    /**
     * Sequences of different lengths travel with their masks: a masked LSTM run (a feature mask and a label per step
     * under a label mask) on the cluster, in one part (one executor sums the batch in the order a local worker does), ends
     * bit for bit where the local run ends; the same run without its masks ends elsewhere (the cluster dropped them
     * before, and trained on the padding).
     */
    @Test
    void aMaskedSequenceRunOnTheClusterIsTheLocalRun() {
        int n = 300;
        int t = 8;
        org.nd4j.linalg.api.ndarray.INDArray x = org.nd4j.linalg.factory.Nd4j.rand(org.nd4j.linalg.api.buffer.DataType.FLOAT,
                n, 3, t).subi(0.5);
        org.nd4j.linalg.api.ndarray.INDArray y = org.nd4j.linalg.factory.Nd4j.zeros(org.nd4j.linalg.api.buffer.DataType.FLOAT, n, 2, t);
        org.nd4j.linalg.api.ndarray.INDArray mask = org.nd4j.linalg.factory.Nd4j.zeros(org.nd4j.linalg.api.buffer.DataType.FLOAT, n, t);
        java.util.SplittableRandom random = new java.util.SplittableRandom(5);
        for (int i = 0; i < n; i++) {
            int length = 2 + random.nextInt(t - 1);
            for (int s = 0; s < t; s++) {
                y.putScalar(new int[]{i, x.getDouble(i, 0, s) > 0 ? 1 : 0, s}, 1.0);
                if (s < length) {
                    mask.putScalar(i, s, 1.0);
                } else {
                    x.putScalar(new int[]{i, 0, s}, 5.0); // padding that would move the gradients if it were read
                }
            }
        }
        LabeledData masked = LabeledData.of(x, y, mask, mask);
        DpSgdConfig config = DpSgdConfig.builder().samplingRate(0.2).noiseMultiplier(1.1).clipNorm(1.0).steps(10)
                .physicalBatchSize(64).seed(9).workers(1).delta(1e-5).build();
        MultiLayerNetwork local = lstm();
        TrainingResult l = new DpSgdTrainer().train(local, masked, config);
        MultiLayerNetwork remote = lstm();
        TrainingResult r = new DpSgdTrainer().withClippedSums(cluster.clippedSums(1)).train(remote, masked, config);
        assertEquals(l.event(), r.event());
        assertEquals(local.params(), remote.params(), "the masked run on the cluster: the local parameters, bit for bit");
        MultiLayerNetwork unmasked = lstm();
        new DpSgdTrainer().withClippedSums(cluster.clippedSums(1)).train(unmasked, LabeledData.of(x, y), config);
        assertTrue(relativeDifference(local, unmasked) > 1e-3, "without the masks: " + relativeDifference(local, unmasked));
    }

    private static MultiLayerNetwork lstm() {
        MultiLayerNetwork net = new MultiLayerNetwork(new org.deeplearning4j.nn.conf.NeuralNetConfiguration.Builder().seed(3)
                .dataType(org.nd4j.linalg.api.buffer.DataType.FLOAT).updater(new org.nd4j.linalg.learning.config.Sgd(0.5)).list()
                .layer(new org.deeplearning4j.nn.conf.layers.LSTM.Builder().nOut(6)
                        .activation(org.nd4j.linalg.activations.Activation.TANH).build())
                .layer(new org.deeplearning4j.nn.conf.layers.RnnOutputLayer.Builder(
                        org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction.MCXENT).nOut(2)
                        .activation(org.nd4j.linalg.activations.Activation.SOFTMAX).build())
                .setInputType(org.deeplearning4j.nn.conf.inputs.InputType.recurrent(3, 8)).build());
        net.init();
        return net;
    }

    @Test
    void aBadPartitionCountIsRefused() {
        var e = assertThrows(IllegalArgumentException.class, () -> cluster.clippedSums(0));
        assertTrue(e.getMessage().contains("partitions must be >= 1, got 0"), e.getMessage());
    }
}
