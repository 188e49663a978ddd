package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.Mnist;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Sgd;

/** DP-SGD runs on real MNIST (fetched by scripts/fetch-data.sh) and on small synthetic data. */
class DpSgdTrainerTest {
    private static TrainTest mnist;

    @BeforeAll
    static void load() throws Exception {
        mnist = Mnist.load(DatasetCache.root().resolve("mnist"));
    }

    /** A short private run on 3,000 MNIST images reaches far above chance (10 %). */
    @Test
    void shortPrivateTrainingBeatsChance() {
        LabeledData train = mnist.train().randomSubset(3000, 1);
        LabeledData test = mnist.test().randomSubset(1000, 2);
        MultiLayerNetwork net = Models.standardCnn(ModelOptions.mnist().withUpdater(new Sgd(2.0)));
        double q = 100.0 / 3000;
        DpSgdConfig cfg = DpSgdConfig.builder().samplingRate(q).noiseMultiplier(1.0).clipNorm(1.0).steps(150).seed(3).build();
        List<StepInfo> steps = new ArrayList<>();
        TrainingResult r = new DpSgdTrainer().train(net, train, cfg, steps::add);
        double acc = DpSgdTrainer.accuracy(net, test);
        assertTrue(acc > 0.6, "test accuracy " + acc + " should be far above chance");
        assertEquals(NoiseCalibration.dpSgd(q, 1.0, 150), r.event(), "the run's event");
        assertEquals(150, r.stepsTaken());
        assertEquals(150, steps.size());
        assertEquals(150, steps.get(149).step());
        assertEquals(RdpAccountant.standard().epsilon(r.event(), 1e-5), steps.get(149).epsilonSoFar(), 1e-12);
    }

    /**
     * A run frees its workers' scratch memory on every thread: a session's threads hold it while it steps and hold none
     * once it is released, and a whole run leaves none on the calling thread (a tuning's trials in one thread kept every
     * trial's before).
     */
    @Test
    void aRunFreesItsScratchMemoryOnEveryThread() {
        LabeledData train = mnist.train().randomSubset(400, 7);
        MultiLayerNetwork net = Models.standardCnn(ModelOptions.mnist());
        DpSgdConfig config = DpSgdConfig.builder().samplingRate(0.1).noiseMultiplier(1.0).clipNorm(1.0).steps(2).workers(2).seed(3)
                .build();
        try (ClippedSums.Session session = ClippedSums.local().open(net, train, config, new PoissonBatchSampler(400, 0.1, 5))) {
            LocalClippedSums.LocalSession local = (LocalClippedSums.LocalSession) session;
            session.step(0, Nd4j.zeros(DataType.FLOAT, 1, net.numParams()));
            assertTrue(local.holdsScratch(), "the workers hold scratch memory while the session steps");
            local.releaseScratch();
            assertTrue(!local.holdsScratch(), "no thread holds scratch memory once it is released");
        }
        java.util.function.LongSupplier held = () -> Nd4j.getWorkspaceManager().getAllWorkspacesForCurrentThread().stream()
                .filter(w -> w.getId().startsWith("dpdl4j-pex-")).count(); // other tests' engines in this JVM may hold theirs
        long before = held.getAsLong();
        for (int run = 0; run < 2; run++) {
            new DpSgdTrainer().train(net, train, config);
            DpSgdTrainer.accuracy(net, train);
            assertEquals(before, held.getAsLong(), "scratch workspaces left on the calling thread after run and evaluation " + run);
        }
    }

    /**
     * A step whose clipped sum cannot be computed (a cluster job that failed) throws before its noise or update: the
     * network keeps the parameters of the step before, so no step is applied twice or half.
     */
    @Test
    void aFailedSumAppliesNothingOfItsStep() {
        LabeledData train = mnist.train().randomSubset(1000, 5);
        DpSgdConfig config = DpSgdConfig.builder().samplingRate(0.1).noiseMultiplier(1.0).clipNorm(1.0).steps(6).seed(3).build();
        ClippedSums failingAtThree = (network, data, c, sampler) -> {
            ClippedSums.Session local = ClippedSums.local().open(network, data, c, sampler);
            return new ClippedSums.Session() {
                @Override
                public ClippedSums.Sum step(long t, INDArray target) {
                    if (t == 3) {
                        throw new IllegalStateException("the job of step 3 failed");
                    }
                    return local.step(t, target);
                }

                @Override
                public void close() {
                    local.close();
                }
            };
        };
        MultiLayerNetwork net = Models.mlp(ModelOptions.mnist().withSeed(1));
        List<INDArray> afterEachStep = new ArrayList<>();
        var e = assertThrows(IllegalStateException.class, () -> new DpSgdTrainer().withClippedSums(failingAtThree)
                .train(net, train, config, 1, ck -> afterEachStep.add(ck.network().params().dup())));
        assertEquals("the job of step 3 failed", e.getMessage());
        assertEquals(2, afterEachStep.size(), "checkpoints after steps 1 and 2");
        assertEquals(afterEachStep.get(1), net.params(), "the parameters of step 2, nothing of step 3");
        MultiLayerNetwork again = Models.mlp(ModelOptions.mnist().withSeed(1)); // the same two steps locally: same parameters
        new DpSgdTrainer().train(again, train, DpSgdConfig.builder().samplingRate(0.1).noiseMultiplier(1.0).clipNorm(1.0).steps(2)
                .seed(3).build());
        assertEquals(again.params(), net.params());
    }

    /** With an ε budget the run stops before the first step that would exceed it. */
    @Test
    void stopsBeforeExceedingTheBudget() {
        LabeledData train = mnist.train().randomSubset(500, 4);
        MultiLayerNetwork net = Models.mlp(ModelOptions.mnist());
        double q = 0.1;
        double budget = 1.0;
        DpSgdConfig cfg = DpSgdConfig.builder().samplingRate(q).noiseMultiplier(2.0).steps(10_000).epsilonBudget(budget)
                .delta(1e-5).build();
        TrainingResult r = new DpSgdTrainer().train(net, train, cfg);
        RdpAccountant acc = RdpAccountant.standard();
        assertTrue(r.stoppedAtBudget());
        assertTrue(r.stepsTaken() > 0 && r.stepsTaken() < 10_000);
        assertTrue(acc.epsilon(r.event(), 1e-5) <= budget);
        assertTrue(acc.epsilon(NoiseCalibration.dpSgd(q, 2.0, r.stepsTaken() + 1), 1e-5) > budget);
    }

    /**
     * One step with q = 1 and plain SGD: the update is lr·(clipped sum + noise)/n. Recomputing the
     * clipped sum independently leaves the noise, whose per-coordinate standard deviation must be
     * σC (added once per step, to the sum — not once per physical chunk, which would give σC√k).
     */
    @Test
    void noiseIsAddedOncePerStepToTheSum() {
        LabeledData train = mnist.train().randomSubset(40, 5).castTo(DataType.DOUBLE);
        ModelOptions o = ModelOptions.mnist().withDataType(DataType.DOUBLE).withUpdater(new Sgd(1.0));
        MultiLayerNetwork net = Models.standardCnn(o);
        INDArray before = net.params().dup();
        double sigma = 2.0;
        double c = 0.5;
        PerExampleGradients pg = new PerExampleGradients(net);
        pg.compute(train.features(), train.labels());
        INDArray clippedSum = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        pg.addWeightedSum(pg.clipFactors(c), clippedSum);

        DpSgdConfig cfg = DpSgdConfig.builder().samplingRate(1.0).noiseMultiplier(sigma).clipNorm(c).steps(1)
                .physicalBatchSize(7).seed(9).build();
        new DpSgdTrainer().train(net, train, cfg);
        INDArray update = before.sub(net.params()).muli(train.size()); // = clipped sum + noise
        INDArray noise = update.sub(clippedSum.reshape(update.shape()));
        long d = noise.length();
        double mean = noise.meanNumber().doubleValue();
        double sd = noise.stdNumber().doubleValue();
        assertEquals(0, mean, 5 * sigma * c / Math.sqrt(d), "noise mean");
        assertEquals(sigma * c, sd, 5 * sigma * c * Math.sqrt(0.5 / d), "noise standard deviation");
    }

    /**
     * The non-private mode (σ = 0, C = ∞): one step with q = 1 and plain SGD moves the parameters by
     * lr·(DL4J's batch gradient)/n, computed independently by DL4J's own backpropagation, over
     * physical chunks; and the run reports ε = ∞.
     */
    @Test
    void nonPrivateModeIsDl4jBatchGradientDescent() {
        LabeledData train = mnist.train().randomSubset(40, 6).castTo(DataType.DOUBLE);
        ModelOptions o = ModelOptions.mnist().withDataType(DataType.DOUBLE).withUpdater(new Sgd(1.0));
        MultiLayerNetwork net = Models.standardCnn(o);
        INDArray before = net.params().dup();
        net.setInput(train.features());
        net.setLabels(train.labels());
        net.computeGradientAndScore();
        INDArray batchGradient = net.gradient().gradient().dup().reshape(before.shape());

        DpSgdConfig cfg = DpSgdConfig.builder().samplingRate(1.0).noiseMultiplier(0).nonPrivate(true)
                .clipNorm(Double.POSITIVE_INFINITY).steps(1).physicalBatchSize(7).seed(9).build();
        TrainingResult r = new DpSgdTrainer().train(net, train, cfg);
        INDArray update = before.sub(net.params()).muli(train.size());
        double diff = update.sub(batchGradient).amaxNumber().doubleValue();
        assertTrue(diff <= 1e-10 * batchGradient.amaxNumber().doubleValue(), "update differs from DL4J's batch gradient by " + diff);
        assertEquals(Double.POSITIVE_INFINITY, RdpAccountant.standard().epsilon(r.event(), 1e-5));
    }

    /**
     * Checkpoints arrive every k steps with the network as it is then; a run resumed from one (after a round
     * trip through ModelSerializer, updater state included) ends at the planned T with the whole run's event,
     * and draws fresh randomness: it does not replay the streams of the uninterrupted run.
     */
    @Test
    void checkpointsResumeToThePlannedStepsWithFreshRandomness(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        LabeledData train = mnist.train().randomSubset(300, 8).castTo(DataType.DOUBLE);
        ModelOptions o = ModelOptions.mnist().withDataType(DataType.DOUBLE).withUpdater(new org.nd4j.linalg.learning.config.Adam(0.01));
        DpSgdConfig cfg = DpSgdConfig.builder().samplingRate(0.1).noiseMultiplier(1.0).steps(12).seed(21).build();
        List<Long> at = new ArrayList<>();
        java.io.File saved = dir.resolve("at4.zip").toFile();
        List<INDArray> paramsAt4 = new ArrayList<>();
        MultiLayerNetwork full = Models.mlp(o);
        TrainingResult uninterrupted = new DpSgdTrainer().train(full, train, cfg, 4, c -> {
            at.add(c.stepsDone());
            assertEquals(NoiseCalibration.dpSgd(0.1, 1.0, c.stepsDone()), c.eventSoFar());
            if (c.stepsDone() == 4) {
                try {
                    org.deeplearning4j.util.ModelSerializer.writeModel(c.network(), saved, true);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                paramsAt4.add(c.network().params().dup());
            }
        });
        assertEquals(List.of(4L, 8L), at, "every 4 steps, not after the last");
        MultiLayerNetwork restored = org.deeplearning4j.util.ModelSerializer.restoreMultiLayerNetwork(saved, true);
        assertEquals(0, paramsAt4.get(0).sub(restored.params()).amaxNumber().doubleValue(), 0.0);
        List<StepInfo> steps = new ArrayList<>();
        TrainingResult resumed = new DpSgdTrainer().resume(new Checkpoint(restored, cfg, 4), train, 0, null, steps::add);
        assertEquals(uninterrupted.event(), resumed.event(), "the whole run's event: T = 12 steps");
        assertEquals(12, resumed.stepsTaken());
        assertEquals(8, steps.size());
        assertEquals(5, steps.get(0).step());
        double diff = full.params().sub(restored.params()).amaxNumber().doubleValue();
        assertTrue(diff > 1e-6, "a resumed run must not replay the first run's noise and batches (difference " + diff + ")");
        assertThrows(IllegalArgumentException.class, () -> new Checkpoint(restored, cfg, 13));
    }

    /**
     * With emaDecay β the run trains exactly as without it (same seed, same iterates) and ends with the average
     * θ̄_t = β_t·θ̄_{t−1} + (1 − β_t)·θ_t, β_t = min(β, (1+t)/(10+t)), θ̄_0 = θ_0, recomputed here from the iterates of a
     * run without the average; its event is unchanged. A run checkpointed with its average and resumed ends as one
     * resumed run that restarts the average would not.
     */
    @Test
    void movingAverageIsPostProcessingOfTheSameIterates() {
        LabeledData train = mnist.train().randomSubset(300, 8).castTo(DataType.DOUBLE);
        ModelOptions o = ModelOptions.mnist().withDataType(DataType.DOUBLE).withUpdater(new Sgd(0.5));
        double beta = 0.9;
        DpSgdConfig.Builder b = DpSgdConfig.builder().samplingRate(0.1).noiseMultiplier(1.0).steps(30).seed(5);
        MultiLayerNetwork plain = Models.mlp(o);
        List<INDArray> iterates = new ArrayList<>();
        iterates.add(plain.params().dup());
        TrainingResult last = new DpSgdTrainer().train(plain, train, b.build(), info -> iterates.add(plain.params().dup()));
        INDArray expected = iterates.get(0).dup();
        for (int t = 1; t < iterates.size(); t++) {
            double bt = Math.min(beta, (1.0 + t) / (10.0 + t));
            expected = expected.mul(bt).add(iterates.get(t).mul(1 - bt));
        }
        MultiLayerNetwork averaged = Models.mlp(o);
        DpSgdConfig withEma = b.emaDecay(beta).build();
        TrainingResult avg = new DpSgdTrainer().train(averaged, train, withEma);
        assertEquals(last.event(), avg.event(), "the average is post-processing: same event");
        double scale = expected.amaxNumber().doubleValue();
        assertTrue(expected.sub(averaged.params()).amaxNumber().doubleValue() < 1e-12 * scale);
        double moved = expected.sub(plain.params()).amaxNumber().doubleValue();
        assertTrue(moved > 1e-6, "the average must differ from the last iterate (difference " + moved + ")");
        assertEquals(beta, withEma.emaDecayAt(1_000_000), 0.0);
        assertEquals(2.0 / 11, withEma.emaDecayAt(1), 1e-15);

        List<Checkpoint> at10 = new ArrayList<>();
        MultiLayerNetwork first = Models.mlp(o);
        new DpSgdTrainer().train(first, train, withEma, 10, c -> {
            if (c.stepsDone() == 10) {
                at10.add(new Checkpoint(((MultiLayerNetwork) c.network()).clone(), c.config(), 10, c.ema().dup()));
            }
        });
        INDArray emaAt10 = iterates.get(0).dup();
        for (int t = 1; t <= 10; t++) {
            double bt = Math.min(beta, (1.0 + t) / (10.0 + t));
            emaAt10 = emaAt10.mul(bt).add(iterates.get(t).mul(1 - bt));
        }
        assertTrue(emaAt10.sub(at10.get(0).ema().reshape(emaAt10.shape())).amaxNumber().doubleValue() < 1e-12 * scale,
                "the checkpoint carries the average after its steps");
        assertTrue(iterates.get(10).sub(at10.get(0).network().params()).amaxNumber().doubleValue() < 1e-12 * scale,
                "and the live iterate, not the average");
        var e = assertThrows(IllegalArgumentException.class, () -> DpSgdConfig.builder().samplingRate(0.5).noiseMultiplier(1).steps(1)
                .emaDecay(1).build());
        assertTrue(e.getMessage().contains("ema_decay") && e.getMessage().contains("1.0"), e.getMessage());
    }

    /** Splitting each batch across parallel workers changes nothing but the order of float64 additions. */
    @Test
    void parallelWorkersGiveTheSameRun() {
        LabeledData train = mnist.train().randomSubset(300, 8).castTo(DataType.DOUBLE);
        double[] results = new double[3];
        INDArray reference = null;
        for (int workers : new int[]{1, 2, 3}) {
            MultiLayerNetwork net = Models.standardCnn(ModelOptions.mnist().withDataType(DataType.DOUBLE).withUpdater(new Sgd(0.5)));
            new DpSgdTrainer().train(net, train, DpSgdConfig.builder().samplingRate(0.2).noiseMultiplier(1.0).steps(5)
                    .physicalBatchSize(16).seed(12).workers(workers).build());
            if (reference == null) {
                reference = net.params().dup();
            } else {
                double diff = reference.sub(net.params()).amaxNumber().doubleValue();
                assertTrue(diff < 1e-12 * reference.amaxNumber().doubleValue(), workers + " workers differ by " + diff);
            }
            results[workers - 1] = net.params().sumNumber().doubleValue();
        }
        assertTrue(Double.isFinite(results[2]));
    }

    @Test
    void gaussianNoiseHasTheRequestedMomentsAndIsReproducible() {
        int d = 200_000;
        double std = 3.0;
        INDArray a = Nd4j.zeros(DataType.DOUBLE, d);
        INDArray b = Nd4j.zeros(DataType.DOUBLE, d);
        try (GaussianNoise n1 = new GaussianNoise(42); GaussianNoise n2 = new GaussianNoise(42)) {
            n1.addTo(a, std);
            n2.addTo(b, std);
        }
        assertEquals(a, b, "same seed, same noise");
        // 5 standard errors: false-alarm rate < 1e-6 for each of the two checks
        assertEquals(0, a.meanNumber().doubleValue(), 5 * std / Math.sqrt(d));
        double var = a.varNumber().doubleValue();
        assertEquals(std * std, var, 5 * std * std * Math.sqrt(2.0 / d));
    }

    @Test
    void invalidSettingsNameTheParameter() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> DpSgdConfig.builder().samplingRate(1.5).noiseMultiplier(1).steps(1).build());
        assertTrue(e.getMessage().contains("sampling_rate") && e.getMessage().contains("1.5"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> DpSgdConfig.builder().samplingRate(0.5).noiseMultiplier(0).steps(1).build());
        assertTrue(e.getMessage().contains("nonPrivate"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> DpSgdConfig.builder().samplingRate(0.5).noiseMultiplier(1).clipNorm(-1).steps(1).build());
        assertTrue(e.getMessage().contains("clip_norm"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> DpSgdConfig.builder().samplingRate(0.5).noiseMultiplier(1)
                .clipNorm(Double.POSITIVE_INFINITY).steps(1).build());
        assertTrue(e.getMessage().contains("clip_norm") && e.getMessage().contains("Infinity"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> DpSgdConfig.builder().samplingRate(0.5).noiseMultiplier(1).steps(0).build());
        assertTrue(e.getMessage().contains("steps"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> DpSgdConfig.builder().samplingRate(0.5).noiseMultiplier(1).steps(1).delta(1).build());
        assertTrue(e.getMessage().contains("delta"), e.getMessage());
        MultiLayerNetwork net = Models.mlp(ModelOptions.mnist().withUpdater(new Sgd(0)));
        e = assertThrows(IllegalArgumentException.class, () -> new DpSgdTrainer().train(net, mnist.test().randomSubset(10, 1),
                DpSgdConfig.builder().samplingRate(0.5).noiseMultiplier(1).steps(1).build()));
        assertTrue(e.getMessage().contains("learning rate"), e.getMessage());
    }
}
