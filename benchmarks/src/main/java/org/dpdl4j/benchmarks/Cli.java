package org.dpdl4j.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Properties;
import picocli.CommandLine;

/** Shared helpers of the command line: JSON, atomic files, the library version, error handling. */
final class Cli {
    static final ObjectMapper JSON = new ObjectMapper();
    static final ObjectMapper PRETTY = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private Cli() {
    }

    /** The library version from the build. */
    static String version() {
        try (InputStream in = Cli.class.getResourceAsStream("/dpdl4j.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** Prints one JSON object as the last line of stdout. */
    static void printJsonLine(PrintStream out, Map<String, ?> object) {
        try {
            out.println(JSON.writeValueAsString(object));
        } catch (IOException e) {
            throw new IllegalStateException("could not serialise " + object, e);
        }
    }

    /** Writes a file atomically: a temporary file in the same directory, then a rename. */
    static void writeAtomically(Path target, byte[] content) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, "." + target.getFileName(), ".tmp");
        try {
            Files.write(tmp, content);
            publish(tmp, target);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** Renames a finished temporary file onto its target atomically, readable like a normal file. */
    static void publish(Path tmp, Path target) throws IOException {
        try {
            Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: keep the default permissions
        }
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    static void writeJsonAtomically(Path target, Map<String, ?> object) throws IOException {
        writeAtomically(target, (PRETTY.writeValueAsString(object) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The number of DP-SGD workers (default: the number of cores), with ND4J's per-op threads set
     * to cores/workers so that the two kinds of threads do not oversubscribe the machine.
     */
    static int configureWorkers(Integer requested) {
        int cores = Runtime.getRuntime().availableProcessors();
        int workers = requested != null ? requested : cores;
        if (workers < 1) {
            throw new IllegalArgumentException("--workers must be >= 1, got " + workers);
        }
        org.nd4j.linalg.factory.Nd4j.getEnvironment().setMaxThreads(Math.max(1, cores / workers));
        return workers;
    }

    /**
     * Turns every failure into one line on stderr with its own exit status: bad input or missing files 2, an
     * exhausted privacy budget 3, a failed DP-HYPE session 4, an unusable ledger (corrupt, locked, not a ledger) 5,
     * anything unexpected 1 (with the stack trace when the environment sets DPDL4J_VERBOSE=1).
     */
    static CommandLine.IExecutionExceptionHandler errorHandler() {
        return (ex, cmd, parseResult) -> {
            if (ex instanceof IllegalArgumentException || ex instanceof IOException || ex instanceof java.io.UncheckedIOException) {
                cmd.getErr().println("error: " + oneLine(ex.getMessage()));
                return 2;
            }
            if (ex instanceof org.dpdl4j.tuning.PrivacyLedger.BudgetExceededException) {
                cmd.getErr().println("refused: " + oneLine(ex.getMessage()));
                return 3;
            }
            if (ex instanceof org.dpdl4j.federated.ProtocolException) {
                cmd.getErr().println("failed: " + oneLine(ex.getMessage()));
                return 4;
            }
            if (ex instanceof org.dpdl4j.tuning.PrivacyLedger.LedgerException) {
                cmd.getErr().println("ledger: " + oneLine(ex.getMessage()));
                return 5;
            }
            cmd.getErr().println("internal error: " + ex.getClass().getSimpleName() + ": " + oneLine(String.valueOf(ex.getMessage()))
                    + (verbose() ? "" : " (set DPDL4J_VERBOSE=1 for the stack trace)"));
            if (verbose()) {
                ex.printStackTrace(cmd.getErr());
            }
            return 1;
        };
    }

    private static boolean verbose() {
        return "1".equals(System.getenv("DPDL4J_VERBOSE"));
    }

    private static String oneLine(String message) {
        return message == null ? "" : message.replaceAll("\\s*\\R\\s*", " ");
    }
}
