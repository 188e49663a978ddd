package org.dpdl4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
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
}
