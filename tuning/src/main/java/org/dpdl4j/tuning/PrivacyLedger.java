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
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyEvents;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.RdpAccountant;

/**
 * An append-only journal of what has been spent against one dataset, with a budget (ε, δ). One
 * JSON object per line: a header line (dataset, budget), then one line per entry. Each entry is
 * written with a single write and forced to disk (fsync) before {@link #charge} or {@link #record}
 * returns, so a caller that records before using a result never loses an entry to a crash.
 *
 * <p>Two kinds of entry: a <em>charge</em> adds its event to the spent budget (the spent ε is the
 * RDP composition of all charges, converted at the ledger's δ); a <em>record</em> is an audit entry
 * whose cost is already covered by an earlier charge (a trial of a tuning run whose whole cost was
 * charged up front). Reopening a ledger restores every entry; a line that does not parse (a torn
 * tail after a crash, say) makes {@link #open} fail with the line number, and nothing is dropped.
 *
 * <p>One process at a time: the file is locked while open. Thread-safe within the process.
 */
public final class PrivacyLedger implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One journal line. */
    public record Entry(long sequence, String time, boolean charged, String label, PrivacyEvent event, Long coveredBy) {
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
    private final RdpAccountant accountant;
    private final FileChannel channel;
    private final FileLock lock;
    private final List<Entry> entries = new ArrayList<>();

    private PrivacyLedger(Path file, String dataset, double epsilonBudget, double delta, RdpAccountant accountant,
                          FileChannel channel, FileLock lock) {
        this.file = file;
        this.dataset = dataset;
        this.epsilonBudget = epsilonBudget;
        this.delta = delta;
        this.accountant = accountant;
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
     * @throws IllegalStateException    if the file is corrupt (the message names the line) or locked by another process
     * @throws IOException              if it cannot be read or written
     */
    public static PrivacyLedger open(Path file, String dataset, double epsilonBudget, double delta) throws IOException {
        if (!(epsilonBudget > 0)) {
            throw new IllegalArgumentException("ledger epsilon budget must be > 0 (or infinite), got " + epsilonBudget);
        }
        if (!(delta > 0 && delta < 1)) {
            throw new IllegalArgumentException("ledger delta must be in (0, 1), got " + delta);
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
            throw new IllegalStateException("privacy ledger " + file + " is open in another process or thread");
        }
        try {
            PrivacyLedger ledger = new PrivacyLedger(file, dataset, epsilonBudget, delta, RdpAccountant.standard(), ch, lock);
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
     * @throws IllegalStateException    if it is corrupt or locked
     * @throws IOException              if it cannot be read
     */
    public static PrivacyLedger open(Path file, String dataset) throws IOException {
        if (!Files.exists(file) || Files.size(file) == 0) {
            throw new IllegalArgumentException("privacy ledger " + file + " does not exist; give a budget to create it");
        }
        String first = Files.readString(file, StandardCharsets.UTF_8).split("\n", 2)[0];
        Map<?, ?> h;
        try {
            h = JSON.readValue(first, Map.class);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("privacy ledger " + file + " line 1 is corrupt: " + e.getOriginalMessage());
        }
        Object b = h.get("epsilon_budget");
        if (!(h.get("delta") instanceof Number d) || !("inf".equals(b) || b instanceof Number)) {
            throw new IllegalStateException(file + " is not a dpdl4j privacy ledger (first line " + h + ")");
        }
        return open(file, dataset, "inf".equals(b) ? Double.POSITIVE_INFINITY : ((Number) b).doubleValue(), d.doubleValue());
    }

    private void load() throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        if (text.isEmpty()) {
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
        String[] lines = text.split("\n", -1);
        if (!lines[lines.length - 1].isEmpty()) {
            throw corrupt(lines.length, lines[lines.length - 1], "the last line is not terminated (a torn write?)");
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
    }

    private void checkHeader(Map<?, ?> h) {
        if (!"dpdl4j-privacy-ledger".equals(h.get("ledger"))) {
            throw new IllegalStateException(file + " is not a dpdl4j privacy ledger (first line " + h + ")");
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

    private IllegalStateException corrupt(int line, String content, String why) {
        String shown = content.length() > 120 ? content.substring(0, 120) + "..." : content;
        return new IllegalStateException("privacy ledger " + file + " line " + line + " is corrupt (" + why + "): '" + shown
                + "'. It may be a charge whose write was interrupted; inspect and repair the file by hand —"
                + " dpdl4j does not drop entries.");
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
        return accountant.guarantee(spentEvent(), delta);
    }

    /** ε left before the budget: budget − spent (never below 0). */
    public synchronized double remaining() {
        return Math.max(0, epsilonBudget - spent().epsilon());
    }

    /** The ε spent if this event were charged too (nothing is written). */
    public synchronized double epsilonAfter(PrivacyEvent event) {
        List<PrivacyEvent> all = new ArrayList<>(entries.stream().filter(Entry::charged).map(Entry::event).toList());
        all.add(event);
        return accountant.epsilon(new ComposedEvent(all), delta);
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
