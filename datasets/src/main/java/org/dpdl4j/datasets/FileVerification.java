package org.dpdl4j.datasets;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/** Reading a whole (optionally gzipped) file and checking its SHA-256. */
final class FileVerification {
    private FileVerification() {
    }

    /**
     * The uncompressed bytes of a file ({@code .gz} files are decompressed), checked against an
     * expected SHA-256 of those bytes when one is given.
     *
     * @param expectedSha256 lower-case hex digest, or null to skip the check
     * @throws InvalidDatasetException if the file is missing, not valid gzip, or has another digest
     */
    static byte[] readVerified(Path file, String expectedSha256) throws IOException {
        if (Files.isDirectory(file)) {
            throw new InvalidDatasetException("dataset file " + file + " is a directory, not a file: remove it and run "
                    + "scripts/fetch-data.sh");
        }
        if (!Files.isRegularFile(file)) {
            throw new InvalidDatasetException("dataset file " + file + " does not exist: run scripts/fetch-data.sh (the launcher "
                    + "./dpdl4j runs it for mnist and fashion-mnist)");
        }
        byte[] bytes;
        try (InputStream in = file.toString().endsWith(".gz")
                ? new GZIPInputStream(Files.newInputStream(file)) : Files.newInputStream(file)) {
            bytes = in.readAllBytes();
        } catch (java.util.zip.ZipException | java.io.EOFException e) {
            throw new InvalidDatasetException("dataset file " + file + " is not a complete gzip file: " + e.getMessage());
        }
        if (expectedSha256 != null) {
            String got = Sha256.hex(bytes);
            if (!got.equals(expectedSha256)) {
                throw new InvalidDatasetException("dataset file " + file + " has SHA-256 " + got + ", expected "
                        + expectedSha256 + " (corrupt or a different release): delete it and run scripts/fetch-data.sh");
            }
        }
        return bytes;
    }}
