package org.dpdl4j.tuning;

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

    /** A torn record (visibly charged:false) costs nothing: it is dropped, the original saved, and the ledger reopens. */
    @Test
    void aTornRecordIsDroppedAndTheOriginalKept(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            l.charge("one", new GaussianEvent(3));
        }
        String before = Files.readString(file);
        Files.writeString(file, "{\"seq\":2,\"time\":\"x\",\"charged\":false,\"label\":\"trial", StandardOpenOption.APPEND);
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            assertEquals(1, l.entries().size());
            assertEquals(1, l.repairs().size());
            assertTrue(l.repairs().get(0).contains("line 3") && l.repairs().get(0).contains("dropped"), l.repairs().toString());
        }
        assertEquals(before, Files.readString(file), "repaired to the acknowledged entries");
        try (var saved = Files.list(dir)) {
            assertTrue(saved.anyMatch(f -> f.getFileName().toString().startsWith("l.jsonl.torn-")), "the original is saved");
        }
    }

    /** A torn charge whose event can be read back is counted as spent (conservatively: it was never acknowledged). */
    @Test
    void aTornChargeWithItsEventIsCounted(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            l.charge("one", new GaussianEvent(3));
        }
        String full = "{\"seq\":2,\"time\":\"x\",\"charged\":true,\"label\":\"two\",\"event\":"
                + org.dpdl4j.tuning.PrivacyLedgerTest.json(new GaussianEvent(2)) + ",\"covered_by\":nu";
        Files.writeString(file, full, StandardOpenOption.APPEND);
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            assertEquals(2, l.entries().size());
            assertTrue(l.entries().get(1).charged() && l.entries().get(1).event().equals(new GaussianEvent(2)));
            assertEquals(org.dpdl4j.accounting.Accountants.tightest(new org.dpdl4j.accounting.ComposedEvent(List.of(new GaussianEvent(3),
                    new GaussianEvent(2))), 1e-5).epsilon(), l.spent().epsilon(), 1e-12);
        }
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            assertTrue(l.repairs().isEmpty(), "repaired once, then a normal ledger");
        }
    }

    /** A torn line whose kind or cost cannot be read is kept as an infinite charge: the budget is exhausted, never undercounted. */
    @Test
    void aTornLineOfUnknownCostExhaustsTheBudget(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            l.charge("one", new GaussianEvent(3));
        }
        Files.writeString(file, "{\"seq\":2,\"time\":\"x\",\"char", StandardOpenOption.APPEND);
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            assertTrue(Double.isInfinite(l.spent().epsilon()));
            assertTrue(l.repairs().get(0).contains("infinite"), l.repairs().toString());
            assertThrows(PrivacyLedger.BudgetExceededException.class, () -> l.charge("more", new GaussianEvent(100)));
        }
    }

    /** A tear inside a multi-byte character (a non-ASCII label) still reopens, counted conservatively. */
    @Test
    void aTornMultiByteCharacterStillReopens(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            l.charge("caf\u00e9", new GaussianEvent(3));
        }
        byte[] line = "{\"seq\":2,\"time\":\"x\",\"charged\":true,\"label\":\"caf\u00e9".getBytes(StandardCharsets.UTF_8);
        Files.write(file, java.util.Arrays.copyOf(line, line.length - 1), StandardOpenOption.APPEND); // half of the é
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            assertEquals(1, l.repairs().size(), l.repairs().toString());
            assertEquals("caf\u00e9", l.entries().get(0).label(), "the complete lines keep their characters");
            assertTrue(Double.isInfinite(l.spent().epsilon()), "a torn charge of unknown cost counts as infinite");
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

    @Test
    void theFileIsLockedWhileOpen(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        try (PrivacyLedger l = PrivacyLedger.open(file, "mnist", 10, 1e-5)) {
            var e = assertThrows(PrivacyLedger.LedgerException.class, () -> PrivacyLedger.open(file, "mnist", 10, 1e-5));
            assertTrue(e.getMessage().contains("in use") && !e.getMessage().contains("\n"), e.getMessage());
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
            assertTrue(l.entries().stream().allMatch(e -> e.event().equals(g)
                    || e.event() instanceof org.dpdl4j.accounting.NonPrivateEvent && e.label().startsWith("repaired")));
            // the kill may land inside a write of an unacknowledged entry: it is repaired, counted conservatively
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
