package org.dpdl4j.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dpdl4j reproduce ID}: recompute a seed paper's figure, write ID.csv and ID.png. */
@Command(name = "reproduce", mixinStandardHelpOptions = true,
        description = {"Reproduce a figure of a seed paper: writes <id>.csv (one row per plotted point) and <id>.png into --output,",
                "and prints 'paper vs ours'. IDs: ps-figure2 ... ps-figure7 (Papernot & Steinke 2022, seed 004);",
                "koskela-figure1 (Koskela & Kulkarni 2023, seed 003, analytic), koskela-figure2 (trains: learning-rate tuning on",
                "MNIST and Fashion-MNIST; --epochs/--mu/--epsilons/--seeds set its scale, --paper-scale the paper's)."})
final class ReproduceCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "ID", description = "ps-figure2 ... ps-figure7, koskela-figure1 or koskela-figure2.")
    String id;

    @Option(names = "--output", defaultValue = "reproductions", description = "Directory for the CSV and PNG (default ${DEFAULT-VALUE}).")
    Path output;

    @Option(names = "--landscape", description = "Figure 7's data (default: ../shared/data/papernot-steinke-2022/figure7_landscape.json"
            + " next to the project, or $DPDL4J_SHARED/data/...).")
    Path landscape;

    @Option(names = "--datasets", split = ",", defaultValue = "mnist,fashion-mnist", description = "koskela-figure2: datasets (default ${DEFAULT-VALUE}).")
    List<String> datasets;

    @Option(names = "--epochs", defaultValue = "1", description = "koskela-figure2: epochs of every run (default ${DEFAULT-VALUE}; paper 40).")
    double epochs;

    @Option(names = "--mu", defaultValue = "15", description = "koskela-figure2: E[K], Poisson (default ${DEFAULT-VALUE}, as the paper).")
    double mu;

    @Option(names = "--tune-fraction", defaultValue = "0.1", description = "koskela-figure2: q_tune (default ${DEFAULT-VALUE}, as the paper).")
    double tuneFraction;

    @Option(names = "--epsilons", split = ",", defaultValue = "1,3", description = "koskela-figure2: final epsilon targets at delta 1e-5 (default ${DEFAULT-VALUE}).")
    double[] epsilons;

    @Option(names = "--seeds", defaultValue = "1", description = "koskela-figure2: repetitions per point (default ${DEFAULT-VALUE}; paper 10).")
    int seeds;

    @Option(names = "--seed", defaultValue = "2026", description = "koskela-figure2: first seed (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--paper-scale", description = "koskela-figure2: the paper's scale (40 epochs, 10 seeds, epsilons 1,2,3,4,5,6); days on 2 cores.")
    boolean paperScale;

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
            case "koskela-figure2" -> KoskelaKulkarniFigures.figure2(figure2Settings());
            default -> throw new IllegalArgumentException("ID must be ps-figure2 ... ps-figure7, koskela-figure1 or koskela-figure2, got '" + id + "'");
        };
        f.write(output);
        System.out.println("wrote " + output.resolve(id + ".csv") + " and " + output.resolve(id + ".png"));
        return 0;
    }

    private KoskelaKulkarniFigures.Figure2Settings figure2Settings() {
        if (paperScale) {
            return new KoskelaKulkarniFigures.Figure2Settings(datasets, 40, 15, 0.1, new double[]{1, 2, 3, 4, 5, 6}, 10, seed);
        }
        if (!(epochs > 0) || Double.isInfinite(epochs)) {
            throw new IllegalArgumentException("--epochs must be finite and > 0, got " + epochs);
        }
        if (!(mu > 0) || Double.isInfinite(mu)) {
            throw new IllegalArgumentException("--mu must be finite and > 0, got " + mu);
        }
        if (!(tuneFraction > 0 && tuneFraction < 1)) {
            throw new IllegalArgumentException("--tune-fraction must be in (0, 1), got " + tuneFraction);
        }
        if (seeds < 1) {
            throw new IllegalArgumentException("--seeds must be >= 1, got " + seeds);
        }
        for (double e : epsilons) {
            if (!(e > 0) || Double.isInfinite(e)) {
                throw new IllegalArgumentException("--epsilons must be finite and > 0, got " + e);
            }
        }
        return new KoskelaKulkarniFigures.Figure2Settings(datasets, epochs, mu, tuneFraction, epsilons, seeds, seed);
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
