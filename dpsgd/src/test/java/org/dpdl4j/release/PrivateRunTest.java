package org.dpdl4j.release;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.Mnist;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.PrivateTraining;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.learning.config.Sgd;

/**
 * The run's lifecycle from Java: a run started with a ledger and checkpoints is killed (a child JVM halted as kill -9
 * would, right after a checkpoint), resumed through {@link PrivateTraining#resume}, and leaves exactly one charge and one
 * release on its ledger, the planned T steps and a release whose event is the one charged; a second resume and a resume
 * on other data are refused.
 */
class PrivateRunTest {
    private static LabeledData data() throws Exception {
        return Mnist.load(DatasetCache.root().resolve("mnist")).train().randomSubset(2000, 3);
    }

    /** Fewer examples for the ScatterNet run, whose scattering transform is slower than an MLP. */
    private static LabeledData smallData() throws Exception {
        return data().randomSubset(400, 4);
    }

    private static MultiLayerNetwork net() {
        return Models.mlp(ModelOptions.mnist().withSeed(2).withUpdater(new Sgd(0.5)));
    }

    /** A ScatterNet (linear) without GroupNorm, whose fixed feature statistics (mean 0, variance 1) a release replaces. */
    private static MultiLayerNetwork scatterNet() {
        double[] ones = new double[81];
        java.util.Arrays.fill(ones, 1);
        return Models.scatterNetLinear(ModelOptions.mnist().withSeed(2).withUpdater(new Sgd(0.5))
                .withFeatures(new org.dpdl4j.models.FeatureStatistics(new double[81], ones)));
    }

    /** Shifts of up to 1 pixel: an augmentation of the test's own, not a data set's (mnist's shifts up to 2). */
    private static final org.dpdl4j.datasets.ImageAugmentation SHIFTS = new org.dpdl4j.datasets.ImageAugmentation(1, 28, 28, 1, false);

    /**
     * The child: starts the run (with a third argument {@code data-normalisation}, a ScatterNet with data normalisation
     * σ_norm = 8; with {@code augmult}, k = 2 copies by {@link #SHIFTS}); with the crash point set it halts there.
     */
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        boolean normalise = args.length > 2 && args[2].equals("data-normalisation");
        try (PrivacyLedger ledger = PrivacyLedger.open(Path.of(args[1]), "mnist-2000", 10, 1e-5)) {
            PrivateTraining p = PrivateTraining.of(normalise ? scatterNet() : net(), normalise ? smallData() : data()).targetEpsilon(3)
                    .delta(1e-5).epochs(1).expectedBatchSize(normalise ? 40 : 100).output(out).ledger(ledger).checkpointEvery(5);
            if (normalise) {
                p.dataNormalisation(8).accountant("rdp"); // PLD's calibration of the composition takes ten times longer
            }
            if (args.length > 2 && args[2].equals("augmult")) {
                p.augmult(SHIFTS, 2).seed(11);
            }
            p.train();
        }
    }

    /** Runs {@link #main} in a child JVM halted at {@code crashPoint}; asserts it was halted (exit 137). */
    private static void runChildUntil(String crashPoint, Path tmp, String... args) throws Exception {
        Path log = tmp.resolve("child.log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new java.util.ArrayList<>(List.of(java, "-Xmx1g", "-D" + CrashPoint.PROPERTY + "=" + crashPoint, "-cp",
                System.getProperty("java.class.path"), PrivateRunTest.class.getName()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            assertTrue(p.waitFor(300, TimeUnit.SECONDS), "the child ends");
        } finally {
            p.destroyForcibly(); // whatever happens, the child does not outlive the test
        }
        assertEquals(137, p.exitValue(), Files.readString(log));
    }

    @Test
    void aKilledRunResumesThroughTheApiWithOneChargeAndOneRelease(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("run");
        Path ledgerFile = tmp.resolve("ledger.jsonl");
        runChildUntil("train:checkpoint:10", tmp, out.toString(), ledgerFile.toString());
        assertTrue(Files.exists(out.resolve(PrivateRun.CHECKPOINT).resolve("state.json")), "the checkpoint is on disk");
        assertFalse(Files.exists(out.resolve(PrivateModel.MODEL_FILE)), "nothing released yet");

        LabeledData data = data();
        LabeledData other = Mnist.load(DatasetCache.root().resolve("mnist")).train().randomSubset(2000, 4);
        var changed = assertThrows(IllegalArgumentException.class, () -> PrivateTraining.resume(out, other).train());
        assertTrue(changed.getMessage().contains("it changed, and the charge was for the data as it was"), changed.getMessage());

        // a named data set is told apart by its name: another name on the same examples is refused
        var renamed = assertThrows(IllegalArgumentException.class, () -> PrivateTraining.resume(out, data).provenance(
                new PrivateTraining.Provenance("fashion-mnist", org.dpdl4j.datasets.Sha256.of(data), null, "mlp", null, null)).train());
        assertTrue(renamed.getMessage().contains("planned and charged on mnist-2000, not on fashion-mnist"), renamed.getMessage());
        var replanned = assertThrows(IllegalArgumentException.class, () -> PrivateTraining.resume(out, data).epochs(2).train());
        assertTrue(replanned.getMessage().contains("epochs cannot change on resume"), replanned.getMessage());
        PrivateModel m = PrivateTraining.resume(out, data).workers(2).train();
        long steps = DpSgdConfig.stepsForEpochs(1, 100.0 / 2000);
        var sigma = ((Number) m.sidecar().configuration().get("noise_multiplier")).doubleValue();
        assertEquals(NoiseCalibration.dpSgd(100.0 / 2000, sigma, steps), m.event(), "the whole planned run's event");
        assertEquals(10L, ((Number) m.sidecar().configuration().get("resumed_from_step")).longValue());
        assertTrue(m.guarantee().epsilon() <= 3, "at most the target: " + m.guarantee().epsilon());
        assertTrue(Files.exists(out.resolve(PrivateModel.MODEL_FILE)) && Files.exists(out.resolve(PrivateModel.SIDECAR_FILE)));
        assertFalse(Files.exists(out.resolve(PrivateRun.CHECKPOINT)), "the checkpoint is gone once the release is out");
        PrivateModel loaded = PrivateModel.load(out, LoadPolicy.privateOnly());
        assertEquals(m.event(), loaded.event());
        assertEquals(((MultiLayerNetwork) m.network()).params(), ((MultiLayerNetwork) loaded.network()).params());
        try (PrivacyLedger l = PrivacyLedger.inspect(ledgerFile)) {
            List<PrivacyLedger.Entry> charges = l.entries().stream().filter(PrivacyLedger.Entry::charged).toList();
            assertEquals(1, charges.size(), "charged once: " + l.entries());
            assertEquals(m.event(), charges.get(0).event(), "the release is what was charged");
            assertEquals(1, l.entries().stream().filter(e -> e.kind() == PrivacyLedger.Kind.RELEASE).count());
        }
        var again = assertThrows(IllegalArgumentException.class, () -> PrivateTraining.resume(out, data).train());
        assertTrue(again.getMessage().contains("has finished"), again.getMessage());

        // without output() nothing is written; a ledger without output() is refused by name
        var noOutput = assertThrows(IllegalArgumentException.class, () -> {
            try (PrivacyLedger l = PrivacyLedger.open(tmp.resolve("l2.jsonl"), "x", 10, 1e-5)) {
                PrivateTraining.of(net(), data).targetEpsilon(3).epochs(1).expectedBatchSize(100).ledger(l).train();
            }
        });
        assertTrue(noOutput.getMessage().contains("output(dir)"), noOutput.getMessage());
    }

    /**
     * Data normalisation across a kill: the child is halted right after the charge, whose step-0 checkpoint holds no
     * statistics yet; the resume through the API releases them, and the ledger's one charge, the one release and the
     * sidecar's event are the statistics' two Gaussian mechanisms (σ_norm = 8) composed with the whole run, rebuilt here
     * from their definitions.
     */
    @Test
    void aRunWithDataNormalisationKilledAfterItsChargeReleasesTheStatisticsOnResume(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("run");
        Path ledgerFile = tmp.resolve("ledger.jsonl");
        runChildUntil("train:after-charge", tmp, out.toString(), ledgerFile.toString(), "data-normalisation");
        assertFalse(Files.exists(out.resolve(PrivateModel.MODEL_FILE)), "nothing released yet");
        assertEquals(8.0, new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.resolve(PrivateRun.CHECKPOINT)
                .resolve("state.json").toFile()).get("data_normalisation").asDouble(), "the plan holds the setting");

        PrivateModel m = PrivateTraining.resume(out, smallData()).train();
        double sigma = ((Number) m.sidecar().configuration().get("noise_multiplier")).doubleValue();
        long steps = DpSgdConfig.stepsForEpochs(1, 40.0 / 400);
        var statistics = org.dpdl4j.accounting.ComposedEvent.of(new org.dpdl4j.accounting.GaussianEvent(8),
                new org.dpdl4j.accounting.GaussianEvent(8));
        assertEquals(org.dpdl4j.accounting.ComposedEvent.of(statistics, NoiseCalibration.dpSgd(40.0 / 400, sigma, steps)), m.event());
        assertTrue(m.guarantee().epsilon() <= 3 && m.guarantee().epsilon() > 2.99, "the whole meets the target: " + m.guarantee().epsilon());
        double[] mean = org.dpdl4j.dpsgd.PrivateNormalisation.scatteringLayer(m.network()).getFeatureMean();
        assertTrue(mean != null && java.util.Arrays.stream(mean).anyMatch(v -> v != 0), "statistics released on resume");
        PrivateModel loaded = PrivateModel.load(out, LoadPolicy.privateOnly());
        org.junit.jupiter.api.Assertions.assertArrayEquals(mean,
                org.dpdl4j.dpsgd.PrivateNormalisation.scatteringLayer(loaded.network()).getFeatureMean(), "the released model holds them");
        try (PrivacyLedger l = PrivacyLedger.inspect(ledgerFile)) {
            List<PrivacyLedger.Entry> charges = l.entries().stream().filter(PrivacyLedger.Entry::charged).toList();
            assertEquals(1, charges.size(), "charged once: " + l.entries());
            assertEquals(m.event(), charges.get(0).event(), "the release is what was charged, statistics included");
            assertEquals(1, l.entries().stream().filter(e -> e.kind() == PrivacyLedger.Kind.RELEASE).count());
        }
    }

    /**
     * Augmentation multiplicity across a kill: the plan holds the run's own augmentation, and the resume through the API
     * (which could not rebuild it before) makes its copies with it. Checked against an independent continuation: the
     * checkpoint's network trained on by {@link org.dpdl4j.dpsgd.DpSgdTrainer#resume} with
     * {@code ClippedSums.augmented(SHIFTS, 2)} and the same seed has, bit for bit, the released parameters; with mnist's
     * augmentation it has others.
     */
    @Test
    void aRunWithAugmultKilledAfterACheckpointResumesWithThePlansAugmentation(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("run");
        Path ledgerFile = tmp.resolve("ledger.jsonl");
        runChildUntil("train:checkpoint:10", tmp, out.toString(), ledgerFile.toString(), "augmult");
        Path copy = tmp.resolve("copy");
        org.apache.commons.io.FileUtils.copyDirectory(out.toFile(), copy.toFile()); // the checkpoint as it was, for the check
        java.util.Map<String, Object> plan = PrivateRun.plan(out, "resume");
        assertEquals(java.util.Map.of("channels", 1, "height", 28, "width", 28, "max_shift", 1, "flips", false),
                plan.get("augmentation"), "the plan holds the run's augmentation");

        LabeledData data = data();
        PrivateModel m = PrivateTraining.resume(out, data).seed(5).train();
        assertEquals(2, m.configuration().get("augmult"));
        long steps = DpSgdConfig.stepsForEpochs(1, 100.0 / 2000);
        double sigma = ((Number) m.configuration().get("noise_multiplier")).doubleValue();
        assertEquals(NoiseCalibration.dpSgd(100.0 / 2000, sigma, steps), m.event(), "the whole planned run's event");

        org.dpdl4j.dpsgd.DpSgdSettings planned = org.dpdl4j.dpsgd.DpSgdSettings.fromMap(plan);
        DpSgdConfig config = org.dpdl4j.dpsgd.DpSgdSettings.builder().settings(planned).seed(5).build()
                .config(planned.samplingRate(), planned.noiseMultiplier(), steps, 1);
        java.util.function.Function<org.dpdl4j.datasets.ImageAugmentation, org.nd4j.linalg.api.ndarray.INDArray> continued = a -> {
            try {
                var net = org.dpdl4j.dpsgd.Networks.restore(copy.resolve(PrivateRun.CHECKPOINT).resolve((String) plan.get("model_file"))
                        .toFile(), true);
                new org.dpdl4j.dpsgd.DpSgdTrainer(org.dpdl4j.accounting.Accountants.byName((String) plan.get("accountant")))
                        .withClippedSums(org.dpdl4j.dpsgd.ClippedSums.augmented(a, 2))
                        .resume(new org.dpdl4j.dpsgd.Checkpoint(net, config, 10), data, 0, null);
                return ((MultiLayerNetwork) net).params();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        };
        assertEquals(continued.apply(SHIFTS), ((MultiLayerNetwork) m.network()).params(), "the copies were the plan's");
        assertFalse(continued.apply(org.dpdl4j.datasets.ImageAugmentation.forDataset("mnist")).equals(
                ((MultiLayerNetwork) m.network()).params()), "another augmentation trains another model");
        try (PrivacyLedger l = PrivacyLedger.inspect(ledgerFile)) {
            assertEquals(1, l.entries().stream().filter(PrivacyLedger.Entry::charged).count(), "charged once: " + l.entries());
            assertEquals(1, l.entries().stream().filter(e -> e.kind() == PrivacyLedger.Kind.RELEASE).count());
        }

        // a plan written before the plan held the augmentation (rewritten here with both hashes, without the ledger,
        // whose charge is released): from train (a model of Models, mnist) it gets mnist's augmentation, as
        // train --augmult used; from Java (a network's class name) it is refused, naming what is missing
        Path older = olderPlan(copy, tmp.resolve("older"), "mlp");
        PrivateModel fromTrain = PrivateTraining.resume(older, data).seed(5).train();
        assertEquals(continued.apply(org.dpdl4j.datasets.ImageAugmentation.forDataset("mnist")),
                ((MultiLayerNetwork) fromTrain.network()).params(), "mnist's copies, as train --augmult made them");
        Path olderJava = olderPlan(copy, tmp.resolve("older-java"), "MultiLayerNetwork");
        var refused = assertThrows(IllegalArgumentException.class, () -> PrivateTraining.resume(olderJava, data).train());
        assertTrue(refused.getMessage().contains("does not hold the augmentation"), refused.getMessage());
    }

    /** A copy of the run in {@code from} whose plan lacks the augmentation, names {@code model} and data set mnist, and has no ledger. */
    private static Path olderPlan(Path from, Path to, String model) throws Exception {
        org.apache.commons.io.FileUtils.copyDirectory(from.toFile(), to.toFile());
        Path file = to.resolve(PrivateRun.CHECKPOINT).resolve("state.json");
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> state = json.readValue(file.toFile(), java.util.LinkedHashMap.class);
        state.remove("augmentation");
        state.put("ledger", null);
        state.put("ledger_charge", null);
        state.put("model", model);
        state.put("dataset", "mnist");
        state.put("plan_sha256", CheckpointState.planHash(state));
        state.put(CheckpointState.STATE_HASH, CheckpointState.stateHash(state));
        json.writeValue(file.toFile(), state);
        return to;
    }

    /** A run that neither checkpoints nor is charged writes nothing and has done 0 steps (it used to throw). */
    /**
     * A full disk when the charge is written (issue 69, item 3): the charge line reached the ledger, its head file did
     * not, and the run failed and removed its plan, so that the charge was spent for nothing. Now an entry on disk is an
     * entry: the head file lags (and says so), the run goes on and releases under its one charge, and once the space is
     * back the next write brings the head file up; with no head file at all, the ledger says a cut-off end would go unseen.
     */
    @Test
    void aHeadFileThatCannotBeWrittenLosesNoCharge(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("run");
        Path ledgerFile = tmp.resolve("ledger.jsonl");
        PrivateModel m;
        try (PrivacyLedger ledger = PrivacyLedger.open(ledgerFile, "mnist-2000", 10, 1e-5)) {
            System.setProperty(CrashPoint.DISK_FULL_PROPERTY, "ledger.jsonl.head");
            try {
                m = PrivateTraining.of(net(), data()).noiseMultiplier(1).delta(1e-5).epochs(0.25).expectedBatchSize(100).output(out)
                        .ledger(ledger).checkpointEvery(2).train();
                assertTrue(ledger.headFileStatus().contains("lags behind the last entry") && ledger.headFileStatus()
                        .contains("no space left on device"), ledger.headFileStatus());
            } finally {
                System.clearProperty(CrashPoint.DISK_FULL_PROPERTY);
            }
        }
        assertTrue(Files.exists(out.resolve(PrivateModel.MODEL_FILE)), "released");
        try (PrivacyLedger l = PrivacyLedger.open(ledgerFile, "mnist-2000")) { // the space is back: the head file comes up
            assertEquals(1, l.entries().stream().filter(PrivacyLedger.Entry::charged).count(), l.entries().toString());
            assertEquals(1, l.entries().stream().filter(e -> e.kind() == PrivacyLedger.Kind.RELEASE).count());
            assertEquals(m.event(), l.entries().stream().filter(PrivacyLedger.Entry::charged).findFirst().orElseThrow().event());
            assertTrue(l.headFileStatus().contains("names the last entry"), l.headFileStatus());
        }
        Files.delete(tmp.resolve("ledger.jsonl.head"));
        try (PrivacyLedger l = PrivacyLedger.inspect(ledgerFile)) {
            assertTrue(l.headFileMissing() && l.headFileStatus().contains("cannot be detected"), l.headFileStatus());
        }
    }

    @Test
    void aRunWithoutCheckpointsOrLedgerWritesNothingAndStartsAtStepZero(@TempDir Path tmp) throws Exception {
        PrivateRun run = PrivateRun.start(tmp.resolve("run"), new java.util.HashMap<>(), net(), null,
                new org.dpdl4j.accounting.GaussianEvent(1), null, "x", 0);
        assertEquals(0, run.stepsDone());
        assertFalse(Files.exists(tmp.resolve("run")), "nothing is written before the release");
    }
    /**
     * A tuning's resume state is read back only when whole: no state, a seed that is not an integer in a string, a run
     * that is not a string, a charge that is not a number and a ledger that is not a path are each refused, naming the
     * field; a whole state is returned as written.
     */
    @Test
    void aTuningsResumeStateIsReadOnlyWhenWhole(@TempDir Path tmp) throws Exception {
        var none = assertThrows(IllegalArgumentException.class, () -> PrivateRun.tuningState(tmp, "resume x"));
        assertTrue(none.getMessage().startsWith("resume x: no tuning to resume"), none.getMessage());
        Path file = tmp.resolve(PrivateRun.TUNING_STATE);
        Files.createDirectories(file.getParent());
        String whole = "{\"tuner_seed\": \"-42\", \"run\": \"r1\", \"ledger_charge\": 3, \"ledger\": \"/tmp/l.jsonl\"}";
        Files.writeString(file, whole);
        var state = PrivateRun.tuningState(tmp, "resume x");
        assertEquals(List.of("tuner_seed", "run", "ledger_charge", "ledger"), List.copyOf(state.keySet()));
        assertEquals("-42", state.get("tuner_seed"));
        String[][] damaged = {{"\"-42\"", "\"4x2\"", "'tuner_seed'"}, {"\"-42\"", "42", "'tuner_seed'"},
                {"\"r1\"", "7", "'run'"}, {"3", "\"3\"", "'ledger_charge'"}, {"\"/tmp/l.jsonl\"", "[1]", "'ledger'"}};
        for (String[] d : damaged) {
            Files.writeString(file, whole.replace(d[0], d[1]));
            var e = assertThrows(IllegalArgumentException.class, () -> PrivateRun.tuningState(tmp, "resume x"), d[1]);
            assertTrue(e.getMessage().startsWith("resume x: " + file + ": field " + d[2]), e.getMessage());
        }
        Files.writeString(file, "{\"tuner_seed\": ");
        var cut = assertThrows(IllegalArgumentException.class, () -> PrivateRun.tuningState(tmp, "resume x"));
        assertTrue(cut.getMessage().contains("is not a complete JSON object"), cut.getMessage());
    }
}
