package org.dpdl4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.codegen.docgen.manpage.ManPageGenerator;

/**
 * The command reference in docs/cli is picocli's own AsciiDoc man pages of every command, so it cannot drift from
 * {@code --help}: this test regenerates them and fails when a committed page differs. After changing a command,
 * regenerate with {@code mvn -pl cli test -Dtest=CommandReferenceTest -Ddpdl4j.writeDocs=true}.
 */
class CommandReferenceTest {
    private static final Path DOCS = Path.of("..", "docs", "cli");

    @Test
    void committedReferenceMatchesTheCommands(@TempDir Path tmp) throws Exception {
        Path out = Boolean.getBoolean("dpdl4j.writeDocs") ? DOCS : tmp;
        Files.createDirectories(out);
        int status = ManPageGenerator.generateManPage(out.toFile(), null, new boolean[0], false,
                Main.commandLine().getCommandSpec());
        assertEquals(0, status);
        Map<String, String> generated = pages(out);
        assertTrue(generated.containsKey("dpdl4j-serve.adoc") && generated.containsKey("dpdl4j-tune-random-search.adoc"),
                generated.keySet().toString());
        Map<String, String> committed = pages(DOCS);
        assertEquals(generated.keySet(), committed.keySet(), "pages in docs/cli (regenerate: see the class comment)");
        for (var e : generated.entrySet()) {
            assertEquals(e.getValue(), committed.get(e.getKey()), "docs/cli/" + e.getKey() + " is out of date (regenerate: see the class comment)");
        }
    }

    private static Map<String, String> pages(Path dir) throws Exception {
        Map<String, String> m = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            return m;
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".adoc"))::iterator) {
                m.put(p.getFileName().toString(), Files.readString(p));
            }
        }
        return m;
    }
}
