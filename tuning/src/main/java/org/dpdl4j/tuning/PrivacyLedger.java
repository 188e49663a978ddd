package org.dpdl4j.tuning;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.NonPrivateEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyEvents;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.Accountants;

/**
 * An append-only journal of what has been spent against one dataset, with a budget (ε, δ). One
 * JSON object per line: a header line (dataset, budget), then one line per entry. Each entry is
 * written with a single write and forced to disk (fsync) before {@link #charge} or {@link #record}
 * returns, so a caller that records before using a result never loses an entry to a crash.
 *
 * <p>Two kinds of entry: a <em>charge</em> adds its event to the spent budget (the spent ε is that of the
 * composition of all charges at the ledger's δ, by the tightest registered accountant that supports it,
 * {@link Accountants#tightest}: the privacy loss distribution for DP-SGD runs, RDP when a tuning's random-K theorem
 * is among them); a <em>record</em> is an audit entry
 * whose cost is already covered by an earlier charge (a trial of a tuning run whose whole cost was
 * charged up front). Reopening a ledger restores every entry. A corrupt line in the middle makes
 * {@link #open} fail with its number ({@link LedgerException}), and nothing is dropped.
 *
 * <p>A torn last line (what a crash during an append leaves: bytes without the final newline) was never
 * acknowledged, so nothing ran under it; it is still counted conservatively and the file is repaired on
 * open, after the original is saved beside it as {@code FILE.torn-TIME}: a torn audit record (visibly
 * {@code "charged":false}) costs nothing and is dropped; a torn charge whose event can be read back is
 * kept as a charge of that event; anything else is kept as a charge of unknown cost, counted as
 * infinite ε (the budget is then exhausted: remove that line by hand only if you know what it was).
 * {@link #repairs()} says what was done.
 *
 * <p>One process at a time: the file is locked while open. Thread-safe within the process.
 */
public final class PrivacyLedger implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One journal line. */
    public record Entry(long sequence, String time, boolean charged, String label, PrivacyEvent event, Long coveredBy) {
    }

    /** The ledger file cannot be used: corrupt, not a ledger, or locked by another process. The message is one line. */
    public static final class LedgerException extends IllegalStateException {
        /** @param message names the file, the line and what is wrong */
        public LedgerException(String message) {
            super(message);
        }
    }

    /** Thrown by {@link #charge} when the entry would take the spent ε above the budget; nothing is written. */
    public static final class BudgetExceededException extends IllegalStateException {
        /** @param message says what would have been spent and the budget */
        public BudgetExceededException(String message) {
            super(message);
        }
    }

    private final Path file;
    private final String dataset;
    private final double epsilonBudget;
    private final double delta;
    private final FileChannel channel;
    private final FileLock lock;
    private final List<Entry> entries = new ArrayList<>();
    private final List<String> repairs = new ArrayList<>();

    private PrivacyLedger(Path file, String dataset, double epsilonBudget, double delta, FileChannel channel, FileLock lock) {
        this.file = file;
        this.dataset = dataset;
        this.epsilonBudget = epsilonBudget;
        this.delta = delta;
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Opens the ledger at {@code file}, creating it with this dataset and budget if it does not
     * exist. An existing ledger keeps the dataset and budget it was created with; asking for
     * another is an error (a budget is not raised silently).
     *
     * @param epsilonBudget ε budget &gt; 0 (+∞ for a journal without a limit)
     * @param delta         δ ∈ (0, 1) at which spent ε is computed
     * @throws IllegalArgumentException on an invalid budget, or a dataset/budget that differs from the file's
     * @throws LedgerException         if the file is corrupt (the message names the line), not a ledger, or locked
     * @throws IOException              if it cannot be read or written
     */
    public static PrivacyLedger open(Path file, String dataset, double epsilonBudget, double delta) throws IOException {
        if (!(epsilonBudget > 0)) {
            throw new IllegalArgumentException("ledger epsilon budget must be > 0 (or infinite), got " + epsilonBudget);
        }
        if (!(delta > 0 && delta < 1)) {
            throw new IllegalArgumentException("ledger delta must be in (0, 1), got " + delta);
        }
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException("privacy ledger " + file + " is a directory; give a file");
        }
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            ch.close();
            throw new LedgerException("privacy ledger " + file + " is in use by another dpdl4j process (or thread); wait for it "
                    + "to finish: one writer at a time");
        }
        try {
            PrivacyLedger ledger = new PrivacyLedger(file, dataset, epsilonBudget, delta, ch, lock);
            ledger.load();
            return ledger;
        } catch (IOException | RuntimeException e) {
            lock.release();
            ch.close();
            throw e;
        }
    }

    /**
     * Opens an existing ledger with the budget and δ it was created with.
     *
     * @throws IllegalArgumentException if the file does not exist or belongs to another dataset
     * @throws LedgerException         if it is corrupt, not a ledger, or locked
     * @throws IOException              if it cannot be read
     */
    public static PrivacyLedger open(Path file, String dataset) throws IOException {
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException("privacy ledger " + file + " is a directory; give a file");
        }
        if (!Files.exists(file) || Files.size(file) == 0) {
            throw new IllegalArgumentException("privacy ledger " + file + " does not exist; give a budget to create it");
        }
        Map<?, ?> h = header(file);
        Object b = h.get("epsilon_budget");
        if (!(h.get("delta") instanceof Number d) || !("inf".equals(b) || b instanceof Number)) {
            throw new LedgerException(file + " is not a dpdl4j privacy ledger (its first line has no budget and delta)");
        }
        return open(file, dataset, "inf".equals(b) ? Double.POSITIVE_INFINITY : ((Number) b).doubleValue(), d.doubleValue());
    }

    /** The first line of a ledger file, parsed. */
    private static Map<?, ?> header(Path file) throws IOException {
        String first;
        try (var lines = Files.lines(file, StandardCharsets.UTF_8)) {
            first = lines.findFirst().orElse("");
        } catch (java.io.UncheckedIOException e) {
            throw new LedgerException(file + " is not a dpdl4j privacy ledger (not UTF-8 text)");
        }
        try {
            Map<?, ?> h = JSON.readValue(first, Map.class);
            if (h == null || !"dpdl4j-privacy-ledger".equals(h.get("ledger"))) {
                throw new LedgerException(file + " is not a dpdl4j privacy ledger (its first line is not a ledger header)");
            }
            return h;
        } catch (JsonProcessingException e) {
            throw new LedgerException(file + " is not a dpdl4j privacy ledger (its first line is not JSON)");
        }
    }

    /** What opening the ledger repaired (a torn last line), one sentence each; empty when nothing was. */
    public List<String> repairs() {
        return List.copyOf(repairs);
    }

    private void load() throws IOException {
        byte[] raw = Files.readAllBytes(file);
        int lastNewline = raw.length - 1;
        while (lastNewline >= 0 && raw[lastNewline] != '\n') {
            lastNewline--;
        }
        // complete lines end at the last newline byte; a torn tail may end inside a multi-byte character
        String text = new String(raw, 0, lastNewline + 1, StandardCharsets.UTF_8);
        String tornTail = new String(raw, lastNewline + 1, raw.length - lastNewline - 1, StandardCharsets.UTF_8);
        if (raw.length == 0) {
            Map<String, Object> header = new LinkedHashMap<>();
            header.put("ledger", "dpdl4j-privacy-ledger");
            header.put("version", 1);
            header.put("dataset", dataset);
            header.put("epsilon_budget", Double.isInfinite(epsilonBudget) ? "inf" : epsilonBudget);
            header.put("delta", delta);
            header.put("created", Instant.now().toString());
            append(header);
            return;
        }
        String[] lines = (text + tornTail).split("\n", -1);
        String torn = tornTail;
        if (!torn.isEmpty() && lines.length == 1) {
            throw new LedgerException(file + " is not a dpdl4j privacy ledger (no complete header line)");
        }
        for (int i = 0; i < lines.length - 1; i++) {
            Map<?, ?> m;
            try {
                m = JSON.readValue(lines[i], Map.class);
            } catch (JsonProcessingException e) {
                throw corrupt(i + 1, lines[i], "not JSON: " + e.getOriginalMessage());
            }
            if (i == 0) {
                checkHeader(m);
                continue;
            }
            try {
                entries.add(new Entry(((Number) m.get("seq")).longValue(), (String) m.get("time"),
                        Boolean.TRUE.equals(m.get("charged")), (String) m.get("label"),
                        PrivacyEvents.fromMap((Map<?, ?>) m.get("event")),
                        m.get("covered_by") == null ? null : ((Number) m.get("covered_by")).longValue()));
            } catch (RuntimeException e) {
                throw corrupt(i + 1, lines[i], "not a ledger entry: " + e.getMessage());
            }
        }
        if (!torn.isEmpty()) {
            repairTornLine(lastNewline + 1, torn, lines.length);
        }
    }

    /**
     * Repairs a torn last line in place (see the class comment), after saving the original file beside it.
     *
     * @param start the torn line's offset in bytes (just after the last newline)
     */
    private void repairTornLine(long start, String torn, int lineNumber) throws IOException {
        Path backup = file.resolveSibling(file.getFileName() + ".torn-" + Instant.now().toString().replace(':', '-'));
        Files.copy(file, backup);
        long sequence = entries.isEmpty() ? 1 : entries.get(entries.size() - 1).sequence() + 1;
        PrivacyEvent event = null;
        String label = null;
        int coveredBy = torn.lastIndexOf(",\"covered_by\"");
        // the event is complete if the line was cut inside the covered_by field that follows it, or just before the brace
        for (String candidate : coveredBy < 0 ? List.of(torn + "}") : List.of(torn + "}", torn.substring(0, coveredBy) + "}")) {
            try {
                Map<?, ?> m = JSON.readValue(candidate, Map.class);
                event = PrivacyEvents.fromMap((Map<?, ?>) m.get("event"));
                label = (String) m.get("label");
                break;
            } catch (JsonProcessingException | RuntimeException e) {
                // not this completion
            }
        }
        channel.truncate(start);
        channel.force(true);
        String what;
        if (torn.contains("\"charged\":false")) {
            what = "an audit record (no cost: its charge is on file) was dropped";
        } else if (event != null && torn.contains("\"charged\":true")) {
            write(true, "repaired torn write: " + label, event, null);
            what = "a charge was kept with its event (nothing ran under it, but it is counted)";
        } else {
            write(true, "repaired torn write of unknown cost, counted as infinite epsilon: " + torn.replaceAll("[^\\x20-\\x7e]", "?"),
                    new NonPrivateEvent(), null);
            what = "an entry of unknown cost was kept as a charge of infinite epsilon (the budget is exhausted; remove that "
                    + "line by hand only if you know what it was)";
        }
        repairs.add("privacy ledger " + file + " line " + lineNumber + " was torn (a crash during a write, never acknowledged): "
                + what + "; entry " + sequence + "; the original is saved as " + backup);
    }

    private void checkHeader(Map<?, ?> h) {
        if (!"dpdl4j-privacy-ledger".equals(h.get("ledger"))) {
            throw new LedgerException(file + " is not a dpdl4j privacy ledger (its first line is not a ledger header)");
        }
        if (!dataset.equals(h.get("dataset"))) {
            throw new IllegalArgumentException("ledger " + file + " is for dataset '" + h.get("dataset") + "', not '" + dataset + "'");
        }
        Object b = h.get("epsilon_budget");
        double budget = "inf".equals(b) ? Double.POSITIVE_INFINITY : ((Number) b).doubleValue();
        double d = ((Number) h.get("delta")).doubleValue();
        if (budget != epsilonBudget || d != delta) {
            throw new IllegalArgumentException("ledger " + file + " was created with budget (epsilon " + b + ", delta " + d
                    + "); it cannot be reopened with (" + epsilonBudget + ", " + delta + ")");
        }
    }

    private LedgerException corrupt(int line, String content, String why) {
        String shown = content.length() > 80 ? content.substring(0, 80) + "..." : content;
        return new LedgerException("privacy ledger " + file + " line " + line + " is corrupt (" + why.replace('\n', ' ') + "): '"
                + shown.replace('\n', ' ') + "'; dpdl4j drops no entry: repair the line by hand (ledger show FILE lists the rest)");
    }

    /** The file. */
    public Path file() {
        return file;
    }

    /** The ε budget. */
    public double epsilonBudget() {
        return epsilonBudget;
    }

    /** The δ at which spent ε is computed. */
    public double delta() {
        return delta;
    }

    /** Every entry, in order (a copy). */
    public synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }

    /** The composition of all charged events. */
    public synchronized PrivacyEvent spentEvent() {
        return new ComposedEvent(entries.stream().filter(Entry::charged).map(Entry::event).toList());
    }

    /** (ε, δ) spent so far: the composition of all charges at the ledger's δ. */
    public synchronized PrivacyGuarantee spent() {
        return Accountants.tightest(spentEvent(), delta);
    }

    /** ε left before the budget: budget − spent (never below 0). */
    public synchronized double remaining() {
        return Math.max(0, epsilonBudget - spent().epsilon());
    }

    /** The ε spent if this event were charged too (nothing is written). */
    public synchronized double epsilonAfter(PrivacyEvent event) {
        List<PrivacyEvent> all = new ArrayList<>(entries.stream().filter(Entry::charged).map(Entry::event).toList());
        all.add(event);
        return Accountants.tightest(new ComposedEvent(all), delta).epsilon();
    }

    /**
     * Checks the budget and appends a charge, forced to disk before returning.
     *
     * @return the entry written
     * @throws BudgetExceededException if spent ε with this event would exceed the budget (nothing is written)
     * @throws IOException             if the write fails (the entry may then be on disk or not: reopen to see)
     */
    public synchronized Entry charge(String label, PrivacyEvent event) throws IOException {
        double after = epsilonAfter(event);
        if (after > epsilonBudget) {
            throw new BudgetExceededException(String.format("privacy budget exceeded in %s: '%s' would bring epsilon to %.6g "
                    + "at delta %s, above the budget %s (spent so far %.6g)", file, label, after, delta, epsilonBudget,
                    spent().epsilon()));
        }
        return write(true, label, event, null);
    }

    /**
     * Appends an audit entry whose cost is covered by the charge {@code coveredBy}, forced to disk.
     *
     * @throws IllegalArgumentException if {@code coveredBy} is not a charge in this ledger
     * @throws IOException              if the write fails
     */
    public synchronized Entry record(String label, PrivacyEvent event, long coveredBy) throws IOException {
        if (entries.stream().noneMatch(e -> e.charged() && e.sequence() == coveredBy)) {
            throw new IllegalArgumentException("coveredBy " + coveredBy + " is not a charge in " + file);
        }
        return write(false, label, event, coveredBy);
    }

    /**
     * For tuners: {@link #charge} when {@code coveredBy} is null, else {@link #record} under it; the
     * entry's sequence number. A failed write is an {@link java.io.UncheckedIOException} (and nothing runs).
     */
    long chargeOrRecord(String label, PrivacyEvent event, Long coveredBy) {
        try {
            return coveredBy == null ? charge(label, event).sequence() : record(label, event, coveredBy).sequence();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("could not write the privacy ledger " + file, e);
        }
    }

    private Entry write(boolean charged, String label, PrivacyEvent event, Long coveredBy) throws IOException {
        Entry e = new Entry(entries.isEmpty() ? 1 : entries.get(entries.size() - 1).sequence() + 1, Instant.now().toString(),
                charged, label, event, coveredBy);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("seq", e.sequence());
        m.put("time", e.time());
        m.put("charged", charged);
        m.put("label", label);
        m.put("event", event.toMap());
        m.put("covered_by", coveredBy);
        append(m);
        entries.add(e);
        return e;
    }

    private void append(Map<String, Object> line) throws IOException {
        byte[] bytes = (JSON.writeValueAsString(line) + "\n").getBytes(StandardCharsets.UTF_8);
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        long position = channel.size();
        while (buf.hasRemaining()) {
            position += channel.write(buf, position);
        }
        channel.force(true);
    }

    @Override
    public synchronized void close() throws IOException {
        try {
            lock.release();
        } finally {
            channel.close();
        }
    }
}
