package org.dpdl4j.tuning;

import org.dpdl4j.release.PrivacyLedger;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PointwiseMaxEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.accounting.RepeatAndSelectEvent;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.SubsampledTuningEvent;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.models.ModelOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Koskela &amp; Kulkarni's procedure on a small synthetic task. */
class SubsampledTunerTest {
    private static final LabeledData DATA = DpSgdMechanismTest.data(2000, 7);
    private static final HyperparameterSpace LR = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.05,0.2"));

    private static DpSgdMechanism.Builder builder() {
        return builder(DATA);
    }

    private static DpSgdMechanism.Builder builder(org.dpdl4j.datasets.ExampleSource data) {
        return DpSgdMechanism.builder(data).model("mlp", new ModelOptions(6, 6, 1, 2, ModelOptions.activationNamed("tanh"),
                        ModelOptions.updaterNamed("sgd", 0.5), 0, org.nd4j.linalg.api.buffer.DataType.FLOAT))
                .noiseMultiplier(1.0).samplingRate(0.1).epochs(3).validation(0.2, 3);
    }

    private static SubsampledTuner tuner(SubsampledTuningEvent.Variant v, boolean warm) {
        return new SubsampledTuner(new RandomSearchTuner(RepetitionDistribution.pointMass(2), 3, 1, false), 0.2, v,
                Extrapolation.LINEAR_LEARNING_RATE, warm, 11, false);
    }

    @Test
    void variant1EndToEndWithLedger(@TempDir Path dir) throws Exception {
        DpSgdMechanism template = builder().build();
        PrivacyLedger ledger = PrivacyLedger.open(dir.resolve("ledger.jsonl"), "synthetic", 100, 1e-5);
        SubsampledTuningResult r = tuner(SubsampledTuningEvent.Variant.DISJOINT, false).tune(LR, template, ledger, TuningListener.NONE);

        // the charged event: Q on X1 = DP-SGD (q, sigma, T) + score noise q_tune * s, best of 2; final run DP-SGD
        PrivacyEvent run = DpSgdTrainer.event(0.1, 1.0, 30);
        double s = 0.005 * 0.2 * 2000 * 0.2; // template's s (0.005 x f n) times q_tune
        assertEquals(new SubsampledTuningEvent(new RepeatAndSelectEvent(ComposedEvent.of(run, new GaussianEvent(s)),
                RepetitionDistribution.pointMass(2)), run, 0.2, SubsampledTuningEvent.Variant.DISJOINT), r.event());
        assertEquals(r.event(), tuner(SubsampledTuningEvent.Variant.DISJOINT, false).event(LR, template));

        // X1 is a Poisson subset; the final run used the rest
        assertEquals(2000, r.tuneSetSize() + r.finalSetSize());
        assertEquals(400, r.tuneSetSize(), 4 * Math.sqrt(2000 * 0.2 * 0.8));
        assertTrue(r.tuneTrainSize() < r.tuneSetSize() && r.tuneTrainSize() > 0.6 * r.tuneSetSize());
        // learning rate scaled by n/m; sigma, q, T kept
        assertEquals(r.tuned().number("lr") * 0.8 / (0.2 * 0.8), r.transferred().number("lr"), 1e-12); // expected sizes
        assertEquals(template.trainingEvent(r.tuned()), template.trainingEvent(r.transferred()));
        assertTrue(DpSgdTrainer.accuracy(r.model(), DpSgdMechanismTest.data(500, 99)) > 0.9);

        // one charge for everything, the tuning, its trials and the final run recorded under it
        List<PrivacyLedger.Entry> entries = ledger.entries();
        assertEquals(1, entries.stream().filter(PrivacyLedger.Entry::charged).count());
        assertEquals(r.event(), entries.get(0).event());
        assertEquals(1 + 1 + 2 + 1, entries.size());
        assertTrue(entries.stream().skip(1).allMatch(e -> e.coveredBy() == 1L));

        // compute: expected gradients q * size * T per run
        SubsampledTuningResult.Compute c = r.compute();
        assertEquals(2 * 0.1 * r.tuneTrainSize() * 30, c.tuningGradients(), 1e-6);
        assertEquals(0.1 * r.finalSetSize() * 30, c.finalGradients(), 1e-6);
        assertEquals(2 * 0.1 * template.train().size() * 30, c.baselineGradients(), 1e-6);
        assertTrue(c.tuningSeconds() > 0 && c.finalSeconds() > 0);
        ledger.close();
    }

    /**
     * Packed shards of the same pixels tune as memory does: the validation split, X₁ and X \\ X₁ are index sets of the
     * shards, each trial and the final run read their batches from them, and the result is the same bit for bit.
     */
    @Test
    void shardsTuneBitIdenticallyToMemory(@TempDir Path dir) {
        org.dpdl4j.datasets.PackedShards.pack(DATA, dir.resolve("shards"), 300);
        SubsampledTuningResult memory = tuner(SubsampledTuningEvent.Variant.DISJOINT, false).tune(LR, builder().build(), null,
                TuningListener.NONE);
        try (var shards = org.dpdl4j.datasets.PackedShards.open(dir.resolve("shards"))) {
            DpSgdMechanism template = builder(shards).build();
            assertTrue(!(template.train() instanceof LabeledData) && !(template.validation() instanceof LabeledData),
                    "the splits are index sets of the shards, not copies in memory");
            SubsampledTuningResult fromShards = tuner(SubsampledTuningEvent.Variant.DISJOINT, false).tune(LR, template, null,
                    TuningListener.NONE);
            assertEquals(memory.tuneSetSize(), fromShards.tuneSetSize());
            assertEquals(memory.finalSetSize(), fromShards.finalSetSize());
            assertEquals(memory.tuning().trials().stream().map(TrialResult::score).toList(),
                    fromShards.tuning().trials().stream().map(TrialResult::score).toList(), "the same noisy scores");
            assertEquals(memory.transferred(), fromShards.transferred());
            assertEquals(((org.deeplearning4j.nn.multilayer.MultiLayerNetwork) memory.model()).params(),
                    ((org.deeplearning4j.nn.multilayer.MultiLayerNetwork) fromShards.model()).params(), "the same final model, bit for bit");
            assertEquals(memory.event(), fromShards.event());
        }
    }

    @Test
    void variant2TrainsOnEverythingAndCanWarmStart() {
        SubsampledTuningResult r = tuner(SubsampledTuningEvent.Variant.FULL, true).tune(LR, builder().build(), null, TuningListener.NONE);
        assertEquals(2000, r.finalSetSize());
        assertEquals(r.tuned().number("lr") / (0.2 * 0.8), r.transferred().number("lr"), 1e-12);
        assertTrue(r.notes().stream().anyMatch(n -> n.contains("warm-started")), r.notes().toString());
        assertTrue(DpSgdTrainer.accuracy(r.model(), DpSgdMechanismTest.data(500, 99)) > 0.9);
    }

    @Test
    void refusesADataSizeDependentSamplingRate() {
        DpSgdMechanism byBatch = DpSgdMechanism.builder(DATA).noiseMultiplier(1).expectedBatchSize(50).validation(0.2, 3).build();
        var e = assertThrows(IllegalArgumentException.class,
                () -> tuner(SubsampledTuningEvent.Variant.DISJOINT, false).event(LR, byBatch));
        assertTrue(e.getMessage().contains("sampling_rate"), e.getMessage());
        HyperparameterSpace batches = HyperparameterSpace.of(HyperparameterSpace.parseAxis("batch_size=cat:20,40"));
        assertThrows(IllegalArgumentException.class, () -> tuner(SubsampledTuningEvent.Variant.DISJOINT, false)
                .event(batches, builder().build()));
        assertThrows(IllegalArgumentException.class, () -> new SubsampledTuner(
                new RandomSearchTuner(RepetitionDistribution.poisson(2), 1, 1, false), 1.0, SubsampledTuningEvent.Variant.FULL,
                Extrapolation.NONE, false, 1, false));
    }

    /**
     * Section 4.1 and Lemma 9: with (q, epochs) on a grid and σ calibrated per point to a per-candidate
     * ε, each candidate meets the target, and the charged curves are the pointwise maxima.
     */
    @Test
    void privacyAffectingGridIsChargedThePointwiseMax() {
        DpSgdMechanism template = builder().perCandidateEpsilon(2.0).scoring(DpSgdMechanism.Scoring.PUBLIC_HOLDOUT, 0).build();
        HyperparameterSpace grid = HyperparameterSpace.of(HyperparameterSpace.parseAxis("sampling_rate=cat:0.05,0.2"),
                HyperparameterSpace.parseAxis("epochs=cat:2,6"), HyperparameterSpace.parseAxis("lr=cat:0.1"));
        RdpAccountant acc = RdpAccountant.standard();
        for (Candidate c : grid.candidates()) {
            DpSgdConfig cfg = template.config(c, 0);
            double eps = acc.epsilon(template.trainingEvent(c), 1e-5);
            assertTrue(eps <= 2.0, c + " " + eps);
            double below = acc.epsilon(NoiseCalibration.dpSgd(cfg.samplingRate(), cfg.noiseMultiplier() - 1e-4, cfg.steps()), 1e-5);
            assertTrue(below > 2.0, "sigma is the smallest for " + c);
        }
        SubsampledTuningEvent e = tuner(SubsampledTuningEvent.Variant.DISJOINT, false).event(grid, template);
        assertTrue(e.finalRun() instanceof PointwiseMaxEvent m && m.events().size() == 4, e.finalRun().toString());
        double[] orders = acc.orders();
        double[] max = RdpAccountant.rdp(e.finalRun(), orders);
        for (Candidate c : grid.candidates()) {
            double[] one = RdpAccountant.rdp(template.trainingEvent(c), orders);
            for (int i = 0; i < orders.length; i++) {
                assertTrue(max[i] >= one[i]);
            }
        }
        assertTrue(DoubleStreamMax.anyEqual(max, grid.candidates().stream().map(c -> RdpAccountant.rdp(template.trainingEvent(c), orders)).toList()));
    }

    /**
     * Section 3.2's identity, by Monte Carlo on the configurations the extrapolation produces: the
     * noise the model receives over T steps, Σ_j η·Z_j/(q·size) with Z_j ~ N(0, σ²C²), has the same
     * variance in the tuned run (m examples, η) and the transferred run (n examples, η·n/m).
     */
    @Test
    void extrapolationKeepsTheNoiseDistribution() {
        DpSgdMechanism template = builder().build();
        Candidate tuned = template.explicit(new Candidate(Map.of("lr", 0.3)));
        double m = 300;
        double n = 2700;
        Candidate moved = Extrapolation.LINEAR_LEARNING_RATE.transfer(tuned, m, n);
        DpSgdConfig a = template.config(tuned, 0);
        DpSgdConfig b = template.config(moved, 0);
        assertEquals(a.samplingRate(), b.samplingRate());
        assertEquals(a.steps(), b.steps());
        assertEquals(a.noiseMultiplier(), b.noiseMultiplier());
        double va = noiseVariance(tuned.number("lr"), a, m, 1);
        double vb = noiseVariance(moved.number("lr"), b, n, 2);
        double exact = a.steps() * Math.pow(tuned.number("lr") * a.noiseMultiplier() * a.clipNorm() / (a.samplingRate() * m), 2);
        assertEquals(exact, va, 0.05 * exact);
        assertEquals(exact, vb, 0.05 * exact);
        assertEquals(1.0, va / vb, 0.07);
        // Adam keeps the learning rate
        Candidate adam = template.explicit(new Candidate(Map.of("lr", 0.01, "optimizer", "adam")));
        assertEquals(0.01, Extrapolation.LINEAR_LEARNING_RATE.transfer(adam, m, n).number("lr"));
    }

    private static double noiseVariance(double lr, DpSgdConfig cfg, double size, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int reps = 4000;
        double sum = 0;
        double sumSq = 0;
        for (int i = 0; i < reps; i++) {
            double total = 0;
            for (long t = 0; t < cfg.steps(); t++) {
                total += lr * r.nextGaussian() * cfg.noiseMultiplier() * cfg.clipNorm() / (cfg.samplingRate() * size);
            }
            sum += total;
            sumSq += total * total;
        }
        double mean = sum / reps;
        return sumSq / reps - mean * mean;
    }

    private static final class DoubleStreamMax {
        /** True if every entry of {@code max} equals the same entry of at least one curve. */
        static boolean anyEqual(double[] max, List<double[]> curves) {
            for (int i = 0; i < max.length; i++) {
                int j = i;
                if (curves.stream().noneMatch(c -> c[j] == max[j])) {
                    return false;
                }
            }
            return true;
        }
    }
}
