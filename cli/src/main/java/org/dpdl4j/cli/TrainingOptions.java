package org.dpdl4j.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Datasets;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdSettings;
import org.dpdl4j.models.ModelOptions;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.learning.config.IUpdater;
import picocli.CommandLine.Option;

/** The options of one DP-SGD run that {@code train} and {@code tune} share. */
final class TrainingOptions {
    @Option(names = "--dataset", defaultValue = "mnist", description = "mnist, fashion-mnist, cifar10, folder:PATH or shards:PATH "
            + "(written by data pack, read by index; PATH may be a Hadoop URI such as hdfs://namenode/data/mnist) (default "
            + "${DEFAULT-VALUE}).")
    String dataset;

    @Option(names = "--model", description = "standard-cnn, all-conv, cifar-cnn, mlp, small-resnet (WRN-10-1), wrn-D-K (a wide "
            + "ResNet with GroupNorm, e.g. wrn-16-4; the residual networks use ReLU whatever --activation says), "
            + "scatternet-linear or scatternet-cnn (Tramer & Boneh's scattering features, J = 2, L = 8, with GroupNorm(27), then "
            + "a linear model or a small CNN; the transform is computed once per training example), lenet (DL4J's zoo LeNet), "
            + "resnet50 (DL4J's zoo ResNet50 with GroupNorm for BatchNorm; images of side 72 or more, so not MNIST's 28) or "
            + "lstm (an LSTM of 128 units over an image's rows, its last step, softmax) (default: cifar-cnn for cifar10, else "
            + "standard-cnn).")
    String model;

    @Option(names = "--epochs", defaultValue = "40", description = "Epochs E; steps T = ceil(E/q) (default ${DEFAULT-VALUE}).")
    double epochs;

    @Option(names = "--batch-size", defaultValue = "256", description = "Expected (Poisson) batch size B; q = B/n (default ${DEFAULT-VALUE}).")
    int batchSize;

    // the defaults of options with an older hidden name are initial values, not defaultValue: picocli writes a
    // defaultValue after parsing into an option not given, over what the older name set
    @Option(names = "--clip-norm", paramLabel = "C", description = "Per-example clipping norm C (default 1.0).")
    double clip = 1.0;

    /** The older name of --clip-norm, read from older command lines (a saved tuning's too); not listed. */
    @Option(names = "--clip", hidden = true, paramLabel = "C")
    void oldClipName(double c) {
        clip = c;
    }

    @Option(names = "--delta", defaultValue = "1e-5", paramLabel = "δ", description = "delta (default ${DEFAULT-VALUE}).")
    double delta;

    @Option(names = "--learning-rate", paramLabel = "η", description = "Learning rate (default: 0.5 sgd, 0.05 momentum, 0.002 adam).")
    Double lr;

    /** The shorter name of --learning-rate, as PyTorch's lr; read, not listed (one name per quantity in the help). */
    @Option(names = "--lr", hidden = true, paramLabel = "η")
    void shortLearningRateName(double learningRate) {
        lr = learningRate;
    }

    @Option(names = "--optimizer", defaultValue = "sgd", description = "sgd, momentum (Nesterov, 0.9) or adam (default ${DEFAULT-VALUE}).")
    String optimizer;

    @Option(names = "--activation", defaultValue = "tanh", description = "tanh, relu or tempered-sigmoid (s, T, o) = (2, 2, 1), which equals tanh (default ${DEFAULT-VALUE}).")
    String activation;

    @Option(names = "--ema-decay", paramLabel = "β", description = {"Release the exponential moving average of the parameters with decay β in [0, 1) instead of the last "
                        + "iterate (post-processing, no privacy cost; warm-up min(β, (1+t)/(10+t)); De et al. 2022 use 0.9999; "
                        + "default 0: off)."})
    double ema = 0;

    /** The older name of --ema-decay, read from older command lines; not listed. */
    @Option(names = "--ema", hidden = true, paramLabel = "β")
    void oldEmaName(double beta) {
        ema = beta;
    }

    @Option(names = "--seed", description = {"Seed of weights, sampling and noise, for reproducible runs.",
                "Anyone who knows it can regenerate and remove the noise: keep it secret. Default: weights seed 0, "
                        + "sampling and noise seeded from SecureRandom."})
    Long seed;

    @Option(names = "--secure-noise", description = "Seed sampling and noise from SecureRandom (runs are then not reproducible).")
    boolean secureNoise;

    @Option(names = "--physical-batch-size", defaultValue = "512", description = {"Largest chunk pushed through the network at once (default ${DEFAULT-VALUE}); DP-SGD takes fewer rows "
            + "where DL4J's memory report puts a chunk above 256 MiB per worker."})
    int physicalBatchSize;

    @Option(names = "--read-cache-mb", paramLabel = "MB", defaultValue = "0", description = "With data read by index (shards:, "
            + "or a folder: too large to decode up front), keep up to MB MiB of the examples read in memory, so that later steps "
            + "and trials neither decode nor read them again (default ${DEFAULT-VALUE}: none; train: not with --executor spark).")
    int readCacheMb;

    @Option(names = "--image-size", defaultValue = "28x28x1", description = "HxWxC for folder: datasets (default ${DEFAULT-VALUE}).")
    String imageSize;

    @Option(names = "--public-test", description = {"Declare the data set's test split public (nobody's private data), so that "
            + "the model's exact test accuracy is released (tuning.json, the --json line). Without it only mnist, fashion-mnist "
            + "and cifar10 have a public test split: on a folder:'s or shards:' the accuracy is printed for the operator only."})
    boolean publicTest;

    @Option(names = "--output", description = "Output directory (default runs/<command>-<dataset>-<time>); checked before anything runs.")
    Path output;

    @Option(names = "--overwrite", description = "Replace the results of an earlier run in --output (refused otherwise).")
    boolean overwrite;

    @Option(names = "--non-private", description = {"Train without noise (sigma = 0): NO privacy, epsilon = infinity.",
                "Needed for --noise-multiplier 0 or a sigma axis with 0; such runs are never charged to a ledger."})
    boolean nonPrivate;

    private Path resolvedOutput;

    @Option(names = "--allow-large-delta", description = {"Accept a --delta at or above 1/n, where (epsilon, delta)-DP allows publishing one training example "
                        + "outright (refused otherwise)."})
    boolean allowLargeDelta;

    @Option(names = "--json", description = "Print one JSON object with the results as the last line of stdout.")
    boolean json;

    @Option(names = "--no-progress", description = "Do not draw a progress bar.")
    boolean noProgress;

    /** The weights seed: --seed, else 0. */
    long weightSeed() {
        return seed != null ? seed : 0;
    }

    /** The seed of a folder's test split, when it is not {@link #weightSeed()}: a resumed run's, from its plan. */
    Long splitSeed;

    /** The seed the data are loaded (a folder split) with. */
    private long dataSeed() {
        return splitSeed != null ? splitSeed : weightSeed();
    }

    /**
     * Train and test data, fetched and verified, held in memory.
     *
     * @throws IllegalArgumentException for {@code shards:} data, which train and the tuners read by index
     *                                  ({@link #loadReadByIndex})
     */
    TrainTest load() throws IOException {
        if (dataset.startsWith("shards:")) {
            throw new IllegalArgumentException("--dataset " + dataset + ": packed shards are read by train, audit, tune and data "
                    + "only (this command holds the data in memory): give the data set they were packed from");
        }
        int[] hwc = parseImageSize(imageSize);
        return declared(Datasets.load(dataset, DatasetCache.root(), hwc[0], hwc[1], hwc[2], dataSeed(),
                w -> System.err.println("warning: " + w)));
    }

    /** The data with its test split declared public if --public-test says so. */
    private TrainTest declared(TrainTest data) {
        return publicTest ? data.withPublicTest(true) : data;
    }

    /**
     * Train and test data; {@code shards:} data and the training images of a {@code folder:} keep the training part on
     * disk, read by index at each step.
     */
    TrainTest loadReadByIndex() throws IOException {
        int[] hwc = parseImageSize(imageSize);
        return declared(Datasets.loadReadByIndex(dataset, DatasetCache.root(), hwc[0], hwc[1], hwc[2], dataSeed(),
                w -> System.err.println("warning: " + w)));
    }

    /** The model name: --model, else the dataset's default. */
    String modelName() {
        return model != null ? model : dataset.equals("cifar10") ? "cifar-cnn" : "standard-cnn";
    }

    /** Model options for this data with the chosen activation and optimiser. */
    ModelOptions modelOptions(TrainTest data) {
        LabeledData shape = data.train() != null ? data.train() : data.test(); // packed shards: the test part, checked alike
        return new ModelOptions(shape.height(), shape.width(), shape.channels(), shape.numClasses(), activationFunction(), updater(),
                weightSeed(), DataType.FLOAT);
    }

    /** --activation's function, refused by name. */
    private IActivation activationFunction() {
        try {
            return ModelOptions.activationNamed(activation);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--activation: " + e.getMessage());
        }
    }

    /** --optimizer with --learning-rate, refused by the name of the option at fault. */
    private IUpdater updater() {
        try {
            return ModelOptions.updaterNamed(optimizer, lr);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException((lr != null && !(lr > 0 && lr < Double.POSITIVE_INFINITY) ? "--learning-rate: " : "--optimizer: ")
                    + e.getMessage());
        }
    }

    /**
     * --output, else runs/&lt;command&gt;-&lt;dataset&gt;-&lt;time&gt;, resolved once and checked on the first call (call it before
     * anything is charged or trained): see {@link #checkedOutput}.
     */
    Path outputDirectory(String command) {
        if (resolvedOutput == null) {
            resolvedOutput = checkedOutput(output != null ? output : Paths.get("runs", command + "-"
                    + dataset.replaceAll("[^A-Za-z0-9_-]", "_") + "-"
                    + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"))), overwrite);
        }
        return resolvedOutput;
    }

    /** What a run writes into its output directory; an earlier run's are not replaced without --overwrite. */
    static final java.util.List<String> RESULT_FILES = java.util.List.of("model.zip", "privacy.json", "tuning.json", "trials.json",
            TuningOutput.OPERATOR_DIRECTORY);

    /**
     * An output directory checked before any work: a non-empty path, not a file, holding no earlier results
     * unless {@code overwrite}, created if missing and writable (a probe file is written and removed).
     *
     * @throws IllegalArgumentException naming --output, the path and what is wrong
     */
    static Path checkedOutput(Path dir, boolean overwrite) {
        if (dir.toString().isBlank()) {
            throw new IllegalArgumentException("--output must name a directory, got ''");
        }
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--output " + dir + " is a file, not a directory");
        }
        if (!overwrite) {
            for (String name : RESULT_FILES) {
                if (Files.exists(dir.resolve(name))) {
                    throw new IllegalArgumentException("--output " + dir + " already holds " + name + " from an earlier run: give "
                            + "--overwrite to replace it, or another directory");
                }
            }
        }
        try {
            Cli.createOutputDirectories(dir);
            Files.delete(Files.createTempFile(dir, ".dpdl4j-probe", ".tmp"));
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("--output " + dir + " is not a writable directory (" + Cli.why(e) + ")");
        }
        return dir;
    }

    /**
     * Checks the run's settings that do not need the data, by option name: the activation and the optimiser known, the
     * learning rate finite and &gt; 0, epochs in (0, 10000], C finite and &gt; 0, δ in (0, 1), physical batch &gt;= 1, and
     * not both --seed and --secure-noise.
     */
    void checkRunSettings() {
        activationFunction(); // before the data are loaded and sigma calibrated, which take a while
        updater();
        if (!org.dpdl4j.models.Models.isName(modelName())) {
            throw new IllegalArgumentException("--model must be one of " + org.dpdl4j.models.Models.NAMES + ", got '" + modelName() + "'");
        }
        if (!dataset.startsWith("folder:") && !dataset.startsWith("shards:")
                && !java.util.List.of("mnist", "fashion-mnist", "cifar10").contains(dataset)) {
            throw new IllegalArgumentException("--dataset must be one of " + org.dpdl4j.datasets.Datasets.KNOWN + ", got '" + dataset + "'");
        }
        if (!(epochs > 0 && epochs <= 10_000)) {
            throw new IllegalArgumentException("--epochs must be in (0, 10000], got " + epochs);
        }
        if (seed != null && secureNoise) {
            throw new IllegalArgumentException("--seed fixes the noise and --secure-noise draws it from SecureRandom: give one of them");
        }
        settings(); // each DP-SGD setting's own check
    }

    /**
     * The run's DP-SGD settings from these options ({@link DpSgdSettings}, checked there; σ, the target ε, the accountant
     * and augmult come from the command's own options): a setting added to the record is given here, one line.
     *
     * @throws IllegalArgumentException naming the option, its value and what is allowed
     */
    DpSgdSettings settings() {
        return byOptionName(() -> {
            DpSgdSettings.Builder b = DpSgdSettings.builder().clipNorm(clip).expectedBatchSize(batchSize).epochs(epochs).delta(delta)
                    .physicalBatchSize(physicalBatchSize).emaDecay(ema).nonPrivate(nonPrivate).secureRandom(secureNoise)
                    .readCacheMb(readCacheMb).optimizer(optimizer).learningRate(lr != null ? lr : Double.NaN);
            if (seed != null && !secureNoise) {
                b.seed(seed);
            }
            return b.build();
        });
    }

    /**
     * Runs a settings' computation, naming a setting that it refuses by its option ({@code clip_norm} as {@code --clip-norm}):
     * a message that starts with a setting's key ({@link DpSgdSettings#KEYS}, or any key with '_').
     *
     * @param settings builds or resolves settings
     * @return its result
     * @throws IllegalArgumentException the refusal, with the option's name for the setting's
     */
    static <T> T byOptionName(java.util.function.Supplier<T> settings) {
        try {
            return settings.get();
        } catch (IllegalArgumentException e) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("^([a-z]+(?:_[a-z]+)*)\\b").matcher(String.valueOf(e.getMessage()));
            if (!m.find() || !m.group(1).contains("_") && !DpSgdSettings.KEYS.contains(m.group(1))) {
                throw e; // not a setting's key
            }
            String option = "--" + m.group(1).replace('_', '-');
            throw new IllegalArgumentException(option + e.getMessage().substring(m.end()), e);
        }
    }

    /**
     * Checks a --noise-multiplier value, if given: finite and ≥ 0.
     *
     * @throws IllegalArgumentException naming --noise-multiplier and its value
     */
    static void checkNoiseMultiplier(Double sigma) {
        if (sigma != null && !(sigma >= 0 && Double.isFinite(sigma))) {
            throw new IllegalArgumentException("--noise-multiplier must be finite and >= 0, got " + sigma);
        }
    }

    /**
     * Refuses δ ≥ 1/n, where (ε, δ)-DP allows releasing one example outright, unless --allow-large-delta (then warns).
     *
     * @throws IllegalArgumentException naming --delta, its value, 1/n and the option that accepts it
     */
    void checkDelta(int n) {
        if (delta >= 1.0 / n) {
            String why = String.format("--delta %s is not below 1/n = %.3g: a mechanism that publishes one example in %d is "
                    + "(0, delta)-DP", delta, 1.0 / n, Math.round(1 / delta));
            if (!allowLargeDelta) {
                throw new IllegalArgumentException(why + "; choose delta well below 1/n, or give --allow-large-delta to accept that risk");
            }
            System.err.println("warning: " + why + " (accepted with --allow-large-delta)");
        }
    }

    /** Checks B against n and returns q = B/n. */
    double samplingRate(int n) {
        return byOptionName(() -> settings().samplingRate(n));
    }

    static int[] parseImageSize(String s) {
        String[] p = s.split("x");
        try {
            if (p.length == 3) {
                int[] hwc = {Integer.parseInt(p[0]), Integer.parseInt(p[1]), Integer.parseInt(p[2])};
                if (hwc[0] > 0 && hwc[1] > 0 && (hwc[2] == 1 || hwc[2] == 3)) {
                    if (hwc[0] > org.dpdl4j.datasets.ImageFolder.MAX_SIDE || hwc[1] > org.dpdl4j.datasets.ImageFolder.MAX_SIDE) {
                        throw new IllegalArgumentException("--image-size " + s + " is too large: height and width must be at most "
                                + org.dpdl4j.datasets.ImageFolder.MAX_SIDE);
                    }
                    return hwc;
                }
            }
        } catch (NumberFormatException ignored) {
            // falls through to the error below
        }
        throw new IllegalArgumentException("--image-size must be HxWxC with H and W in [1, " + org.dpdl4j.datasets.ImageFolder.MAX_SIDE
                + "] and C = 1 or 3, got '" + s + "'");
    }
}
