package org.dpdl4j.cli;

import org.dpdl4j.release.CheckpointState;
import static org.dpdl4j.cli.CliRunner.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.dpdl4j.benchmarks.Reporting;
import org.dpdl4j.cli.CliRunner.Run;
import org.dpdl4j.release.LoadPolicy;
import org.dpdl4j.release.PrivacyLedger;
import org.dpdl4j.release.PrivateModel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run's lifecycle under kill -9 and copies (issue 52): a charge releases at most once, no moment between the charge
 * and the release loses it, a checkpoint cannot be made to run more than was charged, and a data set counts each file
 * once. The kills are {@link org.dpdl4j.release.CrashPoint}s in a child JVM (a halt at a named moment, no sleeps); the
 * data is a folder of 80 tiny images, so that each child starts and trains in seconds.
 */
class RunLifecycleTest {
    @TempDir
    static Path shared;
    static Path folder;

    @TempDir
    Path tmp;

    @BeforeAll
    static void images() throws Exception {
        folder = shared.resolve("images");
        for (int c = 0; c < 2; c++) {
            for (int i = 0; i < 40; i++) {
                BufferedImage img = new BufferedImage(8, 8, BufferedImage.TYPE_BYTE_GRAY);
                for (int x = 0; x < 8; x++) {
                    for (int y = 0; y < 8; y++) {
                        img.getRaster().setSample(x, y, 0, (c * 128 + i * 3 + x * y) % 256);
                    }
                }
                Path f = folder.resolve(c == 0 ? "a" : "b").resolve(i + ".png");
                Files.createDirectories(f.getParent());
                ImageIO.write(img, "png", f.toFile());
            }
        }
    }

    /**
     * T of the tiny folder's run: ⌈4 epochs / q⌉ with q = 8/n, n its training images (each image held out with
     * probability 0.2 by a hash of its bytes: 64 expected, 66 here).
     */
    private static long steps() throws java.io.IOException {
        int n = org.dpdl4j.datasets.ImageFolder.load(folder, 8, 8, 1, 0).train().size();
        return org.dpdl4j.dpsgd.DpSgdConfig.stepsForEpochs(4, 8.0 / n);
    }

    /** train on the tiny folder: B = 8, 4 epochs ({@link #steps()}), a checkpoint every 4. */
    private static String[] train(Path out, Path ledger) {
        return new String[]{"train", "--dataset", "folder:" + folder, "--image-size", "8x8x1", "--model", "mlp", "--epochs", "4",
                "--batch-size", "8", "--noise-multiplier", "1", "--checkpoint-every", "4", "--ledger", ledger.toString(),
                "--output", out.toString(), "--no-progress"};
    }

    private static List<PrivacyLedger.Entry> entries(Path ledger, PrivacyLedger.Kind kind) throws Exception {
        try (PrivacyLedger l = PrivacyLedger.inspect(ledger)) {
            return l.entries().stream().filter(e -> e.kind() == kind).toList();
        }
    }

    /**
     * The first high item: a run killed after a checkpoint, its folder copied (a backup restored), both copies
     * resumed. The first releases; the second is refused before it trains (its charge has released), naming the charge
     * and the first release's model hash, and writes nothing. Edits of the copy that rehash the checkpoint cannot change
     * what runs under the charge (another data set, steps rewound), and options a resume cannot honour are refused by name.
     */
    @Test
    void aCopiedCheckpointReleasesOnce() throws Exception {
        Path out = tmp.resolve("o");
        Path copy = tmp.resolve("o2");
        Path ledger = tmp.resolve("l.jsonl");
        assertEquals(137, CliRunner.crashAt(tmp.resolve("train.log"), "train:checkpoint:8", train(out, ledger)),
                Files.readString(tmp.resolve("train.log")));
        copyTree(out, copy);

        Run flags = run("train", "--resume", out.toString(), "--noise-multiplier", "2", "--epochs", "9", "--no-progress");
        assertEquals(2, flags.status(), flags.err());
        assertTrue(flags.err().contains("--noise-multiplier") && flags.err().contains("--epochs") && flags.err().contains("drop them"),
                flags.err());
        rehashedEditsAreRefused(copy, tmp.resolve("other-images"));

        Run first = run("train", "--resume", out.toString(), "--no-progress", "--json");
        assertEquals(0, first.status(), first.err() + first.out());
        assertEquals(steps(), first.lastJson().get("steps").asLong());
        PrivateModel.verifySidecar(out, LoadPolicy.privateOnly());
        assertTrue(!Files.exists(out.resolve("operator")), "nothing of the run is left but its release");
        List<PrivacyLedger.Entry> releases = entries(ledger, PrivacyLedger.Kind.RELEASE);
        assertEquals(1, releases.size());
        String modelSha = PrivateModel.verifySidecar(out, LoadPolicy.privateOnly()).modelSha256();
        assertTrue(releases.get(0).label().contains(modelSha), releases.get(0).label());

        Run second = run("train", "--resume", copy.toString(), "--no-progress");
        assertEquals(3, second.status(), second.err() + second.out());
        assertTrue(second.err().contains("already released") && second.err().contains("entry 1") && second.err().contains(modelSha)
                && second.err().contains("new run"), second.err());
        assertTrue(!Files.exists(copy.resolve("model.zip")) && !Files.exists(copy.resolve("privacy.json")), "the copy released nothing");
        assertEquals(1, entries(ledger, PrivacyLedger.Kind.CHARGE).size());
        assertEquals(1, entries(ledger, PrivacyLedger.Kind.RELEASE).size());
        Run help = run("train", "--help");
        assertTrue(help.out().replaceAll("\\s+", " ").contains("Without a ledger nothing records it, and each copy of a checkpoint can release"),
                help.out());
    }

    /**
     * Edits of a checkpoint with every hash recomputed (anyone can): the plan must still be the one the ledger charged, and
     * the state one the ledger recorded (the 7a: another data set; 7b: steps rewound with their event).
     */
    private void rehashedEditsAreRefused(Path run, Path otherImages) throws Exception {
        copyTree(folder, otherImages);
        Map<String, java.util.function.Consumer<Map<String, Object>>> edits = new LinkedHashMap<>();
        edits.put("is for folder:" + folder, m -> m.put("dataset", "folder:" + otherImages)); // the same images, another name
        edits.put("is not what ledger", m -> m.put("data_sha256", "0".repeat(64))); // other images under the same name
        edits.put("is not a state that ledger", m -> {
            m.put("steps_done", 0);
            m.put("event_so_far", org.dpdl4j.dpsgd.DpSgdTrainer.event((Double) m.get("sampling_rate"),
                    ((Number) m.get("noise_multiplier")).doubleValue(), 0).toMap());
        });
        int i = 0;
        for (var edit : edits.entrySet()) {
            Path copy = tmp.resolve("edited-" + i++);
            copyTree(run, copy);
            Path stateFile = copy.resolve("operator").resolve("checkpoint").resolve("state.json");
            @SuppressWarnings("unchecked")
            Map<String, Object> m = Reporting.JSON.readValue(stateFile.toFile(), LinkedHashMap.class);
            edit.getValue().accept(m);
            m.put("plan_sha256", CheckpointState.planHash(m));
            m.put(CheckpointState.STATE_HASH, CheckpointState.stateHash(m));
            Reporting.JSON.writeValue(stateFile.toFile(), m);
            Run r = run("train", "--resume", copy.toString(), "--no-progress");
            assertEquals(2, r.status(), edit.getKey() + ": " + r.err() + r.out());
            assertTrue(r.err().contains("refused") && r.err().contains(edit.getKey()), edit.getKey() + ": " + r.err());
            assertTrue(!Files.exists(copy.resolve("model.zip")));
        }
    }

    /**
     * Killed at every moment from the plan to the published release (items 3 and 12): before the charge (the plan is on
     * disk, nothing charged: resume charges it), right after the charge, after the ledger recorded the release, and
     * between model.zip and privacy.json. Each time --resume ends with one charge, one release and a verified sidecar.
     */
    @Test
    void noMomentBetweenPlanAndReleaseLosesTheCharge() throws Exception {
        for (String point : List.of("train:before-charge", "train:after-charge", "release:recorded", "release:published:model.zip")) {
            Path out = tmp.resolve(point.replace(':', '-'));
            Path ledger = tmp.resolve(point.replace(':', '-') + ".jsonl");
            Path log = tmp.resolve(point.replace(':', '-') + ".log");
            assertEquals(137, CliRunner.crashAt(log, point, train(out, ledger)), point + ": " + Files.readString(log));
            assertTrue(Files.exists(out.resolve(TrainCommand.CHECKPOINT).resolve("state.json")), point + ": the plan is on disk");
            assertEquals(point.equals("train:before-charge") ? 0 : 1, entries(ledger, PrivacyLedger.Kind.CHARGE).size(), point);
            assertTrue(!Files.exists(out.resolve("privacy.json")), point);
            Run r = run("train", "--resume", out.toString(), "--no-progress");
            assertEquals(0, r.status(), point + ": " + r.err() + r.out());
            assertEquals(steps(), PrivateModel.verifySidecar(out, LoadPolicy.privateOnly()).configuration().get("steps") instanceof Number n
                    ? n.longValue() : -1, point);
            assertEquals(1, entries(ledger, PrivacyLedger.Kind.CHARGE).size(), point + ": charged once");
            assertEquals(1, entries(ledger, PrivacyLedger.Kind.RELEASE).size(), point + ": released once");
            assertTrue(!Files.exists(out.resolve("operator")), point);
        }
    }

    /**
     * A tuning killed after its trials, before its release (item 4: the resume state went first, and the charge with it),
     * then copied: the original resumes and releases, the copy is refused (item 1 for tunings); killed after the ledger
     * recorded its release, a tuning's resume publishes what was staged.
     */
    @Test
    void aTuningKeepsItsStateUntilItsReleaseIsOutAndReleasesOnce() throws Exception {
        Path ledger = tmp.resolve("tune.jsonl");
        java.util.function.Function<Path, String[]> tune = out -> new String[]{"tune", "random-search", "--dataset", "folder:" + folder,
                "--image-size", "8x8x1", "--model", "mlp", "--epochs", "1", "--batch-size", "8", "--repetitions", "fixed:2",
                "--space", "lr=cat:0.1,0.5", "--noise-multiplier", "1", "--ledger", ledger.toString(), "--output", out.toString(),
                "--no-progress"};
        Path out = tmp.resolve("t");
        assertEquals(137, CliRunner.crashAt(tmp.resolve("t.log"), "tune:before-release", tune.apply(out)), Files.readString(tmp.resolve("t.log")));
        assertTrue(Files.exists(TuningOutput.operatorDirectory(out).resolve("state.json")), "the state outlives the trials");
        Path copy = tmp.resolve("t2");
        copyTree(out, copy);
        Run flags = run("tune", "--resume", out.toString(), "--noise-multiplier", "3", "--ledger-budget", "9");
        assertEquals(2, flags.status(), flags.err());
        assertTrue(flags.err().contains("--noise-multiplier, --ledger-budget are not taken"), flags.err());
        Run resumed = run("tune", "--resume", out.toString(), "--json");
        assertEquals(0, resumed.status(), resumed.err() + resumed.out());
        PrivateModel.verifySidecar(out, LoadPolicy.privateOnly());
        assertTrue(Files.exists(out.resolve("tuning.json")) && !Files.exists(TuningOutput.operatorDirectory(out).resolve("state.json")));
        Run again = run("tune", "--resume", copy.toString());
        assertEquals(3, again.status(), again.err() + again.out());
        assertTrue(again.err().contains("already released"), again.err());
        assertTrue(!Files.exists(copy.resolve("tuning.json")));
        assertEquals(1, entries(ledger, PrivacyLedger.Kind.CHARGE).size());
        assertEquals(1, entries(ledger, PrivacyLedger.Kind.RELEASE).size());

        Path staged = tmp.resolve("t3");
        assertEquals(137, CliRunner.crashAt(tmp.resolve("t3.log"), "release:recorded", tune.apply(staged)), Files.readString(tmp.resolve("t3.log")));
        assertTrue(!Files.exists(staged.resolve("tuning.json")));
        Run finished = run("tune", "--resume", staged.toString());
        assertEquals(0, finished.status(), finished.err() + finished.out());
        assertTrue(finished.out().contains("interrupted before was finished"), finished.out());
        PrivateModel.verifySidecar(staged, LoadPolicy.privateOnly());
        assertEquals(2, entries(ledger, PrivacyLedger.Kind.CHARGE).size());
        assertEquals(2, entries(ledger, PrivacyLedger.Kind.RELEASE).size());

        // the data changed between the charge and the resume: refused, as train refuses it, and nothing is released
        Path changing = tmp.resolve("changing-folder");
        copyTree(folder, changing);
        Path changed = tmp.resolve("t4");
        String[] onChanging = tune.apply(changed);
        onChanging[3] = "folder:" + changing;
        Path changingLedger = tmp.resolve("changing.jsonl"); // a ledger is for one data set
        onChanging[java.util.Arrays.asList(onChanging).indexOf("--ledger") + 1] = changingLedger.toString();
        assertEquals(137, CliRunner.crashAt(tmp.resolve("t4.log"), "tune:before-release", onChanging), Files.readString(tmp.resolve("t4.log")));
        Path image;
        try (var files = Files.walk(changing)) {
            image = files.filter(f -> f.toString().endsWith(".png")).sorted().findFirst().orElseThrow();
        }
        java.awt.image.BufferedImage pixels = javax.imageio.ImageIO.read(image.toFile());
        pixels.setRGB(0, 0, ~pixels.getRGB(0, 0));
        javax.imageio.ImageIO.write(pixels, "png", image.toFile());
        Run refused = run("tune", "--resume", changed.toString());
        assertEquals(2, refused.status(), refused.err() + refused.out());
        assertTrue(refused.err().contains("changed since the tuning was planned") && refused.err().contains("its charge was for the data as "
                + "they were"), refused.err());
        assertTrue(!Files.exists(changed.resolve("tuning.json")));
        assertEquals(1, entries(changingLedger, PrivacyLedger.Kind.CHARGE).size());
        assertEquals(0, entries(changingLedger, PrivacyLedger.Kind.RELEASE).size());
    }

    /**
     * Item 5a: an --output that cannot take a model (here the file-size limit fails the write, as a full disk would) is
     * found before the charge: the error gives the cause, nothing is charged and nothing is left in the output.
     */
    @Test
    void anOutputThatCannotTakeTheModelIsRefusedBeforeTheCharge() throws Exception {
        Path out = tmp.resolve("full");
        Path ledger = tmp.resolve("full.jsonl");
        String javaBinary = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new java.util.ArrayList<>(List.of("bash", "-c", "trap '' XFSZ; ulimit -f 16; exec \"$0\" \"$@\"", javaBinary,
                "-XX:-UsePerfData", "-Xmx1g", "-cp", System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(List.of(train(out, ledger)));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(tmp.resolve("full.log").toFile()).start();
        try {
            assertTrue(p.waitFor(300, java.util.concurrent.TimeUnit.SECONDS));
        } finally {
            p.destroyForcibly();
        }
        String log = Files.readString(tmp.resolve("full.log"));
        assertEquals(2, p.exitValue(), log);
        assertTrue(log.contains("could not write the checkpoint") && log.contains("File too large") && log.contains("nothing was charged"), log);
        assertEquals(0, entries(ledger, PrivacyLedger.Kind.CHARGE).size());
        assertTrue(!Files.exists(out), "no output is left behind");
    }

    /**
     * The folder (item 2): a link {@code a/up -> ..} is refused, naming it, instead of multiplying the images; items
     * 15 and 16: an image size beyond the bound names --image-size, an unreachable Spark master is an operational failure
     * (exit 6), not an internal error.
     */
    @Test
    void badDataAndUnreachableClustersAreNamed() throws Exception {
        Path loop = tmp.resolve("loop");
        copyTree(folder, loop);
        Files.createSymbolicLink(loop.resolve("a").resolve("up"), Path.of(".."));
        Run r = run("train", "--model", "mlp", "--epochs", "0.05", "--batch-size", "8", "--dataset", "folder:" + loop, "--image-size",
                "8x8x1", "--output", tmp.resolve("loop-out").toString(), "--no-progress");
        assertEquals(2, r.status(), r.err() + r.out());
        assertTrue(r.err().contains("up") && r.err().contains("loop"), r.err());
        assertTrue(!Files.exists(tmp.resolve("loop-out")));
        Run huge = run("train", "--dataset", "folder:" + folder, "--image-size", "100000x100000x3", "--no-progress");
        assertEquals(2, huge.status(), huge.err());
        assertTrue(huge.err().contains("--image-size") && huge.err().contains("4096"), huge.err());
        Run spark = run("train", "--model", "mlp", "--executor", "spark", "--spark-master", "spark://127.0.0.1:1", "--no-progress",
                "--output", tmp.resolve("spark-out").toString());
        assertEquals(6, spark.status(), spark.err());
        assertTrue(spark.err().contains("cannot reach the Spark master") && !spark.err().contains("internal error"), spark.err());
    }

    /**
     * Items 8–10: {@code ledger show} refuses a ledger whose last charge was cut off (its head file remembers it);
     * {@code ledger verify} writes nothing, not even to a torn ledger; {@code ledger upgrade} refuses a version-2 ledger
     * relabelled version 1.
     */
    @Test
    void ledgerCommandsReadOnlyAndCatchACutOffCharge() throws Exception {
        Path ledger = tmp.resolve("l.jsonl");
        try (PrivacyLedger l = PrivacyLedger.open(ledger, "mnist", 10, 1e-5)) {
            l.charge("one", new org.dpdl4j.accounting.GaussianEvent(3));
            l.charge("two", new org.dpdl4j.accounting.GaussianEvent(3));
        }
        List<String> lines = Files.readAllLines(ledger);
        Files.write(ledger, lines.subList(0, lines.size() - 1));
        Run cut = run("ledger", "show", ledger.toString());
        assertEquals(5, cut.status(), cut.err() + cut.out());
        assertTrue(cut.err().contains("cut off"), cut.err());
        Files.write(ledger, lines);
        Files.writeString(ledger, "{\"seq\":3,\"time\":\"x\",\"charged\":true,\"lab", java.nio.file.StandardOpenOption.APPEND);
        byte[] torn = Files.readAllBytes(ledger);
        Run verify = run("ledger", "verify", ledger.toString());
        assertEquals(0, verify.status(), verify.err());
        assertTrue(verify.out().contains("torn"), verify.out());
        assertTrue(java.util.Arrays.equals(torn, Files.readAllBytes(ledger)), "verify wrote nothing");
        try (var files = Files.list(tmp)) {
            assertTrue(files.noneMatch(f -> f.getFileName().toString().contains(".torn-")), "nor a backup");
        }
        Path relabelled = tmp.resolve("v1.jsonl");
        List<String> v1 = new java.util.ArrayList<>(lines);
        v1.set(0, v1.get(0).replace("\"version\":2", "\"version\":1"));
        v1.remove(2);
        Files.write(relabelled, v1);
        Run upgrade = run("ledger", "upgrade", relabelled.toString());
        assertEquals(5, upgrade.status(), upgrade.err());
        assertTrue(upgrade.err().contains("relabelled"), upgrade.err());
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
}
