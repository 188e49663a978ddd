package org.dpdl4j.release;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.util.ModelSerializer;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.dpsgd.Checkpoint;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The lifecycle of one private training run in an output directory, in the order that neither loses nor repeats a
 * charge: the plan and the starting model written (the step-0 checkpoint, which also shows that the directory can take
 * a model), the ledger charged once for that plan, checkpoints (each recorded on the ledger under the charge), then the
 * release (model and sidecar, bound to the charge through {@link StagedRelease}, sidecar last), and only then the
 * checkpoint removed. A run killed at any point is continued by {@link #resume}: before its charge it is charged then
 * (nothing had run); after it, it continues from its last checkpoint under the same charge; while releasing, the staged
 * release goes out as it is. One process at a time holds a run ({@link RunLock}).
 *
 * <p>{@code dpdl4j train} and {@link org.dpdl4j.dpsgd.PrivateTraining} run through this class. The state ({@code
 * state.json}) is the plan of {@link CheckpointState#PLAN} plus the progress; {@link CheckpointState#verify} and
 * {@link CheckpointState#checkAgainstLedger} check it on resume.
 */
public final class PrivateRun implements AutoCloseable {
    /** Where a run keeps its checkpoint, relative to its output directory (operator-only, never released). */
    public static final String CHECKPOINT = "operator/checkpoint";
    private static final ObjectMapper PRETTY = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final Path out;
    private final Map<String, Object> state;
    private final PrivacyLedger ledger;
    private final long every;
    private RunLock lock;

    private PrivateRun(Path out, Map<String, Object> state, PrivacyLedger ledger, long every, RunLock lock) {
        this.out = out;
        this.state = state;
        this.ledger = ledger;
        this.every = every;
        this.lock = lock;
    }

    /**
     * Starts a run: checks the ledger's budget, writes the step-0 checkpoint (when the run checkpoints or is charged)
     * and checks that the directory has room for the rest, then charges the ledger once, bound to the run's identifier,
     * its plan digest and its starting model. On a failure before the charge nothing is left behind.
     *
     * @param out         the run's output directory (checked by the caller: new, or to be overwritten)
     * @param state       the plan: every field of {@link CheckpointState#PLAN} ({@code plan_sha256} is added if absent),
     *                    and {@code checkpoint_every}
     * @param network     the network before training
     * @param config      the run's DP-SGD settings
     * @param planned     the whole event the run will release (the ledger is charged with it)
     * @param ledger      the ledger to charge, or null
     * @param chargeLabel the ledger entry's label
     * @param every       steps between checkpoints, ≥ 0 (0: none but the start's when charged)
     * @return the started run, holding its lock
     * @throws IllegalArgumentException        if {@code every} &lt; 0, or the directory is in use or has no room for
     *                                         the run
     * @throws PrivacyLedger.BudgetExceededException if the charge exceeds the ledger's budget (nothing written)
     * @throws PrivacyLedger.LedgerException   if the ledger is corrupt, was tampered with, or is locked too long
     * @throws IOException                     if a file cannot be written
     */
    public static PrivateRun start(Path out, Map<String, Object> state, Model network, org.dpdl4j.dpsgd.DpSgdConfig config,
                                   PrivacyEvent planned, PrivacyLedger ledger, String chargeLabel, long every) throws IOException {
        if (every < 0) {
            throw new IllegalArgumentException("checkpoint every must be >= 0 steps, got " + every);
        }
        state.put("checkpoint_every", every);
        state.putIfAbsent("plan_sha256", CheckpointState.planHash(state));
        Path dir = out.resolve(CHECKPOINT);
        RunLock lock = null;
        boolean charged = false;
        PrivateRun run = null;
        try {
            if (ledger != null && ledger.epsilonAfter(planned) > ledger.epsilonBudget()) {
                ledger.charge(chargeLabel, planned); // refused by the budget, with the ledger's own message
            }
            if (every > 0 || ledger != null) {
                lock = RunLock.acquire(out);
                run = new PrivateRun(out, state, ledger, every, lock);
                run.saveCheckpoint(new Checkpoint(network, config, 0));
                checkSpace(out, dir.resolve((String) state.get("model_file")));
                CrashPoint.reached("train:before-charge");
            } else {
                run = new PrivateRun(out, state, null, every, null);
            }
            if (ledger != null) {
                long charge = ledger.charge(chargeLabel, planned, (String) state.get("run"), (String) state.get("plan_sha256"),
                        CheckpointState.iterateDigest(state)).sequence();
                charged = true;
                CrashPoint.reached("train:after-charge");
                state.put("ledger_charge", charge);
                try {
                    writeState(dir, state);
                } catch (IOException e) { // the step-0 state on disk resumes it: its charge is found by the run's identifier
                    throw new IOException("the run was charged (ledger entry " + charge + ") and its plan and starting model are "
                            + "in " + dir + ", but " + AtomicFiles.why(e) + ": free the space and resume the run (train --resume "
                            + out + ", or PrivateTraining.resume), which continues under that charge", e);
                }
            }
            return run;
        } catch (IOException | RuntimeException e) {
            charged |= ledger != null && ledger.entries().stream().anyMatch(x -> x.charged() && state.get("run").equals(x.run()));
            if (!charged) { // nothing was charged: nothing is left behind
                deleteCheckpoint(dir);
                deleteIfEmpty(out.resolve("operator"));
            }
            if (lock != null) {
                lock.close();
            }
            throw e;
        }
    }

    /** A tuning's resume state under its output directory (operator-only: it holds the tuner's seed). */
    public static final String TUNING_STATE = "operator/state.json";
    /** Where a tuning keeps its finished trials for a resume (operator-only). */
    public static final String TUNING_TRIALS = "operator/trials";

    /**
     * A tuning's charge, made once whatever stops it. A fresh tuning wipes an earlier tuning's trials and unpublished
     * release, saves its resume state ({@code fresh} and its run identifier) before anything is charged, so that a
     * charge on file always has a tuning to resume, then charges the whole event and saves the state naming the charge.
     * A resumed tuning ({@code saved} not null) must have the data it was planned on; its saved charge is found, or
     * (stopped between its state and its charge) found by its run or made now; the charge must be of this tuning's event
     * and must not have released.
     *
     * @param out        the tuning's output directory
     * @param saved      the saved state of the tuning being resumed ({@link #TUNING_STATE}), or null for a fresh one
     * @param fresh      what a fresh tuning's state holds besides its run, charge, ledger and data digest (such as the
     *                   command line and the tuner's seed); ignored on resume
     * @param ledger     the ledger to charge, or null
     * @param ledgerFile the ledger's file (recorded in the state), or null
     * @param label      the charge's label
     * @param event      the tuning's whole event (asked for only when it is charged or checked)
     * @param dataName   the data set's name, for messages
     * @param dataDigest the data's digest (null for a named data set whose files are verified)
     * @return the charged tuning (its {@link #charge} null without a ledger); the ledger is closed if this fails
     * @throws IllegalArgumentException if a resumed tuning's data or charge do not match
     * @throws PrivacyLedger.AlreadyReleasedException if its charge has released already (a copy released first)
     * @throws PrivacyLedger.BudgetExceededException  if a charge made here exceeds the ledger's budget
     * @throws IOException if a file cannot be written
     */
    public static PrivateRun chargeTuning(Path out, Map<String, Object> saved, Map<String, Object> fresh, PrivacyLedger ledger,
                                          Path ledgerFile, String label, java.util.function.Supplier<PrivacyEvent> event,
                                          String dataName, String dataDigest) throws IOException {
        Map<String, Object> state = new java.util.LinkedHashMap<>();
        Long charge = null;
        try {
            if (saved == null) {
                AtomicFiles.deleteTree(out.resolve(TUNING_TRIALS)); // an earlier tuning's trials never stand in for this one's
                AtomicFiles.deleteTree(out.resolve(StagedRelease.STAGING)); // nor does its unpublished release
                state.putAll(fresh);
                state.put("ledger_charge", null);
                state.put("ledger", ledgerFile == null ? null : ledgerFile.toAbsolutePath().toString());
                state.put("run", java.util.UUID.randomUUID().toString());
                state.put("data_sha256", dataDigest);
                saveTuningState(out, state); // the state first: a charge on file always has a tuning to resume
                charge = ledger != null ? ledger.charge(label, event.get(), (String) state.get("run"), null, null).sequence() : null;
                if (charge != null) {
                    state.put("ledger_charge", charge);
                    saveTuningState(out, state);
                }
                return new PrivateRun(out, state, ledger, 0, null);
            }
            state.putAll(saved);
            String what = "resume " + out;
            if (saved.containsKey("data_sha256") && !java.util.Objects.equals(saved.get("data_sha256"), dataDigest)) {
                throw new IllegalArgumentException(what + ": " + dataName + " changed since the tuning was planned "
                        + "(digest " + saved.get("data_sha256") + ", now " + dataDigest + "); its charge was for the data as they "
                        + "were");
            }
            charge = saved.get("ledger_charge") instanceof Number n ? n.longValue() : null;
            String run = (String) saved.get("run");
            if (ledger == null) {
                if (charge != null) {
                    throw new IllegalArgumentException(what + ": the tuning was charged to a ledger (entry " + charge
                            + ") but was resumed without a ledger; it is not resumed without its charge");
                }
                return new PrivateRun(out, state, null, 0, null);
            }
            if (charge == null) { // stopped between its state and its charge: found by its run, or (nothing ran) made now
                charge = ledger.chargeOf(run).map(PrivacyLedger.Entry::sequence).orElse(null);
                if (charge == null) {
                    charge = ledger.charge(label, event.get(), run, null, null).sequence();
                }
                state.put("ledger_charge", charge);
                saveTuningState(out, state);
            }
            long seq = charge;
            PrivacyEvent expected = event.get();
            if (ledger.entries().stream().noneMatch(e -> e.charged() && e.sequence() == seq && e.event().equals(expected)
                    && (e.run() == null || e.run().equals(run)))) {
                throw new IllegalArgumentException(what + ": the ledger " + ledgerFile + " has no charge " + seq
                        + " of this tuning's cost; it was not made for this tuning");
            }
            ledger.releaseOf(seq).ifPresent(released -> {
                throw alreadyReleased(out, seq, released);
            });
            return new PrivateRun(out, state, ledger, 0, null);
        } catch (IOException | RuntimeException e) {
            if (ledger != null) {
                ledger.close(); // nothing ran
            }
            if (saved == null && charge == null) { // nothing was charged: no state to resume is left behind
                Files.deleteIfExists(out.resolve(TUNING_STATE));
                deleteIfEmpty(out.resolve("operator"));
            }
            throw e;
        }
    }

    /**
     * Releases a tuning: binds the staged release to its charge (when there is one; a charge releases once), publishes
     * it, and only then deletes the resume state (which holds the seed) and the kept trials ({@link #TUNING_TRIALS}), so
     * that a crash at any point leaves either the state to resume from or the release on disk.
     *
     * @param staged the staged release ({@link StagedRelease#stage})
     * @param event  the release's event (what the tuning's ε covers)
     * @throws PrivacyLedger.AlreadyReleasedException if a copy of this tuning released under the same charge first
     * @throws IOException if a file cannot be written
     */
    public void releaseTuning(StagedRelease staged, PrivacyEvent event) throws IOException {
        publishTuning(out, staged, charge(), state.get("ledger") instanceof String l ? Path.of(l) : null, event);
    }

    /**
     * Takes the charge that a tuning's tuner made itself, once it knew what it would release (a search that reveals its K
     * trials charges their composition after drawing K, so it cannot be charged before it starts), as this tuning's
     * charge: checked to be of the release's event and saved in the resume state, before the release is staged, so that
     * {@link #releaseTuning} (or a resume that finds the release staged) binds the release to it.
     *
     * @param tunerCharge the sequence number of the tuner's charge in this tuning's ledger
     * @param event       the release's event, which the tuner charged
     * @throws IllegalStateException if this tuning was charged before it ran, has no ledger, or its ledger has no charge
     *                               {@code tunerCharge} of {@code event}
     * @throws IOException if the state cannot be written
     */
    public void chargedByTuner(long tunerCharge, PrivacyEvent event) throws IOException {
        if (charge() != null) {
            throw new IllegalStateException("this tuning was charged before it ran (ledger entry " + charge()
                    + "); its release is bound to that charge");
        }
        Path ledgerFile = state.get("ledger") instanceof String l ? Path.of(l) : null;
        if (ledgerFile == null) {
            throw new IllegalStateException("this tuning has no ledger: there is no charge " + tunerCharge + " to bind its "
                    + "release to");
        }
        try (PrivacyLedger ledger = PrivacyLedger.openExisting(ledgerFile)) {
            if (ledger.entries().stream().noneMatch(e -> e.charged() && e.sequence() == tunerCharge && e.event().equals(event))) {
                throw new IllegalStateException("ledger " + ledgerFile + " has no charge " + tunerCharge + " of the release's "
                        + "event; nothing is released");
            }
        }
        state.put("ledger_charge", tunerCharge);
        saveTuningState(out, state);
    }

    /**
     * Finishes a tuning whose release was staged when it stopped: the staged files go out as they are, bound to the
     * saved charge, and the resume state and the kept trials go.
     *
     * @param out    the tuning's output directory
     * @param staged the pending release ({@link StagedRelease#pending})
     * @param saved  the tuning's saved state
     * @throws IllegalArgumentException if the saved ledger has no such charge, or does not exist
     * @throws PrivacyLedger.AlreadyReleasedException if the charge has released something else
     * @throws IOException if a file cannot be written
     */
    public static void finishStagedTuning(Path out, StagedRelease staged, Map<String, Object> saved) throws IOException {
        Long savedCharge = saved.get("ledger_charge") instanceof Number c ? c.longValue() : null;
        Path savedLedger = saved.get("ledger") instanceof String l ? Path.of(l) : null;
        PrivacyEvent event = null;
        if (savedCharge != null && savedLedger != null) {
            try (PrivacyLedger ledger = PrivacyLedger.openExisting(savedLedger)) {
                event = ledger.entries().stream().filter(e -> e.charged() && e.sequence() == savedCharge).findFirst()
                        .map(PrivacyLedger.Entry::event).orElseThrow(() -> new IllegalArgumentException("resume " + out
                                + ": a release is staged, but ledger " + savedLedger + " has no charge " + savedCharge));
            }
        }
        publishTuning(out, staged, savedCharge, savedLedger, event);
    }

    /**
     * A stopped tuning's resume state ({@link #TUNING_STATE}), read and checked: {@code tuner_seed} is an integer in a
     * string, {@code run} a string, {@code ledger_charge} an entry number or null and {@code ledger} a path or null.
     *
     * @param out  the tuning's output directory
     * @param what how messages begin, e.g. {@code --resume runs/t}
     * @return the state, in file order
     * @throws IllegalArgumentException starting with {@code what}: there is no tuning to resume, or the state is damaged
     *                                  (naming the file and the field)
     * @throws IOException              if the state cannot be read
     */
    public static Map<String, Object> tuningState(Path out, String what) throws IOException {
        Path file = out.resolve(TUNING_STATE);
        if (!Files.exists(file)) {
            throw new IllegalArgumentException(what + ": no tuning to resume (" + file + " does not exist; the tuning was "
                    + "released, or never started)");
        }
        Map<String, Object> state = CheckpointState.readObject(file, what);
        String damaged = !(state.get("tuner_seed") instanceof String seed) || !seed.matches("-?[0-9]{1,19}") ? "'tuner_seed' is "
                + "missing or not an integer in a string"
                : !(state.get("run") instanceof String) ? "'run' is missing or not a string"
                : state.get("ledger_charge") != null && !(state.get("ledger_charge") instanceof Number) ? "'ledger_charge' is not "
                + "an entry number (or null)"
                : state.get("ledger") != null && !(state.get("ledger") instanceof String) ? "'ledger' is not a path (or null)" : null;
        if (damaged != null) {
            throw new IllegalArgumentException(what + ": " + file + ": field " + damaged);
        }
        return state;
    }

    /**
     * Refuses to resume a tuning whose saved charge has released already (a copy of it released first).
     *
     * @param out   the tuning's output directory
     * @param saved the tuning's saved state
     * @throws PrivacyLedger.AlreadyReleasedException if the charge has released
     * @throws PrivacyLedger.LedgerException          if the ledger is corrupt, was tampered with, or is locked too long
     * @throws IOException if the ledger cannot be read
     */
    public static void checkNotReleased(Path out, Map<String, Object> saved) throws IOException {
        Long savedCharge = saved.get("ledger_charge") instanceof Number c ? c.longValue() : null;
        Path savedLedger = saved.get("ledger") instanceof String l ? Path.of(l) : null;
        if (savedCharge != null && savedLedger != null && Files.exists(savedLedger)) {
            try (PrivacyLedger ledger = PrivacyLedger.openExisting(savedLedger)) {
                var released = ledger.releaseOf(savedCharge);
                if (released.isPresent()) {
                    throw alreadyReleased(out, savedCharge, released.get());
                }
            }
        }
    }

    /** Binds a staged release to its charge (when there is one), publishes it, then deletes the resume state. */
    private static void publishTuning(Path out, StagedRelease staged, Long charge, Path ledgerFile, PrivacyEvent event)
            throws IOException {
        if (charge != null && ledgerFile != null) {
            try (PrivacyLedger ledger = PrivacyLedger.openExisting(ledgerFile)) {
                staged.release(ledger, charge, event);
            }
        } else {
            staged.publish();
        }
        Files.deleteIfExists(out.resolve(TUNING_STATE));
        AtomicFiles.deleteTree(out.resolve(TUNING_TRIALS)); // every trial: the operator's, kept for a resume only
    }

    private static PrivacyLedger.AlreadyReleasedException alreadyReleased(Path out, long seq, PrivacyLedger.Entry released) {
        return new PrivacyLedger.AlreadyReleasedException("resume " + out + ": the tuning was charged to ledger entry " + seq
                + ", which has already released (entry " + released.sequence() + ", " + released.time() + ": " + released.label()
                + "): a copy of this tuning released first, and one charge releases once. Start a new tuning (a new charge) "
                + "instead", released);
    }

    /** Saves a tuning's resume state atomically. */
    private static void saveTuningState(Path out, Map<String, Object> state) throws IOException {
        AtomicFiles.write(out.resolve(TUNING_STATE), (PRETTY.writeValueAsString(state) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The run identifier (a tuning's, kept across its resumptions).
     *
     * @return the state's {@code run} field, or null when it has none
     */
    public String runId() {
        return (String) state.get("run");
    }

    /**
     * What {@link #resume} found: a run to continue, or a release that was interrupted and is now out.
     *
     * @param run         the run to continue (holding its lock), or null when {@code releasedNow}
     * @param releasedNow true when a staged release was published by the resume and there is nothing left to run
     */
    public record Resumption(PrivateRun run, boolean releasedNow) {
    }

    /**
     * The plan of the run stopped in {@code out}, read and verified ({@link CheckpointState#verify}) without taking the
     * run's lock or writing anything: for a caller to choose the data to {@link #resume} it with (the data set its plan
     * names). {@link #resume} verifies it again under the lock.
     *
     * @param out  the run's output directory
     * @param what how messages name the resumed run, e.g. {@code --resume runs/x}
     * @return the verified state (its plan, and its progress at the last checkpoint)
     * @throws IllegalArgumentException as {@link #resume}: no checkpoint, a finished run, a changed checkpoint or plan
     * @throws IOException              if a file cannot be read
     */
    public static Map<String, Object> plan(Path out, String what) throws IOException {
        checkResumable(out, what);
        return CheckpointState.verify(out.resolve(CHECKPOINT));
    }

    /** The refusals before a run's lock is taken: a finished run, no checkpoint; returns a staged release, if any. */
    private static Optional<StagedRelease> checkResumable(Path out, String what) throws IOException {
        Path checkpointDir = out.resolve(CHECKPOINT);
        Path stateFile = checkpointDir.resolve("state.json");
        Optional<StagedRelease> pending;
        try {
            pending = StagedRelease.pending(out);
        } catch (IllegalStateException e) {
            throw new IllegalArgumentException(what + ": " + e.getMessage());
        }
        if (pending.isEmpty() && Files.exists(out.resolve(PrivateModel.SIDECAR_FILE))) {
            // a second continuation would be a second, differently noised release
            throw new IllegalArgumentException(what + ": the run there has finished (" + PrivateModel.SIDECAR_FILE
                    + " exists); it is not continued again");
        }
        if (!Files.exists(stateFile)) {
            if (Files.exists(out.resolve("checkpoint").resolve("state.json"))) {
                throw new IllegalArgumentException(what + ": the checkpoint in " + out.resolve("checkpoint") + " was "
                        + "written by an earlier dpdl4j, without the hashes that bind it to its plan; it is not resumed");
            }
            throw new IllegalArgumentException(what + ": no checkpoint (" + stateFile + " does not exist)");
        }
        return pending;
    }

    /**
     * Continues the run in {@code out}: a release that was staged goes out as it is; otherwise the checkpoint is verified
     * on its own and against the ledger's charge, and a run stopped between its plan and its charge is charged now.
     *
     * @param out  the run's output directory
     * @param what how messages name the resumed run, e.g. {@code --resume runs/x}
     * @return the run at its last checkpoint (lock held; {@link #network}, {@link #ema} and {@link #stepsDone} give where
     *         it stopped), or {@code releasedNow}
     * @throws IllegalArgumentException naming what is refused: no checkpoint, a finished run, a changed checkpoint or
     *                                  plan, a ledger that does not hold its charge
     * @throws PrivacyLedger.AlreadyReleasedException if the charge has released already (a copy of the run released)
     * @throws IOException              if a file cannot be read or written
     */
    public static Resumption resume(Path out, String what) throws IOException {
        Path checkpointDir = out.resolve(CHECKPOINT);
        Optional<StagedRelease> pending = checkResumable(out, what);
        Path stateFile = checkpointDir.resolve("state.json");
        RunLock lock = RunLock.acquire(out);
        try {
            Map<String, Object> state = CheckpointState.verify(checkpointDir);
            PrivacyLedger.Entry charge = null;
            PrivacyLedger ledger = null;
            if (state.get("ledger") instanceof String ledgerPath) {
                Path ledgerFile = Path.of(ledgerPath);
                if (!Files.exists(ledgerFile)) {
                    throw new IllegalArgumentException("resume: checkpoint " + stateFile + " refused: its run was charged to "
                            + ledgerFile + ", which does not exist: the plan cannot be checked against its charge");
                }
                ledger = PrivacyLedger.openExisting(ledgerFile);
                for (String repair : ledger.repairs()) {
                    System.out.println("repaired: " + repair);
                }
                if (pending.isEmpty()) {
                    charge = CheckpointState.checkAgainstLedger(checkpointDir, state, ledger);
                    if (charge != null && state.get("ledger_charge") == null) { // stopped right after its charge: found by its run
                        state.put("ledger_charge", charge.sequence());
                        writeState(checkpointDir, state);
                    }
                } else {
                    PrivacyLedger l = ledger;
                    charge = l.entries().stream().filter(e -> e.charged() && state.get("ledger_charge") instanceof Number c
                            && e.sequence() == c.longValue()).findFirst().orElseThrow(() -> new IllegalArgumentException(
                            what + ": a release is staged, but ledger " + l.file() + " has no charge "
                                    + state.get("ledger_charge") + " for it"));
                }
            }
            if (pending.isPresent()) { // the run was stopped while releasing: the staged files go out as they are
                pending.get().release(ledger, charge == null ? null : charge.sequence(), CheckpointState.plannedEvent(state));
                deleteCheckpoint(checkpointDir);
                deleteIfEmpty(out.resolve("operator"));
                lock.close();
                return new Resumption(null, true);
            }
            if (ledger != null && charge == null) { // stopped between the plan and the charge: nothing ran, charge it now
                charge = ledger.charge("train " + state.get("model") + " on " + state.get("dataset"),
                        CheckpointState.plannedEvent(state), (String) state.get("run"), (String) state.get("plan_sha256"),
                        CheckpointState.iterateDigest(state));
                state.put("ledger_charge", charge.sequence());
                writeState(checkpointDir, state);
                System.out.printf("charged the planned run to %s now (entry %d): it had been stopped before its charge%n",
                        ledger.file(), charge.sequence());
            }
            long every = state.get("checkpoint_every") instanceof Number e ? e.longValue() : 0;
            return new Resumption(new PrivateRun(out, state, ledger, every, lock), false);
        } catch (IOException | RuntimeException e) {
            lock.close();
            throw e;
        }
    }

    /**
     * The run's state: its plan, and its progress up to the last checkpoint (a live map, written at each checkpoint).
     *
     * @return the state map itself (not a copy); changes to it are written with the next checkpoint
     */
    public Map<String, Object> state() {
        return state;
    }

    /**
     * The ledger charged for the run.
     *
     * @return the ledger, or null when the run has none
     */
    public PrivacyLedger ledger() {
        return ledger;
    }

    /**
     * The ledger entry that charged the run.
     *
     * @return the charge's sequence number, or null when the run has not been charged (no ledger)
     */
    public Long charge() {
        return state.get("ledger_charge") instanceof Number c ? c.longValue() : null;
    }

    /**
     * The run's output directory.
     *
     * @return the directory given to {@link #start}, {@link #resume} or {@link #chargeTuning}
     */
    public Path output() {
        return out;
    }

    /**
     * Steps between checkpoints.
     *
     * @return the interval in steps, &gt;= 0 (0: none)
     */
    public long checkpointEvery() {
        return every;
    }

    /**
     * Changes the steps between checkpoints of a resumed run (the plan does not depend on it).
     *
     * @param steps ≥ 1
     * @return a run with that interval, holding this run's lock
     * @throws IllegalArgumentException if steps &lt; 1
     */
    public PrivateRun checkpointEvery(long steps) {
        if (steps < 1) {
            throw new IllegalArgumentException("checkpoint_every must be >= 1 step, got " + steps);
        }
        state.put("checkpoint_every", steps);
        PrivateRun r = new PrivateRun(out, state, ledger, steps, lock);
        lock = null;
        return r;
    }

    /**
     * Steps done at the last checkpoint.
     *
     * @return the state's {@code steps_done}, &gt;= 0; 0 when no checkpoint was written (a run that neither checkpoints
     *         nor is charged starts from step 0)
     */
    public long stepsDone() {
        return state.get("steps_done") instanceof Number n ? n.longValue() : 0;
    }

    /**
     * The checkpoint's directory.
     *
     * @return {@link #CHECKPOINT} resolved against the output directory
     */
    public Path checkpointDirectory() {
        return out.resolve(CHECKPOINT);
    }

    /**
     * The network of the last checkpoint, with its updater state.
     *
     * @return a new network restored from the checkpoint's model file
     * @throws IllegalArgumentException if its file cannot be read as a DL4J network
     */
    public Model network() {
        Path modelFile = checkpointDirectory().resolve((String) state.get("model_file"));
        try {
            return org.dpdl4j.dpsgd.Networks.restore(modelFile.toFile(), true);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("the checkpoint's model " + modelFile + " cannot be read as a DL4J network ("
                    + e.getMessage() + ")");
        }
    }

    /**
     * The moving average of the parameters at the last checkpoint, or null (none kept).
     *
     * @return the array read from the checkpoint's moving-average file, or null when the state names none
     * @throws IllegalArgumentException if its file cannot be read
     */
    public INDArray ema() {
        if (!(state.get("ema_file") instanceof String f)) {
            return null;
        }
        try {
            return Nd4j.readBinary(checkpointDirectory().resolve(f).toFile());
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("the checkpoint's moving average " + f + " cannot be read (" + e.getMessage() + ")");
        }
    }

    /**
     * Refuses data other than the data the run was planned and charged on.
     *
     * @param what   how messages name the resumed run
     * @param name   the data set's name, for the message
     * @param n      the number of training examples now
     * @param digest the data's digest now (null for a named data set whose files are verified)
     * @throws IllegalArgumentException if n or the digest differ from the plan's
     */
    public void checkData(String what, String name, int n, String digest) {
        if (n != ((Number) state.get("n")).intValue() || !java.util.Objects.equals(digest, state.get("data_sha256"))) {
            throw new IllegalArgumentException(what + ": the checkpoint was made on " + state.get("n") + " training "
                    + "examples of " + name + (state.get("data_sha256") != null ? " (digest " + state.get("data_sha256")
                    + ")" : "") + ", the data now has " + n + (digest != null ? " (digest " + digest + ")" : "")
                    + ": it changed, and the charge was for the data as it was");
        }
    }

    /**
     * The sink that writes the run's checkpoints (model, moving average, ledger record, then {@code state.json}).
     *
     * @return the sink, or null when the run takes none ({@link #checkpointEvery()} is 0); the sink throws
     *         {@link UncheckedIOException} when a checkpoint cannot be written
     */
    public Checkpoint.Sink checkpoints() {
        return every > 0 ? this::saveCheckpoint : null;
    }

    /**
     * Releases the trained model: stages the model and its sidecar, binds them to the ledger's charge and publishes them
     * (sidecar last), then removes the checkpoint (the model supersedes it).
     *
     * @param release  the model and its claim
     * @param obsolete files of an earlier release in the directory that must go (they would pass for this run's)
     * @param released the event the release covers (the one charged)
     * @throws PrivacyLedger.AlreadyReleasedException if the charge has released already (a copy of this run released first)
     * @throws IOException if a file cannot be written
     */
    public void release(PrivateModel release, List<String> obsolete, PrivacyEvent released) throws IOException {
        StagedRelease staged = StagedRelease.stage(out, release.releaseFiles(Map.of()), obsolete);
        staged.release(ledger, charge(), released); // refused if a copy of this run released first
        deleteCheckpoint(checkpointDirectory());
    }

    /** Removes {@code operator/} if nothing is left in it, and lets another process use the directory. */
    @Override
    public void close() {
        try {
            deleteIfEmpty(out.resolve("operator"));
        } catch (IOException e) {
            // kept: it has files, or is not ours to remove
        }
        if (lock != null) {
            lock.close();
            lock = null;
        }
    }

    /**
     * Writes a checkpoint: the model (and moving average) to new files; for a charged run, the ledger's record that the
     * run reached this state; then state.json (naming the files) by rename; then the previous files go. A crash at any
     * point leaves a state.json that names complete files, which the ledger knows.
     */
    private void saveCheckpoint(Checkpoint c) {
        Path dir = checkpointDirectory();
        try {
            Files.createDirectories(dir);
            String modelFile = "model-step-" + c.stepsDone() + ".zip";
            Path tmp = Files.createTempFile(dir, ".model", ".zip");
            try {
                ModelSerializer.writeModel(c.network(), tmp.toFile(), true);
                AtomicFiles.publish(tmp, dir.resolve(modelFile));
            } finally {
                Files.deleteIfExists(tmp);
            }
            Object previousEma = state.get("ema_file");
            if (c.ema() != null) { // the moving average so far, written before state.json names it
                String emaFile = "ema-step-" + c.stepsDone() + ".bin";
                Path tmpEma = Files.createTempFile(dir, ".ema", ".bin");
                try {
                    Nd4j.saveBinary(c.ema(), tmpEma.toFile());
                    AtomicFiles.publish(tmpEma, dir.resolve(emaFile));
                } finally {
                    Files.deleteIfExists(tmpEma);
                }
                state.put("ema_file", emaFile);
            }
            Object previous = state.get("model_file");
            state.put("model_file", modelFile);
            state.put("model_sha256", CheckpointState.sha256(dir.resolve(modelFile)));
            if (c.ema() != null) {
                state.put("ema_sha256", CheckpointState.sha256(dir.resolve((String) state.get("ema_file"))));
            } else {
                state.remove("ema_file");
                state.remove("ema_sha256");
            }
            state.put("steps_done", c.stepsDone());
            state.put("event_so_far", c.eventSoFar().toMap());
            if (state.get("ledger_charge") instanceof Number charge && c.stepsDone() > 0) {
                ledger.recordCheckpoint(charge.longValue(), c.stepsDone(), c.eventSoFar(), CheckpointState.iterateDigest(state));
            }
            writeState(dir, state);
            CrashPoint.reached("train:checkpoint:" + c.stepsDone());
            if (previous instanceof String p && !p.equals(modelFile)) {
                Files.deleteIfExists(dir.resolve(p));
            }
            if (previousEma instanceof String p && !p.equals(state.get("ema_file"))) {
                Files.deleteIfExists(dir.resolve(p));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the checkpoint in " + dir + " (" + AtomicFiles.why(e) + ")"
                    + (state.get("ledger_charge") == null ? (state.get("ledger") != null ? "; nothing was charged" : "")
                    : "; the whole run was charged to " + state.get("ledger") + " (entry "
                    + state.get("ledger_charge") + "): once there is space, continue it from its last checkpoint (train --resume "
                    + out + ", or PrivateTraining.resume)"), e);
        }
    }

    /**
     * Refuses (before the charge) a directory whose file system cannot take the rest of the run: one more checkpoint
     * model while the previous one is kept, and the released model.
     */
    private static void checkSpace(Path out, Path model) throws IOException {
        long size = Files.size(model);
        long usable = Files.getFileStore(model).getUsableSpace();
        long need = 2 * size + (1 << 20);
        if (usable < need) {
            throw new IllegalArgumentException(String.format("output %s has %d bytes free, and the run needs about %d (a model "
                    + "of %d bytes for the next checkpoint, another for the release): nothing was charged; free some space or "
                    + "choose another output directory", out, usable, need, size));
        }
    }

    /** Writes state.json atomically, with its hash. */
    private static void writeState(Path dir, Map<String, Object> state) throws IOException {
        state.remove(CheckpointState.STATE_HASH);
        state.put(CheckpointState.STATE_HASH, CheckpointState.stateHash(state));
        AtomicFiles.write(dir.resolve("state.json"), (PRETTY.writeValueAsString(state) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private static void deleteCheckpoint(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    private static void deleteIfEmpty(Path dir) throws IOException {
        try {
            Files.deleteIfExists(dir);
        } catch (java.nio.file.DirectoryNotEmptyException e) {
            // other files stay
        }
    }
}
