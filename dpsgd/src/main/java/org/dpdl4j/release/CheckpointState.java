package org.dpdl4j.release;

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
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.PrivateNormalisation;

/**
 * A training run's checkpoint state ({@code state.json}, written and read by {@link PrivateRun}), bound to what it may continue. The plan (every setting that defines the run's
 * event or its release, the run's identifier and the data's digest) has a SHA-256 ({@code plan_sha256}); the model and
 * moving-average files have theirs; the whole state has one over all of it ({@code state_sha256}). {@link #verify} refuses
 * a checkpoint whose hashes do not match, whose plan contradicts itself (q ≠ B/n, T ≠ ⌈E/q⌉, steps done outside [0, T],
 * an event so far that is not the one of the steps done) or whose files lie outside the checkpoint folder.
 *
 * <p>A file's hash can be recomputed by whoever edits it, so without a ledger these checks hold against mistakes and
 * careless edits only. With a ledger (itself hash-chained) the checkpoint is also checked against what the ledger holds,
 * which an edit of the checkpoint cannot change ({@link #checkAgainstLedger}): the charge was made for this run
 * (its identifier), for this plan (its digest: data set and data digest, model, σ, q, C, T, …), for this event, on this
 * ledger's data set; the state to continue from is the charge's starting state or a checkpoint the ledger recorded under
 * it (its steps done and its files' digest); and the charge has not released yet.
 */
public final class CheckpointState {
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();
    /**
     * The field of a plan holding the claim a network's weights carried before the run (its event's map), which the
     * release claims composed with the run's own event; hashed into {@code plan_sha256} when present.
     */
    public static final String EARLIER_CLAIM = "earlier_claim";
    /** The field holding the hash of the rest of the state. */
    public static final String STATE_HASH = "state_sha256";
    /** The checkpoint format this dpdl4j writes and reads. */
    public static final int FORMAT = 2;
    /** The settings that define the run (its event, its data, its release); hashed as {@code plan_sha256}. */
    public static final List<String> PLAN = List.of("format", "run", "dataset", "data_sha256", "image_size", "n", "model", "optimizer",
            "activation", "batch_size", "epochs", "sampling_rate", "noise_multiplier", "clip_norm", "steps", "physical_batch_size",
            "ema_decay", "delta", "secure_noise", "non_private", "weights_seed", "ledger", "accountant", "data_normalisation",
            "augmult");

    private CheckpointState() {
    }

    /**
     * A new training run's plan: the fields of {@link #PLAN} and the settings' keys, with a fresh run identifier; what
     * {@link PrivateRun#start} writes and a resume checks. {@code train} and {@code PrivateTraining} both build theirs here.
     *
     * @param dataset           the data set's name (the ledger's, when there is one)
     * @param dataSha256        the training data's digest, 64 hex digits
     * @param imageSize         "HxWxC", "HxWxC/scale" or "unspecified"
     * @param n                 the training data's size, ≥ 1
     * @param model             the model's name (or class)
     * @param activation        the activation's name
     * @param settings          the run's settings with q and σ resolved, and the accountant named
     * @param steps             T ≥ 1
     * @param weightsSeed       the initial weights' seed, or null when the network came built
     * @param ledger            the ledger's file, or null
     * @return a new, mutable map
     */
    public static Map<String, Object> plan(String dataset, String dataSha256, String imageSize, int n, String model,
                                           String activation, org.dpdl4j.dpsgd.DpSgdSettings settings, long steps,
                                           Long weightsSeed, Path ledger) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("format", FORMAT);
        s.put("run", java.util.UUID.randomUUID().toString());
        s.put("dataset", dataset);
        s.put("data_sha256", dataSha256);
        s.put("image_size", imageSize);
        s.put("n", n);
        s.put("model", model);
        s.put("activation", activation);
        s.putAll(settings.toMap());
        s.put("steps", steps);
        s.put("weights_seed", weightsSeed);
        s.put("ledger", ledger == null ? null : ledger.toAbsolutePath().toString());
        return s; // data_normalisation: a setting (settings.toMap())
    }

    /**
     * SHA-256 (hex) of the plan's fields of {@code state}: those of {@link #PLAN} in its order (a field the state lacks
     * counts as null), then the settings' keys ({@link org.dpdl4j.dpsgd.DpSgdSettings#KEYS}) that {@link #PLAN} does not
     * name, each when the state has it (so that a setting added later leaves older checkpoints' hashes as they were), and
     * {@link #EARLIER_CLAIM} when the state has it.
     *
     * @param state a run's state (values JSON-writable)
     * @return 64 lower-case hex digits
     * @throws IllegalStateException if a value cannot be written as JSON
     */
    public static String planHash(Map<String, Object> state) {
        Map<String, Object> plan = new LinkedHashMap<>();
        for (String key : PLAN) {
            plan.put(key, state.get(key));
        }
        for (String key : org.dpdl4j.dpsgd.DpSgdSettings.KEYS) {
            if (!PLAN.contains(key) && state.containsKey(key)) {
                plan.put(key, state.get(key));
            }
        }
        if (state.containsKey(EARLIER_CLAIM)) { // what the release claims besides the charge: bound to the charge's plan too
            plan.put(EARLIER_CLAIM, state.get(EARLIER_CLAIM));
        }
        return sha256(json(plan));
    }

    /**
     * SHA-256 (hex) of the whole state without its own hash field.
     *
     * @param state a run's state (values JSON-writable)
     * @return 64 lower-case hex digits
     * @throws IllegalStateException if a value cannot be written as JSON
     */
    public static String stateHash(Map<String, Object> state) {
        Map<String, Object> rest = new LinkedHashMap<>(state);
        rest.remove(STATE_HASH);
        return sha256(json(rest));
    }

    /**
     * The digest of the saved iterate a state continues from (its model file's and moving average's SHA-256): what the
     * ledger binds to a charge's start and to each checkpoint.
     *
     * @param state a run's state naming its files' digests
     * @return 64 lower-case hex digits
     */
    public static String iterateDigest(Map<String, Object> state) {
        return sha256("model " + state.get("model_sha256") + " ema " + state.get("ema_sha256"));
    }

    /**
     * SHA-256 (hex) of a file's bytes.
     *
     * @param file a regular file
     * @return 64 lower-case hex digits
     * @throws IOException if it cannot be read
     */
    public static String sha256(Path file) throws IOException {
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
     * Reads and verifies {@code dir/state.json} on its own (its hashes, its plan against itself, its files).
     *
     * @param dir the checkpoint's directory
     * @return the state, verified
     * @throws IllegalArgumentException naming the file, the field and what is wrong
     * @throws IOException              if a file cannot be read
     */
    public static Map<String, Object> verify(Path dir) throws IOException {
        Path file = dir.resolve("state.json");
        Map<String, Object> state = readObject(file, "resume");
        if (!(state.get("format") instanceof Number f) || f.intValue() != FORMAT) {
            throw new IllegalArgumentException("resume: checkpoint " + file + " was written by an earlier dpdl4j (checkpoint "
                    + "format " + (state.get("format") == null ? 1 : state.get("format")) + ", this one reads " + FORMAT + "), "
                    + "without the bindings to its ledger charge that this dpdl4j checks; finish it with the dpdl4j that started "
                    + "it, or start a new run");
        }
        for (String key : List.of("run", "dataset", "image_size", "model", "activation", "accountant", "model_file",
                "plan_sha256", STATE_HASH, "model_sha256")) {
            text(file, state, key);
        }
        if (state.get("optimizer") != null) { // null: the network's own updater (PrivateTraining)
            text(file, state, "optimizer");
        }
        for (String key : List.of("n", "batch_size", "epochs", "sampling_rate", "noise_multiplier", "clip_norm", "steps",
                "physical_batch_size", "ema_decay", "delta", "steps_done", "checkpoint_every", "augmult")) {
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
            number(file, state, "ledger_charge");
            if (state.get("ledger") == null) {
                throw refused(file, "it names a ledger charge but no ledger");
            }
        }
        return state;
    }

    /**
     * The whole event a state's plan charges: the DP-SGD run's, after the data normalisation's if any.
     *
     * @param state a verified state ({@link #verify})
     * @return the event the run's charge must be
     */
    public static PrivacyEvent plannedEvent(Map<String, Object> state) {
        PrivacyEvent training = DpSgdTrainer.event(((Number) state.get("sampling_rate")).doubleValue(),
                ((Number) state.get("noise_multiplier")).doubleValue(), ((Number) state.get("steps")).longValue());
        return state.get("data_normalisation") instanceof Number norm
                ? ComposedEvent.of(PrivateNormalisation.event(norm.doubleValue()), training) : training;
    }

    /**
     * Checks a verified state against its ledger (see the class comment) and returns the charge that pays for it, or null
     * when the ledger holds none for this run (the run was stopped between its plan and its charge: nothing ran).
     *
     * @param dir    the checkpoint's directory (for messages)
     * @param state  the verified state ({@link #verify})
     * @param ledger the ledger the state names
     * @return the charge, or null
     * @throws IllegalArgumentException naming what does not match the ledger
     * @throws PrivacyLedger.AlreadyReleasedException if the charge has released already
     * @throws PrivacyLedger.LedgerException          if the ledger is corrupt, was tampered with, or is locked too long
     * @throws java.io.UncheckedIOException            if the ledger cannot be read
     */
    public static PrivacyLedger.Entry checkAgainstLedger(Path dir, Map<String, Object> state, PrivacyLedger ledger) {
        Path file = dir.resolve("state.json");
        String run = (String) state.get("run");
        if (!ledger.dataset().equals(state.get("dataset"))) {
            throw refused(file, "its plan trains on " + state.get("dataset") + ", but ledger " + ledger.file() + " is for "
                    + ledger.dataset());
        }
        PrivacyLedger.Entry charge;
        if (state.get("ledger_charge") instanceof Number seq) {
            charge = ledger.entries().stream().filter(e -> e.charged() && e.sequence() == seq.longValue()).findFirst()
                    .orElseThrow(() -> refused(file, "ledger " + ledger.file() + " has no charge " + seq));
        } else {
            charge = ledger.chargeOf(run).orElse(null);
            if (charge == null) {
                if (((Number) state.get("steps_done")).longValue() != 0) {
                    throw refused(file, "it has done steps, but ledger " + ledger.file() + " holds no charge for its run " + run);
                }
                return null;
            }
        }
        PrivacyEvent planned = plannedEvent(state);
        if (!run.equals(charge.run())) {
            throw refused(file, "ledger " + ledger.file() + " made charge " + charge.sequence() + " for run " + charge.run()
                    + ", not for this checkpoint's run " + run);
        }
        if (!charge.event().equals(planned) || !state.get("plan_sha256").equals(charge.plan())) {
            throw refused(file, "its plan (" + planned + ", plan digest " + state.get("plan_sha256") + ") is not what ledger "
                    + ledger.file() + " charged in entry " + charge.sequence() + " (" + charge.event() + ", plan digest "
                    + charge.plan() + ")");
        }
        long done = ((Number) state.get("steps_done")).longValue();
        if (!ledger.reached(charge.sequence(), done, iterateDigest(state))) {
            throw refused(file, "its model after " + done + " steps is not a state that ledger " + ledger.file() + " recorded "
                    + "for charge " + charge.sequence() + " (neither its start nor one of its checkpoints): the run cannot go on "
                    + "from it under that charge");
        }
        ledger.releaseOf(charge.sequence()).ifPresent(released -> {
            throw new PrivacyLedger.AlreadyReleasedException("resume: the run of checkpoint " + file + " was charged to ledger "
                    + ledger.file() + " (entry " + charge.sequence() + "), and that charge has already released (entry "
                    + released.sequence() + ", " + released.time() + ": " + released.label() + "): a copy of this run released "
                    + "first, and one charge releases once. Start a new run (a new charge) instead", released);
        });
        return charge;
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
     * @param file the file
     * @param what how messages begin, e.g. {@code --resume runs/a}
     * @return its fields, in file order
     * @throws IOException              if it cannot be read
     * @throws IllegalArgumentException starting with {@code what}, naming the file, if it is not a complete JSON object
     */
    public static Map<String, Object> readObject(Path file, String what) throws IOException {
        try {
            @SuppressWarnings("unchecked")
            Map<String, Object> read = JSON.readValue(file.toFile(), LinkedHashMap.class);
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
        return new IllegalArgumentException("resume: checkpoint " + file + " refused: " + why);
    }

    private static String json(Map<String, Object> map) {
        try {
            return JSON.writeValueAsString(map);
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
