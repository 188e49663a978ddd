package org.dpdl4j.benchmarks;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.NoOpEvent;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PldAccountant;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Datasets;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.datasets.ImageAugmentation;
import org.dpdl4j.dpsgd.ClippedSums;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.PrivateNormalisation;
import org.dpdl4j.dpsgd.TrainingResult;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.nd4j.linalg.api.buffer.DataType;

/**
 * {@code reproduce tramer-boneh}: the ScatterNet rows of Tramèr &amp; Boneh, "Differentially Private Learning Needs
 * Better Features (or Much More Data)", ICLR 2021, arXiv:2011.11660, Table 1 (MNIST and Fashion-MNIST at ε = 3,
 * δ = 1e-5; single runs whose hyperparameters were chosen on the private data, a search they do not count) next to the
 * same models and hyperparameters trained by dpdl4j. Their settings (the README of their code): momentum 0.9, C = 0.1,
 * tanh in the CNN; MNIST linear B = 4096, lr 8; MNIST CNN B = 1024, lr 1; Fashion-MNIST linear B = 8192, lr 16;
 * Fashion-MNIST CNN B = 2048, lr 4. Their README gives noise multipliers, not epochs: the epochs here (40, 25, 40, 40)
 * are those at which their noise multipliers reach ε = 3 under the accountant they used. As theirs, the MNIST rows normalise the
 * features with the private data normalisation (σ_norm = 8, {@link PrivateNormalisation}; its event is composed into ε)
 * and the Fashion-MNIST rows with GroupNorm(27) (no privacy cost). Differences: their data normalisation clips at the
 * median norms of each run's data (not private, as their code notes), ours at constants
 * ({@link PrivateNormalisation#DEFAULT_CLIP_MEAN}, {@link PrivateNormalisation#DEFAULT_CLIP_SQUARES}) set once from
 * MNIST's training-set norms, a look at the data that ε does not count either; their momentum is plain, ours Nesterov; their batches are shuffled fixed-size batches accounted as
 * if Poisson-sampled, ours are Poisson-sampled; σ is calibrated by dpdl4j's PLD accountant to total ε = 3 exactly.
 */
public final class TramerBoneh {
    static final double EPSILON = 3;
    static final double DELTA = 1e-5;
    static final double CLIP = 0.1;
    /** σ_norm of the data normalisation, Tramèr &amp; Boneh's for MNIST. */
    static final double SIGMA_NORM = 8;

    /**
     * One row of the table.
     *
     * @param paper the paper's test accuracy
     * @param dataNorm whether the features are normalised by the private data normalisation (else GroupNorm(27))
     */
    record Row(String dataset, String model, int batchSize, double lr, double epochs, double paper, boolean dataNorm) {
    }

    static final List<Row> ROWS = List.of(
            new Row("mnist", "scatternet-linear", 4096, 8, 40, 0.987, true),
            new Row("mnist", "scatternet-cnn", 1024, 1, 25, 0.987, true),
            new Row("fashion-mnist", "scatternet-linear", 8192, 16, 40, 0.897, false),
            new Row("fashion-mnist", "scatternet-cnn", 2048, 4, 40, 0.890, false));

    /** The event of {@link #normalisation}'s release. */
    static PrivacyEvent normalisationEvent() {
        return PrivateNormalisation.event(SIGMA_NORM);
    }

    /**
     * Releases the feature statistics of {@code train} with the data normalisation (σ_norm = {@value #SIGMA_NORM},
     * {@link PrivateNormalisation#releaseScatterNet}'s clipping norms); compose {@link #normalisationEvent()} into the
     * total.
     */
    static PrivateNormalisation.Release normalisation(LabeledData train, long seed, int workers) {
        return PrivateNormalisation.releaseScatterNet(train, SIGMA_NORM, seed, workers);
    }

    private TramerBoneh() {
    }

    /**
     * Trains each row once and returns the figure (paper and ours per row; CSV columns: epsilon, σ, seconds).
     *
     * @param epochsOverride epochs of every row instead of the paper's (0 or less: the paper's), for quick checks
     * @param seed           seed of weights, sampling and noise
     * @return the figure "tramer-boneh": test accuracy per row, the paper's and ours
     * @throws IOException as declared; a dataset that cannot be read is reported as an
     *                     {@link java.io.UncheckedIOException} instead
     * @throws java.io.UncheckedIOException if a dataset cannot be read from the dataset cache
     */
    public static Figure run(double epochsOverride, long seed) throws IOException {
        int workers = Reporting.configureWorkers(null);
        PldAccountant pld = PldAccountant.standard();
        Figure f = new Figure("tramer-boneh", "Tramer & Boneh 2021, Table 1, ScatterNet rows: test accuracy at epsilon 3 (delta 1e-5)",
                "row (1-2 MNIST linear, CNN; 3-4 Fashion-MNIST linear, CNN)", "test accuracy", "epsilon", "noise_multiplier", "epochs")
                .legendBelow();
        List<String> lines = new ArrayList<>();
        Map<String, TrainTest> data = new LinkedHashMap<>();
        for (int i = 0; i < ROWS.size(); i++) {
            Row row = ROWS.get(i);
            TrainTest tt = data.computeIfAbsent(row.dataset(), d -> load(d, seed));
            double epochs = epochsOverride > 0 ? epochsOverride : row.epochs();
            Run r = train(row, epochs, tt.train(), seed, workers, pld, EPSILON);
            double accuracy = DpSgdTrainer.accuracy(r.model(), tt.test());
            double epsilon = r.epsilon();
            double sigma = r.sigma();
            String label = r.label();
            f.add("Tramer & Boneh 2021 (single run, search not counted)", i + 1, row.paper(), EPSILON, Double.NaN, row.epochs());
            f.add("dpdl4j, same model and hyperparameters", i + 1, accuracy, epsilon, sigma, epochs);
            lines.add(String.format(Locale.ROOT, "  %-42s paper %.3f  dpdl4j %.4f  (epsilon %.4f PLD, sigma %.4f, B %d, lr %s, %s epochs, %.0f s)",
                    label, row.paper(), accuracy, epsilon, sigma, row.batchSize(), row.lr(), epochs, r.seconds()));
            System.out.println(lines.get(lines.size() - 1));
        }
        System.out.println("tramer-boneh: ScatterNet rows at epsilon 3, delta 1e-5 (paper vs dpdl4j):");
        lines.forEach(System.out::println);
        return f;
    }

    /**
     * A trained row.
     *
     * @param epsilon total ε at δ = 1e-5 (PLD), the data normalisation's event included
     * @param sigma   DP-SGD's noise multiplier
     */
    record Run(String label, Model model, double epsilon, double sigma, double seconds) {
    }

    /**
     * Trains a row on {@code train} at total ε = {@code epsilon} (3 in the paper's table): releases the feature
     * statistics first if the row says so, then calibrates DP-SGD's σ by PLD so that the composition of both is
     * (ε, 1e-5)-DP.
     *
     * @throws IllegalArgumentException if the data normalisation alone spends {@code epsilon}
     */
    static Run train(Row row, double epochs, LabeledData train, long seed, int workers, PldAccountant pld, double epsilon) {
        return train(row, epochs, train, seed, workers, pld, epsilon, 1, false);
    }

    /**
     * {@link #train(Row, double, LabeledData, long, int, PldAccountant, double)} with augmentation multiplicity k
     * ({@link org.dpdl4j.dpsgd.ClippedSums#augmented}, the data set's {@link ImageAugmentation#forDataset}); k = 1: none.
     * The event does not depend on k. With {@code linearDecay} the learning rate falls linearly from the row's to 0 over the
     * run's steps ({@link LinearDecay}) instead of staying constant.
     */
    static Run train(Row row, double epochs, LabeledData train, long seed, int workers, PldAccountant pld, double epsilon, int augmult,
                     boolean linearDecay) {
        int n = train.size();
        double q = (double) row.batchSize() / n;
        long steps = DpSgdConfig.stepsForEpochs(epochs, q);
        PrivacyEvent before = row.dataNorm() ? normalisationEvent() : new NoOpEvent();
        if (!(pld.epsilon(before, DELTA) < epsilon)) {
            throw new IllegalArgumentException("epsilon " + epsilon + " is spent by the data normalisation alone (epsilon "
                    + pld.epsilon(before, DELTA) + " at sigma_norm " + SIGMA_NORM + ")");
        }
        PrivateNormalisation.Release norm = row.dataNorm() ? normalisation(train, seed, workers) : null;
        if (norm != null) {
            System.out.printf(Locale.ROOT, "[operator] data normalisation: %d of %d examples clipped%n", norm.clipped(), n);
        }
        double sigma = NoiseCalibration.smallestNoise(x -> ComposedEvent.of(before, NoiseCalibration.dpSgd(q, x, steps)), epsilon,
                DELTA, pld, 1e-4);
        ModelOptions options = new ModelOptions(28, 28, 1, train.numClasses(), ModelOptions.activationNamed("tanh"),
                linearDecay ? new org.nd4j.linalg.learning.config.Nesterovs(new LinearDecay(row.lr(), steps), 0.9)
                        : ModelOptions.updaterNamed("momentum", row.lr()), seed, DataType.FLOAT).withFeatures(norm != null ? norm.statistics() : null);
        Model net = Models.byName(row.model(), options);
        DpSgdConfig cfg = DpSgdConfig.builder().samplingRate(q).noiseMultiplier(sigma).clipNorm(CLIP).steps(steps).seed(seed)
                .workers(workers).delta(DELTA).build();
        TrainingResult res;
        String label = row.dataset() + " " + row.model() + (row.dataNorm() ? " data-norm" : " groupnorm") + (augmult > 1 ? " augmult " + augmult : "")
                + (linearDecay ? " lr decay" : "");
        try (var bar = Reporting.progressBar(label, steps, false)) {
            res = new DpSgdTrainer(pld).withClippedSums(ClippedSums.augmented(augmult > 1 ? ImageAugmentation.forDataset(row.dataset()) : null,
                    augmult)).train(net, train, cfg, info -> {
                if (bar != null) {
                    bar.stepTo(info.step());
                }
            });
        }
        return new Run(label, net, pld.epsilon(ComposedEvent.of(before, res.event()), DELTA), sigma, res.seconds());
    }

    /**
     * What {@link #ablation} varies; every combination is one row.
     *
     * @param dataNorms    the normalisations: {@code false} GroupNorm(27), {@code true} the private data normalisation
     * @param lrFactors    multiples of the paper's learning rate, each in (0, 1000] (e.g. the learning rates that
     *                     {@code honest-*}'s search can hand its final run, over the recipe's)
     * @param augmults     augmentation multiplicities k, each in [1, 64] (1: no augmentation; see
     *                     {@link ClippedSums#augmented})
     * @param batchFactors multiples of the paper's expected batch size B, each in (0, 8] (B rounded, at least 1)
     * @param decays       {@code false}: the learning rate constant (the paper's), {@code true}: falling linearly to 0
     */
    public record Levers(List<Boolean> dataNorms, List<Double> lrFactors, List<Integer> augmults, List<Double> batchFactors,
                         List<Boolean> decays) {
        /**
         * Validates the levers and keeps immutable copies of the lists.
         *
         * @param dataNorms    the normalisations, non-empty
         * @param lrFactors    multiples of the paper's learning rate, non-empty, each in (0, 1000]
         * @param augmults     augmentation multiplicities k, non-empty, each in [1, 64]
         * @param batchFactors multiples of the paper's expected batch size, non-empty, each in (0, 8]
         * @param decays       the learning-rate schedules, non-empty
         * @throws IllegalArgumentException if a list is empty or a value is outside its range
         */
        public Levers {
            if (dataNorms.isEmpty() || lrFactors.isEmpty() || augmults.isEmpty() || batchFactors.isEmpty() || decays.isEmpty()) {
                throw new IllegalArgumentException("normalisations, lr factors, augmults, batch factors and lr schedules must each name at "
                        + "least one, got " + dataNorms + ", " + lrFactors + ", " + augmults + ", " + batchFactors + " and " + decays);
            }
            checkLrFactors(lrFactors, "lr factors");
            checkAugmults(augmults, "augmults");
            checkBatchFactors(batchFactors, "batch factors");
            dataNorms = List.copyOf(dataNorms);
            lrFactors = List.copyOf(lrFactors);
            augmults = List.copyOf(augmults);
            batchFactors = List.copyOf(batchFactors);
            decays = List.copyOf(decays);
        }
    }

    /**
     * {@code reproduce scatternet-ablation}: each setting of the levers on one seed, trained on 90 % of the training
     * set with Tramèr &amp; Boneh's hyperparameters at total ε = {@code epsilon} (theirs: 3), scored on the held-out 10 %
     * (validation: what a choice may read) and on the test set (reported only). Rows: ScatterNet + linear (the model of
     * {@code reproduce honest-*}) per data set, at each combination of normalisation, multiple of the paper's learning
     * rate, augmentation multiplicity, multiple of the paper's batch size and learning-rate schedule.
     *
     * @param datasets       mnist and/or fashion-mnist
     * @param epochsOverride epochs of every row instead of the paper's (0 or less: the paper's)
     * @param seed           seed of the 90/10 split, weights, sampling and noise
     * @param levers         the settings to combine; every combination is one row per data set
     * @param epsilon        total ε of every row at δ = 1e-5, in (0, 100], the data normalisation's release included
     * @return the figure "scatternet-ablation": validation and test accuracy per row
     * @throws IllegalArgumentException if a dataset is not mnist or fashion-mnist, {@code epsilon} is invalid, or
     *                                  the data normalisation alone spends {@code epsilon} in a row that uses it
     * @throws IOException as declared; a dataset that cannot be read is reported as an
     *                     {@link java.io.UncheckedIOException} instead
     * @throws java.io.UncheckedIOException if a dataset cannot be read from the dataset cache
     */
    public static Figure ablation(List<String> datasets, double epochsOverride, long seed, Levers levers, double epsilon)
            throws IOException {
        if (!(epsilon > 0 && epsilon <= 100)) {
            throw new IllegalArgumentException("epsilon must be in (0, 100], got " + epsilon);
        }
        for (String d : datasets) {
            if (!d.equals("mnist") && !d.equals("fashion-mnist")) {
                throw new IllegalArgumentException("datasets must be mnist and/or fashion-mnist, got '" + d + "'");
            }
        }
        int workers = Reporting.configureWorkers(null);
        PldAccountant pld = PldAccountant.standard();
        Figure f = new Figure("scatternet-ablation", String.format(Locale.ROOT,
                "ScatterNet levers at epsilon %s (delta 1e-5), one seed: validation and test accuracy", epsilon),
                "row", "accuracy", "epsilon", "noise_multiplier", "epochs", "learning_rate", "augmult", "batch_size", "lr_decay").legendBelow();
        List<String> lines = new ArrayList<>();
        int x = 0;
        for (String dataset : datasets) {
            TrainTest tt = load(dataset, seed);
            LabeledData.Split split = tt.train().splitByRecord(0.1, seed); // by record: the validation set is private data
            Row paper = ROWS.stream().filter(r -> r.dataset().equals(dataset) && r.model().equals("scatternet-linear")).findFirst()
                    .orElseThrow();
            for (boolean dataNorm : levers.dataNorms()) {
                for (double factor : levers.lrFactors()) {
                    for (double batchFactor : levers.batchFactors()) {
                        int b = (int) Math.max(1, Math.min(split.train().size(), Math.round(paper.batchSize() * batchFactor)));
                        Row row = new Row(dataset, paper.model(), b, paper.lr() * factor, paper.epochs(), paper.paper(), dataNorm);
                        double epochs = epochsOverride > 0 ? epochsOverride : row.epochs();
                        for (int augmult : levers.augmults()) {
                            for (boolean decay : levers.decays()) {
                                Run r = train(row, epochs, split.train(), seed, workers, pld, epsilon, augmult, decay);
                                double validation = DpSgdTrainer.accuracy(r.model(), split.validation());
                                double test = DpSgdTrainer.accuracy(r.model(), tt.test());
                                x++;
                                f.add("validation accuracy", x, validation, r.epsilon(), r.sigma(), epochs, row.lr(), augmult, b, decay ? 1 : 0);
                                f.add("test accuracy", x, test, r.epsilon(), r.sigma(), epochs, row.lr(), augmult, b, decay ? 1 : 0);
                                lines.add(String.format(Locale.ROOT, "  %d. %-42s validation %.4f  test %.4f  (epsilon %.4f, sigma %.4f, B %d, lr %.4g, %s epochs, %.0f s)",
                                        x, r.label(), validation, test, r.epsilon(), r.sigma(), b, row.lr(), epochs, r.seconds()));
                                System.out.println(lines.get(lines.size() - 1));
                            }
                        }
                    }
                }
            }
        }
        System.out.printf(Locale.ROOT, "scatternet-ablation: one seed, 90 %% of the training set, epsilon %s (choose by validation, never by test):%n",
                epsilon);
        lines.forEach(System.out::println);
        return f;
    }

    /**
     * Checks {@link #ablation}'s learning-rate factors.
     *
     * @param lrFactors the factors, each to be in (0, 1000]
     * @param name the parameter's name for the message (the CLI passes its option's)
     * @throws IllegalArgumentException naming {@code name} and the value if a factor is outside (0, 1000]
     */
    public static void checkLrFactors(List<Double> lrFactors, String name) {
        for (double factor : lrFactors) {
            if (!(factor > 0 && factor <= 1000)) {
                throw new IllegalArgumentException(name + " must each be in (0, 1000], got " + factor);
            }
        }
    }

    /**
     * Checks {@link #ablation}'s augmentation multiplicities.
     *
     * @param augmults the multiplicities k, each to be in [1, 64]
     * @param name     the parameter's name for the message (the CLI passes its option's)
     * @throws IllegalArgumentException naming {@code name} and the value if a k is outside [1, 64]
     */
    public static void checkAugmults(List<Integer> augmults, String name) {
        for (int k : augmults) {
            if (k < 1 || k > 64) {
                throw new IllegalArgumentException(name + " must each be in [1, 64] (1: no augmentation), got " + k);
            }
        }
    }

    /**
     * Checks {@link #ablation}'s batch-size factors.
     *
     * @param batchFactors the factors, each to be in (0, 8]
     * @param name         the parameter's name for the message (the CLI passes its option's)
     * @throws IllegalArgumentException naming {@code name} and the value if a factor is outside (0, 8]
     */
    public static void checkBatchFactors(List<Double> batchFactors, String name) {
        for (double factor : batchFactors) {
            if (!(factor > 0 && factor <= 8)) {
                throw new IllegalArgumentException(name + " must each be in (0, 8], got " + factor);
            }
        }
    }

    private static TrainTest load(String dataset, long seed) {
        try {
            return Datasets.load(dataset, DatasetCache.root(), 28, 28, 1, seed);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
