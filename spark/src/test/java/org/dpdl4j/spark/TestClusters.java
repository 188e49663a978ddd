package org.dpdl4j.spark;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** The processes of a {@code local-cluster} (tests kill executors to check that runs survive it). */
final class TestClusters {
    private TestClusters() {
    }

    /** The executor's JVM among this JVM's descendants (the workers run in this JVM and start executors as children). */
    static Optional<ProcessHandle> executorProcess(String executorId) {
        return ProcessHandle.current().descendants().filter(p -> {
            List<String> args = commandLine(p);
            int at = args.indexOf("--executor-id");
            return args.contains("org.apache.spark.executor.CoarseGrainedExecutorBackend") && at >= 0 && at + 1 < args.size()
                    && args.get(at + 1).equals(executorId);
        }).findFirst();
    }

    static List<String> commandLine(ProcessHandle p) {
        try { // /proc (Linux): ProcessHandle.Info may leave out a long command line
            byte[] raw = java.nio.file.Files.readAllBytes(Path.of("/proc", Long.toString(p.pid()), "cmdline"));
            return List.of(new String(raw, java.nio.charset.StandardCharsets.UTF_8).split("\0"));
        } catch (java.io.IOException e) {
            return List.of(p.info().arguments().orElse(new String[0]));
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
