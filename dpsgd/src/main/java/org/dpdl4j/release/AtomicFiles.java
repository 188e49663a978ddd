package org.dpdl4j.release;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Files written whole or not at all: a temporary file in the same directory, forced to disk, renamed onto the target,
 * and the directory forced after the rename, so that neither a killed process nor a lost machine leaves a part.
 */
public final class AtomicFiles {
    private AtomicFiles() {
    }

    /**
     * Writes {@code content} to {@code target} atomically (readers see the old file or the new one, never a part),
     * creating the parent directory if needed. An existing target is replaced.
     *
     * @param target  the file to write
     * @param content the bytes to write, the whole new content of the file
     * @throws IOException if the file cannot be written (the target is then unchanged)
     */
    public static void write(Path target, byte[] content) throws IOException {
        CrashPoint.writing(target);
        Path dir = target.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, "." + target.getFileName(), ".tmp");
        try {
            try (java.nio.channels.FileChannel c = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
                java.nio.ByteBuffer buf = java.nio.ByteBuffer.wrap(content);
                while (buf.hasRemaining()) {
                    c.write(buf);
                }
            } catch (IOException e) { // "No space left on device" names no file: this one does
                if (e instanceof java.nio.file.FileSystemException) {
                    throw e;
                }
                java.nio.file.FileSystemException named = new java.nio.file.FileSystemException(target.toString(), null,
                        String.valueOf(e.getMessage()));
                named.initCause(e);
                throw named;
            }
            publish(tmp, target);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /**
     * Renames a finished temporary file onto its target atomically, readable like a normal file (rw-r--r--; on a
     * non-POSIX file system the default permissions are kept). The file is forced to disk before the rename and its
     * directory after it. An existing target is replaced.
     *
     * @param tmp    the finished temporary file, on the same file system as {@code target}
     * @param target the file it becomes
     * @throws IOException if the permissions cannot be set or the file cannot be moved (including
     *                     {@link java.nio.file.AtomicMoveNotSupportedException} when an atomic move is impossible)
     */
    public static void publish(Path tmp, Path target) throws IOException {
        try {
            Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: keep the default permissions
        }
        try (java.nio.channels.FileChannel c = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
            c.force(true); // the bytes reach the disk before the name does
        }
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        forceDirectory(target.toAbsolutePath().getParent());
    }

    /**
     * Forces a directory's entries (a rename into it) to disk, where the platform allows it.
     *
     * @param dir the directory
     * @throws IOException if the directory cannot be opened
     */
    public static void forceDirectory(Path dir) throws IOException {
        try (java.nio.channels.FileChannel c = java.nio.channels.FileChannel.open(dir, java.nio.file.StandardOpenOption.READ)) {
            c.force(true);
        } catch (IOException e) {
            if (Files.isDirectory(dir) && !System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
                return; // some platforms cannot open or force a directory; Linux can, so there a failure is reported
            }
            throw e;
        }
    }

    /**
     * An I/O failure in words, for messages: what went wrong, and the file.
     *
     * @param e the failure, not null
     * @return the reason and the file for a {@link java.nio.file.FileSystemException}, otherwise the message, e.g. "no such file or directory: /x/y"
     */
    public static String why(Exception e) {
        if (e instanceof java.nio.file.NoSuchFileException n) {
            return "no such file or directory: " + n.getFile();
        }
        if (e instanceof java.nio.file.AccessDeniedException a) {
            return "permission denied: " + a.getFile();
        }
        if (e instanceof java.nio.file.FileSystemException f) {
            return (f.getReason() != null ? f.getReason().toLowerCase(java.util.Locale.ROOT) : "cannot be used") + ": " + f.getFile();
        }
        return String.valueOf(e.getMessage());
    }

    /**
     * Deletes a directory and everything under it (nothing when it does not exist).
     *
     * @param dir the directory
     * @throws IOException if something in it cannot be deleted
     */
    public static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
