package org.dpdl4j.release;

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
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.dpdl4j.release.PrivacyLedger.LedgerException;

/**
 * The file under a {@link PrivacyLedger}: a locked, append-only, hash-chained sequence of JSON lines (a header, then one
 * line per entry), with its head file and its torn-tail repair. It knows what makes a line part of the chain, not what
 * a line means: the ledger reads each line ({@link Lines}) and keeps the budget rules. See {@link PrivacyLedger}'s class
 * comment for the format, the locking and what the chain detects.
 */
final class LedgerJournal {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long an operation waits for another process that holds the ledger. */
    static final long LOCK_WAIT_SECONDS = 60;
    /** The format version this file is written in. */
    static final int VERSION = 2;
    private static final String HASH_FIELD = ",\"hash\":\"";
    /** What a line's hash field adds after the body's closing brace is removed: ,"hash":"&lt;64 hex&gt;"} */
    private static final int HASH_SUFFIX = HASH_FIELD.length() + 64 + 2;
    /** One mutex per ledger file in this JVM (see {@link PrivacyLedger}'s class comment). */
    private static final Map<Path, ReentrantLock> JVM_LOCKS = new ConcurrentHashMap<>();

    /** What the ledger makes of the lines: called under the lock, in file order. */
    interface Lines {
        /** The header (line 1), after its marker was checked; throws if its dataset or budget is not the ledger's. */
        void header(Map<?, ?> header);

        /** Line {@code number} (&gt;= 2), already checked against the chain: parse, check and keep it. */
        void entry(int number, String line, Map<?, ?> content);

        /** A torn tail was cut off: append the entry that records it; returns its sequence number. */
        long tornEntry(int bytes, String shown) throws IOException;
    }

    /** An operation on the file. */
    @FunctionalInterface
    interface Action<T> {
        T run() throws IOException;
    }

    private final Path file;
    private final Path headFile;
    private final Path key;
    private final boolean readOnly;
    private final Lines reader;
    private final Set<String> hashes = new HashSet<>(); // every line's hash
    private final List<String> repairs = new ArrayList<>();
    /** The hash of the last line read or written: the next line's "prev". */
    private String head = "";
    /** Bytes of complete lines read so far (where the next line starts). */
    private long readUpTo;
    /** Lines read or written so far, the header included. */
    private int lines;
    private int version;
    private boolean closed;
    private boolean tornReported;
    /** The open channel of the operation in progress (null between operations). */
    private FileChannel channel;

    LedgerJournal(Path file, boolean readOnly, Lines reader) {
        this.file = file;
        this.headFile = file.resolveSibling(file.getFileName() + ".head");
        this.key = file.toAbsolutePath().normalize();
        this.readOnly = readOnly;
        this.reader = reader;
    }

    Path file() {
        return file;
    }

    /** Whether nothing has been read or written: a new file, to be given its header. */
    boolean isEmpty() {
        return lines == 0 && readUpTo == 0;
    }

    /** The hash of the last line (as of the last operation). */
    String head() {
        return head;
    }

    /** Whether a line read or written so far has this hash. */
    boolean contains(String hash) {
        return hashes.contains(hash);
    }

    synchronized List<String> repairs() {
        return List.copyOf(repairs);
    }

    synchronized void close() {
        closed = true;
    }

    // ------------------------------------------------------------------------------------------------------------------
    // Locking and reading

    <T> T locked(boolean write, Action<T> action) throws IOException {
        return locked(write, action, false);
    }

    /**
     * Runs {@code action} with the file locked (exclusively to write) after reading what was appended since the last
     * operation; the channel is closed, and the lock released, when it returns.
     */
    synchronized <T> T locked(boolean write, Action<T> action, boolean upgrading) throws IOException {
        if (closed) {
            throw new IllegalStateException("privacy ledger " + file + " is closed");
        }
        if (write && readOnly) {
            throw new IllegalStateException("privacy ledger " + file + " was opened read-only (inspect): it is not written");
        }
        ReentrantLock jvm = JVM_LOCKS.computeIfAbsent(key, k -> new ReentrantLock());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LOCK_WAIT_SECONDS);
        try {
            if (!jvm.tryLock(LOCK_WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw inUse();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw inUse();
        }
        try {
            channel = write ? FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)
                    : FileChannel.open(file, StandardOpenOption.READ);
            try {
                FileLock lock = null;
                try {
                    while ((lock = channel.tryLock(0, Long.MAX_VALUE, !write)) == null && System.nanoTime() < deadline) {
                        Thread.sleep(50);
                    }
                } catch (OverlappingFileLockException e) {
                    lock = null; // this JVM's mutex makes this impossible unless someone else opened the file
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    lock = null;
                }
                if (lock == null) {
                    throw inUse();
                }
                refresh(upgrading, write);
                return action.run();
            } finally {
                channel.close(); // releases the lock
                channel = null;
            }
        } finally {
            jvm.unlock();
        }
    }

    private LedgerException inUse() {
        return new LedgerException("privacy ledger " + file + " is in use by another dpdl4j process (or thread; waited up to "
                + LOCK_WAIT_SECONDS + " s for it); try again when it has finished");
    }

    /** Reads the bytes appended since the last operation: complete lines are checked and added; a torn tail is handled. */
    private void refresh(boolean upgrading, boolean write) throws IOException {
        long size = channel.size();
        if (size < readUpTo) {
            throw new LedgerException("privacy ledger " + file + " is shorter (" + size + " bytes) than when it was last read ("
                    + readUpTo + " bytes): lines were removed while it was open; dpdl4j will not use it");
        }
        if (size > Integer.MAX_VALUE - 16 + readUpTo) {
            throw new LedgerException("privacy ledger " + file + " grew by more than 2 GiB");
        }
        byte[] raw = read(readUpTo, (int) (size - readUpTo));
        int lastNewline = raw.length - 1;
        while (lastNewline >= 0 && raw[lastNewline] != '\n') {
            lastNewline--;
        }
        String text = new String(raw, 0, lastNewline + 1, StandardCharsets.UTF_8);
        int start = 0;
        for (int nl; (nl = text.indexOf('\n', start)) >= 0; start = nl + 1) {
            readLine(text.substring(start, nl), upgrading);
        }
        readUpTo += lastNewline + 1;
        if (lines == 0 && lastNewline + 1 < raw.length) {
            throw new LedgerException(file + " is not a dpdl4j privacy ledger (no complete header line)");
        }
        if (lines > 0 && version == 1 && !upgrading) {
            throw new LedgerException("privacy ledger " + file + " was written by an earlier dpdl4j (format version 1, "
                    + "without a hash chain); run 'dpdl4j ledger upgrade " + file + "' to add the chain (it then vouches for "
                    + "the lines as they are now, not for edits made before)");
        }
        if (lastNewline + 1 < raw.length) {
            torn(Arrays.copyOfRange(raw, lastNewline + 1, raw.length), write && !upgrading);
        }
        if (!upgrading) {
            checkHeadFile(write);
        }
    }

    private byte[] read(long position, int length) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(length);
        while (buf.hasRemaining()) {
            int r = channel.read(buf, position + buf.position());
            if (r < 0) {
                break;
            }
        }
        return Arrays.copyOf(buf.array(), buf.position());
    }

    /** One complete line: the header (the first) or an entry, checked against the chain, then given to the reader. */
    private void readLine(String line, boolean upgrading) {
        int number = ++lines;
        Map<?, ?> m;
        try {
            m = JSON.readValue(line, Map.class);
        } catch (JsonProcessingException e) {
            if (number == 1) {
                throw new LedgerException(file + " is not a dpdl4j privacy ledger (its first line is not JSON)");
            }
            throw corrupt(number, line, "not JSON: " + e.getOriginalMessage());
        }
        if (number == 1) {
            if (m == null || !"dpdl4j-privacy-ledger".equals(m.get("ledger"))) {
                throw new LedgerException(file + " is not a dpdl4j privacy ledger (its first line is not a ledger header)");
            }
            reader.header(m);
            version = m.get("version") instanceof Number v ? v.intValue() : 1;
            if (version == 2 && upgrading) {
                throw new LedgerException("privacy ledger " + file + " is already in format version 2");
            }
            if (version != 1 && version != 2) {
                throw new LedgerException("privacy ledger " + file + " has format version " + m.get("version")
                        + ", which this dpdl4j does not know (it reads 1 and 2): use a newer dpdl4j");
            }
        }
        if (m == null) {
            throw corrupt(number, line, "not a JSON object");
        }
        if (version == 2) {
            checkChain(number, line, m);
        } else if (m.containsKey("prev") || m.containsKey("hash")) {
            throw new LedgerException("privacy ledger " + file + " line " + number + " carries the hash chain's fields (prev, "
                    + "hash) although the file says it is format version 1: a version-2 ledger was relabelled; dpdl4j will "
                    + "neither use nor upgrade it");
        }
        if (number > 1) {
            reader.entry(number, line, m);
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
        hashes.add(hash);
    }

    /**
     * A torn tail (see {@link PrivacyLedger}'s class comment): repaired when writing (the original saved, the bytes cut
     * off, a torn entry appended by the reader), reported when reading only.
     */
    private void torn(byte[] tail, boolean repair) throws IOException {
        String shown = new String(tail, StandardCharsets.UTF_8).replaceAll("[^\\x20-\\x7e]", "?");
        shown = shown.length() > 300 ? shown.substring(0, 300) + "..." : shown;
        int lineNumber = lines + 1;
        if (!repair) {
            if (tornReported) {
                return;
            }
            tornReported = true;
            repairs.add("privacy ledger " + file + " line " + lineNumber + " is torn (" + tail.length + " bytes without a newline: "
                    + "a write cut off by a crash, never acknowledged, so nothing ran under it); it costs nothing, and the next "
                    + "run that writes to the ledger records it as torn");
            return;
        }
        Path backup = file.resolveSibling(file.getFileName() + ".torn-" + Instant.now().toString().replace(':', '-'));
        byte[] whole = read(0, (int) channel.size()); // from this channel: another descriptor would drop the lock
        Files.write(backup, whole, StandardOpenOption.CREATE_NEW);
        channel.truncate(readUpTo);
        channel.force(true);
        long sequence = reader.tornEntry(tail.length, shown);
        repairs.add("privacy ledger " + file + " line " + lineNumber + " was torn (a crash during a write, never acknowledged, "
                + "so nothing ran under it): it costs nothing, and is kept as torn entry " + sequence + " quoting its bytes; "
                + "the original file is saved as " + backup);
    }

    /**
     * FILE.head must name a line of the chain (else the ledger's end was cut off); when writing, it is brought up to the
     * head (it lags by the entries whose append finished before a crash stopped the head's rewrite).
     */
    private void checkHeadFile(boolean write) throws IOException {
        if (version != 2) {
            return;
        }
        String recorded = null;
        headFileRecorded = null;
        if (Files.exists(headFile)) {
            String text = Files.readString(headFile, StandardCharsets.UTF_8).trim();
            recorded = text.split("\\s+")[0];
            if (!recorded.matches("[0-9a-f]{64}")) {
                throw new LedgerException("privacy ledger " + file + ": its head file " + headFile + " does not hold a head hash ('"
                        + (text.length() > 80 ? text.substring(0, 80) : text) + "'); restore it, or delete it if you know "
                        + "the ledger is complete");
            }
            if (!hashes.contains(recorded)) {
                throw new LedgerException("privacy ledger " + file + " does not contain the head recorded in " + headFile + " ("
                        + recorded + "): its last entries were cut off or the file was replaced; dpdl4j will not use it "
                        + "(restore the ledger from a backup)");
            }
        }
        headFileRecorded = recorded;
        if (write && !head.equals(recorded)) {
            try {
                writeHeadFile();
            } catch (IOException lagging) { // as in writeEntry: it lags, and a later write brings it up
                headLags = lagging;
            }
        }
    }

    /** The head that FILE.head named when the ledger was last read (null: no head file), for {@link #headFile()}. */
    private String headFileRecorded;

    /**
     * What the head file says of the ledger, in words: whether it exists, and whether it names the last entry (it lags
     * when a write of it failed, or a crash came between an entry and its rewrite). Without it a cut-off end cannot be
     * told from a complete ledger.
     */
    String headFile() {
        if (version != 2) {
            return "no head file (format version " + version + ")";
        }
        if (headFileRecorded == null && headLags == null) {
            return "no head file " + headFile + ": lines removed from the ledger's end cannot be detected (dpdl4j writes it "
                    + "with every entry; restore it from a backup, or let the next write recreate it if you know the ledger is "
                    + "complete)";
        }
        if (headLags != null) {
            return "head file " + headFile + " lags behind the last entry (it could not be written: " + AtomicFiles.why(headLags)
                    + "); the next write brings it up";
        }
        return head.equals(headFileRecorded) ? "head file " + headFile + " names the last entry"
                : "head file " + headFile + " names an earlier entry (a crash came between an entry and its rewrite); the next "
                + "write brings it up";
    }

    /** FILE.head: the head hash and the last entry's sequence number (entries are numbered 1, 2, … after the header). */
    private void writeHeadFile() throws IOException {
        AtomicFiles.write(headFile, (head + " entry " + Math.max(0, lines - 1) + "\n").getBytes(StandardCharsets.UTF_8));
        headLags = null;
        headFileRecorded = head;
    }

    /**
     * Rewrites the loaded version-1 lines as version 2 (see {@link PrivacyLedger#upgrade}), after saving the original.
     * Called under the lock, from the action of {@code locked(true, …, true)}.
     */
    void rewriteChained() throws IOException {
        if (version != 1) {
            throw new LedgerException("privacy ledger " + file + " is already in format version 2");
        }
        byte[] raw = read(0, (int) channel.size());
        if (readUpTo != raw.length) {
            throw new LedgerException("privacy ledger " + file + " ends in a torn line; it is not upgraded (remove the "
                    + "incomplete last line by hand, then upgrade)");
        }
        Path backup = file.resolveSibling(file.getFileName() + ".v1-" + Instant.now().toString().replace(':', '-'));
        Files.write(backup, raw, StandardOpenOption.CREATE_NEW);
        String[] old = new String(raw, StandardCharsets.UTF_8).split("\n");
        channel.truncate(0);
        head = "";
        hashes.clear();
        version = 2;
        for (int i = 0; i < old.length; i++) {
            @SuppressWarnings("unchecked")
            Map<String, Object> m = JSON.readValue(old[i], LinkedHashMap.class);
            if (i == 0) {
                m.put("version", VERSION);
                m.put("upgraded", Instant.now().toString());
            }
            append(m);
        }
        readUpTo = channel.size();
        writeHeadFile();
        repairs.add("privacy ledger " + file + " was upgraded to format version 2 (hash chain) with its " + (lines - 1)
                + " entries as they were; the original is saved as " + backup);
    }

    // ------------------------------------------------------------------------------------------------------------------
    // Writing (under the write lock)

    /** Writes the header of a new ledger: the marker and the format version, then {@code fields} in their order. */
    void writeHeader(Map<String, Object> fields) throws IOException {
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("ledger", "dpdl4j-privacy-ledger");
        header.put("version", VERSION);
        header.putAll(fields);
        version = VERSION;
        append(header);
        lines = 1;
        writeHeadFile();
    }

    /**
     * Appends one entry line, forced to disk, and moves the head file to it. Once the line is on disk the entry is
     * recorded, whatever the head file does: a head file that cannot be rewritten (no space left) lags by this entry, as
     * after a crash between the two writes, and the next write or open brings it up; failing here would leave an entry on
     * file that its writer thinks was never made (a charge spent with no run to resume).
     */
    void writeEntry(Map<String, Object> content) throws IOException {
        append(content);
        lines++;
        try {
            writeHeadFile();
        } catch (IOException lagging) {
            headLags = lagging; // the entry stands; see headLag()
        }
    }

    /** The failure that left the head file behind the last entry, or null when it is up to date. */
    IOException headLag() {
        return headLags;
    }

    private IOException headLags;

    /**
     * Appends one line: its content, "prev" (the head so far, after the header), then its own hash; the hash becomes the
     * head. A failed write cuts its bytes off again before the failure is reported, naming the ledger.
     */
    private void append(Map<String, Object> content) throws IOException {
        Map<String, Object> line = new LinkedHashMap<>(content);
        if (!head.isEmpty()) {
            line.put("prev", head);
        }
        String body = JSON.writeValueAsString(line);
        String hash = sha256(body);
        byte[] bytes = (body.substring(0, body.length() - 1) + HASH_FIELD + hash + "\"}\n").getBytes(StandardCharsets.UTF_8);
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        long start = channel.size();
        long position = start;
        try {
            while (buf.hasRemaining()) {
                position += channel.write(buf, position);
            }
            channel.force(true);
        } catch (IOException e) {
            String undo;
            try {
                channel.truncate(start);
                channel.force(true);
                undo = "its partial line was removed, so nothing was recorded";
            } catch (IOException again) {
                undo = "its partial line could not be removed (" + again.getMessage() + "); it costs nothing and the next "
                        + "write records it as torn";
            }
            throw new IOException("could not write the privacy ledger " + file + " (" + e + "); " + undo, e);
        }
        head = hash;
        hashes.add(hash);
        readUpTo = position;
    }

    /** The SHA-256 of a line's UTF-8 bytes, in hex. */
    private static String sha256(String text) {
        return org.dpdl4j.datasets.Sha256.hex(text.getBytes(StandardCharsets.UTF_8));
    }

    /** A line that is not a valid entry: names the file, the line and why. */
    LedgerException corrupt(int line, String content, String why) {
        String shown = content.length() > 80 ? content.substring(0, 80) + "..." : content;
        return new LedgerException("privacy ledger " + file + " line " + line + " is corrupt (" + why.replace('\n', ' ') + "): '"
                + shown.replace('\n', ' ') + "'; dpdl4j drops no entry: repair the line by hand (ledger show FILE lists the rest)");
    }
}
