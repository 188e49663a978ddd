package org.dpdl4j.release;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RdpAccountant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PrivacyLedgerTest {
    @Test
    void chargesComposeAndTheBudgetHolds(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        // spent ε is the tightest registered accountant's (here the PLD's, below RDP's)
        double budget = org.dpdl4j.accounting.Accountants.tightest(ComposedEvent.of(new GaussianEvent(3), new GaussianEvent(3)), 1e-5)
                .epsilon();
        assertTrue(budget < RdpAccountant.standard().epsilon(ComposedEvent.of(new GaussianEvent(3), new GaussianEvent(3)), 1e-5));
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", budget * (1 + 1e-9), 1e-5)) {
            l.charge("one", new GaussianEvent(3));
            l.charge("two", new GaussianEvent(3));
            long size = Files.size(file);
            var e = assertThrows(PrivacyLedger.BudgetExceededException.class, () -> l.charge("three", new GaussianEvent(3)));
            assertTrue(e.getMessage().contains("three") && e.getMessage().contains("budget"), e.getMessage());
            assertEquals(size, Files.size(file), "nothing is written for a refused charge");
            assertEquals(budget, l.spent().epsilon(), 1e-12);
            l.record("audit", new GaussianEvent(1), 1);
            assertThrows(IllegalArgumentException.class, () -> l.record("x", new GaussianEvent(1), 3));
        }
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", budget * (1 + 1e-9), 1e-5)) {
            assertEquals(3, l.entries().size());
            assertEquals(budget, l.spent().epsilon(), 1e-12);
        }
        assertThrows(IllegalArgumentException.class, () -> PrivacyLedger.open(file, "cifar10", budget * (1 + 1e-9), 1e-5));
        assertThrows(IllegalArgumentException.class, () -> PrivacyLedger.open(file, "mnist", 100, 1e-5));
    }

    /**
     * A torn last line (a crash during an append) was never acknowledged, so nothing ran under it: whatever it was (a record,
     * a charge with its event, bytes of unknown kind, a cut multi-byte character) it costs nothing. The next writer saves
     * the original, cuts the bytes off and records them as a torn entry (evidence in the chain); a reader only reports them.
     */
    @Test
    void aTornLineCostsNothingAndIsKeptAsEvidence(@TempDir Path dir) throws Exception {
        byte[] cafe = "{\"seq\":2,\"time\":\"x\",\"charged\":true,\"label\":\"caf\u00e9".getBytes(StandardCharsets.UTF_8);
        List<byte[]> tails = List.of(
                "{\"seq\":2,\"time\":\"x\",\"charged\":false,\"label\":\"trial".getBytes(StandardCharsets.UTF_8),
                ("{\"seq\":2,\"time\":\"x\",\"charged\":true,\"label\":\"two\",\"event\":" + json(new GaussianEvent(0.1))
                        + ",\"covered_by\":nu").getBytes(StandardCharsets.UTF_8),
                "{\"seq\":2,\"time\":\"x\",\"char".getBytes(StandardCharsets.UTF_8),
                java.util.Arrays.copyOf(cafe, cafe.length - 1)); // half of the é
        double one = org.dpdl4j.accounting.Accountants.tightest(new ComposedEvent(List.of(new GaussianEvent(3))), 1e-5).epsilon();
        for (int i = 0; i < tails.size(); i++) {
            Path file = dir.resolve("l" + i + ".jsonl");
            try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
                l.charge("caf\u00e9", new GaussianEvent(3));
            }
            Files.write(file, tails.get(i), StandardOpenOption.APPEND);
            byte[] torn = Files.readAllBytes(file);
            try (PrivacyLedger l = PrivacyLedger.inspect(file)) { // a reader reports, writes nothing
                assertEquals(1, l.entries().size());
                assertEquals(one, l.spent().epsilon(), 1e-12);
                assertTrue(l.repairs().get(0).contains("torn") && l.repairs().get(0).contains("costs nothing"), l.repairs().toString());
            }
            assertTrue(java.util.Arrays.equals(torn, Files.readAllBytes(file)), "inspect wrote nothing");
            try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) { // a writer repairs
                assertEquals(2, l.entries().size(), "tail " + i);
                PrivacyLedger.Entry e = l.entries().get(1);
                assertEquals(PrivacyLedger.Kind.TORN, e.kind());
                assertTrue(!e.charged() && e.event() == null && e.label().contains("never acknowledged"), e.toString());
                assertEquals(one, l.spent().epsilon(), 1e-12, "tail " + i + " costs nothing");
                assertEquals("caf\u00e9", l.entries().get(0).label(), "the complete lines keep their characters");
                assertTrue(l.repairs().get(0).contains("saved as"), l.repairs().toString());
                l.charge("more", new GaussianEvent(3)); // the budget is not exhausted
            }
            try (PrivacyLedger l = PrivacyLedger.open(file, "mnist")) {
                assertTrue(l.repairs().isEmpty(), "repaired once, then a normal ledger");
                assertEquals(3, l.entries().size());
            }
            try (var saved = Files.list(dir)) {
                int n = i;
                assertTrue(saved.anyMatch(f -> f.getFileName().toString().startsWith("l" + n + ".jsonl.torn-")), "the original is saved");
            }
        }
    }

    /** A corrupt line in the middle is reported with its number, in one line, and the file is left alone. */
    @Test
    void aCorruptMiddleLineIsReportedNotDropped(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            l.charge("one", new GaussianEvent(3));
            l.charge("two", new GaussianEvent(3));
        }
        List<String> lines = new ArrayList<>(Files.readAllLines(file));
        lines.set(1, "{\"seq\":1,garbage");
        Files.write(file, lines);
        String before = Files.readString(file);
        var e = assertThrows(PrivacyLedger.LedgerException.class, () -> PrivacyLedger.open(file, "mnist", 10, 1e-5));
        assertTrue(e.getMessage().contains("line 2") && e.getMessage().contains("corrupt") && !e.getMessage().contains("\n"),
                e.getMessage());
        assertEquals(before, Files.readString(file), "the file is left as it was");
        Path other = dir.resolve("notes.txt");
        Files.writeString(other, "shopping list\n");
        var notLedger = assertThrows(PrivacyLedger.LedgerException.class, () -> PrivacyLedger.open(other, "mnist"));
        assertTrue(notLedger.getMessage().contains("not a dpdl4j privacy ledger"), notLedger.getMessage());
        var directory = assertThrows(IllegalArgumentException.class, () -> PrivacyLedger.open(dir, "mnist", 10, 1e-5));
        assertTrue(directory.getMessage().contains("is a directory"), directory.getMessage());
    }

    /**
     * Two handles on one ledger in one JVM (and, through the file lock, in two processes) see each other's entries: no
     * lock is held between operations, and each operation reads what the other appended before it checks the budget.
     */
    @Test
    void twoHandlesSeeEachOthersCharges(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        double one = org.dpdl4j.accounting.Accountants.tightest(new GaussianEvent(2), 1e-5).epsilon();
        try (PrivacyLedger a = PrivacyLedger.open(file, "mnist", 1.2 * one, 1e-5);
             PrivacyLedger b = PrivacyLedger.open(file, "mnist")) {
            a.charge("a", new GaussianEvent(2));
            assertEquals(1, b.entries().size());
            assertThrows(PrivacyLedger.BudgetExceededException.class, () -> b.charge("b", new GaussianEvent(2)));
            b.record("b's audit", new GaussianEvent(2), 1);
            assertEquals(2, a.entries().size());
            assertEquals(a.headHash(), b.headHash());
        }
    }

    /**
     * A charge releases once: the release binds the charge to a digest; the same digest again (a release resumed after a
     * crash) is the same entry; another digest, or a checkpoint after the release, is refused naming the first release. A
     * run's charge is found by its identifier, and only its start or a recorded checkpoint is a state it reached.
     */
    @Test
    void aChargeReleasesOnce(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        PrivacyEvent run = new GaussianEvent(3);
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 100, 1e-5)) {
            long c = l.charge("train", run, "run-1", "plan-digest", "start-digest").sequence();
            assertEquals(c, l.chargeOf("run-1").orElseThrow().sequence());
            assertTrue(l.chargeOf("run-2").isEmpty());
            assertEquals("plan-digest", l.chargeOf("run-1").orElseThrow().plan());
            assertThrows(IllegalArgumentException.class, () -> l.charge("again", run, "run-1", null, null));
            assertTrue(l.reached(c, 0, "start-digest") && !l.reached(c, 0, "other") && !l.reached(c, 10, "start-digest"));
            l.recordCheckpoint(c, 10, new GaussianEvent(4), "state-10");
            assertTrue(l.reached(c, 10, "state-10") && !l.reached(c, 10, "state-20") && !l.reached(c, 20, "state-10"));
            PrivacyLedger.Entry first = l.recordRelease(c, "release-a", run, "model.zip sha256 aaa");
            assertEquals(first, l.recordRelease(c, "release-a", run, "model.zip sha256 aaa"), "the same release is not written twice");
            var twice = assertThrows(PrivacyLedger.AlreadyReleasedException.class, () -> l.recordRelease(c, "release-b", run, "b"));
            assertTrue(twice.getMessage().contains("charge " + c) && twice.getMessage().contains("aaa")
                    && twice.getMessage().contains("new run"), twice.getMessage());
            assertThrows(PrivacyLedger.AlreadyReleasedException.class, () -> l.recordCheckpoint(c, 20, new GaussianEvent(4), "s"));
            assertEquals(first, l.releaseOf(c).orElseThrow());
            assertThrows(IllegalArgumentException.class, () -> l.recordRelease(first.sequence(), "x", run, "x"), "not a charge");
            assertEquals(org.dpdl4j.accounting.Accountants.tightest(new ComposedEvent(List.of(run)), 1e-5).epsilon(), l.spent().epsilon(), 1e-12,
                    "checkpoints and releases cost nothing");
        }
        // a second release line forged into the chain is refused when the ledger is read
        List<String> lines = new ArrayList<>(Files.readAllLines(file));
        List<String> bodies = new ArrayList<>();
        for (String line : lines) {
            bodies.add(line.replaceAll(",\"prev\":\"[0-9a-f]{64}\"", "").replaceAll(",\"hash\":\"[0-9a-f]{64}\"", ""));
        }
        bodies.add(bodies.get(bodies.size() - 1).replace("\"seq\":3", "\"seq\":4").replace("release-a", "release-b"));
        Path forged = dir.resolve("forged.jsonl");
        Files.writeString(forged, chained(bodies));
        var e = assertThrows(PrivacyLedger.LedgerException.class, () -> PrivacyLedger.open(forged, "mnist"));
        assertTrue(e.getMessage().contains("second release"), e.getMessage());
    }

    /**
     * The head is kept beside the ledger (FILE.head): a ledger whose last line was cut off no longer holds it and is
     * refused, by readers too; an intact ledger brings a lagging head file up to date.
     */
    @Test
    void aLedgerCutShortIsRefusedByItsHeadFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            l.charge("one", new GaussianEvent(3));
            l.charge("two", new GaussianEvent(3));
            assertTrue(Files.readString(dir.resolve("l.jsonl.head")).startsWith(l.headHash()));
        }
        List<String> lines = Files.readAllLines(file);
        Files.write(file, lines.subList(0, lines.size() - 1)); // the last charge cut off: a valid chain, spent 1 charge
        var e = assertThrows(PrivacyLedger.LedgerException.class, () -> PrivacyLedger.open(file, "mnist"));
        assertTrue(e.getMessage().contains("l.jsonl.head") && e.getMessage().contains("cut off"), e.getMessage());
        assertThrows(PrivacyLedger.LedgerException.class, () -> PrivacyLedger.inspect(file));
        Files.write(file, lines);
        String head;
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist")) {
            head = l.headHash();
        }
        // a crash between an append and the head file's rewrite leaves the head file one entry behind: accepted, updated
        Files.writeString(dir.resolve("l.jsonl.head"), lines.get(1).substring(lines.get(1).length() - 66, lines.get(1).length() - 2) + "\n");
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist")) {
            assertEquals(head, l.headHash());
        }
        assertTrue(Files.readString(dir.resolve("l.jsonl.head")).startsWith(head));
    }

    /**
     * A write that fails half-way (here: the file-size limit, which fails a write as a full disk does) names the ledger and
     * leaves nothing behind: the child's partial line is cut off under the lock, and the ledger reads as before.
     */
    @Test
    void aFailedWriteNamesTheLedgerAndLeavesNoTornLine(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            l.charge("one", new GaussianEvent(3));
        }
        long size = Files.size(file);
        // a limit (in 1024-byte blocks) that the next line (over 400 bytes) crosses: the write fails part-way
        Files.write(file, new byte[0], StandardOpenOption.APPEND);
        while ((size + 400) / 1024 == size / 1024) {
            try (PrivacyLedger l = PrivacyLedger.open(file, "mnist")) {
                l.record("pad", new GaussianEvent(3), 1);
            }
            size = Files.size(file);
        }
        byte[] before = Files.readAllBytes(file);
        long blocks = size / 1024 + 1;
        String javaBinary = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder("bash", "-c", "trap '' XFSZ; ulimit -f " + blocks + "; exec \"$0\" \"$@\"", javaBinary, "-cp",
                System.getProperty("java.class.path"), LedgerOneCharge.class.getName(), file.toString())
                .redirectError(dir.resolve("child.err").toFile()).start();
        String said;
        try {
            said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        } finally {
            p.destroyForcibly();
        }
        assertTrue(said.startsWith("failed: could not write the privacy ledger " + file) && said.contains("nothing was recorded"),
                said + " / " + Files.readString(dir.resolve("child.err")));
        assertTrue(java.util.Arrays.equals(before, Files.readAllBytes(file)), "the partial line was cut off");
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist")) {
            assertTrue(l.repairs().isEmpty(), l.repairs().toString());
        }
    }

    /** The child of {@link #aFailedWriteNamesTheLedgerAndLeavesNoTornLine}: one charge, and what became of it. */
    public static final class LedgerOneCharge {
        public static void main(String[] args) throws Exception {
            try (PrivacyLedger l = PrivacyLedger.open(Path.of(args[0]), "mnist")) {
                l.charge("a charge whose write fails", new GaussianEvent(3));
                System.out.println("charged");
            } catch (java.io.IOException e) {
                System.out.println("failed: " + e.getMessage());
            }
        }
    }

    static String json(PrivacyEvent e) throws Exception {
        return new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(e.toMap());
    }

    /**
     * A child JVM charges entries and prints each sequence number after charge() returns; we kill it
     * with SIGKILL mid-stream. Every entry it reported must be in the reopened ledger. Only the child's stdout is read
     * (a JVM banner such as "Picked up JAVA_TOOL_OPTIONS" goes to stderr), and the child is killed whatever happens.
     */
    @Test
    void killAndReopenKeepsEveryAcknowledgedEntry(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        Process p = child(dir, LedgerWriter.class, file.toString());
        List<Long> acknowledged = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("charged ")) {
                    acknowledged.add(Long.parseLong(line.substring(8)));
                    if (acknowledged.size() == 25) {
                        p.destroyForcibly();
                        break;
                    }
                } else {
                    throw new AssertionError("child said: " + line + "; its stderr: " + Files.readString(dir.resolve("child.err")));
                }
            }
        } finally {
            p.destroyForcibly();
        }
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(25, acknowledged.size());
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", Double.POSITIVE_INFINITY, 1e-5)) {
            List<Long> onFile = l.entries().stream().map(PrivacyLedger.Entry::sequence).toList();
            assertTrue(onFile.containsAll(acknowledged), "on file " + onFile.size() + ", acknowledged " + acknowledged);
            PrivacyEvent g = new GaussianEvent(50);
            assertTrue(l.entries().stream().allMatch(e -> e.charged() && e.event().equals(g) || e.kind() == PrivacyLedger.Kind.TORN));
            // the kill may land inside a write of an unacknowledged entry: it is kept as torn, at no cost
            assertTrue(l.repairs().size() <= 1, l.repairs().toString());
        }
    }

    /**
     * A child JVM running {@code main} of the given class, stderr to dir/child.err. JAVA_TOOL_OPTIONS is set, as CI
     * images often set it: the banner it prints must not be taken for the child's answer (it was, and the orphaned
     * child then kept running).
     */
    private static Process child(Path dir, Class<?> main, String... args) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectError(dir.resolve("child.err").toFile());
        pb.environment().put("JAVA_TOOL_OPTIONS", "-Xss2m"); // the JVM then says "Picked up JAVA_TOOL_OPTIONS" on stderr
        return pb.start();
    }

    /** The child process of {@link #killAndReopenKeepsEveryAcknowledgedEntry}: stops by itself after 120 s. */
    public static final class LedgerWriter {
        public static void main(String[] args) throws Exception {
            long end = System.nanoTime() + 120_000_000_000L;
            try (PrivacyLedger l = PrivacyLedger.open(Path.of(args[0]), "mnist", Double.POSITIVE_INFINITY, 1e-5)) {
                for (int i = 0; i < 1_000_000 && System.nanoTime() < end; i++) {
                    System.out.println("charged " + l.charge("run " + i, new GaussianEvent(50)).sequence());
                    System.out.flush();
                }
            }
        }
    }

    /**
     * Three processes charge one ledger at once, against a budget that fits one charge, three times over: exactly one
     * charge lands each time and the others are refused by the budget. (Before the fix, reading the file through a
     * second descriptor released the first process's lock, and two or three charges landed.)
     */
    @Test
    void concurrentProcessesCannotOverspendTheBudget(@TempDir Path dir) throws Exception {
        double one = org.dpdl4j.accounting.Accountants.tightest(new GaussianEvent(2), 1e-5).epsilon();
        for (int round = 0; round < 3; round++) {
            Path file = dir.resolve("l" + round + ".jsonl");
            String start = Long.toString(System.currentTimeMillis() + 1500);
            List<Process> children = new ArrayList<>();
            try {
                for (int c = 0; c < 3; c++) {
                    Path childDir = Files.createDirectories(dir.resolve("child-" + round + "-" + c));
                    // two charges cost about 1.4 times one (Gaussians compose sublinearly): 1.2 fits one
                    children.add(child(childDir, LedgerCharger.class, file.toString(), Double.toString(1.2 * one), start));
                }
                int charged = 0;
                int refused = 0;
                for (Process p : children) {
                    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "a child did not finish");
                    String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                    charged += said.equals("charged") ? 1 : 0;
                    refused += said.equals("refused") ? 1 : 0;
                }
                assertEquals(1, charged, "round " + round);
                assertEquals(2, refused, "round " + round);
            } finally {
                children.forEach(Process::destroyForcibly);
            }
            try (PrivacyLedger l = PrivacyLedger.open(file, "mnist")) {
                assertEquals(1, l.entries().size());
                assertTrue(l.spent().epsilon() <= l.epsilonBudget());
            }
        }
    }

    /** The child of {@link #concurrentProcessesCannotOverspendTheBudget}: waits for a common start, charges, says how it went. */
    public static final class LedgerCharger {
        public static void main(String[] args) throws Exception {
            Thread.sleep(Math.max(0, Long.parseLong(args[2]) - System.currentTimeMillis()));
            try (PrivacyLedger l = PrivacyLedger.open(Path.of(args[0]), "mnist", Double.parseDouble(args[1]), 1e-5)) {
                Thread.sleep(300); // hold the ledger while the others try
                l.charge("train", new GaussianEvent(2));
                System.out.println("charged");
            } catch (PrivacyLedger.BudgetExceededException e) {
                System.out.println("refused");
            }
        }
    }

    /**
     * Every edit the operator tried is refused with the line named: a σ raised tenfold, a count changed, a charge
     * flipped to a record, a charge deleted, the header's budget raised, a line duplicated, two lines swapped.
     */
    @Test
    void editedLedgersAreRefusedNamingTheLine(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        String head;
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            l.charge("one", new GaussianEvent(3));
            l.charge("two", new org.dpdl4j.accounting.SelfComposedEvent(new GaussianEvent(4), 5));
            l.record("trial", new GaussianEvent(4), 2);
            head = l.headHash();
            assertTrue(l.containsHash(head) && head.length() == 64);
        }
        List<String> original = Files.readAllLines(file);
        java.util.Map<String, List<String>> edits = new java.util.LinkedHashMap<>();
        edits.put("sigma raised", with(original, 1, original.get(1).replace("3.0", "30.0")));
        edits.put("count changed", with(original, 2, original.get(2).replace("\"count\":5", "\"count\":1")));
        edits.put("charge flipped", with(original, 1, original.get(1).replace("\"charged\":true", "\"charged\":false")));
        List<String> deleted = new ArrayList<>(original);
        deleted.remove(2);
        edits.put("charge deleted", deleted);
        edits.put("budget raised", with(original, 0, original.get(0).replace("\"epsilon_budget\":10.0", "\"epsilon_budget\":100.0")));
        List<String> duplicated = new ArrayList<>(original);
        duplicated.add(2, original.get(2));
        edits.put("line duplicated", duplicated);
        List<String> swapped = new ArrayList<>(original);
        swapped.set(1, original.get(2));
        swapped.set(2, original.get(1));
        edits.put("lines swapped", swapped);
        for (var edit : edits.entrySet()) {
            assertTrue(!edit.getValue().equals(original), edit.getKey() + ": the edit changed nothing");
            Files.write(file, edit.getValue());
            var e = assertThrows(PrivacyLedger.LedgerException.class, () -> PrivacyLedger.open(file, "mnist"), edit.getKey());
            assertTrue(e.getMessage().matches(".*line [0-9]+.*") && !e.getMessage().contains("\n"), edit.getKey() + ": " + e.getMessage());
        }
        Files.write(file, original);
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist")) {
            assertEquals(head, l.headHash());
        }
        // a ledger rewritten whole (a new chain) no longer contains the anchored head
        Files.delete(file);
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            l.charge("one", new GaussianEvent(30));
            assertTrue(!l.containsHash(head));
        }
    }

    private static List<String> with(List<String> lines, int index, String line) {
        List<String> copy = new ArrayList<>(lines);
        copy.set(index, line);
        return copy;
    }

    /** A version-1 ledger (before the hash chain) is refused until upgraded; the upgrade keeps every entry and the original. */
    @Test
    void versionOneLedgersAreUpgradedNotSilentlyTrusted(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("old.jsonl");
        Files.writeString(file, "{\"ledger\":\"dpdl4j-privacy-ledger\",\"version\":1,\"dataset\":\"mnist\",\"epsilon_budget\":8.0,"
                + "\"delta\":1.0E-5,\"created\":\"2026-11-01T00:00:00Z\"}\n"
                + "{\"seq\":1,\"time\":\"2026-11-01T00:00:01Z\",\"charged\":true,\"label\":\"train\",\"event\":"
                + json(new GaussianEvent(3)) + ",\"covered_by\":null}\n");
        var e = assertThrows(PrivacyLedger.LedgerException.class, () -> PrivacyLedger.open(file, "mnist"));
        assertTrue(e.getMessage().contains("ledger upgrade"), e.getMessage());
        try (PrivacyLedger l = PrivacyLedger.upgrade(file)) {
            assertEquals(1, l.entries().size());
            assertEquals(8.0, l.epsilonBudget());
            assertTrue(l.repairs().get(0).contains("upgraded"), l.repairs().toString());
        }
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist")) {
            assertEquals(new GaussianEvent(3), l.entries().get(0).event());
            l.charge("more", new GaussianEvent(5));
        }
        try (var files = Files.list(dir)) {
            assertTrue(files.anyMatch(f -> f.getFileName().toString().startsWith("old.jsonl.v1-")), "the original is kept");
        }
        assertThrows(PrivacyLedger.LedgerException.class, () -> PrivacyLedger.upgrade(file));
        // a version-2 ledger relabelled version 1 (after a charge was cut out) is neither used nor upgraded
        List<String> relabelled = new ArrayList<>(Files.readAllLines(file));
        relabelled.set(0, relabelled.get(0).replace("\"version\":2", "\"version\":1"));
        relabelled.remove(1);
        Path v2 = dir.resolve("relabelled.jsonl");
        Files.write(v2, relabelled);
        for (var open : List.<org.junit.jupiter.api.function.Executable>of(() -> PrivacyLedger.upgrade(v2), () -> PrivacyLedger.open(v2, "mnist"))) {
            var refused = assertThrows(PrivacyLedger.LedgerException.class, open);
            assertTrue(refused.getMessage().contains("relabelled") || refused.getMessage().contains("hash"), refused.getMessage());
        }
        assertEquals(relabelled, Files.readAllLines(v2), "nothing was rewritten");
    }

    /** A resumed tuning recording a trial it had recorded before the crash writes no second record; charges always write. */
    @Test
    void aRecordIsWrittenOnceACharge(@TempDir Path dir) throws Exception {
        try (PrivacyLedger l = PrivacyLedger.open(dir.resolve("l.jsonl"), "mnist", 100, 1e-5)) {
            long charge = l.chargeOrRecord("tuning", new GaussianEvent(3), null);
            long first = l.chargeOrRecord("trial 1: lr=0.1", new GaussianEvent(5), charge);
            assertEquals(first, l.chargeOrRecord("trial 1: lr=0.1", new GaussianEvent(5), charge));
            assertEquals(2, l.entries().size());
            l.chargeOrRecord("tuning", new GaussianEvent(3), null);
            assertEquals(3, l.entries().size(), "a second charge is a second spend");
        }
    }

    /**
     * A forger who rebuilds the hash chain still cannot slip in an impossible ledger: a budget ≤ 0, a δ outside (0, 1), a
     * fractional sequence number or an entry without an event are refused with the file named; an empty file is said
     * to be empty.
     */
    @Test
    void impossibleValuesAreRefusedEvenWithAValidChain(@TempDir Path dir) throws Exception {
        String event = json(new GaussianEvent(3));
        String header = "{\"ledger\":\"dpdl4j-privacy-ledger\",\"version\":2,\"dataset\":\"mnist\",\"epsilon_budget\":%s,"
                + "\"delta\":%s,\"created\":\"t\"}";
        String entry = "{\"seq\":%s,\"time\":\"t\",\"charged\":true,\"label\":\"x\",\"event\":%s,\"covered_by\":null}";
        java.util.Map<String, List<String>> forged = new java.util.LinkedHashMap<>();
        forged.put("budget", List.of(String.format(header, "-5.0", "1.0E-5"), String.format(entry, "1", event)));
        forged.put("delta", List.of(String.format(header, "8.0", "2.0"), String.format(entry, "1", event)));
        forged.put("sequence", List.of(String.format(header, "8.0", "1.0E-5"), String.format(entry, "1.5", event)));
        forged.put("no event", List.of(String.format(header, "8.0", "1.0E-5"), String.format(entry, "1", "null")));
        for (var f : forged.entrySet()) {
            Path file = dir.resolve(f.getKey().replace(' ', '-') + ".jsonl");
            Files.writeString(file, chained(f.getValue()));
            var e = assertThrows(PrivacyLedger.LedgerException.class, () -> PrivacyLedger.open(file, "mnist"), f.getKey());
            assertTrue(e.getMessage().contains(file.toString()) && !e.getMessage().contains("Exception"), f.getKey() + ": " + e.getMessage());
        }
        Path empty = Files.createFile(dir.resolve("empty.jsonl"));
        var e = assertThrows(IllegalArgumentException.class, () -> PrivacyLedger.open(empty, "mnist"));
        assertTrue(e.getMessage().contains("is empty"), e.getMessage());
    }

    /**
     * A ledger written before the journal was split out of {@code PrivacyLedger} (every kind of entry, a repaired torn
     * line, its head file) reads back entry by entry, keeps its rules (one release per charge, checkpoints reached) and
     * takes new entries after its old head, leaving its bytes as they were.
     */
    @Test
    void aLedgerWrittenBeforeTheSplitReadsAndGrows(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("old.jsonl");
        String name = "ledger-v2-written-before-the-split.jsonl";
        try (var in = PrivacyLedgerTest.class.getResourceAsStream(name); var head = PrivacyLedgerTest.class.getResourceAsStream(name + ".head")) {
            Files.write(file, in.readAllBytes());
            Files.write(dir.resolve("old.jsonl.head"), head.readAllBytes());
        }
        byte[] before = Files.readAllBytes(file);
        String recordedHead = Files.readString(dir.resolve("old.jsonl.head")).split(" ")[0];
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist-train")) {
            assertEquals(List.of(PrivacyLedger.Kind.CHARGE, PrivacyLedger.Kind.CHECKPOINT, PrivacyLedger.Kind.RELEASE,
                    PrivacyLedger.Kind.CHARGE, PrivacyLedger.Kind.RECORD, PrivacyLedger.Kind.TORN, PrivacyLedger.Kind.CHARGE),
                    l.entries().stream().map(PrivacyLedger.Entry::kind).toList());
            assertEquals(8.0, l.epsilonBudget());
            assertEquals(1e-5, l.delta());
            assertEquals(recordedHead, l.headHash());
            PrivacyEvent g = new GaussianEvent(1.1);
            PrivacyEvent run = new org.dpdl4j.accounting.SelfComposedEvent(new org.dpdl4j.accounting.PoissonSampledEvent(g, 0.01), 600);
            assertEquals(new ComposedEvent(List.of(run, new GaussianEvent(2.0), new GaussianEvent(5.0))), l.spentEvent());
            assertEquals(1, l.chargeOf("run-a").orElseThrow().sequence());
            assertTrue(l.reached(1, 300, "1".repeat(64)) && l.reached(1, 0, "0".repeat(64)) && !l.reached(1, 299, "1".repeat(64)));
            assertEquals("2".repeat(64), l.releaseOf(1).orElseThrow().digest());
            assertThrows(PrivacyLedger.AlreadyReleasedException.class, () -> l.recordRelease(1, "4".repeat(64), run, "another"));
            assertEquals(5, l.chargeOrRecord("trial 1", new GaussianEvent(3.0), 4L), "the resumed tuning's record is on file");
            assertEquals(8, l.charge("after the split", new GaussianEvent(4)).sequence());
        }
        byte[] after = Files.readAllBytes(file);
        assertEquals(java.util.HexFormat.of().formatHex(before),
                java.util.HexFormat.of().formatHex(java.util.Arrays.copyOf(after, before.length)), "the old lines are untouched");
        try (PrivacyLedger l = PrivacyLedger.inspect(file)) {
            assertEquals(8, l.entries().size());
            assertTrue(l.containsHash(recordedHead) && !l.headHash().equals(recordedHead));
        }
    }

    /** Lines chained as PrivacyLedger writes them: "prev" after the first, then the line's own SHA-256 as "hash". */
    private static String chained(List<String> bodies) throws Exception {
        StringBuilder out = new StringBuilder();
        String prev = "";
        for (String body : bodies) {
            String withPrev = prev.isEmpty() ? body : body.substring(0, body.length() - 1) + ",\"prev\":\"" + prev + "\"}";
            String hash = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(withPrev.getBytes(StandardCharsets.UTF_8)));
            out.append(withPrev, 0, withPrev.length() - 1).append(",\"hash\":\"").append(hash).append("\"}\n");
            prev = hash;
        }
        return out.toString();
    }
}
