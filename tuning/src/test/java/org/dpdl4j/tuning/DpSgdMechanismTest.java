package org.dpdl4j.tuning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Random;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.models.ModelOptions;
import org.junit.jupiter.api.Test;

/** The standard base mechanism on a small synthetic task (two classes: bright top half or bottom half). */
class DpSgdMechanismTest {
    static LabeledData data(int n, long seed) {
        Random r = new Random(seed);
        byte[] px = new byte[n * 36];
        int[] y = new int[n];
        for (int i = 0; i < n; i++) {
            y[i] = r.nextInt(2);
            for (int p = 0; p < 36; p++) {
                boolean bright = (p < 18) == (y[i] == 0);
                px[i * 36 + p] = (byte) Math.min(255, Math.max(0, (bright ? 180 : 60) + (int) (r.nextGaussian() * 40)));
            }
        }
        return LabeledData.fromBytes(px, y, 2, 1, 6, 6);
    }

    private static DpSgdMechanism.Builder builder() {
        return builder(data(500, 1));
    }

    private static DpSgdMechanism.Builder builder(org.dpdl4j.datasets.ExampleSource data) {
        return DpSgdMechanism.builder(data).model("mlp", new ModelOptions(6, 6, 1, 2,
                        ModelOptions.activationNamed("tanh"), ModelOptions.updaterNamed("sgd", 0.5), 0,
                        org.nd4j.linalg.api.buffer.DataType.FLOAT))
                .noiseMultiplier(1.0).expectedBatchSize(50).epochs(4).validation(0.2, 3);
    }

    @Test
    void eventComposesTrainingAndTheNoisyScore() {
        DpSgdMechanism q = builder().build();
        assertEquals(500, q.train().size() + q.validation().size());
        assertEquals(100, q.validation().size(), 4 * Math.sqrt(500 * 0.2 * 0.8), "a record-by-record split: binomial size");
        Candidate c = new Candidate(Map.of("lr", 0.5, "batch_size", 40.0));
        assertEquals(ComposedEvent.of(DpSgdTrainer.event(0.1, 1.0, 40), new GaussianEvent(0.5)), q.event(c));
        DpSgdMechanism pub = builder().scoring(DpSgdMechanism.Scoring.PUBLIC_HOLDOUT, 0).build();
        assertEquals(DpSgdTrainer.event(0.1, 1.0, 40), pub.event(c));
        var e = assertThrows(IllegalArgumentException.class, () -> q.event(new Candidate(Map.of("momentum", 0.9))));
        assertTrue(e.getMessage().contains("momentum"));
        e = assertThrows(IllegalArgumentException.class, () -> q.event(new Candidate(Map.of("batch_size", 40.5))));
        assertTrue(e.getMessage().contains("batch_size"));
    }

    @Test
    void runsTrainScoreAndRepeatForASeed() {
        DpSgdMechanism q = builder().build();
        Candidate c = new Candidate(Map.of("lr", 0.5));
        TrialResult a = q.run(c, 11, TuningListener.NONE, 0);
        TrialResult b = q.run(c, 11, TuningListener.NONE, 0);
        double accuracy = DpSgdTrainer.accuracy(a.model(), q.validation());
        assertTrue(accuracy > 0.9, "the task is easy: " + accuracy);
        // score = (correct + N(0, 0.5^2)) / 100 (f·n, public): within 5 standard deviations of correct/100
        assertEquals(Math.round(accuracy * q.validation().size()) / 100.0, a.score(), 5 * 0.005);
        assertEquals(a.score(), b.score(), 0, "same seed, same run");
        // exactly (correct + s·Z)/(f·n): the public divisor 0.2·500, never the realised validation size
        assertTrue(q.validation().size() != 100, "the realised size differs from f·n here: " + q.validation().size());
        double z = java.util.random.RandomGeneratorFactory.of("L64X128MixRandom").create(11 ^ 0x7C3A1F9E2B5D4086L).nextGaussian();
        assertEquals((Math.round(accuracy * q.validation().size()) + z * q.scoreNoiseCount()) / 100.0, a.score(), 1e-12);
        TuningResult r = new RandomSearchTuner(RepetitionDistribution.pointMass(2), 5, 2, false)
                .tune(HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.001,0.5")), q, null, TuningListener.NONE);
        assertEquals(2, r.trials().size());
        assertTrue(r.best().score() >= r.trials().get(0).score() && r.best().score() >= r.trials().get(1).score());
    }

    /**
     * The score noise takes all 64 bits of the seed: seeds that differ only in their top 16 bits draw different noise
     * (a {@code java.util.Random} seeded with {@code seed ^ 0x5DEECE66DL} kept 48 bits, and drew the same).
     */
    @Test
    void scoreNoiseDependsOnEveryBitOfTheSeed() {
        for (int bit = 0; bit < 64; bit++) {
            long a = 0x1234_5678_9ABC_DEF0L;
            long b = a ^ (1L << bit);
            assertTrue(DpSgdMechanism.scoreNoise(a, false).nextGaussian() != DpSgdMechanism.scoreNoise(b, false).nextGaussian(),
                    "seeds differing in bit " + bit + " drew the same score noise");
        }
        assertEquals(DpSgdMechanism.scoreNoise(7, false).nextGaussian(), DpSgdMechanism.scoreNoise(7, false).nextGaussian(),
                "the same seed, the same noise");
        assertTrue(DpSgdMechanism.scoreNoise(7, true) instanceof java.security.SecureRandom);
    }

    /**
     * A space is checked whole before any data are read: every bad value is refused by name with its candidate, as a
     * trial would refuse it; σ = 0 only when non-private; a good space passes.
     */
    /**
     * With augmentation multiplicity every run has the same event as without it, still learns the easy task, trains other
     * weights than without it (the copies are used); bad k is refused by name.
     */
    @Test
    void augmentationMultiplicityKeepsTheEvent() {
        var shifts = new org.dpdl4j.datasets.ImageAugmentation(1, 6, 6, 1, false);
        DpSgdMechanism plain = builder().build();
        DpSgdMechanism augmented = builder().augmult(shifts, 3).build();
        Candidate c = new Candidate(Map.of("lr", 0.5));
        assertEquals(plain.event(c), augmented.event(c));
        TrialResult a = augmented.run(c, 11, TuningListener.NONE, 0);
        TrialResult p = plain.run(c, 11, TuningListener.NONE, 0);
        double accuracy = DpSgdTrainer.accuracy(a.model(), augmented.validation());
        assertTrue(accuracy > 0.8, "the task is easy, shifted by a pixel too: " + accuracy);
        assertTrue(a.model().params().sub(p.model().params()).norm2Number().doubleValue() > 1e-3, "the copies were trained on");
        var k = assertThrows(IllegalArgumentException.class, () -> builder().augmult(shifts, 65));
        assertTrue(k.getMessage().contains("augmult must be in [1, 64]") && k.getMessage().contains("65"), k.getMessage());
        assertThrows(IllegalArgumentException.class, () -> builder().augmult(null, 2));
        var elsewhere = assertThrows(IllegalArgumentException.class,
                () -> builder().augmult(shifts, 2).clippedSums(org.dpdl4j.dpsgd.ClippedSums.local()).build());
        assertTrue(elsewhere.getMessage().contains("augmult k = 2") && elsewhere.getMessage().contains("clippedSums"),
                elsewhere.getMessage());
    }

    /**
     * A setting of how data are read, the read cache, changes no trial: from shards with it, from shards without it and
     * from memory, the same score and parameters bit for bit; and it is not among the settings that define a run.
     */
    @Test
    void aReadCacheChangesNoTrial(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) {
        java.nio.file.Path dir = tmp.resolve("shards");
        org.dpdl4j.datasets.PackedShards.pack(data(500, 1), dir, 200);
        Candidate c = new Candidate(Map.of("lr", 0.5));
        try (var shards = org.dpdl4j.datasets.PackedShards.open(dir)) {
            DpSgdMechanism.Builder cachedBuilder = builder(shards).readCacheMb(1);
            TrialResult cached = cachedBuilder.build().run(c, 11, TuningListener.NONE, 0);
            TrialResult uncached = builder(shards).build().run(c, 11, TuningListener.NONE, 0);
            TrialResult inMemory = builder().build().run(c, 11, TuningListener.NONE, 0);
            for (TrialResult other : new TrialResult[]{uncached, inMemory}) {
                assertEquals(other.score(), cached.score(), 0);
                assertEquals(other.model().params(), cached.model().params());
            }
            assertEquals(1, cachedBuilder.settings().readCacheMb());
            assertTrue(!cachedBuilder.settings().toMap().containsKey("read_cache_mb"), "how data are read is not in the plan");
        }
        var bad = assertThrows(IllegalArgumentException.class, () -> builder().readCacheMb(-1));
        assertTrue(bad.getMessage().startsWith("read_cache_mb must be in [0, 16777216], got -1"), bad.getMessage());
    }

    @Test
    void aBadSpaceIsRefusedBeforeAnyTrial() {
        java.util.function.Function<String, HyperparameterSpace> space = axis -> HyperparameterSpace.of(HyperparameterSpace.parseAxis(axis));
        String[][] bad = {{"lr=cat:0.5,-1", "hyperparameter learning_rate in", "-1.0"}, {"optimizer=cat:sgd,rmsprop", "hyperparameter optimizer", "rmsprop"},
                {"activation=cat:tanh,foo", "hyperparameter activation", "foo"}, {"clip=cat:1,0", "hyperparameter clip", "0.0"},
                {"epochs=cat:1,-2", "hyperparameter epochs", "-2.0"}, {"sigma=cat:1,0", "sigma = 0", "--non-private"}};
        for (String[] b : bad) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DpSgdSpace.checkSpace(space.apply(b[0]), false), b[0]);
            assertTrue(e.getMessage().contains(b[1]) && e.getMessage().contains(b[2]), b[0] + ": " + e.getMessage());
        }
        DpSgdSpace.checkSpace(space.apply("sigma=cat:0,1"), true);
        DpSgdSpace.checkSpace(space.apply("lr=log:0.01:1:5"), false);
    }
}
