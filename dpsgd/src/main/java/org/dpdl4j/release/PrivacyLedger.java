package org.dpdl4j.release;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyEvents;
import org.dpdl4j.accounting.PrivacyGuarantee;

/**
 * An append-only journal of what has been spent against one dataset, with a budget (ε, δ). One JSON object per line: a
 * header line (dataset, budget), then one line per entry. Each entry is written with a single write and forced to disk
 * (fsync) before the method that writes it returns, so a caller that writes before acting never loses an entry to a
 * crash.
 *
 * <p>Kinds of entry ({@link Kind}): a <em>charge</em> adds its event to the spent budget (the spent ε is that of the
 * composition of all charges at the ledger's δ, by the tightest registered accountant that supports it,
 * {@link Accountants#tightest}); a <em>record</em> is an audit entry whose cost an earlier charge already covers (a trial
 * of a tuning charged up front); a <em>checkpoint</em> binds a run's progress (its steps done and the digest of its
 * saved state) to its charge, so that a resumed run can start only from a state that run really reached; a
 * <em>release</em> binds a charge to the one release it paid for ({@link #recordRelease}: a second, different release
 * under the same charge is refused); a <em>torn</em> entry says that a write was cut off (below). Only charges cost ε.
 *
 * <p>A torn last line (bytes without the final newline) is what a crash in the middle of an append leaves. The method
 * that wrote it never returned, so nothing ran under it, and it costs nothing: the next writer saves the file beside it
 * as {@code FILE.torn-TIME}, cuts the torn bytes off and appends a torn entry quoting them, so the evidence stays in the
 * chain ({@link #repairs()} says so). An append that fails (a full disk) cuts its own bytes off before it reports the
 * failure, under the lock, so that no other process sees them.
 *
 * <p>Tamper evidence (format version 2): every line ends with {@code "hash"}, the SHA-256 of the line's bytes without that
 * field, and every line after the header carries {@code "prev"}, the hash of the line before it, so the lines form a hash
 * chain from the header (which holds the budget) to the last entry, the head. Reading checks the whole chain and the
 * consecutive sequence numbers and refuses a ledger where any line was edited, removed, inserted, duplicated or
 * reordered ({@link LedgerException}, naming the line). The head is also kept in {@code FILE.head}, rewritten atomically
 * after every append and compared on every read: a ledger whose last lines were cut off no longer contains that head and
 * is refused. What neither catches: someone who rewrites or cuts both files consistently, or deletes {@code FILE.head}
 * with the lines; against that, keep the head hash ({@link #headHash}, printed by {@code ledger show} and
 * {@code ledger verify}) somewhere the operator does not control, and check it later with {@code ledger verify --head}.
 * Ledgers written before the chain (version 1) are refused until {@link #upgrade}d.
 *
 * <p>Several processes and threads may hold the same ledger open: every operation takes the file's lock (an exclusive
 * fcntl lock to write, a shared one to read; waiting up to a minute for another process) and first reads what others
 * appended since, checking that it continues the chain; nothing is locked between operations. Within one JVM a
 * per-file mutex comes first, because closing a second descriptor of the file would release the process's fcntl lock.
 * {@link #inspect} opens a ledger read-only: it never writes, and reports a torn tail instead of repairing it.
 *
 * <p>This class holds what the lines mean: the kinds of entry, the budget, one charge per run and one release per
 * charge. The file itself (its lines, lock, hash chain, head file and torn-tail repair) is kept by a package-private
 * journal, which hands each checked line to this class.
 */
public final class PrivacyLedger implements AutoCloseable {
    /** What an entry is (see the class comment); only a {@link #CHARGE} costs ε. */
    public enum Kind {
        /** Adds its event to the spent budget. */
        CHARGE,
        /** An audit entry covered by an earlier charge. */
        RECORD,
        /** A run's progress under its charge: steps done and the digest of the saved state. */
        CHECKPOINT,
        /** The one release of a charge: the digest of what was released. */
        RELEASE,
        /** A write that was cut off (never acknowledged): its bytes as evidence, no cost. */
        TORN
    }

    /**
     * One journal line.
     *
     * @param sequence  1, 2, … in file order
     * @param time      when it was written (ISO-8601)
     * @param kind      what it is
     * @param label     what it was for, for people
     * @param event     what it cost (a charge) or what the covered part cost (a record, a checkpoint's steps so far, a
     *                  release's whole event); null for a torn entry
     * @param coveredBy the charge a record, checkpoint or release falls under; null for a charge or a torn entry
     * @param run       a charge's run identifier (null when the caller gave none)
     * @param plan      a charge's plan digest: SHA-256 of the settings the run was charged for (or null)
     * @param digest    a charge's starting state, a checkpoint's state, a release's files: a SHA-256 (or null)
     * @param stepsDone a checkpoint's steps done (null otherwise)
     */
    public record Entry(long sequence, String time, Kind kind, String label, PrivacyEvent event, Long coveredBy, String run,
                        String plan, String digest, Long stepsDone) {
        /**
         * Whether this entry costs ε (a charge).
         *
         * @return true exactly when {@link #kind()} is {@link Kind#CHARGE}
         */
        public boolean charged() {
            return kind == Kind.CHARGE;
        }
    }

    /** The ledger file cannot be used: corrupt, tampered with, not a ledger, or locked too long. The message is one line. */
    public static final class LedgerException extends IllegalStateException {
        /**
         * An exception with a one-line message.
         *
         * @param message names the file, the line and what is wrong
         */
        public LedgerException(String message) {
            super(message);
        }
    }

    /** Thrown by {@link #charge} when the entry would take the spent ε above the budget; nothing is written. */
    public static final class BudgetExceededException extends IllegalStateException {
        /**
         * An exception with a one-line message.
         *
         * @param message says what would have been spent and the budget
         */
        public BudgetExceededException(String message) {
            super(message);
        }
    }

    /** Thrown by {@link #recordRelease} when the charge has already released something else; nothing is written. */
    public static final class AlreadyReleasedException extends IllegalStateException {
        private final Entry release;

        /**
         * An exception naming the release already on file.
         *
         * @param message names the charge, the first release and the way out
         * @param release that first release (a {@link Kind#RELEASE} entry)
         */
        public AlreadyReleasedException(String message, Entry release) {
            super(message);
            this.release = release;
        }

        /**
         * The release already on file for the charge.
         *
         * @return the first release entry of the charge, as given to the constructor
         */
        public Entry release() {
            return release;
        }
    }

    /** How long an operation waits for another process that holds the ledger. */
    static final long LOCK_WAIT_SECONDS = LedgerJournal.LOCK_WAIT_SECONDS;
    /** The format version this file is written in. */
    static final int VERSION = LedgerJournal.VERSION;

    private final LedgerJournal journal;
    private final Path file;
    private String dataset;        // null until read from the header when opened without one
    private double epsilonBudget;  // NaN until read from the header when opened without one
    private double delta;
    private final List<Entry> entries = new ArrayList<>();

    private PrivacyLedger(Path file, String dataset, double epsilonBudget, double delta, boolean readOnly) {
        this.file = file;
        this.dataset = dataset;
        this.epsilonBudget = epsilonBudget;
        this.delta = delta;
        this.journal = new LedgerJournal(file, readOnly, new LedgerJournal.Lines() {
            @Override
            public void header(Map<?, ?> header) {
                checkHeader(header);
            }

            @Override
            public void entry(int number, String line, Map<?, ?> content) {
                readEntry(number, line, content);
            }

            @Override
            public long tornEntry(int bytes, String shown) throws IOException {
                return write(Kind.TORN, "torn write of " + bytes + " bytes, never acknowledged (nothing ran under it): " + shown,
                        null, null, null, null, null, null).sequence();
            }
        });
    }

    /**
     * Opens the ledger at {@code file}, creating it with this dataset and budget if it does not exist. An existing ledger
     * keeps the dataset and budget it was created with; asking for another is an error (a budget is not raised silently).
     *
     * @param file          the ledger file (its parent directories are created if missing); not a directory
     * @param dataset       the name of the dataset the budget protects, not null; must equal the file's if it exists
     * @param epsilonBudget ε budget &gt; 0 (+∞ for a journal without a limit)
     * @param delta         δ ∈ (0, 1) at which spent ε is computed
     * @return the open ledger, with every existing line read and checked
     * @throws IllegalArgumentException on an invalid budget or δ, a file that is a directory, or a dataset/budget that
     *                                  differs from the file's
     * @throws LedgerException          if the file is corrupt (the message names the line), not a ledger, in format
     *                                  version 1, or locked too long
     * @throws IOException              if it cannot be read or written
     */
    public static PrivacyLedger open(Path file, String dataset, double epsilonBudget, double delta) throws IOException {
        if (!(epsilonBudget > 0)) {
            throw new IllegalArgumentException("ledger epsilon budget must be > 0 (or infinite), got " + epsilonBudget);
        }
        if (!(delta > 0 && delta < 1)) {
            throw new IllegalArgumentException("ledger delta must be in (0, 1), got " + delta);
        }
        checkNotDirectory(file);
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        PrivacyLedger ledger = new PrivacyLedger(file, dataset, epsilonBudget, delta, false);
        ledger.journal.locked(true, () -> {
            if (ledger.journal.isEmpty()) {
                ledger.writeHeader();
            }
            return null;
        });
        return ledger;
    }

    /**
     * Opens an existing ledger with the budget and δ it was created with.
     *
     * @param file    the ledger file
     * @param dataset the dataset the ledger must be for (null: any, as {@link #openExisting(Path)})
     * @return the open ledger, with every line read and checked
     * @throws IllegalArgumentException if the file does not exist, is empty, is a directory, or belongs to another
     *                                  dataset
     * @throws LedgerException          if it is corrupt, tampered with, not a ledger, in format version 1, or locked
     *                                  too long
     * @throws IOException              if it cannot be read
     */
    public static PrivacyLedger open(Path file, String dataset) throws IOException {
        return openExisting(file, dataset, false, false);
    }

    /**
     * Opens an existing ledger whatever its dataset, with the budget and δ it was created with, for use (a torn last
     * line is repaired by the first write).
     *
     * @param file the ledger file
     * @return the open ledger, with every line read and checked
     * @throws IllegalArgumentException if the file does not exist, is empty, or is a directory
     * @throws LedgerException          if it is corrupt, tampered with, not a ledger, in format version 1, or locked
     *                                  too long
     * @throws IOException              if it cannot be read
     */
    public static PrivacyLedger openExisting(Path file) throws IOException {
        return openExisting(file, null, false, false);
    }

    /**
     * Opens an existing ledger read-only, for inspection: nothing is ever written (a torn last line is reported in
     * {@link #repairs()} as found, not repaired); every write method throws {@link IllegalStateException}.
     *
     * @param file the ledger file
     * @return the ledger, open read-only, with every line read and checked
     * @throws IllegalArgumentException if the file does not exist, is empty, or is a directory
     * @throws LedgerException          if it is corrupt, tampered with, not a ledger, in format version 1, or held by a
     *                                  writer for more than a minute
     * @throws IOException              if it cannot be read
     */
    public static PrivacyLedger inspect(Path file) throws IOException {
        return openExisting(file, null, true, false);
    }

    /**
     * Rewrites a version-1 ledger (written before the hash chain) in version 2, in place and under its lock, after saving
     * the original beside it as {@code FILE.v1-TIME}; the entries are kept as they are. The chain then vouches for the
     * lines from now on only: what was edited before the upgrade cannot be told. A version-1 file whose lines carry the
     * chain's fields ({@code prev}, {@code hash}) is a version-2 ledger relabelled, and is refused.
     *
     * @param file the version-1 ledger file
     * @return the ledger, open, with its new head hash
     * @throws IllegalArgumentException if the file does not exist, is empty, or is a directory
     * @throws LedgerException          if the file is not a version-1 ledger (already version 2 included), is corrupt,
     *                                  ends in a torn line, or is locked too long
     * @throws IOException              if it cannot be read or written
     */
    public static PrivacyLedger upgrade(Path file) throws IOException {
        return openExisting(file, null, false, true);
    }

    private static PrivacyLedger openExisting(Path file, String dataset, boolean readOnly, boolean upgrade) throws IOException {
        checkNotDirectory(file);
        if (!Files.exists(file)) {
            throw new IllegalArgumentException("privacy ledger " + file + " does not exist; give a budget to create it");
        }
        if (Files.size(file) == 0) {
            throw new IllegalArgumentException("privacy ledger " + file + " is empty (not a ledger); give a budget to create one");
        }
        PrivacyLedger ledger = new PrivacyLedger(file, dataset, Double.NaN, Double.NaN, readOnly);
        if (upgrade) {
            ledger.journal.locked(true, () -> {
                ledger.journal.rewriteChained();
                return null;
            }, true);
        } else {
            ledger.journal.locked(!readOnly, () -> null);
        }
        return ledger;
    }

    private static void checkNotDirectory(Path file) {
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException("privacy ledger " + file + " is a directory; give a file");
        }
    }

    /**
     * What was repaired or upgraded by this object (or, read-only, found to need repair), one sentence each.
     *
     * @return an unmodifiable copy, empty when nothing was
     */
    public List<String> repairs() {
        return journal.repairs();
    }

    // ------------------------------------------------------------------------------------------------------------------
    // Reading the lines (called by the journal, under its lock, in file order)

    /** An entry line, already checked against the chain: parsed, checked against the entries before it and kept. */
    private void readEntry(int number, String line, Map<?, ?> m) {
        Entry entry = entry(number, line, m);
        long due = entries.isEmpty() ? 1 : entries.get(entries.size() - 1).sequence() + 1;
        if (entry.sequence() != due) {
            throw new LedgerException("privacy ledger " + file + " line " + number + " is entry " + entry.sequence()
                    + " where entry " + due + " was due: a line was removed, duplicated or reordered; dpdl4j will not use it");
        }
        if (entry.coveredBy() != null && charge(entry.coveredBy()) == null) {
            throw new LedgerException("privacy ledger " + file + " line " + number + " falls under charge "
                    + entry.coveredBy() + ", which is not a charge before it");
        }
        if (entry.kind() == Kind.RELEASE && releaseOf(entries, entry.coveredBy()) != null) {
            throw new LedgerException("privacy ledger " + file + " line " + number + " is a second release of charge "
                    + entry.coveredBy() + "; a charge releases once; dpdl4j will not use this ledger");
        }
        entries.add(entry);
    }

    private Entry entry(int number, String line, Map<?, ?> m) {
        if (!(m.get("seq") instanceof Number seq) || seq.doubleValue() != seq.longValue()) {
            throw corrupt(number, line, "its sequence number is missing or not a whole number");
        }
        Kind kind;
        try {
            kind = m.get("kind") instanceof String k ? Kind.valueOf(k.toUpperCase(java.util.Locale.ROOT))
                    : Boolean.TRUE.equals(m.get("charged")) ? Kind.CHARGE : Kind.RECORD;
        } catch (IllegalArgumentException e) {
            throw corrupt(number, line, "unknown kind " + m.get("kind"));
        }
        if ((kind == Kind.CHARGE) != Boolean.TRUE.equals(m.get("charged"))) {
            throw corrupt(number, line, "its kind " + kind + " contradicts charged: " + m.get("charged"));
        }
        if (kind != Kind.TORN && !(m.get("event") instanceof Map<?, ?>)) {
            throw corrupt(number, line, "it has no event");
        }
        boolean covered = kind == Kind.RECORD || kind == Kind.CHECKPOINT || kind == Kind.RELEASE;
        if (covered != (m.get("covered_by") != null)) {
            throw corrupt(number, line, "a " + kind.name().toLowerCase(java.util.Locale.ROOT) + (covered ? " must" : " cannot")
                    + " fall under a charge");
        }
        if ((kind == Kind.CHECKPOINT || kind == Kind.RELEASE) && !(m.get("digest") instanceof String)
                || kind == Kind.CHECKPOINT && !(m.get("steps_done") instanceof Number)) {
            throw corrupt(number, line, "a " + kind.name().toLowerCase(java.util.Locale.ROOT) + " needs its digest"
                    + (kind == Kind.CHECKPOINT ? " and steps_done" : ""));
        }
        try {
            return new Entry(seq.longValue(), (String) m.get("time"), kind, (String) m.get("label"),
                    kind == Kind.TORN ? null : PrivacyEvents.fromMap((Map<?, ?>) m.get("event")),
                    m.get("covered_by") == null ? null : ((Number) m.get("covered_by")).longValue(), (String) m.get("run"),
                    (String) m.get("plan"), (String) m.get("digest"),
                    m.get("steps_done") == null ? null : ((Number) m.get("steps_done")).longValue());
        } catch (RuntimeException e) {
            throw corrupt(number, line, "not a ledger entry: " + e.getMessage());
        }
    }

    /** The header's dataset and budget: taken when opened without them, else checked against them. */
    private void checkHeader(Map<?, ?> h) {
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
        if (!dataset.equals(hs)) {
            throw new IllegalArgumentException("ledger " + file + " is for dataset '" + hs + "', not '" + dataset + "'");
        }
        if (headerBudget != epsilonBudget || hd.doubleValue() != delta) {
            throw new IllegalArgumentException("ledger " + file + " was created with budget (epsilon " + hb + ", delta " + hd
                    + "); it cannot be reopened with (" + epsilonBudget + ", " + delta + ")");
        }
    }

    private LedgerException corrupt(int line, String content, String why) {
        return journal.corrupt(line, content, why);
    }

    // ------------------------------------------------------------------------------------------------------------------
    // What the ledger holds

    /**
     * The ledger's file.
     *
     * @return the path as given when opening
     */
    public Path file() {
        return file;
    }

    /**
     * The dataset this ledger is for.
     *
     * @return the dataset name from the file's header
     */
    public String dataset() {
        return dataset;
    }

    /**
     * The ε budget.
     *
     * @return the budget from the file's header, &gt; 0 (+∞ for a journal without a limit)
     */
    public double epsilonBudget() {
        return epsilonBudget;
    }

    /**
     * The δ at which spent ε is computed.
     *
     * @return δ from the file's header, in (0, 1)
     */
    public double delta() {
        return delta;
    }

    /**
     * Every entry, in order, as of now (what other processes appended is read first).
     *
     * @return an unmodifiable list of the entries, in sequence order (the header is not an entry)
     * @throws LedgerException          if the file was tampered with since, or is locked too long
     * @throws IllegalStateException    if this ledger is closed
     * @throws java.io.UncheckedIOException if the file cannot be read
     */
    public List<Entry> entries() {
        return snapshot(() -> List.copyOf(entries));
    }

    /**
     * The composition of all charged events (as of now; records, checkpoints, releases and torn entries cost nothing).
     *
     * @return a {@link ComposedEvent} of the charges' events, in ledger order (empty when nothing was charged)
     * @throws LedgerException          if the file is corrupt or was tampered with since the last operation, or is
     *                                  locked by another process for more than a minute
     * @throws IllegalStateException    if this ledger is closed
     * @throws java.io.UncheckedIOException if the file cannot be read
     */
    public PrivacyEvent spentEvent() {
        return snapshot(this::spentEventNow);
    }

    private PrivacyEvent spentEventNow() {
        return new ComposedEvent(entries.stream().filter(Entry::charged).map(Entry::event).toList());
    }

    /**
     * (ε, δ) spent so far: the composition of all charges at the ledger's δ, by the tightest registered accountant
     * ({@link Accountants#tightest}).
     *
     * @return the guarantee of {@link #spentEvent()} at {@link #delta()}
     * @throws LedgerException          if the file is corrupt or was tampered with since the last operation, or is
     *                                  locked by another process for more than a minute
     * @throws IllegalStateException    if this ledger is closed
     * @throws java.io.UncheckedIOException if the file cannot be read
     * @throws IllegalArgumentException if no registered accountant supports the composition
     */
    public PrivacyGuarantee spent() {
        PrivacyEvent spent = spentEvent();
        return Accountants.tightest(spent, delta);
    }

    /**
     * ε left before the budget: budget − spent (never below 0).
     *
     * @return max(0, {@link #epsilonBudget()} − ε of {@link #spent()}); +∞ for a journal without a limit
     * @throws LedgerException          if the file is corrupt or was tampered with since the last operation, or is
     *                                  locked by another process for more than a minute
     * @throws IllegalStateException    if this ledger is closed
     * @throws java.io.UncheckedIOException if the file cannot be read
     * @throws IllegalArgumentException if no registered accountant supports the composition
     */
    public double remaining() {
        return Math.max(0, epsilonBudget - spent().epsilon());
    }

    /**
     * The ε spent if this event were charged too (nothing is written).
     *
     * @param event the event to add to the charges, not null
     * @return ε at {@link #delta()} of the composition of all charges and {@code event}, by the tightest registered
     *         accountant
     * @throws LedgerException          if the file is corrupt or was tampered with since the last operation, or is
     *                                  locked by another process for more than a minute
     * @throws IllegalStateException    if this ledger is closed
     * @throws java.io.UncheckedIOException if the file cannot be read
     * @throws IllegalArgumentException if no registered accountant supports the composition
     */
    public double epsilonAfter(PrivacyEvent event) {
        return snapshot(() -> epsilonAfterNow(event));
    }

    private double epsilonAfterNow(PrivacyEvent event) {
        List<PrivacyEvent> all = new ArrayList<>(entries.stream().filter(Entry::charged).map(Entry::event).toList());
        all.add(event);
        return Accountants.tightest(new ComposedEvent(all), delta).epsilon();
    }

    /** The charge with this sequence number, or null. */
    private Entry charge(long sequence) {
        for (Entry e : entries) {
            if (e.sequence() == sequence) {
                return e.charged() ? e : null;
            }
        }
        return null;
    }

    /**
     * The charge made for the run {@code run} (its identifier, given to {@link #charge(String, PrivacyEvent, String, String,
     * String)}), if there is one.
     *
     * @param run the run's identifier, not null
     * @return the first charge entry with that run identifier, or empty
     * @throws LedgerException          if the file is corrupt or was tampered with since the last operation, or is
     *                                  locked by another process for more than a minute
     * @throws IllegalStateException    if this ledger is closed
     * @throws java.io.UncheckedIOException if the file cannot be read
     */
    public Optional<Entry> chargeOf(String run) {
        return snapshot(() -> entries.stream().filter(e -> e.charged() && run.equals(e.run())).findFirst());
    }

    /**
     * The release recorded under charge {@code charge}, if any.
     *
     * @param charge the charge's sequence number
     * @return the release entry covered by that charge, or empty
     * @throws LedgerException          if the file is corrupt or was tampered with since the last operation, or is
     *                                  locked by another process for more than a minute
     * @throws IllegalStateException    if this ledger is closed
     * @throws java.io.UncheckedIOException if the file cannot be read
     */
    public Optional<Entry> releaseOf(long charge) {
        return snapshot(() -> Optional.ofNullable(releaseOf(entries, charge)));
    }

    private static Entry releaseOf(List<Entry> entries, Long charge) {
        for (Entry e : entries) {
            if (e.kind() == Kind.RELEASE && charge.equals(e.coveredBy())) {
                return e;
            }
        }
        return null;
    }

    /**
     * Whether a run of charge {@code charge} may continue from a state with {@code stepsDone} steps and this digest: the
     * charge's own starting state (steps 0 and its digest), or a checkpoint recorded under it.
     *
     * @param charge    the charge's sequence number
     * @param stepsDone the state's number of steps done, &gt;= 0
     * @param digest    SHA-256 (hex) of the saved state, not null
     * @return true if the pair matches the charge's start or one of its checkpoints; false otherwise, also when
     *         {@code charge} is not a charge
     * @throws LedgerException          if the file is corrupt or was tampered with since the last operation, or is
     *                                  locked by another process for more than a minute
     * @throws IllegalStateException    if this ledger is closed
     * @throws java.io.UncheckedIOException if the file cannot be read
     */
    public boolean reached(long charge, long stepsDone, String digest) {
        return snapshot(() -> {
            Entry c = charge(charge);
            if (c == null) {
                return false;
            }
            if (stepsDone == 0 && digest.equals(c.digest())) {
                return true;
            }
            return entries.stream().anyMatch(e -> e.kind() == Kind.CHECKPOINT && Long.valueOf(charge).equals(e.coveredBy())
                    && e.stepsDone() == stepsDone && digest.equals(e.digest()));
        });
    }

    private <T> T snapshot(LedgerJournal.Action<T> read) {
        try {
            return journal.locked(false, read);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("could not read the privacy ledger " + file, e);
        }
    }

    // ------------------------------------------------------------------------------------------------------------------
    // Writing

    /**
     * Checks the budget and appends a charge, forced to disk before returning.
     *
     * @param label what the charge is for, for people
     * @param event what it costs, not null
     * @return the entry written
     * @throws BudgetExceededException  if spent ε with this event would exceed the budget (nothing is written)
     * @throws IllegalArgumentException if no registered accountant supports the composition with this event
     * @throws LedgerException          if the file is corrupt, was tampered with, or is locked too long
     * @throws IllegalStateException    if this ledger is closed or was opened read-only
     * @throws IOException              if the write fails (nothing is then on file: the bytes are cut off again)
     */
    public Entry charge(String label, PrivacyEvent event) throws IOException {
        return charge(label, event, null, null, null);
    }

    /**
     * Checks the budget and appends a charge bound to a run, forced to disk before returning. The binding is what a
     * resumed run is later checked against: its identifier ({@link #chargeOf}), the digest of the settings it was charged
     * for, and the digest of the state it starts from ({@link #reached}).
     *
     * @param label what the charge is for, for people
     * @param event what it costs, not null
     * @param run   the run's identifier (unique; null for none)
     * @param plan  SHA-256 (hex) of the run's settings, or null
     * @param start SHA-256 (hex) of the run's starting state, or null
     * @return the entry written
     * @throws BudgetExceededException  if spent ε with this event would exceed the budget (nothing is written)
     * @throws IllegalArgumentException if the run already has a charge, or no registered accountant supports the
     *                                  composition with this event
     * @throws LedgerException          if the file is corrupt, was tampered with, or is locked too long
     * @throws IllegalStateException    if this ledger is closed or was opened read-only
     * @throws IOException              if the write fails (nothing is then on file)
     */
    public Entry charge(String label, PrivacyEvent event, String run, String plan, String start) throws IOException {
        return journal.locked(true, () -> {
            if (run != null && entries.stream().anyMatch(e -> e.charged() && run.equals(e.run()))) {
                throw new IllegalArgumentException("run " + run + " already has a charge in " + file);
            }
            double after = epsilonAfterNow(event);
            if (after > epsilonBudget) {
                double spent = Accountants.tightest(spentEventNow(), delta).epsilon();
                throw new BudgetExceededException(String.format("privacy budget exceeded in %s: '%s' would bring epsilon to %.6g "
                        + "at delta %s, above the budget %s (spent so far %.6g)", file, label, after, delta, epsilonBudget, spent));
            }
            return write(Kind.CHARGE, label, event, null, run, plan, start, null);
        });
    }

    /**
     * Appends an audit entry whose cost is covered by the charge {@code coveredBy}, forced to disk. It costs no ε.
     *
     * @param label     what the entry is for, for people
     * @param event     what the covered part cost, not null
     * @param coveredBy the sequence number of the charge that covers it
     * @return the entry written
     * @throws IllegalArgumentException if {@code coveredBy} is not a charge in this ledger
     * @throws LedgerException          if the file is corrupt, was tampered with, or is locked too long
     * @throws IllegalStateException    if this ledger is closed or was opened read-only
     * @throws IOException              if the write fails
     */
    public Entry record(String label, PrivacyEvent event, long coveredBy) throws IOException {
        return journal.locked(true, () -> {
            requireCharge(coveredBy);
            return write(Kind.RECORD, label, event, coveredBy, null, null, null, null);
        });
    }

    /**
     * Records that the run of charge {@code charge} has saved a state after {@code stepsDone} steps, with this digest (what
     * {@link #reached} later accepts).
     *
     * @param charge    the charge's sequence number
     * @param stepsDone the steps done in the saved state, &gt;= 0
     * @param soFar     the event of the steps done, not null
     * @param digest    SHA-256 (hex) of the saved state
     * @return the checkpoint entry written
     * @throws IllegalArgumentException if {@code charge} is not a charge in this ledger
     * @throws AlreadyReleasedException if the charge has released already (its run must not go on)
     * @throws LedgerException          if the file is corrupt, was tampered with, or is locked too long
     * @throws IllegalStateException    if this ledger is closed or was opened read-only
     * @throws IOException              if the write fails
     */
    public Entry recordCheckpoint(long charge, long stepsDone, PrivacyEvent soFar, String digest) throws IOException {
        return journal.locked(true, () -> {
            requireCharge(charge);
            Entry released = releaseOf(entries, charge);
            if (released != null) {
                throw alreadyReleased(charge, released);
            }
            return write(Kind.CHECKPOINT, "checkpoint of charge " + charge + " after " + stepsDone + " steps", soFar, charge, null,
                    null, digest, stepsDone);
        });
    }

    /**
     * Records the one release of charge {@code charge}: the digest of what is about to be published. The same digest again
     * (a release that was recorded, then interrupted before its files were all in place) is not written twice.
     *
     * @param charge the charge's sequence number
     * @param digest SHA-256 (hex) of what is released (e.g. {@link StagedRelease#digest()}), not null
     * @param event  what the release costs (the charge's event, for people), not null
     * @param what   what is released, for people (e.g. the model's SHA-256)
     * @return the release entry (the one already on file when the digest is the same)
     * @throws AlreadyReleasedException if the charge has already released something else: nothing is written
     * @throws IllegalArgumentException if {@code charge} is not a charge in this ledger
     * @throws LedgerException          if the file is corrupt, was tampered with, or is locked too long
     * @throws IllegalStateException    if this ledger is closed or was opened read-only
     * @throws IOException              if the write fails
     */
    public Entry recordRelease(long charge, String digest, PrivacyEvent event, String what) throws IOException {
        return journal.locked(true, () -> {
            requireCharge(charge);
            Entry released = releaseOf(entries, charge);
            if (released != null) {
                if (released.digest().equals(digest)) {
                    return released;
                }
                throw alreadyReleased(charge, released);
            }
            return write(Kind.RELEASE, "release of charge " + charge + ": " + what, event, charge, null, null, digest, null);
        });
    }

    private AlreadyReleasedException alreadyReleased(long charge, Entry released) {
        return new AlreadyReleasedException("charge " + charge + " of privacy ledger " + file + " has already released (entry "
                + released.sequence() + ", " + released.time() + ": " + released.label() + "; release digest " + released.digest()
                + "): one charge releases once, so this copy of the run cannot release again. Start a new run, which is a new "
                + "charge", released);
    }

    private void requireCharge(long charge) {
        if (charge(charge) == null) {
            throw new IllegalArgumentException("entry " + charge + " is not a charge in " + file);
        }
    }

    /**
     * For tuners: {@link #charge} when {@code coveredBy} is null, else {@link #record} under it; the entry's sequence
     * number. A record equal to one already on file (same label, event and charge: a resumed tuning reaching a trial it
     * had recorded before the crash) is not written again. A failed write is an {@link java.io.UncheckedIOException} (and
     * nothing runs).
     *
     * @param label     what the entry is for, for people; not null when {@code coveredBy} is given
     * @param event     what it costs (a charge) or what the covered part cost (a record), not null
     * @param coveredBy the sequence number of the charge that covers a record, or null to charge
     * @return the sequence number of the entry written, or of the equal record already on file
     * @throws BudgetExceededException      if a charge would take spent ε above the budget (nothing is written)
     * @throws IllegalArgumentException     if {@code coveredBy} is not a charge in this ledger, or no registered
     *                                      accountant supports the composition with a charged event
     * @throws LedgerException              if the file is corrupt, was tampered with, or is locked too long
     * @throws IllegalStateException        if this ledger is closed or was opened read-only
     * @throws java.io.UncheckedIOException if the file cannot be read or the write fails
     */
    public long chargeOrRecord(String label, PrivacyEvent event, Long coveredBy) {
        try {
            return journal.locked(true, () -> {
                if (coveredBy != null) {
                    for (Entry e : entries) {
                        if (e.kind() == Kind.RECORD && coveredBy.equals(e.coveredBy()) && label.equals(e.label())
                                && event.equals(e.event())) {
                            return e.sequence();
                        }
                    }
                    requireCharge(coveredBy);
                    return write(Kind.RECORD, label, event, coveredBy, null, null, null, null).sequence();
                }
                double after = epsilonAfterNow(event);
                if (after > epsilonBudget) {
                    throw new BudgetExceededException(String.format("privacy budget exceeded in %s: '%s' would bring epsilon to "
                            + "%.6g at delta %s, above the budget %s", file, label, after, delta, epsilonBudget));
                }
                return write(Kind.CHARGE, label, event, null, null, null, null, null).sequence();
            });
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("could not write the privacy ledger " + file, e);
        }
    }

    private void writeHeader() throws IOException {
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("dataset", dataset);
        header.put("epsilon_budget", Double.isInfinite(epsilonBudget) ? "inf" : epsilonBudget);
        header.put("delta", delta);
        header.put("created", Instant.now().toString());
        journal.writeHeader(header);
    }

    private Entry write(Kind kind, String label, PrivacyEvent event, Long coveredBy, String run, String plan, String digest,
                        Long stepsDone) throws IOException {
        Entry e = new Entry(entries.isEmpty() ? 1 : entries.get(entries.size() - 1).sequence() + 1, Instant.now().toString(),
                kind, label, event, coveredBy, run, plan, digest, stepsDone);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("seq", e.sequence());
        m.put("time", e.time());
        m.put("charged", e.charged());
        if (kind != Kind.CHARGE && kind != Kind.RECORD) { // charges and records keep the lines they always had
            m.put("kind", kind.name().toLowerCase(java.util.Locale.ROOT));
        }
        m.put("label", label);
        m.put("event", event == null ? null : event.toMap());
        m.put("covered_by", coveredBy);
        putIfSet(m, "run", run);
        putIfSet(m, "plan", plan);
        putIfSet(m, "digest", digest);
        putIfSet(m, "steps_done", stepsDone);
        journal.writeEntry(m);
        entries.add(e);
        return e;
    }

    private static void putIfSet(Map<String, Object> m, String key, Object value) {
        if (value != null) {
            m.put(key, value);
        }
    }

    /**
     * What the ledger's head file ({@code FILE.head}) says, in words: that it names the last entry, that it lags (a
     * write of it failed, or a crash came between an entry and its rewrite: the next write brings it up), or that it is
     * missing, when lines cut off the ledger's end could not be detected.
     *
     * @return one sentence naming the head file
     */
    public String headFileStatus() {
        return journal.headFile();
    }

    /**
     * Whether the head file is missing, so that a cut-off end of the ledger would go unseen.
     *
     * @return true when there is no head file (and none was written since the ledger was read)
     */
    public boolean headFileMissing() {
        return journal.headFile().startsWith("no head file ");
    }

    /**
     * The hash of the last line, the head of the chain: keep it where the operator cannot change it, and check later
     * that the ledger still contains it ({@link #containsHash}), to detect a rewritten or truncated ledger.
     *
     * @return the SHA-256 (64 lower-case hex digits) of the ledger's last line, as of now
     * @throws LedgerException          if the file is corrupt or was tampered with since the last operation, or is
     *                                  locked by another process for more than a minute
     * @throws IllegalStateException    if this ledger is closed
     * @throws java.io.UncheckedIOException if the file cannot be read
     */
    public String headHash() {
        return snapshot(journal::head);
    }

    /**
     * Whether some line of this ledger has this hash (an anchored head is still in the chain).
     *
     * @param hash a line hash (SHA-256, 64 lower-case hex digits), e.g. an earlier {@link #headHash()}
     * @return true if a line read or written so far (the header included) has exactly this hash
     * @throws LedgerException          if the file is corrupt or was tampered with since the last operation, or is
     *                                  locked by another process for more than a minute
     * @throws IllegalStateException    if this ledger is closed
     * @throws java.io.UncheckedIOException if the file cannot be read
     */
    public boolean containsHash(String hash) {
        return snapshot(() -> journal.contains(hash));
    }

    /** Ends the use of this object (no lock is held between operations, so nothing else is released). */
    @Override
    public void close() {
        journal.close();
    }

}
