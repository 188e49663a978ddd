package org.dpdl4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import org.dpdl4j.benchmarks.Reporting;

/** Runs the command line in this JVM and captures what it prints. */
final class CliRunner {
    private CliRunner() {
    }

    /** A finished command: its exit status and what it printed. */
    record Run(int status, String out, String err) {
        JsonNode lastJson() throws Exception {
            String[] lines = out.strip().split("\n");
            return Reporting.JSON.readTree(lines[lines.length - 1]);
        }
    }

    /** The arguments a followed by b. */
    static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    static Run run(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int status = Main.run(args);
            return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    /** Starts the command line in a child JVM (one ND4J thread), its output in {@code log}. */
    static Process startCli(Path log, String... args) throws Exception {
        return startCliCrashingAt(log, null, args);
    }

    /**
     * Starts the command line in a child JVM that halts as {@code kill -9} would at the named {@link
     * org.dpdl4j.release.CrashPoint} (null: none); its output in {@code log}.
     */
    static Process startCliCrashingAt(Path log, String crashPoint, String... args) throws Exception {
        String javaBinary = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        java.util.List<String> cmd = new java.util.ArrayList<>(java.util.List.of(javaBinary, "-Xmx2g"));
        if (crashPoint != null) {
            cmd.add("-D" + org.dpdl4j.release.CrashPoint.PROPERTY + "=" + crashPoint);
        }
        cmd.addAll(java.util.List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(java.util.List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("OMP_NUM_THREADS", "1");
        return pb.start();
    }

    /** Runs the command line in a child JVM halting at {@code crashPoint}, and waits for it: its exit status (137 if it halted). */
    static int crashAt(Path log, String crashPoint, String... args) throws Exception {
        Process p = startCliCrashingAt(log, crashPoint, args);
        try {
            if (!p.waitFor(300, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new AssertionError("the child did not end; its log:\n" + Files.readString(log));
            }
            return p.exitValue();
        } finally {
            p.destroyForcibly();
        }
    }

    /** Waits for a file to appear while the process lives; fails with the process's log otherwise. */
    static void awaitFile(Path file, Process p, Path log) throws Exception {
        long end = System.nanoTime() + 240_000_000_000L;
        while (!Files.exists(file)) {
            if (!p.isAlive() || System.nanoTime() > end) {
                p.destroyForcibly();
                throw new AssertionError(file + " never appeared; child log:\n" + Files.readString(log));
            }
            Thread.sleep(50);
        }
    }

    /** Waits until a checkpoint's state.json records at least {@code steps} steps done. */
    static void awaitCheckpoint(Path state, long steps, Process p, Path log) throws Exception {
        long end = System.nanoTime() + 240_000_000_000L;
        while (true) {
            if (Files.exists(state)) {
                try {
                    if (Reporting.JSON.readTree(state.toFile()).get("steps_done").asLong() >= steps) {
                        return;
                    }
                } catch (java.io.IOException e) {
                    // being replaced: read again
                }
            }
            if (!p.isAlive() || System.nanoTime() > end) {
                p.destroyForcibly();
                throw new AssertionError(state + " never reached step " + steps + "; child log:\n" + Files.readString(log));
            }
            Thread.sleep(50);
        }
    }
}
