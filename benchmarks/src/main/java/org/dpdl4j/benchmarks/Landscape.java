package org.dpdl4j.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.dpdl4j.tuning.Candidate;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.tuning.TrainingMechanism;
import org.dpdl4j.tuning.TrialResult;
import org.dpdl4j.tuning.TuningListener;
import org.nd4j.linalg.api.buffer.DataType;

/**
 * A cache of real DP-SGD outcomes over a grid (Wang et al. 2023, arXiv:2306.05734, App. E.1's "semi-real simulation"): every
 * candidate (lr, clip) is trained r times with the given σ and its test accuracy recorded; tuning
 * procedures are then replayed on the cache, a visited candidate returning its cached mean plus
 * N(0, s²) noise. The cache is a JSON file holding the settings and every run; building resumes
 * from it (runs already there are skipped) and rewrites it atomically after each run.
 */
public final class Landscape {
    /**
     * What a landscape is trained with.
     *
     * @param dataset   mnist or fashion-mnist (recorded in the cache; the data itself is passed to the build)
     * @param trainSize examples drawn (seeded) from the training set, ≥ 1
     * @param lr        the learning-rate axis, in the command line's axis syntax
     *                  ({@link org.dpdl4j.tuning.HyperparameterSpace#parseAxis})
     * @param clip      the clipping-norm axis, in the same syntax
     * @param runs      runs per candidate r, ≥ 1
     * @param epochs    epochs per run, &gt; 0
     * @param batchSize expected batch size in examples (q = batchSize/trainSize), ≥ 1
     * @param sigma     noise multiplier σ, ≥ 0
     * @param seed      seeds the subset and the runs
     */
    public record Settings(String dataset, int trainSize, String lr, String clip, int runs, double epochs, int batchSize, double sigma,
                    long seed) {
        HyperparameterSpace space() {
            return HyperparameterSpace.of(HyperparameterSpace.parseAxis(lr), HyperparameterSpace.parseAxis(clip));
        }

        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("dataset", dataset);
            m.put("train_size", trainSize);
            m.put("learning_rate", lr.startsWith("lr=") ? "learning_rate=" + lr.substring(3) : lr);
            m.put("clip_norm", clip.startsWith("clip=") ? "clip_norm=" + clip.substring(5) : clip);
            m.put("runs", runs);
            m.put("epochs", epochs);
            m.put("batch_size", batchSize);
            m.put("noise_multiplier", sigma);
            m.put("seed", seed);
            return m;
        }
    }

    private final Settings settings;
    private final List<Candidate> grid;
    private final double[] mean;

    private Landscape(Settings settings, List<Candidate> grid, double[] mean) {
        this.settings = settings;
        this.grid = grid;
        this.mean = mean;
    }

    /**
     * A cache's settings with the current key names: {@code clip}, {@code lr} and {@code sigma}, as caches were written
     * before C, η and σ had one spelling in every file, become {@code clip_norm}, {@code learning_rate} (their axis texts
     * too) and {@code noise_multiplier}.
     */
    private static Map<String, Object> currentNames(Map<String, Object> settings) {
        Map<String, Object> m = new LinkedHashMap<>();
        settings.forEach((k, v) -> {
            if (k.equals("clip")) {
                m.put("clip_norm", v instanceof String a && a.startsWith("clip=") ? "clip_norm=" + a.substring(5) : v);
            } else if (k.equals("lr")) {
                m.put("learning_rate", v instanceof String a && a.startsWith("lr=") ? "learning_rate=" + a.substring(3) : v);
            } else {
                m.put(k.equals("sigma") ? "noise_multiplier" : k, v);
            }
        });
        return m;
    }

    /** The candidates, in {@link HyperparameterSpace#candidates()} order. */
    List<Candidate> grid() {
        return grid;
    }

    /** The mean test accuracy of each candidate's runs (the "actual accuracy"). */
    double actual(Candidate c) {
        return mean[grid.indexOf(c)];
    }

    /** The best mean accuracy on the grid. */
    double best() {
        double b = Double.NEGATIVE_INFINITY;
        for (double m : mean) {
            b = Math.max(b, m);
        }
        return b;
    }

    /**
     * Trains what the cache at {@code file} lacks and returns the landscape.
     *
     * @param progress told after each run ("run i of n")
     * @throws IllegalArgumentException if the file holds a landscape with other settings
     */
    @SuppressWarnings("unchecked")
    static Landscape build(Settings s, TrainTest data, Path file, Consumer<String> progress) throws IOException {
        List<Map<String, Object>> runs = new ArrayList<>();
        if (Files.exists(file)) {
            Map<String, Object> old = Reporting.JSON.readValue(file.toFile(), Map.class);
            old.put("settings", currentNames((Map<String, Object>) old.get("settings")));
            for (Map<String, Object> run : (List<Map<String, Object>>) old.get("runs")) {
                if (run.containsKey("clip")) { // a cache written before C was clip_norm in every file
                    run.put("clip_norm", run.remove("clip"));
                }
                if (run.containsKey("lr")) { // and before the learning rate was learning_rate
                    run.put("learning_rate", run.remove("lr"));
                }
            }
            if (!s.toMap().equals(Reporting.JSON.convertValue(old.get("settings"), Map.class))
                    && !Reporting.JSON.writeValueAsString(s.toMap()).equals(Reporting.JSON.writeValueAsString(old.get("settings")))) {
                throw new IllegalArgumentException("landscape " + file + " was built with other settings: " + old.get("settings"));
            }
            runs.addAll((List<Map<String, Object>>) old.get("runs"));
        }
        List<Candidate> grid = s.space().candidates();
        LabeledData train = data.train().randomSubset(s.trainSize(), s.seed());
        double q = (double) s.batchSize() / train.size();
        long steps = DpSgdConfig.stepsForEpochs(s.epochs(), q);
        int total = grid.size() * s.runs();
        int done = 0;
        for (int i = 0; i < grid.size(); i++) {
            for (int r = 0; r < s.runs(); r++) {
                done++;
                int ci = i;
                int rr = r;
                if (runs.stream().anyMatch(m -> ((Number) m.get("candidate")).intValue() == ci && ((Number) m.get("run")).intValue() == rr)) {
                    continue;
                }
                Candidate c = grid.get(i);
                long seed = new SplittableRandom(s.seed() * 31 + i * 1000L + r).nextLong();
                ModelOptions o = new ModelOptions(28, 28, 1, train.numClasses(), ModelOptions.activationNamed("tanh"),
                        ModelOptions.updaterNamed("sgd", c.number("learning_rate")), seed, DataType.FLOAT);
                MultiLayerNetwork net = Models.standardCnn(o);
                DpSgdConfig cfg = DpSgdConfig.builder().samplingRate(q).noiseMultiplier(s.sigma()).clipNorm(c.number("clip_norm"))
                        .steps(steps).seed(seed).build();
                long start = System.nanoTime();
                new DpSgdTrainer().train(net, train, cfg);
                double accuracy = DpSgdTrainer.accuracy(net, data.test());
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("candidate", i);
                m.put("learning_rate", c.number("learning_rate"));
                m.put("clip_norm", c.number("clip_norm"));
                m.put("run", r);
                m.put("accuracy", Double.isFinite(accuracy) ? accuracy : 0.0);
                m.put("seconds", (System.nanoTime() - start) / 1e9);
                runs.add(m);
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("settings", s.toMap());
                out.put("runs", runs);
                Files.createDirectories(file.toAbsolutePath().getParent());
                Reporting.writeJsonAtomically(file, out);
                progress.accept(String.format("landscape noise multiplier %s: run %d of %d (lr %.4g, clip norm %.3g): accuracy %.4f, %.1f s",
                        s.sigma(), done, total, c.number("learning_rate"), c.number("clip_norm"), accuracy, (double) m.get("seconds")));
            }
        }
        double[] mean = new double[grid.size()];
        int[] count = new int[grid.size()];
        for (Map<String, Object> m : runs) {
            int i = ((Number) m.get("candidate")).intValue();
            mean[i] += ((Number) m.get("accuracy")).doubleValue();
            count[i]++;
        }
        for (int i = 0; i < mean.length; i++) {
            mean[i] /= count[i];
        }
        return new Landscape(s, grid, mean);
    }

    /** The replay mechanism: a visited candidate scores its cached mean plus N(0, noise²); no model. */
    TrainingMechanism replay(PrivacyEvent event, double noise) {
        return new TrainingMechanism() {
            @Override
            public PrivacyEvent event(Candidate c) {
                return event;
            }

            @Override
            public TrialResult run(Candidate c, long seed, TuningListener listener, int trial) {
                double score = actual(c) + noise * new SplittableRandom(seed).nextGaussian();
                return new TrialResult(trial, c, null, score, event, 0, null);
            }
        };
    }

    /** The settings it was built with. */
    Settings settings() {
        return settings;
    }
}
