package org.dpdl4j.release;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.datasets.Sha256;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * A released model: an ordinary DL4J network ({@link MultiLayerNetwork} or {@link ComputationGraph}) together with
 * the privacy claim that covers it — the release's {@link PrivacyEvent}, the registered accountant that turns it
 * into ε, and δ. {@link #save} writes {@code model.zip} (DL4J's {@link ModelSerializer}) and its
 * {@link PrivacySidecar} {@code privacy.json}; {@link #load} reads them back only after checking the pair.
 *
 * <p>What {@link #load} checks, in order: the sidecar exists and parses (schema {@link PrivacySidecar#SCHEMA_VERSION});
 * the model file's SHA-256 is the one the sidecar names (the bytes hashed are the bytes loaded); the accountant is a
 * registered name; ε is recomputed from the event by that accountant and the sidecar's ε is not below it (a
 * non-finite recomputed ε needs {@code non_private: true}); the caller's {@link LoadPolicy} holds. Any failure is an
 * {@link UnverifiedModelException} and nothing is loaded.
 */
public final class PrivateModel {
    /** The model's file name in a release directory. */
    public static final String MODEL_FILE = "model.zip";
    /** The sidecar's file name in a release directory. */
    public static final String SIDECAR_FILE = "privacy.json";

    private final Model network;
    private final String kind;
    private final PrivacyEvent event;
    private final String accountant;
    private final PrivacyGuarantee guarantee;
    private final InputSpec input;
    private final Map<String, Object> configuration;
    private volatile PrivacySidecar sidecar; // the one last saved or loaded

    private PrivateModel(Model network, String kind, PrivacyEvent event, String accountant, PrivacyGuarantee guarantee,
                         InputSpec input, Map<String, Object> configuration) {
        this.network = network;
        this.kind = kind;
        this.event = event;
        this.accountant = accountant;
        this.guarantee = guarantee;
        this.input = input;
        this.configuration = configuration == null ? Map.of() : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(configuration));
        org.dpdl4j.dpsgd.PrivateHistory.record(network, event); // the weights carry this claim into any later training
    }

    /**
     * A model and its claim; ε is computed here, by the named accountant.
     *
     * @param network       a {@link MultiLayerNetwork} or {@link ComputationGraph}
     * @param kind          {@code "training"} or {@code "tuning"}
     * @param event         what releasing this network cost (the whole run's or the whole tuning's event)
     * @param accountant    a registered accountant name ({@link Accountants#names()})
     * @param delta         δ ∈ (0, 1)
     * @param input         the input the network expects, or null when unknown
     * @param configuration data-independent settings recorded for people (values must be JSON-writable), or null
     *                      (read as empty); copied
     * @return the model with its (ε, δ) guarantee computed by the accountant
     * @throws IllegalArgumentException on an unknown accountant or kind, a δ out of range, another network type, or
     *                                  an event the accountant does not support
     * @throws NullPointerException     if network or event is null
     */
    public static PrivateModel of(Model network, String kind, PrivacyEvent event, String accountant, double delta, InputSpec input,
                                  Map<String, Object> configuration) {
        Objects.requireNonNull(network, "network");
        if (!(network instanceof MultiLayerNetwork) && !(network instanceof ComputationGraph)) {
            throw new IllegalArgumentException("network must be a MultiLayerNetwork or a ComputationGraph, got "
                    + network.getClass().getName());
        }
        if (!PrivacySidecar.KINDS.contains(kind)) {
            throw new IllegalArgumentException("kind must be one of " + PrivacySidecar.KINDS + ", got " + kind);
        }
        PrivacyAccountant a = Accountants.byName(accountant);
        return new PrivateModel(network, kind, Objects.requireNonNull(event, "event"), accountant, a.guarantee(event, delta),
                input, configuration);
    }

    /**
     * The network (the same object, not a copy): a {@link MultiLayerNetwork} or a {@link ComputationGraph}.
     *
     * @return the network, not null
     */
    public Model network() {
        return network;
    }

    /**
     * The release's privacy event.
     *
     * @return the event that the guarantee is computed from, not null
     */
    public PrivacyEvent event() {
        return event;
    }

    /**
     * The registry name of the accountant that computed {@link #guarantee()}.
     *
     * @return a name registered in {@link Accountants}
     */
    public String accountant() {
        return accountant;
    }

    /**
     * (ε, δ) of the release, from {@link #accountant()}; ε is +∞ for a model without a privacy guarantee. For a
     * loaded model ε is the sidecar's claim (checked to be no lower than the recomputed ε).
     *
     * @return the guarantee, not null
     */
    public PrivacyGuarantee guarantee() {
        return guarantee;
    }

    /**
     * Whether the release has no privacy guarantee.
     *
     * @return true when ε of {@link #guarantee()} is infinite
     */
    public boolean nonPrivate() {
        return Double.isInfinite(guarantee.epsilon());
    }

    /**
     * The input the network expects.
     *
     * @return the input specification, or null when unknown
     */
    public InputSpec input() {
        return input;
    }

    /**
     * The run's settings as the sidecar records them (its {@code configuration}), also before the model is saved.
     *
     * @return an unmodifiable map (empty when none was given)
     */
    public Map<String, Object> configuration() {
        return configuration;
    }

    /**
     * The sidecar this model was loaded with or last saved with (or last built by {@link #releaseFiles}).
     *
     * @return the sidecar, or null before any of these
     */
    public PrivacySidecar sidecar() {
        return sidecar;
    }

    private PrivacySidecar sidecarFor(String modelSha256, List<String> released) {
        return new PrivacySidecar(PrivacySidecar.SCHEMA_VERSION, kind, modelSha256 == null ? null : MODEL_FILE, modelSha256,
                nonPrivate(), nonPrivate() ? null : guarantee.epsilon(), guarantee.delta(), accountant, event, released, input,
                configuration, PrivacySidecar.currentLibraryVersion());
    }

    /**
     * The network's output (class probabilities for dpdl4j's classifiers) for a batch of inputs, in inference mode.
     * Not thread-safe on one instance (DL4J networks are not): give each thread its own {@link #copy()}.
     *
     * @param features [batch, features] (or whatever shape the network's first layer accepts)
     * @return [batch, outputs]
     */
    public INDArray output(INDArray features) {
        return network instanceof MultiLayerNetwork m ? m.output(features, false)
                : ((ComputationGraph) network).outputSingle(false, features);
    }

    /**
     * An independent copy (the network cloned; the claim shared), for one more serving thread; safe to call from
     * several.
     *
     * @return a new model with a clone of the network and the same event, guarantee, input, configuration and sidecar
     */
    public PrivateModel copy() {
        Model clone;
        synchronized (network) { // serving threads clone the shared network on their first request
            clone = network instanceof MultiLayerNetwork m ? m.clone() : ((ComputationGraph) network).clone();
        }
        PrivateModel copy = new PrivateModel(clone, kind, event, accountant, guarantee, input, configuration);
        copy.sidecar = sidecar;
        return copy;
    }

    /**
     * Writes {@code dir/model.zip} and {@code dir/privacy.json}, each atomically: the model first, then the sidecar
     * naming its SHA-256 (an older sidecar is removed before the model is replaced, so a crash in between leaves a model
     * that {@link #load} refuses, never a mismatched pair it accepts). A run charged to a ledger publishes through
     * {@link StagedRelease} instead, with {@link #releaseFiles}.
     *
     * @param dir the release directory (created if missing)
     * @return the sidecar written
     * @throws IOException if the directory cannot be created, the old sidecar cannot be removed, the network cannot be
     *                     serialised or a file cannot be written
     */
    public PrivacySidecar save(Path dir) throws IOException {
        return save(dir, Map.of());
    }

    /**
     * Writes the release with further files of it (e.g. {@code tuning.json}), each atomically: the model, then the
     * further files, then the sidecar that lists them all and names the model's SHA-256 (an older sidecar is removed
     * first, as in {@link #save(Path)}).
     *
     * @param dir  the release directory (created if missing)
     * @param also further files of the same release, name → bytes (may be empty; plain file names other than
     *             {@link #MODEL_FILE} and {@link #SIDECAR_FILE})
     * @return the sidecar written
     * @throws IllegalArgumentException if a name is not a plain file name or is the model's or the sidecar's
     * @throws IOException if the directory cannot be created, the old sidecar cannot be removed, the network cannot be
     *                     serialised or a file cannot be written
     */
    public PrivacySidecar save(Path dir, Map<String, byte[]> also) throws IOException {
        for (String name : also.keySet()) {
            if (name.equals(MODEL_FILE) || name.equals(SIDECAR_FILE) || !Path.of(name).getFileName().toString().equals(name)
                    || name.startsWith(".")) {
                throw new IllegalArgumentException("also: a further file of the release needs a plain file name other than "
                        + MODEL_FILE + " and " + SIDECAR_FILE + ", got '" + name + "'");
            }
        }
        Files.createDirectories(dir);
        Map<String, byte[]> files = releaseFiles(also);
        Files.deleteIfExists(dir.resolve(SIDECAR_FILE));
        for (Map.Entry<String, byte[]> f : files.entrySet()) { // publishing order: the sidecar last
            AtomicFiles.write(dir.resolve(f.getKey()), f.getValue());
        }
        return sidecar;
    }

    /**
     * The release's files in the order they are to be published: {@code model.zip}, then {@code also} (e.g.
     * {@code tuning.json}), then the sidecar {@code privacy.json}, which names the model's SHA-256 and lists them all.
     * Becomes this model's {@link #sidecar()}.
     *
     * @param also further files of the same release, name → bytes (may be empty; names should differ from
     *             {@link #MODEL_FILE} and {@link #SIDECAR_FILE})
     * @return name → bytes, in publishing order
     * @throws IOException if the network cannot be serialised
     */
    public Map<String, byte[]> releaseFiles(Map<String, byte[]> also) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        if (network instanceof MultiLayerNetwork m) {
            ModelSerializer.writeModel(m, bytes, true);
        } else {
            ModelSerializer.writeModel((ComputationGraph) network, bytes, true);
        }
        byte[] model = bytes.toByteArray();
        List<String> released = new ArrayList<>(List.of(MODEL_FILE, SIDECAR_FILE));
        released.addAll(also.keySet());
        PrivacySidecar written = sidecarFor(Sha256.hex(model), released);
        Map<String, byte[]> files = new java.util.LinkedHashMap<>();
        files.put(MODEL_FILE, model);
        files.putAll(also);
        files.put(SIDECAR_FILE, written.toJson());
        sidecar = written;
        return files;
    }

    /**
     * Loads {@code dir/privacy.json} and the model it names, after the checks in the class comment.
     *
     * @param dir    a release directory written by {@link #save} (or by {@code dpdl4j train} / {@code tune})
     * @param policy what the caller accepts, not null
     * @return the loaded model, whose {@link #guarantee()} carries the sidecar's claimed ε and whose
     *         {@link #sidecar()} is the verified sidecar
     * @throws UnverifiedModelException if any check fails, or the verified bytes are not a DL4J model (the message
     *                                  says which, with the values)
     * @throws IOException              if a file cannot be read
     * @throws NullPointerException     if policy is null
     */
    public static PrivateModel load(Path dir, LoadPolicy policy) throws IOException {
        Verified v = verify(dir, policy);
        Model network;
        try {
            network = org.dpdl4j.dpsgd.Networks.restore(v.model, false);
        } catch (IOException | RuntimeException e) {
            throw new UnverifiedModelException(dir.resolve(v.sidecar.modelFile()) + " is not a DL4J model: " + e.getMessage(), e);
        }
        PrivacySidecar s = v.sidecar;
        PrivateModel loaded = new PrivateModel(network, s.kind(), s.event(), s.accountant(), v.guarantee, s.input(), s.configuration());
        loaded.sidecar = s;
        return loaded;
    }

    /**
     * The checks of {@link #load} without building the network: the verified sidecar.
     *
     * @param dir    a release directory written by {@link #save} (or by {@code dpdl4j train} / {@code tune})
     * @param policy what the caller accepts, not null
     * @return the sidecar, after every check of {@link #load} passed
     * @throws UnverifiedModelException if any check fails
     * @throws IOException              if a file cannot be read
     * @throws NullPointerException     if policy is null
     */
    public static PrivacySidecar verifySidecar(Path dir, LoadPolicy policy) throws IOException {
        return verify(dir, policy).sidecar;
    }

    private record Verified(PrivacySidecar sidecar, byte[] model, PrivacyGuarantee guarantee) {
    }

    private static Verified verify(Path dir, LoadPolicy policy) throws IOException {
        Objects.requireNonNull(policy, "policy");
        Path sidecarPath = dir.resolve(SIDECAR_FILE);
        byte[] json;
        try {
            json = Files.readAllBytes(sidecarPath);
        } catch (NoSuchFileException e) {
            throw new UnverifiedModelException(sidecarPath + " is missing: a model is loaded only with its privacy sidecar");
        }
        PrivacySidecar s;
        try {
            s = PrivacySidecar.fromJson(json);
        } catch (IllegalArgumentException e) {
            throw new UnverifiedModelException(sidecarPath + " is not a valid privacy sidecar: " + e.getMessage(), e);
        }
        if (s.modelFile() == null) {
            throw new UnverifiedModelException(sidecarPath + " releases no model (model: null)");
        }
        Path modelPath = dir.resolve(s.modelFile());
        byte[] model;
        try {
            model = Files.readAllBytes(modelPath);
        } catch (NoSuchFileException e) {
            throw new UnverifiedModelException(modelPath + " is missing (named by " + sidecarPath + ")");
        }
        String sha = Sha256.hex(model);
        if (!sha.equals(s.modelSha256())) {
            throw new UnverifiedModelException(modelPath + " has SHA-256 " + sha + " but " + sidecarPath + " covers "
                    + s.modelSha256() + ": this model is not the one the privacy claim is about");
        }
        PrivacyGuarantee g;
        try {
            g = Accountants.byName(s.accountant()).guarantee(s.event(), s.delta());
        } catch (RuntimeException e) {
            throw new UnverifiedModelException(sidecarPath + ": the claim cannot be recomputed: " + e.getMessage(), e);
        }
        if (Double.isInfinite(g.epsilon()) || Double.isNaN(g.epsilon())) {
            if (!s.nonPrivate()) {
                throw new UnverifiedModelException(sidecarPath + " claims epsilon " + s.epsilon() + " but its event has no finite "
                        + "epsilon under " + s.accountant());
            }
        } else if (!s.nonPrivate() && s.epsilon() < g.epsilon()) {
            throw new UnverifiedModelException(sidecarPath + " claims epsilon " + s.epsilon() + " at delta " + s.delta()
                    + ", below the " + g.epsilon() + " that " + s.accountant() + " computes from its event");
        }
        if (s.nonPrivate() && !policy.allowNonPrivate()) {
            throw new UnverifiedModelException(sidecarPath + " is a model without a privacy guarantee (non_private: true), which "
                    + "this loader's policy refuses");
        }
        if (!s.nonPrivate() && s.epsilon() > policy.maxEpsilon()) {
            throw new UnverifiedModelException(sidecarPath + " claims epsilon " + s.epsilon() + ", above the policy's maximum "
                    + policy.maxEpsilon());
        }
        if (s.delta() > policy.maxDelta()) {
            throw new UnverifiedModelException(sidecarPath + " has delta " + s.delta() + ", above the policy's maximum "
                    + policy.maxDelta());
        }
        PrivacyGuarantee claimed = s.nonPrivate() // a release that says it has no guarantee is taken at its word
                ? new PrivacyGuarantee(Double.POSITIVE_INFINITY, s.delta(), Double.NaN, false, g.accountant())
                : new PrivacyGuarantee(s.epsilon(), s.delta(), g.order(), g.orderAtGridEdge(), g.accountant());
        return new Verified(s, model, claimed);
    }
}
