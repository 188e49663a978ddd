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
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code dpdl4j reproduce ID}: recompute a seed paper's figure, write ID.csv and ID.png. One subcommand per experiment,
 * each with only its own options ({@code reproduce ID --help}).
 */
@Command(name = "reproduce", mixinStandardHelpOptions = true,
        description = {"Reproduce a figure or table of a seed paper: writes <id>.csv (one row per plotted point) and <id>.png "
                        + "into --output, and prints 'paper vs ours'.",
                "Name the experiment first; 'reproduce ID --help' lists its options. Analytic: ps-figure2 ... ps-figure7, "
                        + "koskela-figure1, dingwu-figure2, dphype-noise-table, dphype-figure2. Training: koskela-figure2, "
                        + "dphypo-table1, audit-table, honest-mnist, honest-fashion-mnist, tramer-boneh, scatternet-ablation."},
        subcommands = {ReproduceCommand.PsFigure7.class, ReproduceCommand.KoskelaFigure2.class, ReproduceCommand.DpHypoTable1.class,
                ReproduceCommand.DpHypeFigure2.class, ReproduceCommand.AuditTable.class, ReproduceCommand.HonestMnist.class,
                ReproduceCommand.HonestFashionMnist.class, ReproduceCommand.TramerBonehRows.class,
                ReproduceCommand.ScatterNetAblation.class})
final class ReproduceCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name an experiment: reproduce "
                + String.join("|", spec.subcommands().keySet()));
    }

    /**
     * An experiment with nothing to set: a figure from the papers' formulas or a fixed simulation.
     *
     * @param name        its subcommand
     * @param description its help line
     * @param figure      computes the figure
     */
    record Analytic(String name, String description, Callable<Figure> figure) {
    }

    /** The experiments with nothing to set, added to {@code reproduce} by {@link #addAnalytic}. */
    static final List<Analytic> ANALYTIC = List.of(
            new Analytic("ps-figure2", "Papernot & Steinke 2022 (arXiv:2110.03620), Figure 2: the repetition count's distributions "
                    + "(analytic).", PapernotSteinkeFigures::figure2),
            new Analytic("ps-figure3", "Papernot & Steinke 2022 (arXiv:2110.03620), Figure 3 (analytic).", PapernotSteinkeFigures::figure3),
            new Analytic("ps-figure4", "Papernot & Steinke 2022 (arXiv:2110.03620), Figure 4 (analytic).", PapernotSteinkeFigures::figure4),
            new Analytic("ps-figure5", "Papernot & Steinke 2022 (arXiv:2110.03620), Figure 5 (analytic).", PapernotSteinkeFigures::figure5),
            new Analytic("ps-figure6", "Papernot & Steinke 2022 (arXiv:2110.03620), Figure 6: epsilon against the success "
                    + "probability (analytic).", PapernotSteinkeFigures::figure6),
            new Analytic("koskela-figure1", "Koskela & Kulkarni 2023 (arXiv:2301.11989), Figure 1 (analytic).",
                    KoskelaKulkarniFigures::figure1),
            new Analytic("dingwu-figure2", "Ding & Wu's propose-test loop, Figure 2: simulated iterations.",
                    () -> DingWuFigures.figure2(1000)),
            new Analytic("dphype-noise-table", "DP-HYPE's sigma for k = 5 (analytic).", DpHypeFigures::noiseTable));

    /**
     * Adds the {@link #ANALYTIC} experiments to the {@code reproduce} command line, one subcommand each.
     *
     * @param reproduce the command line of a {@link ReproduceCommand}
     * @return {@code reproduce}
     */
    static CommandLine addAnalytic(CommandLine reproduce) {
        for (Analytic a : ANALYTIC) {
            CommandLine sub = new CommandLine(new Fixed(a));
            sub.getCommandSpec().usageMessage().description(a.description());
            reproduce.addSubcommand(a.name(), sub);
        }
        return reproduce;
    }

    /** The command of one {@link Analytic} experiment. */
    @Command(mixinStandardHelpOptions = true)
    static final class Fixed extends Experiment {
        private final Analytic analytic;

        Fixed(Analytic analytic) {
            this.analytic = analytic;
        }

        @Override
        String id() {
            return analytic.name();
        }

        @Override
        Figure figure() throws Exception {
            return analytic.figure().call();
        }
    }

    /** One experiment: its output directory checked first, then its figure computed and written as ID.csv and ID.png. */
    abstract static class Experiment implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--output", defaultValue = "reproductions", description = "Directory for the CSV and PNG (default ${DEFAULT-VALUE}).")
        Path output;

        /** The figure, computed after the output directory is checked; options are checked before any work. */
        abstract Figure figure() throws Exception;

        /** The experiment's name, its files' stem. */
        String id() {
            return spec.name();
        }

        /**
         * Refuses options that a preset sets itself (so that they would be ignored), naming them.
         *
         * @param preset  the preset's option, e.g. {@code --paper-grid}
         * @param options the options it sets
         */
        void refuseWith(String preset, String... options) {
            List<String> given = java.util.Arrays.stream(options).filter(o -> spec.commandLine().getParseResult().hasMatchedOption(o))
                    .toList();
            if (!given.isEmpty()) {
                throw new IllegalArgumentException(preset + " sets " + String.join(", ", options) + " itself: drop "
                        + String.join(", ", given));
            }
        }

        /** Printed after the files are written (the --json line of honest-*). */
        void afterWrite() {
        }

        @Override
        public Integer call() throws Exception {
            TrainingOptions.checkedOutput(output, true); // before hours of training, not after
            String id = id();
            figure().write(output);
            System.out.println("wrote " + output.resolve(id + ".csv") + " and " + output.resolve(id + ".png"));
            afterWrite();
            return 0;
        }
    }

    /** {@code --seed}, for the experiments that train or simulate. */
    static final class SeedOption {
        @Option(names = "--seed", defaultValue = "2026", description = "First seed (default ${DEFAULT-VALUE}).")
        long seed;
    }

    /** {@code --epochs}, whose default is the experiment's. */
    static final class EpochsOption {
        @Option(names = "--epochs", description = "Epochs of every run (default: the experiment's, in its description).")
        Double epochs;

        double value(double fallback) {
            double e = epochs != null ? epochs : fallback;
            if (!(e > 0) || Double.isInfinite(e)) {
                throw new IllegalArgumentException("--epochs must be finite and > 0, got " + e);
            }
            return e;
        }
    }

    /** {@code --target-epsilon} (and its older name {@code --epsilon}), whose default is the experiment's. */
    static final class TargetEpsilonOption {
        @Option(names = "--target-epsilon", paramLabel = "ε", description = "The total epsilon (default: the experiment's, in its "
                + "description); --epsilon, its older name, is still read.")
        Double epsilon;

        /** The older name of {@code --target-epsilon}, kept so that old commands run. */
        @Option(names = "--epsilon", hidden = true, paramLabel = "ε")
        void olderEpsilonName(double e) {
            epsilon = e;
        }

        double value(double fallback) {
            double e = epsilon != null ? epsilon : fallback;
            if (!(e > 0 && e <= 100)) {
                throw new IllegalArgumentException("--target-epsilon (or --epsilon) must be in (0, 100], got " + e);
            }
            return e;
        }
    }

    @Command(name = "ps-figure7", mixinStandardHelpOptions = true, description = "Papernot & Steinke 2022 (arXiv:2110.03620), "
            + "Figure 7, from the paper's landscape.")
    static final class PsFigure7 extends Experiment {
        @Option(names = "--landscape", paramLabel = "FILE", description = "The JSON of the paper's Figure 7 landscape "
                + "(default: $DPDL4J_DATA/papernot-steinke-2022/figure7_landscape.json when DPDL4J_DATA is set).")
        Path landscape;

        Figure figure() throws Exception {
            return PapernotSteinkeFigures.figure7(landscapeFile());
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

    @Command(name = "koskela-figure2", mixinStandardHelpOptions = true, description = "Koskela & Kulkarni 2023 "
            + "(arXiv:2301.11989), Figure 2 (trains): learning-rate tuning on MNIST and Fashion-MNIST. Default 1 epoch; "
            + "the paper 40 (--paper-scale).")
    static final class KoskelaFigure2 extends Experiment {
        @Mixin
        SeedOption seed;

        @Mixin
        EpochsOption epochs;

        @Option(names = "--datasets", split = ",", defaultValue = "mnist,fashion-mnist", description = "Datasets (default ${DEFAULT-VALUE}).")
        List<String> datasets;

        @Option(names = "--mu", defaultValue = "15", description = "E[K], Poisson (default ${DEFAULT-VALUE}, as the paper).")
        double mu;

        @Option(names = "--tune-fraction", defaultValue = "0.1", description = "q_tune (default ${DEFAULT-VALUE}, as the paper).")
        double tuneFraction;

        // defaults as initial values, not defaultValue, which picocli would write over what the older name set
        @Option(names = "--target-epsilons", split = ",", paramLabel = "ε,…", description = "Total epsilon targets at delta "
                + "1e-5, one curve point each (default 1,3).")
        double[] epsilons = {1, 3};

        /** The older name of --target-epsilons; not listed. */
        @Option(names = "--epsilons", hidden = true, split = ",")
        void olderEpsilonsName(double[] e) {
            epsilons = e;
        }

        @Option(names = "--seeds", defaultValue = "1", description = "Repetitions per point (default ${DEFAULT-VALUE}; paper 10).")
        int seeds;

        @Option(names = "--paper-scale", description = "The paper's scale (40 epochs, 10 seeds, epsilons 1,2,3,4,5,6); days on 2 cores.")
        boolean paperScale;

        Figure figure() throws Exception {
            if (paperScale) {
                refuseWith("--paper-scale", "--epochs", "--mu", "--tune-fraction", "--target-epsilons", "--epsilons", "--seeds");
                return KoskelaKulkarniFigures.figure2(new KoskelaKulkarniFigures.Figure2Settings(datasets, 40, 15, 0.1,
                        new double[]{1, 2, 3, 4, 5, 6}, 10, seed.seed));
            }
            double e = epochs.value(1);
            if (!(mu > 0) || Double.isInfinite(mu)) {
                throw new IllegalArgumentException("--mu must be finite and > 0, got " + mu);
            }
            if (!(tuneFraction > 0 && tuneFraction < 1)) {
                throw new IllegalArgumentException("--tune-fraction must be in (0, 1), got " + tuneFraction);
            }
            if (seeds < 1) {
                throw new IllegalArgumentException("--seeds must be >= 1, got " + seeds);
            }
            for (double target : epsilons) {
                if (!(target > 0) || Double.isInfinite(target)) {
                    throw new IllegalArgumentException("--target-epsilons must be finite and > 0, got " + target);
                }
            }
            return KoskelaKulkarniFigures.figure2(new KoskelaKulkarniFigures.Figure2Settings(datasets, e, mu, tuneFraction, epsilons,
                    seeds, seed.seed));
        }
    }

    @Command(name = "dphypo-table1", mixinStandardHelpOptions = true, description = "Wang et al.'s DP-HyPO Table 1 (trains a "
            + "landscape cache, then replays DP-HyPO against uniform search). Default 2 epochs, total epsilon 10 (white-box, "
            + "gamma = 0.01); --paper-grid for the paper's grid.")
    static final class DpHypoTable1 extends Experiment {
        @Mixin
        SeedOption seed;

        @Mixin
        EpochsOption epochs;

        @Mixin
        TargetEpsilonOption epsilon;

        @Option(names = "--train-size", defaultValue = "10000", description = "MNIST training examples per landscape run (default ${DEFAULT-VALUE}).")
        int trainSize;

        @Option(names = "--lr-grid", defaultValue = "learning_rate=log:0.03:10:6", description = "Learning-rate axis (default ${DEFAULT-VALUE}).")
        String lrGrid;

        @Option(names = "--clip-grid", defaultValue = "clip_norm=lin:0.5:3:3", description = "Clipping-norm axis (default ${DEFAULT-VALUE}).")
        String clipGrid;

        @Option(names = "--runs", defaultValue = "2", description = "Runs per grid point (default ${DEFAULT-VALUE}; paper 5).")
        int runs;

        @Option(names = "--replays", defaultValue = "200", description = "Simulated tuning runs per entry (default ${DEFAULT-VALUE}, as the paper).")
        int replays;

        @Option(names = "--landscape-dir", defaultValue = "reproductions/landscapes", description = "Landscape cache (resumable) (default ${DEFAULT-VALUE}).")
        Path landscapeDir;

        @Option(names = "--softmax-beta", defaultValue = "1", description = "The GP rule's softmax beta (default ${DEFAULT-VALUE}, the paper's).")
        double softmaxBeta;

        @Option(names = "--paper-grid", description = "The paper's grid (16 lr x 20 clip, 5 runs, 10 epochs, all 60,000 examples).")
        boolean paperGrid;

        Figure figure() throws Exception {
            double target = epsilon.value(10);
            DpHypoFigures.Settings settings;
            if (paperGrid) {
                refuseWith("--paper-grid", "--train-size", "--lr-grid", "--clip-grid", "--runs", "--epochs");
                settings = new DpHypoFigures.Settings(60000, "learning_rate=log:0.0001:10:16", "clip_norm=lin:0.3:6:20", 5, 10, target, replays,
                        seed.seed, landscapeDir, softmaxBeta);
            } else {
                if (trainSize < 256 || trainSize > 60000) {
                    throw new IllegalArgumentException("--train-size must be in [256, 60000], got " + trainSize);
                }
                if (runs < 1 || replays < 2) {
                    throw new IllegalArgumentException("--runs must be >= 1 and --replays >= 2, got " + runs + " and " + replays);
                }
                if (!(softmaxBeta >= 0) || Double.isInfinite(softmaxBeta)) {
                    throw new IllegalArgumentException("--softmax-beta must be finite and >= 0, got " + softmaxBeta);
                }
                settings = new DpHypoFigures.Settings(trainSize, lrGrid, clipGrid, runs, epochs.value(2), target, replays, seed.seed,
                        landscapeDir, softmaxBeta);
            }
            return DpHypoFigures.table1(settings, output);
        }
    }

    @Command(name = "dphype-figure2", mixinStandardHelpOptions = true, description = "DP-HYPE's Figure 2: simulated votes; also "
            + "writes dphype-figure2b.")
    static final class DpHypeFigure2 extends Experiment {
        @Option(names = "--repetitions-per-point", defaultValue = "5000", description = "Simulated votes per point (default ${DEFAULT-VALUE}, as the paper).")
        int repetitionsPerPoint;

        Figure figure() throws Exception {
            if (repetitionsPerPoint < 1) {
                throw new IllegalArgumentException("--repetitions-per-point must be >= 1, got " + repetitionsPerPoint);
            }
            return DpHypeSimulation.figure2(repetitionsPerPoint, output);
        }
    }

    @Command(name = "audit-table", mixinStandardHelpOptions = true, description = "Claimed epsilon against the one-run audit's "
            + "lower bound, white- and black-box canaries (trains, batch 200).")
    static final class AuditTable extends Experiment {
        @Mixin
        SeedOption seed;

        // defaults as initial values, not defaultValue, which picocli would write over what the older names set
        @Option(names = "--train-size", description = "MNIST training examples per run (default 2000).")
        int auditTrainSize = 2000;

        /** The older name of --train-size; not listed. */
        @Option(names = "--audit-train-size", hidden = true)
        void olderTrainSizeName(int n) {
            auditTrainSize = n;
        }

        @Option(names = "--epochs", description = "Epochs per run, batch 200 (default 6).")
        double auditEpochs = 6;

        /** The older name of --epochs; not listed. */
        @Option(names = "--audit-epochs", hidden = true)
        void olderEpochsName(double e) {
            auditEpochs = e;
        }

        Figure figure() throws Exception {
            if (auditTrainSize < 400 || auditTrainSize > 60000) {
                throw new IllegalArgumentException("--train-size must be in [400, 60000] (batch 200 of it), got " + auditTrainSize);
            }
            if (!(auditEpochs > 0 && auditEpochs <= 1000)) {
                throw new IllegalArgumentException("--epochs must be in (0, 1000], got " + auditEpochs);
            }
            return AuditFigures.table(new AuditFigures.Settings(auditTrainSize, 200, auditEpochs, seed.seed));
        }
    }

    /** honest-mnist and honest-fashion-mnist: the data set is the command's name. */
    abstract static class Honest extends Experiment {
        @Mixin
        SeedOption seed;

        @Mixin
        EpochsOption epochs;

        @Mixin
        TargetEpsilonOption epsilon;

        @Option(names = "--seeds", description = "Single runs and complete tunings (default 3, 1 with --quick).")
        Integer seeds;

        @Option(names = "--train-size", description = "A random subset of the training data of this size, for a quick check (default: all).")
        Integer trainSize;

        @Option(names = "--test-size", description = "Report the test accuracy on a random subset of the test data of this size, "
                + "in [100, 10000], for a quick check (default: all).")
        Integer testSize;

        @Option(names = "--quick", description = "20 epochs instead of 40 and one repetition.")
        boolean quick;

        @Option(names = "--recipe", defaultValue = "scatternet", description = "scatternet (Tramer & Boneh's ScatterNet + linear "
                + "model and hyperparameters, GroupNorm), scatternet-datanorm (the same with their private data normalisation, its "
                + "cost counted) or standard-cnn (the standard CNN, SGD, B 2048, lr 4) (default ${DEFAULT-VALUE}).")
        String recipe;

        @Option(names = "--tuned-only", description = "Run the tunings only, not the single runs, which do not depend on the "
                + "search (its grid, K or scores): after a change to the search, a full run's single-run row with the same seeds stands.")
        boolean tunedOnly;

        @Option(names = "--json", description = "Print the result (tuned test accuracy, total epsilon, delta, the chosen candidate, "
                + "the single-run row) as one JSON object on the last line of stdout.")
        boolean json;

        private HonestAccuracy.Result result;

        Figure figure() throws Exception {
            if (!HonestAccuracy.Recipe.NAMES.contains(recipe)) {
                throw new IllegalArgumentException("--recipe must be one of " + HonestAccuracy.Recipe.NAMES + ", got '" + recipe + "'");
            }
            result = HonestAccuracy.run(new HonestAccuracy.Settings(spec.name().substring("honest-".length()), quick,
                    seeds != null ? seeds : quick ? 1 : 3, epsilon.value(3), seed.seed, epochs.epochs != null ? epochs.value(1) : 0,
                    trainSize != null ? trainSize : 0, testSize != null ? testSize : 0, recipe, tunedOnly));
            return result.figure();
        }

        @Override
        void afterWrite() {
            if (json) {
                Cli.printJsonLine(System.out, result.json());
            }
        }
    }

    @Command(name = "honest-mnist", mixinStandardHelpOptions = true, description = {"Trains a private MNIST model whose epsilon "
            + "includes its hyperparameter search (Koskela & Kulkarni's subsampled tuning), next to a single run with a recipe "
            + "fixed in advance and published single runs. Defaults: 40 epochs (20 with --quick), total epsilon 3 at delta 1e-5."})
    static final class HonestMnist extends Honest {
    }

    @Command(name = "honest-fashion-mnist", mixinStandardHelpOptions = true, description = {"honest-mnist on Fashion-MNIST."})
    static final class HonestFashionMnist extends Honest {
    }

    @Command(name = "tramer-boneh", mixinStandardHelpOptions = true, description = "Trains Tramer & Boneh 2021's ScatterNet rows "
            + "(arXiv:2011.11660) for MNIST and Fashion-MNIST at epsilon 3, paper vs dpdl4j with the same models and "
            + "hyperparameters; --epochs overrides theirs for a quick check.")
    static final class TramerBonehRows extends Experiment {
        @Mixin
        SeedOption seed;

        @Mixin
        EpochsOption epochs;

        Figure figure() throws Exception {
            return TramerBoneh.run(epochs.epochs != null ? epochs.value(1) : 0, seed.seed);
        }
    }

    @Command(name = "scatternet-ablation", mixinStandardHelpOptions = true, description = "Trains ScatterNet + linear with "
            + "GroupNorm or with the private data normalisation at total epsilon 3 (--target-epsilon), one seed, validation and "
            + "test accuracy; --epochs overrides the paper's.")
    static final class ScatterNetAblation extends Experiment {
        @Mixin
        SeedOption seed;

        @Mixin
        EpochsOption epochs;

        @Mixin
        TargetEpsilonOption epsilon;

        @Option(names = "--datasets", split = ",", defaultValue = "mnist,fashion-mnist", description = "Datasets (default ${DEFAULT-VALUE}).")
        List<String> datasets;

        @Option(names = "--normalisations", split = ",", defaultValue = "groupnorm,datanorm", description = "GroupNorm(27) on the "
                + "features and/or the private data normalisation (default ${DEFAULT-VALUE}).")
        List<String> normalisations;

        @Option(names = "--lr-factors", split = ",", defaultValue = "1", description = "Multiples of Tramer & Boneh's learning rate "
                + "to train each row at (default ${DEFAULT-VALUE}; honest-*'s ScatterNet search can hand its final run "
                + HonestAccuracy.FINAL_LR_FACTORS_TEXT + ").")
        List<Double> lrFactors;

        @Option(names = "--augmults", paramLabel = "k", split = ",", defaultValue = "1", description = "Augmentation multiplicities "
                + "to train each row at: each example's gradient is the mean over k augmented copies (shifts of up to 2 pixels), "
                + "clipped as a whole, as train --augmult (default ${DEFAULT-VALUE}: none).")
        List<Integer> augmults;

        @Option(names = "--batch-factors", split = ",", defaultValue = "1", description = "Multiples of Tramer & Boneh's expected "
                + "batch size (4096 MNIST, 8192 Fashion-MNIST) to train each row at, each in (0, 8]; the epochs stay, so the steps "
                + "scale by the inverse (default ${DEFAULT-VALUE}).")
        List<Double> batchFactors;

        @Option(names = "--lr-schedules", split = ",", defaultValue = "constant", description = "constant (the paper's) and/or linear "
                + "(from the row's learning rate down to 0 over the run's steps) (default ${DEFAULT-VALUE}).")
        List<String> lrSchedules;

        Figure figure() throws Exception {
            for (String d : datasets) {
                if (!d.equals("mnist") && !d.equals("fashion-mnist")) {
                    throw new IllegalArgumentException("--datasets must be mnist and/or fashion-mnist for scatternet-ablation, got '" + d + "'");
                }
            }
            List<Boolean> dataNorms = new java.util.ArrayList<>();
            for (String n : normalisations) {
                switch (n) {
                    case "groupnorm" -> dataNorms.add(false);
                    case "datanorm" -> dataNorms.add(true);
                    default -> throw new IllegalArgumentException("--normalisations must be groupnorm and/or datanorm, got '" + n + "'");
                }
            }
            TramerBoneh.checkLrFactors(lrFactors, "--lr-factors"); // before the datasets load
            TramerBoneh.checkAugmults(augmults, "--augmults");
            TramerBoneh.checkBatchFactors(batchFactors, "--batch-factors");
            List<Boolean> decays = new java.util.ArrayList<>();
            for (String schedule : lrSchedules) {
                switch (schedule) {
                    case "constant" -> decays.add(false);
                    case "linear" -> decays.add(true);
                    default -> throw new IllegalArgumentException("--lr-schedules must be constant and/or linear, got '" + schedule + "'");
                }
            }
            double target = epsilon.value(3);
            return TramerBoneh.ablation(datasets, epochs.epochs != null ? epochs.value(1) : 0, seed.seed,
                    new TramerBoneh.Levers(dataNorms, lrFactors, augmults, batchFactors, decays), target);
        }
    }
}
