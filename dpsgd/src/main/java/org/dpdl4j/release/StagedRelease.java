package org.dpdl4j.release;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.datasets.Sha256;

/**
 * A release written in two steps, so that a charge releases once and no crash loses or doubles it: the files are first
 * written whole into a staging folder ({@value #STAGING} under the output directory, operator-only) with a manifest of
 * their SHA-256, the release is then bound to its ledger charge ({@link PrivacyLedger#recordRelease}, which refuses a
 * second, different release of the same charge), and only then are the files moved into the output directory, the
 * privacy sidecar last. A run killed at any moment after staging finds the staged files on resume ({@link #pending}) and
 * finishes publishing exactly those bytes; a copy of the run that trained on from an earlier state has other bytes, and
 * its release is refused by the ledger.
 *
 * <p>Without a ledger there is no record that a charge has released: a copy of a checkpoint can then release twice
 * (every command that takes a checkpoint says so).
 */
public final class StagedRelease {
    /** Where the files wait, relative to the output directory. */
    public static final String STAGING = "operator/release-staging";
    private static final String MANIFEST = "manifest.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path out;
    private final Map<String, String> files; // name -> SHA-256, in publishing order
    private final List<String> obsolete;
    private final String digest;

    private StagedRelease(Path out, Map<String, String> files, List<String> obsolete) {
        this.out = out;
        this.files = files;
        this.obsolete = obsolete;
        this.digest = digestOf(files);
    }

    /**
     * Writes {@code files} into the staging folder of {@code out}, each atomically, then the manifest naming them (the
     * staging is complete once the manifest exists). An earlier staging there is replaced.
     *
     * @param out   the output directory
     * @param files    file name → bytes, in the order they are to be published (the privacy sidecar, if any, last); plain
     *                 names without separators
     * @param obsolete names of earlier files in {@code out} that this release replaces without a file of its own (removed
     *                 when it is published, so that they cannot pass for part of it)
     * @return the staged release
     * @throws IllegalArgumentException if no file is given or a name is not a plain file name
     * @throws IOException              if a file cannot be written
     */
    public static StagedRelease stage(Path out, Map<String, byte[]> files, List<String> obsolete) throws IOException {
        if (files.isEmpty()) {
            throw new IllegalArgumentException("a release needs at least one file");
        }
        Path dir = out.resolve(STAGING);
        Files.createDirectories(dir);
        Files.deleteIfExists(dir.resolve(MANIFEST)); // an earlier, unfinished staging is incomplete from here on
        Map<String, String> hashes = new LinkedHashMap<>();
        for (Map.Entry<String, byte[]> f : files.entrySet()) {
            checkName(f.getKey());
            AtomicFiles.write(dir.resolve(f.getKey()), f.getValue());
            hashes.put(f.getKey(), Sha256.hex(f.getValue()));
        }
        List<Map<String, String>> list = new ArrayList<>();
        hashes.forEach((name, sha) -> list.add(Map.of("name", name, "sha256", sha)));
        Map<String, Object> manifest = new LinkedHashMap<>();
        manifest.put("note", "a release waiting to be published into the parent of operator/; dpdl4j finishes it on --resume");
        manifest.put("files", list);
        for (String name : obsolete) {
            checkName(name);
        }
        manifest.put("obsolete", obsolete);
        byte[] bytes = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(manifest);
        AtomicFiles.write(dir.resolve(MANIFEST), bytes);
        return new StagedRelease(out, hashes, List.copyOf(obsolete));
    }

    /**
     * The staged release of {@code out}, if a complete one is waiting: its manifest exists and every file it names has
     * the recorded SHA-256. A file already moved into {@code out} (a crash while publishing) is checked there.
     *
     * @param out the output directory
     * @return the staged release, or empty when no manifest is waiting
     * @throws IllegalStateException    if the manifest is there but is not a manifest, or a file is missing or differs
     *                                  (the staging was damaged)
     * @throws IllegalArgumentException if the manifest lists a file to publish whose name is not a plain file name
     * @throws IOException              if a file cannot be read
     */
    public static Optional<StagedRelease> pending(Path out) throws IOException {
        Path dir = out.resolve(STAGING);
        Path manifest = dir.resolve(MANIFEST);
        if (!Files.isRegularFile(manifest)) {
            return Optional.empty();
        }
        Map<String, String> hashes = new LinkedHashMap<>();
        List<String> obsolete = new ArrayList<>();
        try {
            Map<?, ?> m = JSON.readValue(manifest.toFile(), Map.class);
            for (Object o : (List<?>) m.get("files")) {
                Map<?, ?> f = (Map<?, ?>) o;
                hashes.put((String) f.get("name"), (String) f.get("sha256"));
            }
            for (Object o : (List<?>) m.get("obsolete")) {
                checkName((String) o);
                obsolete.add((String) o);
            }
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("the staged release " + manifest + " is not a manifest (" + e.getMessage() + ")");
        }
        for (Map.Entry<String, String> f : hashes.entrySet()) {
            checkName(f.getKey());
            Path staged = dir.resolve(f.getKey());
            Path published = out.resolve(f.getKey());
            // a file already moved into place (a crash while publishing) counts where it now is
            Path where = Files.isRegularFile(staged) ? staged : published;
            if (!Files.isRegularFile(where) || !Sha256.hex(Files.readAllBytes(where)).equals(f.getValue())) {
                throw new IllegalStateException("the staged release in " + dir + " is damaged: " + f.getKey() + " is missing or "
                        + "is not the file its manifest names (SHA-256 " + f.getValue() + ")");
            }
        }
        return Optional.of(new StagedRelease(out, hashes, obsolete));
    }

    /**
     * SHA-256 (hex) of the manifest's names and hashes: what the ledger records as this release.
     *
     * @return the SHA-256 (64 lower-case hex digits) of the UTF-8 lines {@code "NAME SHA256\n"}, in publishing order
     */
    public String digest() {
        return digest;
    }

    /**
     * The SHA-256 of one staged file.
     *
     * @param name the file name
     * @return its SHA-256 (hex) as recorded in the manifest, or null if it is not part of the release
     */
    public String sha256(String name) {
        return files.get(name);
    }

    /**
     * The staged file names, in publishing order.
     *
     * @return an unmodifiable list of the names
     */
    public List<String> names() {
        return List.copyOf(files.keySet());
    }

    /**
     * Binds the release to its charge (if there is a ledger), then publishes it: the one step a run's release goes through.
     *
     * @param ledger the ledger the run was charged to, or null
     * @param charge the charge's sequence number (ignored without a ledger)
     * @param event  what the release costs (for the ledger's record); not null with a ledger and a charge
     * @throws PrivacyLedger.AlreadyReleasedException if the charge has released something else (nothing is published)
     * @throws IllegalArgumentException               if {@code charge} is not a charge in the ledger
     * @throws PrivacyLedger.LedgerException          if the ledger is corrupt, was tampered with, or is locked too long
     * @throws IOException                            if the ledger or a file cannot be written
     */
    public void release(PrivacyLedger ledger, Long charge, PrivacyEvent event) throws IOException {
        if (ledger != null && charge != null) {
            String model = files.get(PrivateModel.MODEL_FILE);
            ledger.recordRelease(charge, digest, event, model != null ? "model.zip sha256 " + model : String.join(", ", names()));
            CrashPoint.reached("release:recorded");
        }
        publish();
    }

    /**
     * Moves the staged files into the output directory (an earlier sidecar there is removed first, the sidecar of this
     * release goes last), removes the files it makes obsolete, then removes the staging folder. Publishing again after a
     * crash in the middle moves what is still staged.
     *
     * @throws IOException if a file cannot be read, moved or deleted
     */
    public void publish() throws IOException {
        Path dir = out.resolve(STAGING);
        Path sidecar = out.resolve(PrivateModel.SIDECAR_FILE);
        if (Files.isRegularFile(sidecar) && !Sha256.hex(Files.readAllBytes(sidecar)).equals(files.get(PrivateModel.SIDECAR_FILE))) {
            Files.delete(sidecar); // an earlier run's sidecar would vouch for files of this one
        }
        for (String name : obsolete) {
            Files.deleteIfExists(out.resolve(name));
        }
        for (String name : files.keySet()) {
            Path staged = dir.resolve(name);
            if (Files.isRegularFile(staged)) {
                AtomicFiles.publish(staged, out.resolve(name));
                CrashPoint.reached("release:published:" + name);
            }
        }
        Files.deleteIfExists(dir.resolve(MANIFEST));
        try (var rest = Files.list(dir)) {
            for (Path p : rest.toList()) {
                Files.deleteIfExists(p);
            }
        }
        Files.deleteIfExists(dir);
    }

    private static String digestOf(Map<String, String> hashes) {
        StringBuilder sb = new StringBuilder();
        hashes.forEach((name, sha) -> sb.append(name).append(' ').append(sha).append('\n'));
        return Sha256.hex(sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static void checkName(String name) {
        if (name == null || name.isEmpty() || name.contains("/") || name.contains("\\") || name.equals(".") || name.equals("..")
                || name.equals(MANIFEST)) {
            throw new IllegalArgumentException("a released file needs a plain file name, got '" + name + "'");
        }
    }
}
