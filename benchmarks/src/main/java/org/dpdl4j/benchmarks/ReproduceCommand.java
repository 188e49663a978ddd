package org.dpdl4j.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dpdl4j reproduce ID}: recompute a seed paper's figure, write ID.csv and ID.png. */
@Command(name = "reproduce", mixinStandardHelpOptions = true,
        description = {"Reproduce a figure of a seed paper: writes <id>.csv (one row per plotted point) and <id>.png into --output,",
                "and prints 'paper vs ours'. IDs: ps-figure2 ... ps-figure7 (Papernot & Steinke 2022, seed 004);",
                "koskela-figure1 (Koskela & Kulkarni 2023, seed 003, analytic)."})
final class ReproduceCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "ID", description = "ps-figure2 ... ps-figure7 or koskela-figure1.")
    String id;

    @Option(names = "--output", defaultValue = "reproductions", description = "Directory for the CSV and PNG (default ${DEFAULT-VALUE}).")
    Path output;

    @Option(names = "--landscape", description = "Figure 7's data (default: ../shared/data/papernot-steinke-2022/figure7_landscape.json"
            + " next to the project, or $DPDL4J_SHARED/data/...).")
    Path landscape;

    @Override
    public Integer call() throws Exception {
        Figure f = switch (id) {
            case "ps-figure2" -> PapernotSteinkeFigures.figure2();
            case "ps-figure3" -> PapernotSteinkeFigures.figure3();
            case "ps-figure4" -> PapernotSteinkeFigures.figure4();
            case "ps-figure5" -> PapernotSteinkeFigures.figure5();
            case "ps-figure6" -> PapernotSteinkeFigures.figure6();
            case "ps-figure7" -> PapernotSteinkeFigures.figure7(landscapeFile());
            case "koskela-figure1" -> KoskelaKulkarniFigures.figure1();
            default -> throw new IllegalArgumentException("ID must be ps-figure2 ... ps-figure7 or koskela-figure1, got '" + id + "'");
        };
        f.write(output);
        System.out.println("wrote " + output.resolve(id + ".csv") + " and " + output.resolve(id + ".png"));
        return 0;
    }

    private Path landscapeFile() {
        if (landscape != null) {
            return landscape;
        }
        String shared = System.getenv("DPDL4J_SHARED");
        Path p = shared != null ? Paths.get(shared) : Paths.get("..", "shared");
        Path file = p.resolve("data").resolve("papernot-steinke-2022").resolve("figure7_landscape.json");
        if (!Files.exists(file)) {
            throw new IllegalArgumentException("Figure 7's data not found at " + file + "; give --landscape FILE");
        }
        return file;
    }
}
