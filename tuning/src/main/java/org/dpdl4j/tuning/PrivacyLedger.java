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
 * <p>Tamper evidence (format version 2): every line ends with {@code "hash"}, the SHA-256 of the line's bytes
 * without that field, and every line after the header carries {@code "prev"}, the hash of the line before it, so the
 * lines form a hash chain from the header (which holds the budget) to the last entry, the head. Opening checks the
 * whole chain and the consecutive sequence numbers and refuses a ledger where any line was edited, removed, inserted,
 * duplicated or reordered ({@link LedgerException}, naming the line). What it cannot catch: someone who rewrites the
 * whole file with a new chain, or removes lines from the end; against both, keep the head hash ({@link #headHash},
 * printed by {@code ledger show} and {@code ledger verify}) somewhere the operator does not control, and check it later
 * with {@code ledger verify --head}. Ledgers written before the chain (version 1) are refused until {@link #upgrade}d.
 *
 * <p>One process at a time: the file is locked while open (an fcntl lock on Linux, which closing any other descriptor
 * of the file in the same process would release: the file is only ever read and written through the locked channel).
 * Thread-safe within the process.
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
    private String dataset;        // null until read from the header when opened without one
    private double epsilonBudget;  // NaN until read from the header when opened without one
    private double delta;
    private final FileChannel channel;
    private final FileLock lock;
    private final List<Entry> entries = new ArrayList<>();
    private final List<String> repairs = new ArrayList<>();
    /** The hash of the last line written or read: the next line's "prev". */
    private String head = "";
    /** How long {@link #open} waits for another process that holds the ledger. */
    static final long LOCK_WAIT_SECONDS = 60;
    /** The format version this file is written in. */
    static final int VERSION = 2;
    private static final String HASH_FIELD = ",\"hash\":\"";
    /** What a line's hash field adds after the body's closing brace is removed: ,"hash":"&lt;64 hex&gt;"} */
    private static final int HASH_SUFFIX = HASH_FIELD.length() + 64 + 2;

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
        if (Double.isNaN(epsilonBudget)) { // NaN means "from the header" inside this class only
            throw new IllegalArgumentException("ledger epsilon budget must be > 0 (or infinite), got NaN");
        }
        return open(file, dataset, epsilonBudget, delta, false);
    }

    private static PrivacyLedger open(Path file, String dataset, double epsilonBudget, double delta, boolean upgrade)
            throws IOException {
        boolean fromHeader = Double.isNaN(epsilonBudget);
        if (!fromHeader && !(epsilonBudget > 0)) {
            throw new IllegalArgumentException("ledger epsilon budget must be > 0 (or infinite), got " + epsilonBudget);
        }
        if (!fromHeader && !(delta > 0 && delta < 1)) {
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
        FileLock lock = null;
        long deadline = System.nanoTime() + LOCK_WAIT_SECONDS * 1_000_000_000L;
        try {
            // another process's lock is waited for (a concurrent run then sees its charge); this process's is an error
            while ((lock = ch.tryLock()) == null && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
        } catch (OverlappingFileLockException e) {
            lock = null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            lock = null;
        }
        if (lock == null) {
            ch.close();
            throw new LedgerException("privacy ledger " + file + " is in use by another dpdl4j process (or thread; waited up to "
                    + LOCK_WAIT_SECONDS + " s for it); one writer at a time: try again when it has finished");
        }
        try {
            PrivacyLedger ledger = new PrivacyLedger(file, dataset, epsilonBudget, delta, ch, lock);
            ledger.load(upgrade);
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
        return openExisting(file, dataset, false);
    }

    private static PrivacyLedger openExisting(Path file, String dataset, boolean upgrade) throws IOException {
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException("privacy ledger " + file + " is a directory; give a file");
        }
        if (!Files.exists(file)) {
            throw new IllegalArgumentException("privacy ledger " + file + " does not exist; give a budget to create it");
        }
        if (Files.size(file) == 0) {
            throw new IllegalArgumentException("privacy ledger " + file + " is empty (not a ledger); give a budget to create one");
        }
        // the budget and δ come from the header, read under the lock through the locked channel
        return open(file, dataset, Double.NaN, Double.NaN, upgrade);
    }

    /**
     * Opens an existing ledger whatever its dataset, with the budget and δ it was created with (for inspection).
     *
     * @throws IllegalArgumentException if the file does not exist or is a directory
     * @throws LedgerException         if it is corrupt, tampered with, not a ledger, or locked
     * @throws IOException              if it cannot be read
     */
    public static PrivacyLedger openExisting(Path file) throws IOException {
        return openExisting(file, null, false);
    }

    /**
     * Rewrites a version-1 ledger (written before the hash chain) in version 2, in place and under its lock, after saving
     * the original beside it as {@code FILE.v1-TIME}; the entries are kept as they are. The chain then vouches for the
     * lines from now on only: what was edited before the upgrade cannot be told.
     *
     * @return the ledger, open, with its new head hash
     * @throws LedgerException if the file is not a version-1 ledger or is corrupt
     * @throws IOException     if it cannot be read or written
     */
    public static PrivacyLedger upgrade(Path file) throws IOException {
        return openExisting(file, null, true);
    }

    /** What opening the ledger repaired (a torn last line), one sentence each; empty when nothing was. */
    public List<String> repairs() {
        return List.copyOf(repairs);
    }

    /** The whole file, read through the locked channel (never through another descriptor: see the class comment). */
    private byte[] readAll() throws IOException {
        long size = channel.size();
        if (size > Integer.MAX_VALUE - 16) {
            throw new LedgerException("privacy ledger " + file + " is larger than 2 GiB");
        }
        ByteBuffer buf = ByteBuffer.allocate((int) size);
        long position = 0;
        while (buf.hasRemaining()) {
            int read = channel.read(buf, position);
            if (read < 0) {
                break;
            }
            position += read;
        }
        return java.util.Arrays.copyOf(buf.array(), (int) position);
    }

    private void load(boolean upgrade) throws IOException {
        byte[] raw = readAll();
        int lastNewline = raw.length - 1;
        while (lastNewline >= 0 && raw[lastNewline] != '\n') {
            lastNewline--;
        }
        // complete lines end at the last newline byte; a torn tail may end inside a multi-byte character
        String text = new String(raw, 0, lastNewline + 1, StandardCharsets.UTF_8);
        String tornTail = new String(raw, lastNewline + 1, raw.length - lastNewline - 1, StandardCharsets.UTF_8);
        if (raw.length == 0) {
            if (upgrade || Double.isNaN(epsilonBudget)) {
                throw new IllegalArgumentException("privacy ledger " + file + " is empty; give a budget to create it");
            }
            Map<String, Object> header = new LinkedHashMap<>();
            header.put("ledger", "dpdl4j-privacy-ledger");
            header.put("version", VERSION);
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
        int version = 0;
        for (int i = 0; i < lines.length - 1; i++) {
            Map<?, ?> m;
            try {
                m = JSON.readValue(lines[i], Map.class);
            } catch (JsonProcessingException e) {
                if (i == 0) {
                    throw new LedgerException(file + " is not a dpdl4j privacy ledger (its first line is not JSON)");
                }
                throw corrupt(i + 1, lines[i], "not JSON: " + e.getOriginalMessage());
            }
            if (i == 0) {
                if (m == null) {
                    throw new LedgerException(file + " is not a dpdl4j privacy ledger (its first line is not a ledger header)");
                }
                checkHeader(m);
                version = m.get("version") instanceof Number v ? v.intValue() : 1;
                if (version == 1 && !upgrade) {
                    throw new LedgerException("privacy ledger " + file + " was written by an earlier dpdl4j (format version 1, "
                            + "without a hash chain); run 'dpdl4j ledger upgrade " + file + "' to add the chain (it then vouches for "
                            + "the lines as they are now, not for edits made before)");
                }
                if (version == 2 && upgrade) {
                    throw new LedgerException("privacy ledger " + file + " is already in format version 2");
                }
                if (version != 1 && version != 2) {
                    throw new LedgerException("privacy ledger " + file + " has format version " + m.get("version")
                            + ", which this dpdl4j does not know (it reads 1 and 2): use a newer dpdl4j");
                }
            }
            if (version == 2) {
                checkChain(i + 1, lines[i], m);
            }
            if (i == 0) {
                continue;
            }
            Entry entry;
            if (!(m.get("seq") instanceof Number seq) || seq.doubleValue() != seq.longValue()) {
                throw corrupt(i + 1, lines[i], "its sequence number is missing or not a whole number");
            }
            if (!(m.get("event") instanceof Map<?, ?>)) {
                throw corrupt(i + 1, lines[i], "it has no event");
            }
            try {
                entry = new Entry(((Number) m.get("seq")).longValue(), (String) m.get("time"),
                        Boolean.TRUE.equals(m.get("charged")), (String) m.get("label"),
                        PrivacyEvents.fromMap((Map<?, ?>) m.get("event")),
                        m.get("covered_by") == null ? null : ((Number) m.get("covered_by")).longValue());
            } catch (RuntimeException e) {
                throw corrupt(i + 1, lines[i], "not a ledger entry: " + e.getMessage());
            }
            long due = entries.isEmpty() ? 1 : entries.get(entries.size() - 1).sequence() + 1;
            if (entry.sequence() != due) {
                throw new LedgerException("privacy ledger " + file + " line " + (i + 1) + " is entry " + entry.sequence()
                        + " where entry " + due + " was due: a line was removed, duplicated or reordered; dpdl4j will not use it");
            }
            if (entry.coveredBy() != null && entries.stream().noneMatch(e -> e.charged() && e.sequence() == entry.coveredBy())) {
                throw new LedgerException("privacy ledger " + file + " line " + (i + 1) + " is a record under charge "
                        + entry.coveredBy() + ", which is not a charge before it");
            }
            entries.add(entry);
        }
        if (upgrade) {
            rewriteChained(raw, lines);
            return;
        }
        if (!torn.isEmpty()) {
            repairTornLine(lastNewline + 1, torn, lines.length, raw);
        }
    }

    /**
     * Checks a version-2 line: it ends with its own hash, the hash matches the bytes before it, and (after the header)
     * its "prev" is the hash of the line before.
     */
    private void checkChain(int lineNumber, String line, Map<?, ?> m) {
        int at = line.length() - HASH_SUFFIX;
        if (at < 1 || !line.startsWith(HASH_FIELD, at) || !line.endsWith("\"}")) {
            throw new LedgerException("privacy ledger " + file + " line " + lineNumber + " has no hash at its end: it was "
                    + "edited after it was written (or not written by dpdl4j); dpdl4j will not use this ledger");
        }
        String body = line.substring(0, at) + "}";
        String hash = line.substring(at + HASH_FIELD.length(), line.length() - 2);
        if (!hash.equals(sha256(body))) {
            throw new LedgerException("privacy ledger " + file + " line " + lineNumber + " does not match its hash: it was "
                    + "edited after it was written; dpdl4j will not use this ledger");
        }
        Object prev = m.get("prev");
        if (!head.equals(prev == null ? "" : prev)) {
            throw new LedgerException("privacy ledger " + file + " line " + lineNumber + " does not follow line "
                    + (lineNumber - 1) + " (the hash chain is broken: a line was removed, inserted, duplicated or reordered); "
                    + "dpdl4j will not use this ledger");
        }
        head = hash;
    }

    /** Rewrites the loaded version-1 lines as version 2 (see {@link #upgrade}), after saving the original. */
    private void rewriteChained(byte[] raw, String[] lines) throws IOException {
        Path backup = file.resolveSibling(file.getFileName() + ".v1-" + Instant.now().toString().replace(':', '-'));
        Files.write(backup, raw, StandardOpenOption.CREATE_NEW);
        channel.truncate(0);
        head = "";
        for (int i = 0; i < lines.length - 1; i++) {
            @SuppressWarnings("unchecked")
            Map<String, Object> m = JSON.readValue(lines[i], LinkedHashMap.class);
            m.remove("prev");
            m.remove("hash");
            if (i == 0) {
                m.put("version", VERSION);
                m.put("upgraded", Instant.now().toString());
            }
            append(m);
        }
        repairs.add("privacy ledger " + file + " was upgraded to format version 2 (hash chain) with its " + entries.size()
                + " entries as they were; the original is saved as " + backup);
    }

    /** The SHA-256 of a line's UTF-8 bytes, in hex. */
    private static String sha256(String text) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Repairs a torn last line in place (see the class comment), after saving the original file beside it.
     *
     * @param start the torn line's offset in bytes (just after the last newline)
     */
    private void repairTornLine(long start, String torn, int lineNumber, byte[] raw) throws IOException {
        Path backup = file.resolveSibling(file.getFileName() + ".torn-" + Instant.now().toString().replace(':', '-'));
        Files.write(backup, raw, StandardOpenOption.CREATE_NEW); // from the bytes read: another descriptor would drop the lock
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
        Object hb = h.get("epsilon_budget");
        if (!(h.get("delta") instanceof Number hd) || !(h.get("dataset") instanceof String hs) || !("inf".equals(hb) || hb instanceof Number)) {
            throw new LedgerException(file + " is not a dpdl4j privacy ledger (its first line has no dataset, budget and delta)");
        }
        if (dataset == null) {
            dataset = hs;
        }
        double headerBudget = "inf".equals(hb) ? Double.POSITIVE_INFINITY : ((Number) hb).doubleValue();
        if (!(headerBudget > 0) || !(hd.doubleValue() > 0 && hd.doubleValue() < 1)) {
            throw new LedgerException(file + " is not a usable dpdl4j privacy ledger: its header has budget " + hb + " and delta "
                    + hd + " (a budget > 0 and a delta in (0, 1) are allowed)");
        }
        if (Double.isNaN(epsilonBudget)) {
            epsilonBudget = headerBudget;
            delta = hd.doubleValue();
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

    /** The dataset this ledger is for. */
    public String dataset() {
        return dataset;
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
     * entry's sequence number. A record equal to one already on file (same label, event and charge: a resumed tuning
     * reaching a trial it had recorded before the crash) is not written again. A failed write is an
     * {@link java.io.UncheckedIOException} (and nothing runs).
     */
    synchronized long chargeOrRecord(String label, PrivacyEvent event, Long coveredBy) {
        if (coveredBy != null) {
            for (Entry e : entries) {
                if (!e.charged() && coveredBy.equals(e.coveredBy()) && label.equals(e.label()) && event.equals(e.event())) {
                    return e.sequence();
                }
            }
        }
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

    /** Appends one line: its content, "prev" (the head so far, after the header), then its own hash; the hash becomes the head. */
    private void append(Map<String, Object> content) throws IOException {
        Map<String, Object> line = new LinkedHashMap<>(content);
        if (!head.isEmpty()) {
            line.put("prev", head);
        }
        String body = JSON.writeValueAsString(line);
        String hash = sha256(body);
        byte[] bytes = (body.substring(0, body.length() - 1) + HASH_FIELD + hash + "\"}\n").getBytes(StandardCharsets.UTF_8);
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        long position = channel.size();
        while (buf.hasRemaining()) {
            position += channel.write(buf, position);
        }
        channel.force(true);
        head = hash;
    }

    /**
     * The hash of the last line, the head of the chain: keep it where the operator cannot change it, and check later
     * that the ledger still contains it ({@link #containsHash}), to detect a rewritten or truncated ledger.
     */
    public synchronized String headHash() {
        return head;
    }

    /**
     * Whether some line of this ledger has this hash (an anchored head is still in the chain).
     *
     * @throws IOException if the file cannot be read
     */
    public synchronized boolean containsHash(String hash) throws IOException {
        for (String line : new String(readAll(), StandardCharsets.UTF_8).split("\n")) {
            if (line.endsWith(hash + "\"}") && line.length() >= HASH_SUFFIX) {
                return true;
            }
        }
        return false;
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
