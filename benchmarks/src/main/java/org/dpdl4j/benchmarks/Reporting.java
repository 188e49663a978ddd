package org.dpdl4j.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * How the reproductions and the command line write what they produce: JSON, files replaced atomically, progress
 * bars on stderr, and the split of cores between DP-SGD workers and ND4J's threads.
 */
public final class Reporting {
    /** Compact JSON (the --json line, records read back). */
    public static final ObjectMapper JSON = new ObjectMapper();
    /** Indented JSON (files a person reads). */
    public static final ObjectMapper PRETTY = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private Reporting() {
    }

    /**
     * Writes a file atomically: a temporary file in the same directory, then a rename (the parent directory is created
     * if needed).
     *
     * @param target  the file to write or replace
     * @param content the file's bytes
     * @throws IOException if the file cannot be written (the target is then unchanged)
     */
    public static void writeAtomically(Path target, byte[] content) throws IOException {
        org.dpdl4j.release.AtomicFiles.write(target, content);
    }

    /**
     * Renames a finished temporary file onto its target atomically, readable like a normal file.
     *
     * @param tmp    the finished temporary file, on the same file system as {@code target}
     * @param target the file to create or replace
     * @throws IOException if the file cannot be moved (e.g. the file system has no atomic move)
     */
    public static void publish(Path tmp, Path target) throws IOException {
        org.dpdl4j.release.AtomicFiles.publish(tmp, target);
    }

    /**
     * Writes {@code object} as indented JSON to {@code target} atomically, with a final newline.
     *
     * @param target the file to write or replace
     * @param object any value Jackson can serialise
     * @throws IOException if the object cannot be serialised or the file cannot be written
     */
    public static void writeJsonAtomically(Path target, Object object) throws IOException {
        writeAtomically(target, (PRETTY.writeValueAsString(object) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The number of DP-SGD workers (default: the number of cores), with ND4J's per-op threads set
     * to cores/workers so that the two kinds of threads do not oversubscribe the machine.
     *
     * @param requested the number of workers, ≥ 1; null for the number of available cores
     * @return the number of workers
     * @throws IllegalArgumentException if {@code requested} is &lt; 1
     */
    public static int configureWorkers(Integer requested) {
        int cores = Runtime.getRuntime().availableProcessors();
        if (requested != null && requested < 1) {
            throw new IllegalArgumentException("--workers must be >= 1, got " + requested);
        }
        return configureWorkers(requested != null ? requested : cores, cores, 1);
    }

    /**
     * Sets ND4J's per-op threads for {@code concurrent} runs of {@code workers} DP-SGD workers each sharing {@code cores}
     * cores: max(1, cores / (workers · concurrent)), so that runs, workers and op threads do not oversubscribe the cores.
     *
     * @param workers    DP-SGD workers per run, ≥ 1
     * @param cores      cores shared by all runs, ≥ 1
     * @param concurrent runs at the same time, ≥ 1
     * @return workers
     * @throws IllegalArgumentException if workers, cores or concurrent is &lt; 1
     */
    public static int configureWorkers(int workers, int cores, int concurrent) {
        if (workers < 1 || cores < 1 || concurrent < 1) {
            throw new IllegalArgumentException("workers, cores and concurrent runs must be >= 1, got " + workers + ", " + cores + ", "
                    + concurrent);
        }
        int threads = Math.max(1, cores / (workers * concurrent));
        org.nd4j.linalg.factory.Nd4j.getEnvironment().setMaxThreads(threads);
        // in ND4J 1.0.0-M2.1 setMaxThreads changes nothing; the master threads are what libnd4j's ops and the
        // DP-SGD trainer's per-worker native teams read
        org.nd4j.linalg.factory.Nd4j.getEnvironment().setMaxMasterThreads(threads);
        return workers;
    }

    /**
     * A progress bar on stderr, or null when {@code quiet}. On a terminal it redraws in place; when stderr is
     * redirected (a log file) it writes a plain line every 30 seconds instead of control characters.
     *
     * @param task  the bar's label
     * @param max   the count at which the bar is full (e.g. trials or steps), ≥ 0
     * @param quiet true for no bar
     * @return a started progress bar, to be closed by the caller; null when {@code quiet}
     */
    public static me.tongfei.progressbar.ProgressBar progressBar(String task, long max, boolean quiet) {
        if (quiet) {
            return null;
        }
        me.tongfei.progressbar.ProgressBarBuilder b = new me.tongfei.progressbar.ProgressBarBuilder().setTaskName(task)
                .setInitialMax(max);
        if (System.console() != null) {
            b.setConsumer(new me.tongfei.progressbar.ConsoleProgressBarConsumer(System.err, 150)).setUpdateIntervalMillis(500);
        } else {
            b.setConsumer(new me.tongfei.progressbar.DelegatingProgressBarConsumer(line -> System.err.println(line.strip()), 150))
                    .setStyle(me.tongfei.progressbar.ProgressBarStyle.ASCII).setUpdateIntervalMillis(30_000);
        }
        return b.build();
    }

    /**
     * Deletes a directory and everything under it (nothing when it does not exist).
     *
     * @param dir the directory
     * @throws IOException if something in it cannot be deleted
     */
    public static void deleteTree(Path dir) throws IOException {
        org.dpdl4j.release.AtomicFiles.deleteTree(dir);
    }
}
