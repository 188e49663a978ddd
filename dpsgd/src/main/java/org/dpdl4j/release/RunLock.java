package org.dpdl4j.release;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The lock that lets one process at a time train, resume or release the run in an output directory: a file lock on
 * {@code operator/checkpoint/.lock}, held until the release is out (or the process ends).
 */
public final class RunLock implements AutoCloseable {
    private final FileChannel channel;

    private RunLock(FileChannel channel) {
        this.channel = channel;
    }

    /**
     * Takes the lock of the run in {@code out}, creating {@code operator/checkpoint/} and its {@code .lock} file if
     * needed. The lock is not waited for: it is taken now or refused.
     *
     * @param out the run's output directory
     * @return the held lock; close it to release it
     * @throws IllegalArgumentException if another process (or this one) holds it
     * @throws IOException              if the lock file cannot be created
     */
    public static RunLock acquire(Path out) throws IOException {
        Path dir = out.resolve(PrivateRun.CHECKPOINT);
        Files.createDirectories(dir);
        FileChannel channel = FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            channel.close();
            throw new IllegalArgumentException("the run in " + out + " is being trained, resumed or released by another process");
        }
        return new RunLock(channel);
    }

    /** Releases the lock (again: nothing happens). */
    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            // closing releases the lock whatever else fails
        }
    }
}
