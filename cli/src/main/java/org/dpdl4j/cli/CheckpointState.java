package org.dpdl4j.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyEvents;
import org.dpdl4j.benchmarks.Reporting;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.PrivateNormalisation;
import org.dpdl4j.tuning.PrivacyLedger;

/**
 * A train checkpoint's {@code state.json}, bound to what it may continue. The plan (every setting that defines the run's
 * event or its release) has a SHA-256 ({@code plan_sha256}); the model and moving-average files have theirs; the whole
 * state has one over all of it ({@code state_sha256}). {@link #verify} refuses a checkpoint whose hashes do not match,
 * whose plan contradicts itself (q ≠ B/n, T ≠ ⌈E/q⌉, steps done outside [0, T], an event so far that is not the one of
 * the steps done), whose files lie outside the checkpoint folder, or whose plan is not the event the ledger charged.
 *
 * <p>What this protects against: an edited or damaged state.json, a swapped model file, a plan that would run more
 * steps, or with other noise, than was charged. A file's hash can be recomputed by whoever edits it, so without a
 * ledger the checks hold against mistakes and careless edits only; with a ledger (itself hash-chained) the plan must
 * also equal the charged event, which an edit of the checkpoint cannot change.
 */
final class CheckpointState {
    /** The field holding the hash of the rest of the state. */
    static final String STATE_HASH = "state_sha256";
    /** The settings that define the run (its event, its data, its release); hashed as {@code plan_sha256}. */
    static final List<String> PLAN = List.of("dataset", "image_size", "n", "model", "optimizer", "activation", "batch_size", "epochs",
            "sampling_rate", "noise_multiplier", "clip_norm", "steps", "physical_batch_size", "ema_decay", "delta", "secure_noise",
            "non_private", "weights_seed", "ledger", "ledger_charge", "accountant", "data_normalisation");
    /** Plan keys hashed only when set, so that checkpoints written before they existed keep their hash. */
    private static final List<String> OPTIONAL = List.of("data_normalisation");

    /** Opens a ledger named by a checkpoint (to compare the plan with its charge). */
    @FunctionalInterface
    interface LedgerOpener {
        PrivacyLedger open(Path file) throws IOException;
    }

    private CheckpointState() {
    }

    /** SHA-256 (hex) of the plan's fields of {@code state}, in {@link #PLAN}'s order. */
    static String planHash(Map<String, Object> state) {
        Map<String, Object> plan = new LinkedHashMap<>();
        for (String key : PLAN) {
            if (state.get(key) != null || !OPTIONAL.contains(key)) {
                plan.put(key, state.get(key));
            }
        }
        return sha256(json(plan));
    }

    /** SHA-256 (hex) of the whole state without its own hash field. */
    static String stateHash(Map<String, Object> state) {
        Map<String, Object> rest = new LinkedHashMap<>(state);
        rest.remove(STATE_HASH);
        return sha256(json(rest));
    }

    /** SHA-256 (hex) of a file's bytes. */
    static String sha256(Path file) throws IOException {
        MessageDigest md = digest();
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[1 << 16];
            for (int r; (r = in.read(buf)) > 0; ) {
                md.update(buf, 0, r);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /**
     * Reads and verifies {@code dir/state.json}.
     *
     * @return the state, verified
     * @throws IllegalArgumentException naming the file, the field and what is wrong
     * @throws IOException              if a file cannot be read
     */
    static Map<String, Object> verify(Path dir, LedgerOpener ledgers) throws IOException {
        Path file = dir.resolve("state.json");
        Map<String, Object> state = readObject(file, "--resume");
        for (String key : List.of("dataset", "image_size", "model", "optimizer", "activation", "accountant", "model_file",
                "plan_sha256", STATE_HASH, "model_sha256")) {
            text(file, state, key);
        }
        for (String key : List.of("n", "batch_size", "epochs", "sampling_rate", "noise_multiplier", "clip_norm", "steps",
                "physical_batch_size", "ema_decay", "delta", "steps_done", "checkpoint_every")) {
            number(file, state, key);
        }
        if (!stateHash(state).equals(state.get(STATE_HASH))) {
            throw refused(file, "its content does not match its " + STATE_HASH + " (it was edited or damaged after it was written)");
        }
        if (!planHash(state).equals(state.get("plan_sha256"))) {
            throw refused(file, "its plan does not match its plan_sha256 (a setting of the run was changed)");
        }
        checkFile(dir, file, state, "model_file", "model-step-[0-9]+\\.zip", "model_sha256");
        if (state.get("ema_file") != null) {
            text(file, state, "ema_file");
            text(file, state, "ema_sha256");
            checkFile(dir, file, state, "ema_file", "ema-step-[0-9]+\\.bin", "ema_sha256");
        }
        int n = number(file, state, "n").intValue();
        int batch = number(file, state, "batch_size").intValue();
        double q = number(file, state, "sampling_rate").doubleValue();
        double sigma = number(file, state, "noise_multiplier").doubleValue();
        long steps = number(file, state, "steps").longValue();
        long done = number(file, state, "steps_done").longValue();
        if (q != (double) batch / n) {
            throw refused(file, "sampling_rate " + q + " is not batch_size/n = " + batch + "/" + n);
        }
        if (steps != DpSgdConfig.stepsForEpochs(number(file, state, "epochs").doubleValue(), q)) {
            throw refused(file, "steps " + steps + " is not the planned ceil(epochs/q)");
        }
        if (done < 0 || done > steps) {
            throw refused(file, "steps_done " + done + " is outside [0, " + steps + "]");
        }
        PrivacyEvent soFar;
        try {
            soFar = PrivacyEvents.fromMap((Map<?, ?>) state.get("event_so_far"));
        } catch (RuntimeException e) {
            throw refused(file, "event_so_far is not an event (" + e.getMessage() + ")");
        }
        if (!soFar.equals(DpSgdTrainer.event(q, sigma, done))) {
            throw refused(file, "event_so_far is not the event of its " + done + " steps");
        }
        Object norm = state.get("data_normalisation");
        if (norm != null && !(norm instanceof Number d && d.doubleValue() > 0 && Double.isFinite(d.doubleValue()))) {
            throw refused(file, "data_normalisation " + norm + " is not a noise multiplier > 0");
        }
        if (state.get("ledger_charge") != null) {
            PrivacyEvent training = DpSgdTrainer.event(q, sigma, steps);
            checkCharge(file, state, ledgers, state.get("data_normalisation") != null
                    ? ComposedEvent.of(PrivateNormalisation.event(number(file, state, "data_normalisation").doubleValue()), training)
                    : training);
        }
        return state;
    }

    /** The plan's whole event must be the ledger's charge, entry {@code ledger_charge}. */
    private static void checkCharge(Path file, Map<String, Object> state, LedgerOpener ledgers, PrivacyEvent planned)
            throws IOException {
        long entry = number(file, state, "ledger_charge").longValue();
        Path ledgerFile = Path.of(text(file, state, "ledger"));
        if (!Files.exists(ledgerFile)) {
            throw refused(file, "its run was charged to " + ledgerFile + ", which does not exist: the plan cannot be checked "
                    + "against its charge");
        }
        try (PrivacyLedger ledger = ledgers.open(ledgerFile)) {
            PrivacyLedger.Entry charge = ledger.entries().stream().filter(e -> e.sequence() == entry && e.charged()).findFirst()
                    .orElseThrow(() -> refused(file, "ledger " + ledgerFile + " has no charge " + entry));
            if (!charge.event().equals(planned)) {
                throw refused(file, "its plan (" + planned + ") is not what ledger " + ledgerFile + " charged in entry " + entry
                        + " (" + charge.event() + ")");
            }
        }
    }

    /** A file named by the state: a plain name of the expected form (inside the checkpoint folder) with the recorded hash. */
    private static void checkFile(Path dir, Path file, Map<String, Object> state, String key, String pattern, String hashKey)
            throws IOException {
        String name = text(file, state, key);
        if (!name.matches(pattern)) {
            throw refused(file, key + " '" + name + "' is not a file of this checkpoint (expected a name like "
                    + pattern.replace("[0-9]+", "N").replace("\\", "") + " inside " + dir + ")");
        }
        Path f = dir.resolve(name);
        if (!Files.isRegularFile(f)) {
            throw refused(file, key + " " + f + " does not exist");
        }
        if (!sha256(f).equals(state.get(hashKey))) {
            throw refused(file, key + " " + f + " does not match " + hashKey + " (replaced or damaged)");
        }
    }

    private static String text(Path file, Map<String, Object> state, String key) {
        if (!(state.get(key) instanceof String s)) {
            throw refused(file, "field '" + key + "' is " + (state.containsKey(key) ? "not a string" : "missing"));
        }
        return s;
    }

    private static Number number(Path file, Map<String, Object> state, String key) {
        if (!(state.get(key) instanceof Number v)) {
            throw refused(file, "field '" + key + "' is " + (state.containsKey(key) ? "not a number" : "missing"));
        }
        return v;
    }

    /**
     * A JSON object from a resume state file, in file order.
     *
     * @throws IllegalArgumentException starting with {@code what}, naming the file, if it is not a complete JSON object
     */
    static Map<String, Object> readObject(Path file, String what) throws IOException {
        try {
            @SuppressWarnings("unchecked")
            Map<String, Object> read = Reporting.JSON.readValue(file.toFile(), LinkedHashMap.class);
            if (read == null) {
                throw new IllegalArgumentException(what + ": " + file + " is empty");
            }
            return read;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException(what + ": " + file + " is not a complete JSON object (damaged or cut short): "
                    + e.getOriginalMessage());
        }
    }

    private static IllegalArgumentException refused(Path file, String why) {
        return new IllegalArgumentException("--resume: checkpoint " + file + " refused: " + why);
    }

    private static String json(Map<String, Object> map) {
        try {
            return Reporting.JSON.writeValueAsString(map);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String sha256(String text) {
        return HexFormat.of().formatHex(digest().digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    private static MessageDigest digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
