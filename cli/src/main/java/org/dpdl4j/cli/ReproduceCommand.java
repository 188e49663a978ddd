package org.dpdl4j.cli;

import org.dpdl4j.benchmarks.AuditFigures;
import org.dpdl4j.benchmarks.Figure;
import org.dpdl4j.benchmarks.DingWuFigures;
import org.dpdl4j.benchmarks.DpHypeFigures;
import org.dpdl4j.benchmarks.DpHypeSimulation;
import org.dpdl4j.benchmarks.DpHypoFigures;
import org.dpdl4j.benchmarks.HonestAccuracy;
import org.dpdl4j.benchmarks.TramerBoneh;
import org.dpdl4j.benchmarks.KoskelaKulkarniFigures;
import org.dpdl4j.benchmarks.PapernotSteinkeFigures;
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
        description = {"Reproduce a figure of a seed paper: writes <id>.csv (one row per plotted point) and <id>.png into "
                        + "--output, and prints 'paper vs ours'.",
                "IDs: ps-figure2 ... ps-figure7 (Papernot & Steinke 2022, arXiv:2110.03620); koskela-figure1 (Koskela "
                        + "& Kulkarni 2023, arXiv:2301.11989, analytic), koskela-figure2 (trains: learning-rate tuning on MNIST "
                        + "and Fashion-MNIST; --epochs/--mu/--epsilons/--seeds set its scale, --paper-scale the paper's), "
                        + "dphypo-table1 (trains a landscape cache, then replays DP-HyPO vs uniform search; --paper-grid for "
                        + "the paper's grid), dingwu-figure2 (simulated iterations of the propose-test loop), "
                        + "dphype-noise-table (DP-HYPE's sigma for k = 5), audit-table (claimed epsilon vs the one-run audit's "
                        + "lower bound, white- and black-box canaries), dphype-figure2 (simulated votes; also writes "
                        + "dphype-figure2b; --repetitions-per-point, paper 5000), honest-mnist / honest-fashion-mnist (trains: "
                        + "a private model whose epsilon includes its hyperparameter search, Koskela-Kulkarni subsampled "
                        + "tuning, next to a single run with a recipe fixed in advance and published single runs; --seeds "
                        + "repetitions (default 3), --target-epsilon the total (default 3), --recipe scatternet (default), scatternet-datanorm or standard-cnn, "
                        + "--quick for a short version, --json for the result line), tramer-boneh "
                        + "(trains: Tramer & Boneh 2021's ScatterNet rows for MNIST and Fashion-MNIST at epsilon 3, paper vs "
                        + "dpdl4j with the same models and hyperparameters; --epochs overrides theirs for a quick check), "
                        + "scatternet-ablation (trains: ScatterNet + linear with GroupNorm or with the private data "
                        + "normalisation at epsilon 3 (--target-epsilon), one seed, validation and test accuracy; --datasets, --epochs, --normalisations, --lr-factors)."})
final class ReproduceCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "ID", description = "ps-figure2 ... ps-figure7, koskela-figure1, koskela-figure2, dphypo-table1, dingwu-figure2, dphype-noise-table, dphype-figure2, audit-table, honest-mnist, honest-fashion-mnist, tramer-boneh or scatternet-ablation.")
    String id;

    @Option(names = "--output", defaultValue = "reproductions", description = "Directory for the CSV and PNG (default ${DEFAULT-VALUE}).")
    Path output;

    @Option(names = "--landscape", paramLabel = "FILE", description = "ps-figure7: the JSON of the paper's Figure 7 landscape "
            + "(default: $DPDL4J_DATA/papernot-steinke-2022/figure7_landscape.json when DPDL4J_DATA is set).")
    Path landscape;

    @Option(names = "--datasets", split = ",", defaultValue = "mnist,fashion-mnist", description = "koskela-figure2 / scatternet-ablation: datasets (default ${DEFAULT-VALUE}).")
    List<String> datasets;

    @Option(names = "--normalisations", split = ",", description = "scatternet-ablation: "
            + "GroupNorm(27) on the features and/or the private data normalisation (default groupnorm,datanorm).")
    List<String> normalisations;

    @Option(names = "--lr-factors", split = ",", description = "scatternet-ablation: multiples of Tramer & Boneh's "
            + "learning rate to train each row at (default 1; honest-*'s ScatterNet search can hand its final run "
            + HonestAccuracy.FINAL_LR_FACTORS_TEXT + ").")
    List<Double> lrFactors;

    @Option(names = "--augmults", paramLabel = "k", split = ",", description = "scatternet-ablation: augmentation multiplicities to "
            + "train each row at: each example's gradient is the mean over k augmented copies (shifts of up to 2 pixels), "
            + "clipped as a whole, as train --augmult (default 1: none).")
    List<Integer> augmults;

    @Option(names = "--batch-factors", split = ",", description = "scatternet-ablation: multiples of Tramer & Boneh's "
            + "expected batch size (4096 MNIST, 8192 Fashion-MNIST) to train each row at, each in (0, 8]; the epochs stay, so "
            + "the steps scale by the inverse (default 1).")
    List<Double> batchFactors;

    @Option(names = "--lr-schedules", split = ",", description = "scatternet-ablation: constant (the paper's) and/or linear "
            + "(from the row's learning rate down to 0 over the run's steps) (default constant).")
    List<String> lrSchedules;

    @Option(names = "--epochs", description = "koskela-figure2 / dphypo-table1 / honest-* / tramer-boneh / scatternet-ablation: epochs of every run "
            + "(default 1 / 2 / 40, 20 with --quick / the paper's; papers 40 / 10).")
    Double epochs;

    @Option(names = "--train-size", description = "dphypo-table1: MNIST training examples per landscape run (default 10000); honest-*: "
            + "a random subset of the training data of this size, for a quick check (default: all).")
    Integer trainSizeOption;

    @Option(names = "--lr-grid", defaultValue = "lr=log:0.03:10:6", description = "dphypo-table1: learning-rate axis (default ${DEFAULT-VALUE}).")
    String lrGrid;

    @Option(names = "--clip-grid", defaultValue = "clip=lin:0.5:3:3", description = "dphypo-table1: clipping-norm axis (default ${DEFAULT-VALUE}).")
    String clipGrid;

    @Option(names = "--runs", defaultValue = "2", description = "dphypo-table1: runs per grid point (default ${DEFAULT-VALUE}; paper 5).")
    int runs;

    @Option(names = "--replays", defaultValue = "200", description = "dphypo-table1: simulated tuning runs per entry (default ${DEFAULT-VALUE}, as the paper).")
    int replays;

    @Option(names = "--landscape-dir", defaultValue = "reproductions/landscapes", description = "dphypo-table1: landscape cache (resumable) (default ${DEFAULT-VALUE}).")
    Path landscapeDir;

    @Option(names = "--softmax-beta", defaultValue = "1", description = "dphypo-table1: the GP rule's softmax beta (default ${DEFAULT-VALUE}, the paper's).")
    double softmaxBeta;

    @Option(names = "--repetitions-per-point", defaultValue = "5000", description = "dphype-figure2: simulated votes per point (default ${DEFAULT-VALUE}, as the paper).")
    int repetitionsPerPoint;

    @Option(names = "--paper-grid", description = "dphypo-table1: the paper's grid (16 lr x 20 clip, 5 runs, 10 epochs, all 60,000 examples).")
    boolean paperGrid;

    @Option(names = "--mu", defaultValue = "15", description = "koskela-figure2: E[K], Poisson (default ${DEFAULT-VALUE}, as the paper).")
    double mu;

    @Option(names = "--tune-fraction", defaultValue = "0.1", description = "koskela-figure2: q_tune (default ${DEFAULT-VALUE}, as the paper).")
    double tuneFraction;

    @Option(names = "--epsilons", split = ",", defaultValue = "1,3", description = "koskela-figure2: final epsilon targets at delta 1e-5 (default ${DEFAULT-VALUE}).")
    double[] epsilons;

    @Option(names = "--seeds", description = "koskela-figure2: repetitions per point (default 1; paper 10); honest-*: single runs and "
            + "complete tunings (default 3, 1 with --quick).")
    Integer seeds;

    @Option(names = "--quick", description = "honest-*: 20 epochs instead of 40 and one repetition.")
    boolean quick;

    @Option(names = "--target-epsilon", paramLabel = "ε", description = {"The total epsilon: honest-* / "
            + "scatternet-ablation: of each row at delta 1e-5 (default 3; the issue's tables: 3 and 1); dphypo-table1: the "
            + "white-box total at gamma = 0.01 (default 10). --epsilon, its older name, is still read."})
    Double epsilon;

    /** The older name of {@code --target-epsilon} (honest-* and scatternet-ablation had it), kept so that old commands run. */
    @Option(names = "--epsilon", hidden = true, paramLabel = "ε")
    void olderEpsilonName(double e) {
        epsilon = e;
    }

    @Option(names = "--recipe", description = "honest-*: scatternet (Tramer & Boneh's ScatterNet + linear "
            + "model and hyperparameters, GroupNorm), scatternet-datanorm (the same with their private data normalisation, its "
            + "cost counted) or standard-cnn (the standard CNN, SGD, B 2048, lr 4) (default scatternet).")
    String recipe;

    @Option(names = "--tuned-only", description = "honest-*: run the tunings only, not the single runs, which do not depend on "
            + "the search (its grid, K or scores): after a change to the search, a full run's single-run row with the same seeds stands.")
    boolean tunedOnly;

    @Option(names = "--json", description = "honest-*: print the result (tuned test accuracy, total epsilon, delta, the chosen candidate, "
            + "the single-run row) as one JSON object on the last line of stdout.")
    boolean json;

    @Option(names = "--seed", defaultValue = "2026", description = "koskela-figure2 / honest-* / tramer-boneh / scatternet-ablation: first seed (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--audit-train-size", defaultValue = "2000", description = "audit-table: MNIST training examples per run (default ${DEFAULT-VALUE}).")
    int auditTrainSize;

    @Option(names = "--audit-epochs", defaultValue = "6", description = "audit-table: epochs per run, batch 200 (default ${DEFAULT-VALUE}).")
    double auditEpochs;

    @Option(names = "--paper-scale", description = "koskela-figure2: the paper's scale (40 epochs, 10 seeds, epsilons 1,2,3,4,5,6); days on 2 cores.")
    boolean paperScale;

    @Override
    public Integer call() throws Exception {
        TrainingOptions.checkedOutput(output, true); // before hours of training, not after
        if ((json || quick || recipe != null || tunedOnly) && !id.startsWith("honest-")) {
            throw new IllegalArgumentException("--json, --quick, --recipe and --tuned-only apply to honest-mnist and honest-fashion-mnist only, not "
                    + id);
        }
        if (epsilon != null && !id.startsWith("honest-") && !id.equals("scatternet-ablation") && !id.equals("dphypo-table1")) {
            throw new IllegalArgumentException("--target-epsilon (or --epsilon) applies to honest-mnist, honest-fashion-mnist, "
                    + "scatternet-ablation and dphypo-table1 only, not " + id);
        }
        if ((normalisations != null || lrFactors != null || augmults != null || batchFactors != null || lrSchedules != null)
                && !id.equals("scatternet-ablation")) {
            throw new IllegalArgumentException("--normalisations, --lr-factors, --augmults, --batch-factors and --lr-schedules apply to "
                    + "scatternet-ablation only, not " + id);
        }
        HonestAccuracy.Result honest = null;
        if (id.equals("honest-mnist") || id.equals("honest-fashion-mnist")) {
            if (recipe == null) {
                recipe = "scatternet";
            } else if (!HonestAccuracy.Recipe.NAMES.contains(recipe)) {
                throw new IllegalArgumentException("--recipe must be one of " + HonestAccuracy.Recipe.NAMES + ", got '" + recipe + "'");
            }
            honest = HonestAccuracy.run(new HonestAccuracy.Settings(id.substring("honest-".length()), quick,
                    seeds != null ? seeds : quick ? 1 : 3, checkedEpsilon(), seed, epochs != null ? epochs(1) : 0,
                    trainSizeOption != null ? trainSizeOption : 0, recipe, tunedOnly));
        }
        HonestAccuracy.Result honestResult = honest;
        Figure f = switch (id) {
            case "ps-figure2" -> PapernotSteinkeFigures.figure2();
            case "ps-figure3" -> PapernotSteinkeFigures.figure3();
            case "ps-figure4" -> PapernotSteinkeFigures.figure4();
            case "ps-figure5" -> PapernotSteinkeFigures.figure5();
            case "ps-figure6" -> PapernotSteinkeFigures.figure6();
            case "ps-figure7" -> PapernotSteinkeFigures.figure7(landscapeFile());
            case "koskela-figure1" -> KoskelaKulkarniFigures.figure1();
            case "koskela-figure2" -> KoskelaKulkarniFigures.figure2(figure2Settings());
            case "dphypo-table1" -> DpHypoFigures.table1(table1Settings(), output);
            case "dingwu-figure2" -> DingWuFigures.figure2(1000);
            case "audit-table" -> {
                if (auditTrainSize < 400 || auditTrainSize > 60000) {
                    throw new IllegalArgumentException("--audit-train-size must be in [400, 60000] (batch 200 of it), got " + auditTrainSize);
                }
                if (!(auditEpochs > 0 && auditEpochs <= 1000)) {
                    throw new IllegalArgumentException("--audit-epochs must be in (0, 1000], got " + auditEpochs);
                }
                yield AuditFigures.table(new AuditFigures.Settings(auditTrainSize, 200, auditEpochs, seed));
            }
            case "dphype-noise-table" -> DpHypeFigures.noiseTable();
            case "dphype-figure2" -> DpHypeSimulation.figure2(checkedRepetitions(), output);
            case "honest-mnist", "honest-fashion-mnist" -> honestResult.figure();
            case "tramer-boneh" -> TramerBoneh.run(epochs != null ? epochs(1) : 0, seed);
            case "scatternet-ablation" -> {
                for (String d : datasets) {
                    if (!d.equals("mnist") && !d.equals("fashion-mnist")) {
                        throw new IllegalArgumentException("--datasets must be mnist and/or fashion-mnist for scatternet-ablation, got '" + d + "'");
                    }
                }
                List<Boolean> dataNorms = new java.util.ArrayList<>();
                for (String n : normalisations != null ? normalisations : List.of("groupnorm", "datanorm")) {
                    switch (n) {
                        case "groupnorm" -> dataNorms.add(false);
                        case "datanorm" -> dataNorms.add(true);
                        default -> throw new IllegalArgumentException("--normalisations must be groupnorm and/or datanorm, got '" + n + "'");
                    }
                }
                List<Double> factors = lrFactors != null ? lrFactors : List.of(1.0);
                TramerBoneh.checkLrFactors(factors, "--lr-factors"); // before the datasets load
                List<Integer> ks = augmults != null ? augmults : List.of(1);
                TramerBoneh.checkAugmults(ks, "--augmults");
                List<Double> batches = batchFactors != null ? batchFactors : List.of(1.0);
                TramerBoneh.checkBatchFactors(batches, "--batch-factors");
                List<Boolean> decays = new java.util.ArrayList<>();
                for (String schedule : lrSchedules != null ? lrSchedules : List.of("constant")) {
                    switch (schedule) {
                        case "constant" -> decays.add(false);
                        case "linear" -> decays.add(true);
                        default -> throw new IllegalArgumentException("--lr-schedules must be constant and/or linear, got '" + schedule + "'");
                    }
                }
                yield TramerBoneh.ablation(datasets, epochs != null ? epochs(1) : 0, seed,
                        new TramerBoneh.Levers(dataNorms, factors, ks, batches, decays), checkedEpsilon());
            }
            default -> throw new IllegalArgumentException("ID must be ps-figure2 ... ps-figure7, koskela-figure1, koskela-figure2, dphypo-table1, dingwu-figure2, dphype-noise-table, dphype-figure2, audit-table, honest-mnist, honest-fashion-mnist, tramer-boneh or scatternet-ablation, got '" + id + "'");
        };
        f.write(output);
        System.out.println("wrote " + output.resolve(id + ".csv") + " and " + output.resolve(id + ".png"));
        if (json && honest != null) {
            Cli.printJsonLine(System.out, honest.json());
        }
        return 0;
    }

    private KoskelaKulkarniFigures.Figure2Settings figure2Settings() {
        if (paperScale) {
            return new KoskelaKulkarniFigures.Figure2Settings(datasets, 40, 15, 0.1, new double[]{1, 2, 3, 4, 5, 6}, 10, seed);
        }
        double epochs = epochs(1);
        if (!(mu > 0) || Double.isInfinite(mu)) {
            throw new IllegalArgumentException("--mu must be finite and > 0, got " + mu);
        }
        if (!(tuneFraction > 0 && tuneFraction < 1)) {
            throw new IllegalArgumentException("--tune-fraction must be in (0, 1), got " + tuneFraction);
        }
        int repetitions = seeds != null ? seeds : 1;
        if (repetitions < 1) {
            throw new IllegalArgumentException("--seeds must be >= 1, got " + repetitions);
        }
        for (double e : epsilons) {
            if (!(e > 0) || Double.isInfinite(e)) {
                throw new IllegalArgumentException("--epsilons must be finite and > 0, got " + e);
            }
        }
        return new KoskelaKulkarniFigures.Figure2Settings(datasets, epochs, mu, tuneFraction, epsilons, repetitions, seed);
    }

    private double checkedEpsilon() {
        double e = epsilon != null ? epsilon : 3.0;
        if (!(e > 0 && e <= 100)) {
            throw new IllegalArgumentException("--target-epsilon (or --epsilon) must be in (0, 100], got " + e);
        }
        return e;
    }

    private int checkedRepetitions() {
        if (repetitionsPerPoint < 1) {
            throw new IllegalArgumentException("--repetitions-per-point must be >= 1, got " + repetitionsPerPoint);
        }
        return repetitionsPerPoint;
    }

    private double epochs(double fallback) {
        double e = epochs != null ? epochs : fallback;
        if (!(e > 0) || Double.isInfinite(e)) {
            throw new IllegalArgumentException("--epochs must be finite and > 0, got " + e);
        }
        return e;
    }

    private DpHypoFigures.Settings table1Settings() {
        double targetEpsilon = epsilon != null ? epsilon : 10;
        if (!(targetEpsilon > 0) || Double.isInfinite(targetEpsilon)) {
            throw new IllegalArgumentException("--target-epsilon must be finite and > 0, got " + targetEpsilon);
        }
        if (paperGrid) {
            return new DpHypoFigures.Settings(60000, "lr=log:0.0001:10:16", "clip=lin:0.3:6:20", 5, 10, targetEpsilon, replays, seed,
                    landscapeDir, softmaxBeta);
        }
        int trainSize = trainSizeOption != null ? trainSizeOption : 10000;
        if (trainSize < 256 || trainSize > 60000) {
            throw new IllegalArgumentException("--train-size must be in [256, 60000], got " + trainSize);
        }
        if (runs < 1 || replays < 2) {
            throw new IllegalArgumentException("--runs must be >= 1 and --replays >= 2, got " + runs + " and " + replays);
        }
        if (!(softmaxBeta >= 0) || Double.isInfinite(softmaxBeta)) {
            throw new IllegalArgumentException("--softmax-beta must be finite and >= 0, got " + softmaxBeta);
        }
        return new DpHypoFigures.Settings(trainSize, lrGrid, clipGrid, runs, epochs(2), targetEpsilon, replays, seed, landscapeDir,
                softmaxBeta);
    }

    private Path landscapeFile() {
        if (landscape != null) {
            if (!Files.isRegularFile(landscape)) {
                throw new IllegalArgumentException("--landscape " + landscape + (Files.isDirectory(landscape) ? " is a directory"
                        : " does not exist") + ": give the JSON file of the paper's Figure 7 landscape");
            }
            return landscape;
        }
        String data = System.getenv("DPDL4J_DATA");
        if (data == null) {
            throw new IllegalArgumentException("ps-figure7 needs the paper's Figure 7 landscape: give --landscape FILE");
        }
        Path file = Paths.get(data).resolve("papernot-steinke-2022").resolve("figure7_landscape.json");
        if (!Files.exists(file)) {
            throw new IllegalArgumentException("Figure 7's data not found at " + file + "; give --landscape FILE");
        }
        return file;
    }
}
