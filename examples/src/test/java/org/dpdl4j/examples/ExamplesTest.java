package org.dpdl4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs each example's main as an application would, on the installed dpdl4j artifacts. */
class ExamplesTest {
    private static String run(ThrowingMain main) throws Exception {
        PrintStream old = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            main.run();
        } finally {
            System.setOut(old);
        }
        String s = out.toString(StandardCharsets.UTF_8);
        old.print(s);
        return s;
    }

    interface ThrowingMain {
        void run() throws Exception;
    }

    @Test
    void accountOnly() throws Exception {
        String out = run(() -> AccountOnly.main(new String[0]));
        Matcher rdp = Pattern.compile("rdp: one run epsilon ([0-9.]+)").matcher(out);
        Matcher pld = Pattern.compile("pld: one run epsilon ([0-9.]+)").matcher(out);
        assertTrue(rdp.find() && pld.find(), out);
        assertTrue(Double.parseDouble(pld.group(1)) < Double.parseDouble(rdp.group(1)), "PLD is the tighter for one run: " + out);
        assertTrue(out.contains("random search, K ~ Poisson(10): epsilon"), out);
    }

    /**
     * A sequence classifier from a variable-length iterator (each minibatch padded to its own longest) with early stopping:
     * ε at most the target, with the scores counted; better than chance on the held-out split.
     */
    @Test
    void sequencesPrivately() throws Exception {
        String out = run(() -> SequencesPrivately.main(new String[]{"2"}));
        Matcher m = Pattern.compile("epsilon ([0-9.]+) at delta 1.0E-5 \\(training and ([0-9]+) noisy scores\\); best step ([0-9]+), "
                + "validation accuracy ([0-9.]+)").matcher(out);
        assertTrue(m.find(), out);
        assertTrue(Double.parseDouble(m.group(1)) <= 4.0, out);
        assertTrue(Integer.parseInt(m.group(2)) >= 1, out);
        assertTrue(Double.parseDouble(m.group(4)) > 0.6, "better than chance: " + out);
    }

    /** A quarter epoch of MNIST at ε = 3: saved with its sidecar, loaded back verified, far above chance. */
    @Test
    void trainPrivately(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("private-mnist");
        String out = run(() -> TrainPrivately.main(new String[]{dir.toString(), "0.25"}));
        Matcher m = Pattern.compile("epsilon ([0-9.]+) at delta 1.0E-5 \\(pld\\); test accuracy ([0-9.]+)").matcher(out);
        assertTrue(m.find(), out);
        assertTrue(Double.parseDouble(m.group(1)) <= 3.0, out);
        assertTrue(Double.parseDouble(m.group(2)) > 0.5, out);
        assertTrue(Files.exists(dir.resolve("model.zip")) && Files.exists(dir.resolve("privacy.json")));
        assertEquals(1, com.fasterxml.jackson.databind.json.JsonMapper.builder().build()
                .readTree(dir.resolve("privacy.json").toFile()).get("schema_version").asInt());
        try (var ledger = org.dpdl4j.release.PrivacyLedger.inspect(tmp.resolve("private-mnist-ledger.jsonl"))) {
            assertEquals(1, ledger.entries().stream().filter(org.dpdl4j.release.PrivacyLedger.Entry::charged).count());
            assertEquals(1, ledger.entries().stream().filter(e -> e.kind() == org.dpdl4j.release.PrivacyLedger.Kind.RELEASE).count());
        }
        assertTrue(!Files.exists(dir.resolve("operator")), "the checkpoint goes once the release is out");
    }

    /**
     * A private random search over a network of one's own, each trial a twentieth of an epoch: the whole search at most
     * ε = 3, charged once and released once, the best model loaded back verified, the trials and K not beside it.
     */
    @Test
    void tunePrivately(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("private-search");
        String out = run(() -> TunePrivately.main(new String[]{dir.toString(), "0.05", "2"}));
        Matcher m = Pattern.compile("best \\{learning_rate=[0-9.]+\\}: epsilon ([0-9.]+) at delta 1.0E-5 for the whole search; "
                + "test accuracy ([0-9.]+)").matcher(out);
        assertTrue(m.find(), out);
        assertTrue(Double.parseDouble(m.group(1)) <= 3.0 && Double.parseDouble(m.group(1)) > 2.9, "calibrated to the target: " + out);
        assertTrue(Double.parseDouble(m.group(2)) > 0.3, out);
        try (var ledger = org.dpdl4j.release.PrivacyLedger.inspect(tmp.resolve("private-search-ledger.jsonl"))) {
            assertEquals(1, ledger.entries().stream().filter(org.dpdl4j.release.PrivacyLedger.Entry::charged).count());
            assertEquals(1, ledger.entries().stream().filter(e -> e.kind() == org.dpdl4j.release.PrivacyLedger.Kind.RELEASE).count());
        }
        assertTrue(!Files.exists(dir.resolve("operator")), "the trials and the state go once the release is out");
    }

    /** DL4J's zoo LeNet, fixed and trained privately for a quarter epoch of MNIST at ε = 3: saved with its sidecar. */
    @Test
    void trainZooModel(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("private-lenet");
        String out = run(() -> TrainZooModel.main(new String[]{dir.toString(), "0.25"}));
        Matcher m = Pattern.compile("zoo LeNet: epsilon ([0-9.]+) at delta 1.0E-5; test accuracy ([0-9.]+)").matcher(out);
        assertTrue(m.find(), out);
        assertTrue(Double.parseDouble(m.group(1)) <= 3.0, out);
        assertTrue(Double.parseDouble(m.group(2)) > 0.5, out);
        assertTrue(Files.exists(dir.resolve("model.zip")) && Files.exists(dir.resolve("privacy.json")));
    }
}
