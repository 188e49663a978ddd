package org.dpdl4j.tuning;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.dpsgd.Networks;
import org.deeplearning4j.util.ModelSerializer;
import org.dpdl4j.accounting.PrivacyEvent;

/**
 * A base mechanism whose finished trials survive a crash: each trial's outcome (score, time, and its model) is
 * written atomically into a directory when it finishes, and a later run of the same tuning (same seed, so the
 * same K, candidates and trial seeds) gets it back instead of training again. The tuning then releases what the
 * uninterrupted tuning would have released, and an unfinished trial is re-run with its own seed: its earlier,
 * interrupted computation released nothing. The directory belongs to the operator record (it holds every
 * trial), never to the release.
 */
public final class CheckpointedMechanism implements TrainingMechanism {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final TrainingMechanism delegate;
    private final Path directory;
    private final String run;

    /**
     * Wraps a mechanism so that its finished trials are kept in {@code directory}. Nothing is read or written until
     * the first run.
     *
     * @param delegate  the mechanism that trains
     * @param directory where finished trials are kept (created if missing); a fresh tuning must start from an empty one
     * @param run       an identifier of this tuning (kept across its resumptions): a saved trial is reused only if it
     *                  was written under the same identifier, with the same candidate, seed and cost
     * @throws NullPointerException if an argument is null
     */
    public CheckpointedMechanism(TrainingMechanism delegate, Path directory, String run) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.directory = Objects.requireNonNull(directory, "directory");
        this.run = Objects.requireNonNull(run, "run");
    }

    /**
     * The delegate's event for this candidate (keeping trials costs nothing).
     *
     * @param candidate the hyperparameters of the run
     * @return {@code delegate.event(candidate)}
     * @throws IllegalArgumentException if the delegate does not know a hyperparameter of the candidate
     */
    @Override
    public PrivacyEvent event(Candidate candidate) {
        return delegate.event(candidate);
    }

    /**
     * The saved outcome of trial {@code trial} if it finished with this candidate and seed, else a fresh run, saved.
     * A trial is kept as {@code trial-<i>.json} (run identifier, candidate, a check value of the seed (not the seed),
     * event, score and seconds) and, when it has a model, {@code trial-<i>.zip}; each file is written to a temporary
     * file and moved into place atomically. A saved trial whose identifier, candidate, seed check or event differs is
     * run again and overwritten.
     *
     * @param candidate the hyperparameters
     * @param seed      the run's seed (sampling, noise, weights)
     * @param listener  progress of a fresh run (not called for a saved trial)
     * @param trial     the trial's index, &gt;= 0: names its files in the directory
     * @return the saved outcome (its model restored when one was saved, else null) or the delegate's fresh result
     * @throws java.io.UncheckedIOException if a trial cannot be read or written
     */
    @Override
    public TrialResult run(Candidate candidate, long seed, TuningListener listener, int trial) {
        Path json = directory.resolve("trial-" + trial + ".json");
        Path model = directory.resolve("trial-" + trial + ".zip");
        try {
            if (Files.exists(json)) {
                Map<?, ?> m = JSON.readValue(json.toFile(), Map.class);
                boolean same = run.equals(m.get("run")) && new Candidate(castValues(m.get("candidate"))).equals(candidate)
                        && Long.toString(mix(seed)).equals(m.get("seed_check")) && sameEvent(m.get("event"), delegate.event(candidate));
                if (same) {
                    Model net = Files.exists(model) ? Networks.restore(model.toFile(), true) : null;
                    double score = m.get("score") instanceof Number s ? s.doubleValue() : Double.NEGATIVE_INFINITY;
                    return new TrialResult(trial, candidate, net, score, delegate.event(candidate),
                            ((Number) m.get("seconds")).doubleValue(), null);
                }
            }
            TrialResult r = delegate.run(candidate, seed, listener, trial);
            Files.createDirectories(directory);
            if (r.model() != null) {
                Path tmp = Files.createTempFile(directory, ".trial", ".zip");
                try {
                    ModelSerializer.writeModel(r.model(), tmp.toFile(), true);
                    Files.move(tmp, model, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } finally {
                    Files.deleteIfExists(tmp);
                }
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("run", run);
            m.put("index", trial);
            m.put("event", JSON.writeValueAsString(delegate.event(candidate).toMap()));
            m.put("candidate", candidate.toMap());
            m.put("seed_check", Long.toString(mix(seed)));
            m.put("score", Double.isFinite(r.score()) ? r.score() : null);
            m.put("seconds", r.seconds());
            Path tmp = Files.createTempFile(directory, ".trial", ".json");
            try {
                Files.write(tmp, JSON.writeValueAsString(m).getBytes(StandardCharsets.UTF_8));
                Files.move(tmp, json, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(tmp);
            }
            return r;
        } catch (IOException e) {
            throw new UncheckedIOException("could not keep trial " + trial + " in " + directory, e);
        }
    }

    /**
     * Whether a saved event (JSON text) is this event: compared as events, not as text, since an event's map may list
     * its keys in another order in another JVM (immutable maps randomise their iteration order per JVM), which had made
     * every resumed tuning re-run its finished trials.
     */
    private static boolean sameEvent(Object saved, PrivacyEvent event) {
        try {
            return saved instanceof String text && org.dpdl4j.accounting.PrivacyEvents.fromMap(JSON.readValue(text, Map.class)).equals(event);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** A check value of the seed (not the seed itself). */
    private static long mix(long seed) {
        long z = seed + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static Map<String, Object> castValues(Object o) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (o instanceof Map<?, ?> m) {
            m.forEach((k, v) -> out.put(String.valueOf(k), v instanceof Number n ? (Object) n.doubleValue() : String.valueOf(v)));
        }
        return out;
    }
}
