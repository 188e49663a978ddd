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
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.SubsampledTuningEvent;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Datasets;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.PrivateNormalisation;
import org.dpdl4j.dpsgd.TrainingResult;
import org.dpdl4j.models.FeatureStatistics;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.dpdl4j.tuning.DpSgdMechanism;
import org.dpdl4j.tuning.Extrapolation;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.tuning.RandomSearchTuner;
import org.dpdl4j.tuning.SubsampledTuner;
import org.dpdl4j.tuning.SubsampledTuningResult;
import org.nd4j.linalg.api.buffer.DataType;

/**
 * {@code reproduce honest-mnist} / {@code honest-fashion-mnist}: the test accuracy of a private model whose ε
 * includes the search for its hyperparameters, next to a single run at the same ε whose recipe was fixed in
 * advance, and next to published single runs (which tuned on the private data for free).
 *
 * <p>The tuned row is Koskela &amp; Kulkarni's subsampled tuning, variant 1 (arXiv:2301.11989, Theorem 6):
 * random search with K ~ Poisson(μ) over the learning rate on a Poisson subset X₁ (rate q_tune = 0.1), scored on
 * a validation split of X₁ through the Gaussian mechanism (noise of 10 correct predictions, cost included), the winner's learning rate scaled by
 * n/m (Section 3.2) and a final model trained on X \ X₁. σ is calibrated so that the whole procedure, tuning and
 * final model, is (ε, δ)-DP by the RDP accountant the theorem needs. The test set is used only to report the
 * released models' accuracy, never to select anything.
 *
 * <p>The single-run row trains the recipe on all the training data, σ calibrated by the PLD accountant.
 *
 * <p>A recipe with the private data normalisation ({@link PrivateNormalisation}) releases the feature statistics of the
 * whole training set once per row, before the run or the tuning, and composes that event into the row's ε (σ calibrated
 * for the composition).
 */
public final class HonestAccuracy {
    private static final double DELTA = 1e-5;
    private static final double TUNE_FRACTION = 0.1;
    /**
     * Standard deviation, in correct predictions, of the noise on each tuning run's validation count (about 600
     * examples on MNIST): a resolution of about 1.7 points of accuracy at an RDP cost of α/200 per run.
     */
    private static final double SCORE_NOISE = 10;

    /**
     * The total ε at which the ScatterNet recipes' grid was studied on validation, smallest first
     * ({@code reproduce scatternet-ablation --epsilon}); a row at total ε uses the grid chosen at the studied ε nearest
     * to it on a log scale ({@link #gridCentreAt}).
     */
    static final double[] GRID_STUDIED_EPSILONS = {1, 2, 3};
    /**
     * The centre of the grid chosen at each of {@link #GRID_STUDIED_EPSILONS}, as the power i of 9^(1/10): the final run
     * gets lr·9^((i−1)/10), lr·9^(i/10), lr·9^((i+1)/10) ({@link Recipe#space()}).
     */
    static final int[] GRID_CENTRES = {-4, -2, 0};

    /**
     * The ScatterNet recipes' grid centre for a row at total ε: that of the studied ε nearest on a log scale, so the
     * band edges are the geometric means of neighbouring studied ε (√2 and √6; an ε on an edge takes the larger's).
     *
     * @param epsilon the row's total ε, &gt; 0
     * @return the power i of 9^(1/10), one of {@link #GRID_CENTRES}
     */
    static int gridCentreAt(double epsilon) {
        int k = GRID_STUDIED_EPSILONS.length - 1;
        while (k > 0 && epsilon < Math.sqrt(GRID_STUDIED_EPSILONS[k - 1] * GRID_STUDIED_EPSILONS[k])) {
            k--;
        }
        return GRID_CENTRES[k];
    }

    /**
     * The learning rates the search of the ScatterNet recipes can hand its final run, as multiples of the recipe's
     * ({@link Recipe#space()}), in each band of {@link #gridCentreAt}.
     */
    public static final String FINAL_LR_FACTORS_TEXT = "0.8027,1,1.246 times the recipe's at epsilon >= 2.449, "
            + "0.5173,0.6444,0.8027 at 1.414 to 2.449, 0.3333,0.4152,0.5173 below";

    private HonestAccuracy() {
    }

    /**
     * The fixed recipe of the single run and the centre of the search.
     *
     * @param name      the recipe's name ({@code scatternet} or {@code standard-cnn})
     * @param model     the model's name for {@link Models#byName}
     * @param optimizer the optimiser's name for {@link ModelOptions#updaterNamed}
     * @param batchSize expected batch B on the full training set (q = B/n, kept by the final run of the tuning)
     * @param lr        learning rate of the single run; the search's grid on X₁ is {@link #space()}, before the n/m scaling
     * @param clip      clipping norm C
     * @param epochs    epochs E of every run
     * @param ema       decay β of the released moving average of the parameters (0: the last iterate)
     * @param mu        μ of the Poisson number K of tuning runs (2 for the ScatterNet recipes: their search cannot tell
     *                  its learning rates apart, so more runs would cost σ and buy nothing: the data-normalised MNIST
     *                  recipe's σ at ε = 3 is 2.6680, against 2.7363 with μ = 5)
     * @param dataNorm  whether the features are normalised by statistics released by the private data normalisation
     *                  (its event composed into each row's ε) instead of GroupNorm
     * @param gridCentre the power i of 9^(1/10) at which the ScatterNet recipes' grid is centred ({@link #space()}),
     *                  by ε ({@link HonestAccuracy#gridCentreAt}); unused by the standard CNN
     */
    public record Recipe(String name, String model, String optimizer, int batchSize, double lr, double clip, double epochs, double ema,
                         double mu, boolean dataNorm, int gridCentre) {
        /** The recipes {@link #of} knows. */
        public static final List<String> NAMES = List.of("scatternet", "scatternet-datanorm", "standard-cnn");

        /**
         * A recipe by name for a row at total ε = {@code epsilon}; {@code epochs} &gt; 0 overrides its epochs (40, or 20
         * with {@code quick}). Only the ScatterNet recipes' search grid depends on ε ({@link #space()}).
         * <ul>
         *   <li>{@code scatternet} (the default): Tramèr &amp; Boneh's ScatterNet + linear model with their published
         *   hyperparameters (ICLR 2021, arXiv:2011.11660; momentum 0.9, C = 0.1; MNIST B = 4096, lr 8; Fashion-MNIST
         *   B = 8192, lr 16), GroupNorm(27) on the features, the last iterate. Fixed from the paper, before seeing our
         *   data; the linear model because it matched or beat their ScatterNet CNN on both data sets.</li>
         *   <li>{@code scatternet-datanorm}: the same with Tramèr &amp; Boneh's private data normalisation
         *   (σ_norm = 8) instead of GroupNorm; its clipping norms were set from MNIST's training-set norms
         *   ({@link PrivateNormalisation#DEFAULT_CLIP_MEAN}), a look at the data that ε does not count.</li>
         *   <li>{@code standard-cnn}: the standard CNN, tanh, plain SGD, B = 2048, lr 4, C = 1, β = 0.999, chosen on a
         *   6,000-example validation split of the MNIST training set (never the test set) among B ∈ {512, 1024, 2048}
         *   with lr ∝ B and β ∈ {0.99, 0.995, 0.999}.</li>
         * </ul>
         *
         * @param name    the recipe's name, one of {@link #NAMES}
         * @param dataset {@code fashion-mnist} for Fashion-MNIST's ScatterNet batch and learning rate; any other value
         *                gives MNIST's
         * @param quick   whether the default epochs are 20 instead of 40
         * @param epochs  epochs E of every run, &gt; 0; 0 or less for the default
         * @param epsilon the row's total ε, &gt; 0 (chooses the ScatterNet recipes' grid centre by
         *                {@link HonestAccuracy#gridCentreAt})
         * @return the recipe
         * @throws IllegalArgumentException if the name is not one of {@link #NAMES}
         */
        public static Recipe of(String name, String dataset, boolean quick, double epochs, double epsilon) {
            double e = epochs > 0 ? epochs : quick ? 20 : 40;
            boolean fashion = dataset.equals("fashion-mnist");
            int centre = gridCentreAt(epsilon);
            return switch (name) {
                case "scatternet", "scatternet-datanorm" -> new Recipe(name, "scatternet-linear", "momentum", fashion ? 8192 : 4096,
                        fashion ? 16.0 : 8.0, 0.1, e, 0, 2, name.endsWith("datanorm"), centre);
                case "standard-cnn" -> new Recipe(name, "standard-cnn", "sgd", 2048, 4.0, 1.0, e, 0.999, 5, false, 0);
                default -> throw new IllegalArgumentException("recipe must be one of " + NAMES + ", got '" + name + "'");
            };
        }

        /**
         * The search's grid on X₁, which the n/m = (1 − q_tune)/(q_tune·0.9) = 10 scaling multiplies for the final run.
         * <ul>
         *   <li>ScatterNet recipes: lr·[0.0803, 0.1246], 3 log-spaced points (ratio 9^(1/10) ≈ 1.246), so the final run
         *   gets lr·{0.803, 1, 1.246}: the recipe's learning rate and its two neighbours on a grid twice as fine as the
         *   first grid, lr·[1/30, 3/10] (6 points, ratio 9^(1/5)). Chosen by the final run's accuracy on the 90/10
         *   validation split of the training sets ({@code reproduce scatternet-ablation --lr-factors}, GroupNorm,
         *   docs/GUIDE.md), never the test set; a look at the private training data that ε does not count, like the
         *   recipe's own hyperparameters. These three scored within one validation standard error of the best on both
         *   data sets (seed 2026), except 1.246 on MNIST's second seed (0.28 points below); since the search's scores
         *   cannot tell them apart (below), a grid of near-equals is what keeps the search from handing the final run a
         *   poor learning rate. The grid before it, lr·{0.517, 0.803, 1.246, 1.933}, handed over its top in 3 of 9
         *   tunings at ε = 3. That study ran at ε = 3; below ε = √2 ({@link HonestAccuracy#gridCentreAt}) the grid is
         *   centred at 9^(−4/10), so the final run gets lr·{0.333, 0.415, 0.517}: the same study at ε = 1 ({@code reproduce
         *   scatternet-ablation --epsilon 1}, GroupNorm, seed 2026, nine learning rates from 0.215 to 1.246 times the
         *   recipe's) found validation accuracy falling steadily above 0.415× on both data sets, and the windows of three
         *   neighbours centred at 0.333× and 0.415× tied on the mean validation accuracy summed over the two data sets (9
         *   examples apart on each, in opposite directions); 0.415× was taken as the one nearer the recipe, and it
         *   matches the recipe's noise per step at ε = 3 (lr·σ constant: 2.5826 / 6.6069 = 0.39 on MNIST). At ε = 1 the
         *   grid centred at the recipe's (0.803–1.246×) scored 0.5–1.2 points of validation accuracy below the best.
         *   From ε = √2 to √6 the grid is centred at 9^(−2/10), lr·{0.517, 0.644, 0.803}: the study at ε = 2 (seven
         *   learning rates from 0.333 to 1.246 times the recipe's) found MNIST's validation accuracy highest at 0.517×
         *   and falling on either side, Fashion-MNIST's flat within 5 examples from 0.517× to 1.246×; by the same rule
         *   the window centred at 0.644× won (the recipe's window 0.14 points below on MNIST, level on Fashion-MNIST).</li>
         *   <li>{@code standard-cnn}: the first grid, lr·[1/30, 3/10], 6 points (final lr·[1/3, 3]); not studied.</li>
         * </ul>
         * The search's scores on X₁ carry noise of 10 correct predictions on about 600 examples (1.7 points), more than
         * the differences between these learning rates, so what the grid admits is largely what the final run gets.
         */
        HyperparameterSpace space() {
            HyperparameterSpace.LogGrid grid = model.startsWith("scatternet")
                    ? new HyperparameterSpace.LogGrid("learning_rate", lr / 10 * Math.pow(9, (gridCentre - 1) / 10.0),
                    lr / 10 * Math.pow(9, (gridCentre + 1) / 10.0), 3)
                    : new HyperparameterSpace.LogGrid("learning_rate", lr / 30, lr * 0.3, 6);
            return HyperparameterSpace.of(grid);
        }

        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", name);
            m.put("model", model);
            m.put("activation", "tanh");
            m.put("optimizer", optimizer);
            m.put("batch_size", batchSize);
            m.put("learning_rate", lr);
            m.put("search_grid_on_tuning_subset", space().toString());
            m.put("clip_norm", clip);
            m.put("epochs", epochs);
            m.put("ema_decay", ema);
            m.put("normalisation", dataNorm ? "private data normalisation, sigma_norm " + TramerBoneh.SIGMA_NORM + ", C_mu "
                    + PrivateNormalisation.DEFAULT_CLIP_MEAN + ", C_s " + PrivateNormalisation.DEFAULT_CLIP_SQUARES
                    : model.startsWith("scatternet") ? "groupnorm" : "none");
            return m;
        }
    }

    /**
     * What {@link #run} reproduces and at what scale.
     *
     * @param dataset mnist or fashion-mnist
     * @param quick   the short version (20 epochs; the command line also defaults to one seed with it): about 15
     *                minutes on 2 cores
     * @param seeds   single runs and complete tunings (each with its own seed), in [1, 100]
     * @param epsilon total ε of each row at δ = 1e-5, finite and &gt; 0
     * @param seed    first seed (weights, sampling, noise, X₁); seed + 1000·r for repetition r
     * @param epochs  epochs of every run, overriding the recipe's (0: the recipe's), finite and ≥ 0
     * @param trainSize a random subset of this many training examples instead of all (0: all), for quick checks; in
     *                  [1000, 60000] and at least the recipe's batch size
     * @param testSize  a random subset of this many test examples to report the accuracy on instead of all (0: all), for
     *                  quick checks; in [100, 10000]
     * @param recipe    the recipe's name, one of {@link Recipe#NAMES}
     * @param tunedOnly run the tunings only: the single runs do not depend on the search (its grid, K or scores), so
     *                  after a change to the search a full run's single-run row with the same seeds still stands
     */
    public record Settings(String dataset, boolean quick, int seeds, double epsilon, long seed, double epochs, int trainSize,
                           int testSize, String recipe, boolean tunedOnly) {
        /**
         * Validates the settings.
         *
         * @param dataset   mnist or fashion-mnist
         * @param quick     the short version (20 epochs)
         * @param seeds     repetitions of each row, in [1, 100]
         * @param epsilon   total ε of each row at δ = 1e-5, finite and &gt; 0
         * @param seed      first seed
         * @param epochs    epochs of every run, finite and ≥ 0 (0: the recipe's)
         * @param trainSize training examples used, in [1000, 60000] and ≥ the recipe's batch size (0: all)
         * @param testSize  test examples used, in [100, 10000] (0: all)
         * @param recipe    one of {@link Recipe#NAMES}
         * @param tunedOnly run the tunings only
         * @throws IllegalArgumentException naming the invalid setting
         */
        public Settings {
            if (!dataset.equals("mnist") && !dataset.equals("fashion-mnist")) {
                throw new IllegalArgumentException("dataset must be mnist or fashion-mnist, got '" + dataset + "'");
            }
            if (seeds < 1 || seeds > 100) {
                throw new IllegalArgumentException("seeds must be in [1, 100], got " + seeds);
            }
            if (!(epsilon > 0) || Double.isInfinite(epsilon)) {
                throw new IllegalArgumentException("epsilon must be finite and > 0, got " + epsilon);
            }
            if (!(epochs >= 0) || Double.isInfinite(epochs)) {
                throw new IllegalArgumentException("epochs must be finite and > 0 (0: the recipe's), got " + epochs);
            }
            if (trainSize != 0 && (trainSize < 1000 || trainSize > 60000)) {
                throw new IllegalArgumentException("train size must be in [1000, 60000] (0: all), got " + trainSize);
            }
            if (testSize != 0 && (testSize < 100 || testSize > 10000)) {
                throw new IllegalArgumentException("test size must be in [100, 10000] (0: all), got " + testSize);
            }
            Recipe r = Recipe.of(recipe, dataset, quick, epochs, epsilon); // validates the name
            if (trainSize != 0 && trainSize < r.batchSize()) {
                throw new IllegalArgumentException("train size must be at least the recipe's batch size " + r.batchSize() + " (recipe "
                        + recipe + "), got " + trainSize);
            }
        }
    }

    /**
     * Published single runs at ε ≈ 3 (hyperparameters tuned on the data without accounting; Tramèr &amp; Boneh's from
     * their Table 1): label → accuracy.
     */
    static Map<String, Double> anchors(String dataset) {
        Map<String, Double> a = new LinkedHashMap<>();
        if (dataset.equals("mnist")) {
            a.put("TF-Privacy tutorial, eps 3.01", 0.966);
            a.put("Opacus example, eps 2.91", 0.968);
            a.put("Tramer & Boneh 2021 end-to-end CNN (arXiv:2011.11660), eps 3", 0.981);
            a.put("Tramer & Boneh 2021 ScatterNet + linear / CNN, eps 3", 0.987);
        } else {
            a.put("Tramer & Boneh 2021 end-to-end CNN (arXiv:2011.11660), eps 3", 0.860);
            a.put("Tramer & Boneh 2021 ScatterNet + linear, eps 3", 0.897);
        }
        return a;
    }

    /**
     * The target of the tuned row at total ε = 3, the issue's: MNIST 98.7 % (Tramèr &amp; Boneh's best single run) and
     * Fashion-MNIST 90.0 % (above their 89.7 %).
     */
    static double target(String dataset) {
        return dataset.equals("mnist") ? 0.987 : 0.900;
    }

    /**
     * What the pipeline measured; {@link #json()} is the release line.
     *
     * @param settings the settings it ran with
     * @param recipe   the recipe it ran
     * @param single   one row per single run (seed_index, test_accuracy, epsilon, accountant, noise_multiplier,
     *                 seconds); empty with {@code tunedOnly}
     * @param tuned    one row per complete tuning (seed_index, test_accuracy, epsilon_total, accountant,
     *                 noise_multiplier, candidate, final_candidate), at least one
     * @param figure   test accuracy per repetition for both rows, with the anchors and the target at ε = 3
     */
    public record Result(Settings settings, Recipe recipe, List<Map<String, Object>> single, List<Map<String, Object>> tuned,
                         Figure figure) {
        /**
         * The last line of {@code --json}: the tuned row's mean test accuracy first, then everything beside it.
         *
         * @return a new insertion-ordered map: id, test_accuracy (mean), test_accuracy_std (sample standard deviation),
         *         epsilon_total (the largest), delta, candidate (the last tuning's), tunings, single_run (absent with
         *         {@code tunedOnly}), recipe and quick
         */
        public Map<String, Object> json() {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("id", "honest-" + settings.dataset());
            j.put("test_accuracy", mean(tuned, "test_accuracy"));
            j.put("test_accuracy_std", std(tuned, "test_accuracy"));
            j.put("epsilon_total", tuned.stream().mapToDouble(m -> (Double) m.get("epsilon_total")).max().orElse(Double.NaN));
            j.put("delta", DELTA);
            j.put("candidate", tuned.get(tuned.size() - 1).get("candidate"));
            j.put("tunings", tuned);
            if (!single.isEmpty()) { // absent with --tuned-only
                Map<String, Object> s = new LinkedHashMap<>();
                s.put("test_accuracy", mean(single, "test_accuracy"));
                s.put("test_accuracy_std", std(single, "test_accuracy"));
                s.put("epsilon", single.stream().mapToDouble(m -> (Double) m.get("epsilon")).max().orElse(Double.NaN));
                s.put("runs", single);
                j.put("single_run", s);
            }
            j.put("recipe", recipe.toMap());
            j.put("quick", settings.quick());
            return j;
        }
    }

    /**
     * Runs the single runs and the tunings, prints the table with the anchors and targets, and returns the figure
     * (test accuracy per repetition for both rows, the anchors and targets as flat lines).
     *
     * @param s the settings
     * @return the rows measured and the figure
     * @throws IOException if the dataset cannot be read
     * @throws IllegalArgumentException if the recipe's data normalisation alone spends ε, or no σ ≤ 10⁶ meets ε
     */
    public static Result run(Settings s) throws IOException {
        Recipe recipe = Recipe.of(s.recipe(), s.dataset(), s.quick(), s.epochs(), s.epsilon());
        int workers = Reporting.configureWorkers(null);
        TrainTest all = Datasets.load(s.dataset(), DatasetCache.root(), 28, 28, 1, s.seed());
        TrainTest data = new TrainTest(all.name(), s.trainSize() == 0 ? all.train() : all.train().randomSubset(s.trainSize(), s.seed()),
                s.testSize() == 0 ? all.test() : all.test().randomSubset(s.testSize(), s.seed())).withPublicTest(all.publicTest());
        int n = data.train().size();
        double q = (double) recipe.batchSize() / n;
        long steps = DpSgdConfig.stepsForEpochs(recipe.epochs(), q);
        List<Map<String, Object>> single = new ArrayList<>();
        List<Map<String, Object>> tuned = new ArrayList<>();
        PldAccountant pld = PldAccountant.standard();
        RdpAccountant rdp = RdpAccountant.standard();
        // each row releases its own feature statistics when the recipe normalises by them; the event is in its epsilon
        PrivacyEvent norm = recipe.dataNorm() ? TramerBoneh.normalisationEvent() : new NoOpEvent();
        if (recipe.dataNorm() && !(rdp.epsilon(norm, DELTA) < s.epsilon())) {
            throw new IllegalArgumentException("epsilon " + s.epsilon() + " is spent by the recipe's data normalisation alone (epsilon "
                    + rdp.epsilon(norm, DELTA) + " at sigma_norm " + TramerBoneh.SIGMA_NORM + "): use a larger epsilon or recipe scatternet");
        }
        double sigmaSingle = s.tunedOnly() ? Double.NaN
                : NoiseCalibration.smallestNoise(x -> ComposedEvent.of(norm, NoiseCalibration.dpSgd(q, x, steps)), s.epsilon(), DELTA, pld, 1e-4);
        System.out.printf(Locale.ROOT, "honest-%s: recipe %s (%s, %s), B = %d (q = %.6g), %s epochs (T = %d), C = %s, "
                        + "moving average %s; %d repetition(s) of each row at total epsilon %s, delta %s%n", s.dataset(), recipe.name(),
                recipe.model(), recipe.optimizer(), recipe.batchSize(),
                q, recipe.epochs(), steps, recipe.clip(), recipe.ema(), s.seeds(), s.epsilon(), DELTA);
        for (int r = 0; r < s.seeds(); r++) {
            long seed = s.seed() + 1000L * r;
            ModelOptions options = options(data, recipe, seed);
            if (!s.tunedOnly()) { // the tuning below draws from its own seeds, so skipping this leaves it unchanged (tested)
                Model net = Models.byName(recipe.model(), options.withFeatures(features(recipe, data, seed, workers)));
                DpSgdConfig cfg = DpSgdConfig.builder().samplingRate(q).noiseMultiplier(sigmaSingle).clipNorm(recipe.clip()).steps(steps)
                        .seed(seed).workers(workers).delta(DELTA).emaDecay(recipe.ema()).build();
                TrainingResult res;
                try (var bar = Reporting.progressBar("single run " + (r + 1) + "/" + s.seeds(), steps, false)) {
                    res = new DpSgdTrainer(pld).train(net, data.train(), cfg, info -> {
                        if (bar != null) {
                            bar.stepTo(info.step());
                        }
                    });
                }
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("seed_index", r);
                row.put("test_accuracy", DpSgdTrainer.accuracy(net, data.test()));
                row.put("epsilon", pld.epsilon(ComposedEvent.of(norm, res.event()), DELTA));
                row.put("accountant", "pld");
                row.put("noise_multiplier", sigmaSingle);
                row.put("seconds", res.seconds());
                single.add(row);
                System.out.printf(Locale.ROOT, "single run %d: test accuracy %.4f at epsilon %.4f (PLD), sigma %.4f, %.0f s%n", r + 1,
                        row.get("test_accuracy"), row.get("epsilon"), sigmaSingle, res.seconds());
            }

            HyperparameterSpace space = recipe.space();
            ModelOptions tunedOptions = options.withFeatures(features(recipe, data, seed + 3, workers));
            DpSgdMechanism template = DpSgdMechanism.builder(data.train()).model(recipe.model(), tunedOptions)
                    .optimizer(recipe.optimizer(), null)
                    .noiseMultiplier(1).clipNorm(recipe.clip()).samplingRate(q).epochs(recipe.epochs()).emaDecay(recipe.ema())
                    .workers(workers).delta(DELTA).validation(0.1, seed).scoring(DpSgdMechanism.Scoring.PRIVATE_VALIDATION, 0.005)
                    .build().withScoreNoiseCount(SCORE_NOISE / TUNE_FRACTION); // SCORE_NOISE counts on X₁'s validation split
            SubsampledTuner tuner = new SubsampledTuner(new RandomSearchTuner(RepetitionDistribution.poisson(recipe.mu()), seed + 1, 1, false),
                    TUNE_FRACTION, SubsampledTuningEvent.Variant.DISJOINT, Extrapolation.LINEAR_LEARNING_RATE, false, seed + 2, false);
            double sigma = NoiseCalibration.smallestNoise(x -> ComposedEvent.of(norm, tuner.event(space, template.withNoiseMultiplier(x))),
                    s.epsilon(), DELTA, rdp, 1e-3);
            SubsampledTuningResult t;
            long start = System.nanoTime();
            try (TrialProgress p = new TrialProgress(false, false)) {
                t = tuner.tune(space, template.withNoiseMultiplier(sigma), null, p);
            }
            Map<String, Object> trow = new LinkedHashMap<>();
            trow.put("seed_index", r);
            trow.put("test_accuracy", DpSgdTrainer.accuracy(t.model(), data.test()));
            trow.put("epsilon_total", rdp.epsilon(ComposedEvent.of(norm, t.event()), DELTA));
            trow.put("accountant", "rdp (Koskela & Kulkarni 2023, arXiv:2301.11989, Theorem 6)");
            trow.put("noise_multiplier", sigma);
            trow.put("candidate", t.tuned().toMap());
            trow.put("final_candidate", t.transferred().toMap());
            tuned.add(trow); // no wall time: it grows with the realised K
            System.out.printf(Locale.ROOT, "tuning %d: test accuracy %.4f at total epsilon %.4f (RDP, tuning and final model), sigma %.4f, "
                            + "tuned %s, final %s%n", r + 1, trow.get("test_accuracy"), trow.get("epsilon_total"), sigma, t.tuned(),
                    t.transferred());
            System.out.printf(Locale.ROOT, "[operator] tuning %d took %.0f s (not covered by epsilon)%n", r + 1,
                    (System.nanoTime() - start) / 1e9);
        }
        return new Result(s, recipe, single, tuned, report(s, single, tuned));
    }

    /** The released feature statistics when the recipe normalises by them (a fresh release per call), else null. */
    private static FeatureStatistics features(Recipe recipe, TrainTest data, long seed, int workers) {
        if (!recipe.dataNorm()) {
            return null;
        }
        PrivateNormalisation.Release r = TramerBoneh.normalisation(data.train(), seed, workers);
        if (!r.event().equals(TramerBoneh.normalisationEvent())) {
            throw new IllegalStateException("the release's event " + r.event() + " is not the one composed into epsilon");
        }
        System.out.printf(Locale.ROOT, "[operator] data normalisation: %d of %d examples clipped%n", r.clipped(), data.train().size());
        return r.statistics();
    }

    private static ModelOptions options(TrainTest data, Recipe recipe, long seed) {
        return new ModelOptions(28, 28, 1, data.train().numClasses(), ModelOptions.activationNamed("tanh"),
                ModelOptions.updaterNamed(recipe.optimizer(), recipe.lr()), seed, DataType.FLOAT);
    }

    /** Prints the table (ours, anchors, targets) and builds the figure. */
    private static Figure report(Settings s, List<Map<String, Object>> single, List<Map<String, Object>> tuned) {
        String id = "honest-" + s.dataset();
        Figure f = new Figure(id, String.format(Locale.ROOT, "%s: test accuracy at total epsilon %s (delta %s)", s.dataset(), s.epsilon(), DELTA),
                "repetition", "test accuracy", "epsilon").legendBelow();
        boolean atThree = s.epsilon() == 3; // the anchors and the target are at epsilon 3
        int reps = tuned.size();
        for (int r = 0; r < reps; r++) {
            if (!single.isEmpty()) {
                f.add("dpdl4j single run (recipe fixed in advance)", r + 1, (Double) single.get(r).get("test_accuracy"),
                        (Double) single.get(r).get("epsilon"));
            }
            f.add("dpdl4j tuned (search counted)", r + 1, (Double) tuned.get(r).get("test_accuracy"),
                    (Double) tuned.get(r).get("epsilon_total"));
        }
        for (int x : new int[]{1, Math.max(2, reps)}) {
            if (atThree) {
                for (Map.Entry<String, Double> a : anchors(s.dataset()).entrySet()) {
                    f.add(a.getKey() + " (single run, search not counted)", x, a.getValue(), Double.NaN);
                }
                f.add("target, tuned", x, target(s.dataset()), s.epsilon());
            }
        }
        System.out.println("paper vs ours (test accuracy; mean +- standard deviation over repetitions):");
        System.out.printf(Locale.ROOT, "  dpdl4j tuned, epsilon %.3f including the search : %.4f +- %.4f%s%n",
                tuned.stream().mapToDouble(m -> (Double) m.get("epsilon_total")).max().orElse(Double.NaN), mean(tuned, "test_accuracy"),
                std(tuned, "test_accuracy"), atThree ? String.format(Locale.ROOT, " (target %.3f)", target(s.dataset())) : "");
        if (!single.isEmpty()) {
            System.out.printf(Locale.ROOT, "  dpdl4j single run, recipe fixed in advance    : %.4f +- %.4f%n",
                    mean(single, "test_accuracy"), std(single, "test_accuracy"));
        }
        for (Map.Entry<String, Double> a : atThree ? anchors(s.dataset()).entrySet() : Map.<String, Double>of().entrySet()) {
            System.out.printf(Locale.ROOT, "  %-46s: %.4f (single run; its search is not counted)%n", a.getKey(), a.getValue());
        }
        return f;
    }

    static double mean(List<Map<String, Object>> rows, String key) {
        return rows.stream().mapToDouble(m -> (Double) m.get(key)).average().orElse(Double.NaN);
    }

    /** Sample standard deviation (0 for one value). */
    static double std(List<Map<String, Object>> rows, String key) {
        double m = mean(rows, key);
        double ss = rows.stream().mapToDouble(x -> Math.pow((Double) x.get(key) - m, 2)).sum();
        return rows.size() < 2 ? 0 : Math.sqrt(ss / (rows.size() - 1));
    }
}
