package org.dpdl4j.release;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyEvents;

/**
 * The privacy sidecar, {@code privacy.json}: what a released model cost and what it expects. One schema for
 * single training runs and tunings alike, documented field by field in docs/SIDECAR.md; {@link #SCHEMA_VERSION}
 * changes whenever a field's meaning does. Read with {@link PrivateModel#load}, which checks it; this record only
 * parses.
 *
 * @param schemaVersion  {@link #SCHEMA_VERSION}
 * @param kind           {@code "training"} (one DP-SGD run) or {@code "tuning"} (a tuning procedure's best model)
 * @param modelFile      the model's file name in the same directory, or null when nothing but statistics is released
 * @param modelSha256    the SHA-256 of the model file's bytes (64 hex digits), or null with modelFile
 * @param nonPrivate     true when the release has no privacy guarantee (then epsilon is null)
 * @param epsilon        the claimed ε at δ, finite and ≥ 0; null exactly when nonPrivate
 * @param delta          δ ∈ (0, 1)
 * @param accountant     the registry name ({@link org.dpdl4j.accounting.Accountants}) of the accountant that
 *                       turns the event into ε
 * @param event          the whole release's privacy event
 * @param released       the file names that make up the release (all covered by ε)
 * @param input          the input the model expects, or null when unknown
 * @param configuration  data-independent settings (σ, C, q, T, …), for people; not used by the checks
 * @param libraryVersion the dpdl4j version that wrote the file
 */
public record PrivacySidecar(int schemaVersion, String kind, String modelFile, String modelSha256, boolean nonPrivate,
                             Double epsilon, double delta, String accountant, PrivacyEvent event, List<String> released,
                             InputSpec input, Map<String, Object> configuration, String libraryVersion) {

    /** The version of the schema this class reads and writes. */
    public static final int SCHEMA_VERSION = 1;
    /** The kinds of release a sidecar describes. */
    public static final List<String> KINDS = List.of("training", "tuning");

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /**
     * Checks the fields and copies the lists and maps (a null configuration becomes empty).
     *
     * @param schemaVersion  must be {@link #SCHEMA_VERSION}
     * @param kind           one of {@link #KINDS}: {@code "training"} or {@code "tuning"}
     * @param modelFile      the model's file name in the same directory, or null when nothing but statistics is
     *                       released (then modelSha256 is null too)
     * @param modelSha256    the SHA-256 of the model file's bytes, 64 lower-case hex digits; null exactly when
     *                       modelFile is null
     * @param nonPrivate     true when the release has no privacy guarantee
     * @param epsilon        the claimed ε at δ, finite and ≥ 0; null exactly when nonPrivate
     * @param delta          δ, in (0, 1)
     * @param accountant     the registry name of the accountant, not null
     * @param event          the whole release's privacy event, not null
     * @param released       the file names that make up the release, not null and without null elements
     * @param input          the input the model expects, may be null
     * @param configuration  data-independent settings, may be null (read as empty)
     * @param libraryVersion the dpdl4j version that wrote the file, not null
     * @throws IllegalArgumentException if the fields contradict each other or are out of range (the message names
     *                                  the field)
     * @throws NullPointerException     if accountant, event, released (or one of its elements) or libraryVersion is
     *                                  null
     */
    public PrivacySidecar {
        if (schemaVersion != SCHEMA_VERSION) {
            throw new IllegalArgumentException("schema_version must be " + SCHEMA_VERSION + ", got " + schemaVersion);
        }
        if (!KINDS.contains(kind)) {
            throw new IllegalArgumentException("kind must be one of " + KINDS + ", got " + kind);
        }
        if ((modelFile == null) != (modelSha256 == null)) {
            throw new IllegalArgumentException("model.file and model.sha256 must both be given or both be null");
        }
        if (modelSha256 != null && !modelSha256.matches("[0-9a-f]{64}")) {
            throw new IllegalArgumentException("model.sha256 must be 64 lower-case hex digits, got " + modelSha256);
        }
        if (nonPrivate != (epsilon == null)) {
            throw new IllegalArgumentException("epsilon must be null exactly when non_private is true, got non_private "
                    + nonPrivate + " and epsilon " + epsilon);
        }
        if (epsilon != null && !(epsilon >= 0 && epsilon < Double.POSITIVE_INFINITY)) {
            throw new IllegalArgumentException("epsilon must be finite and >= 0 (null with non_private: true), got " + epsilon);
        }
        if (!(delta > 0 && delta < 1)) {
            throw new IllegalArgumentException("delta must be in (0, 1), got " + delta);
        }
        Objects.requireNonNull(accountant, "accountant");
        Objects.requireNonNull(event, "event");
        released = List.copyOf(released);
        configuration = configuration == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(configuration));
        Objects.requireNonNull(libraryVersion, "library_version");
    }

    /**
     * The sidecar as the JSON object written to {@code privacy.json} (field names in snake_case).
     *
     * @return a new mutable, insertion-ordered map from field name to value; {@code model} and {@code input} are
     *         nested maps or null, {@code event} is the event's map
     */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("schema_version", schemaVersion);
        m.put("kind", kind);
        if (modelFile == null) {
            m.put("model", null);
        } else {
            Map<String, Object> model = new LinkedHashMap<>();
            model.put("file", modelFile);
            model.put("sha256", modelSha256);
            m.put("model", model);
        }
        m.put("non_private", nonPrivate);
        m.put("epsilon", epsilon);
        m.put("delta", delta);
        m.put("accountant", accountant);
        m.put("event", event.toMap());
        m.put("released", released);
        m.put("input", input == null ? null : input.toMap());
        m.put("configuration", configuration);
        m.put("library_version", libraryVersion);
        return m;
    }

    /**
     * The sidecar as indented JSON (UTF-8 bytes, ending in a newline).
     *
     * @return the UTF-8 bytes of {@link #toMap()} as indented JSON followed by {@code '\n'}
     * @throws IllegalStateException if the map cannot be written as JSON
     */
    public byte[] toJson() {
        try {
            return (JSON.writeValueAsString(toMap()) + "\n").getBytes(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("the sidecar could not be written as JSON", e);
        }
    }

    /**
     * Parses {@code privacy.json}. Checks the schema and the types of every field, not the claim (that is
     * {@link PrivateModel#load}'s job). {@code model.file} must be a plain file name (no {@code /} or {@code \},
     * not starting with {@code .}); {@code input} and {@code configuration} may be absent.
     *
     * @param json the UTF-8 JSON bytes of a sidecar
     * @return the parsed sidecar
     * @throws IllegalArgumentException if the bytes are not JSON, a field is missing or of the wrong type, the
     *                                  schema version is not {@link #SCHEMA_VERSION}, the event cannot be parsed,
     *                                  or the fields contradict each other (the message names the field)
     */
    public static PrivacySidecar fromJson(byte[] json) {
        Map<?, ?> m;
        try {
            m = JSON.readValue(json, Map.class);
        } catch (IOException e) {
            throw new IllegalArgumentException("not valid JSON: " + e.getMessage(), e);
        }
        if (m == null) {
            throw new IllegalArgumentException("not a JSON object");
        }
        int version = integer(m, "schema_version");
        if (version != SCHEMA_VERSION) {
            throw new IllegalArgumentException("schema_version " + version + " is not supported (this dpdl4j reads " + SCHEMA_VERSION
                    + ")");
        }
        Object model = present(m, "model");
        String file = null;
        String sha = null;
        if (model != null) {
            Map<?, ?> mm = object(model, "model");
            file = string(mm, "file");
            sha = string(mm, "sha256");
            if (file.contains("/") || file.contains("\\") || file.startsWith(".")) {
                throw new IllegalArgumentException("model.file must be a plain file name in the same directory, got " + file);
            }
        }
        Object eps = present(m, "epsilon");
        if (eps != null && !(eps instanceof Number)) {
            throw new IllegalArgumentException("epsilon must be a number or null, got " + eps);
        }
        Object nonPrivate = present(m, "non_private");
        if (!(nonPrivate instanceof Boolean)) {
            throw new IllegalArgumentException("non_private must be true or false, got " + nonPrivate);
        }
        Object releasedValue = present(m, "released");
        if (!(releasedValue instanceof List<?> list) || !list.stream().allMatch(String.class::isInstance)) {
            throw new IllegalArgumentException("released must be a list of file names, got " + releasedValue);
        }
        List<String> released = new ArrayList<>();
        list.forEach(x -> released.add((String) x));
        PrivacyEvent event = PrivacyEvents.fromMap(toStringKeys(object(present(m, "event"), "event")));
        Object input = m.get("input");
        Object configuration = m.get("configuration");
        return new PrivacySidecar(version, string(m, "kind"), file, sha, (Boolean) nonPrivate,
                eps == null ? null : ((Number) eps).doubleValue(), number(m, "delta"), string(m, "accountant"), event, released,
                input == null ? null : InputSpec.fromMap(object(input, "input")),
                configuration == null ? null : toStringKeys(object(configuration, "configuration")), string(m, "library_version"));
    }

    /**
     * The dpdl4j version of this library, read from the {@code version.properties} resource written by the build.
     *
     * @return the {@code version} property, or {@code "unknown"} when the resource or the property is missing or
     *         cannot be read
     */
    public static String currentLibraryVersion() {
        try (InputStream in = PrivacySidecar.class.getResourceAsStream("version.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static Object present(Map<?, ?> m, String key) {
        if (!m.containsKey(key)) {
            throw new IllegalArgumentException("the field '" + key + "' is missing");
        }
        return m.get(key);
    }

    private static Map<?, ?> object(Object v, String key) {
        if (!(v instanceof Map<?, ?> map)) {
            throw new IllegalArgumentException(key + " must be a JSON object, got " + v);
        }
        return map;
    }

    private static Map<String, Object> toStringKeys(Map<?, ?> m) {
        Map<String, Object> out = new LinkedHashMap<>();
        m.forEach((k, v) -> out.put(String.valueOf(k), v));
        return out;
    }

    static String string(Map<?, ?> m, String key) {
        Object v = present(m, key.substring(key.lastIndexOf('.') + 1));
        if (!(v instanceof String s)) {
            throw new IllegalArgumentException(key + " must be a string, got " + v);
        }
        return s;
    }

    static double number(Map<?, ?> m, String key) {
        Object v = present(m, key.substring(key.lastIndexOf('.') + 1));
        if (!(v instanceof Number x)) {
            throw new IllegalArgumentException(key + " must be a number, got " + v);
        }
        return x.doubleValue();
    }

    static int integer(Map<?, ?> m, String key) {
        Object v = present(m, key.substring(key.lastIndexOf('.') + 1));
        if (!(v instanceof Integer x)) {
            throw new IllegalArgumentException(key + " must be an integer, got " + v);
        }
        return x;
    }
}
