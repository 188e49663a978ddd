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
     * with SIGKILL mid-stream. Every entry it reported must be in the reopened ledger.
     */
    @Test
    void killAndReopenKeepsEveryAcknowledgedEntry(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("l.jsonl");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), LedgerWriter.class.getName(),
                file.toString()).redirectErrorStream(true).start();
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
                    throw new AssertionError("child said: " + line);
                }
            }
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

    /** The child process of {@link #killAndReopenKeepsEveryAcknowledgedEntry}. */
    public static final class LedgerWriter {
        public static void main(String[] args) throws Exception {
            try (PrivacyLedger l = PrivacyLedger.open(Path.of(args[0]), "mnist", Double.POSITIVE_INFINITY, 1e-5)) {
                for (int i = 0; i < 1_000_000; i++) {
                    System.out.println("charged " + l.charge("run " + i, new GaussianEvent(50)).sequence());
                    System.out.flush();
                }
            }
        }
    }
}
