package org.dpdl4j.audit;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.dpsgd.Networks;
import org.dpdl4j.dpsgd.PerExampleGradients;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.GradientCanaries;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.ops.transforms.Transforms;

/**
 * One DP-SGD run audited with canaries (Steinke, Nasr &amp; Jagielski, Privacy Auditing with One (1) Training Run,
 * NeurIPS 2023, arXiv:2305.08846): m canaries
 * are drawn, each included in the training set with probability ½ from a generator independent of the run, the
 * run trains once, each canary is scored from the released model, and {@link OneRunAudit#audit} turns the scores
 * into a lower bound on ε.
 * <ul>
 *   <li>{@link Kind#GRADIENT} (white-box): Dirac canaries in parameter space (Section 6 of that paper;
 *       {@link GradientCanaries}) of raw
 *       norm {@code canaryNorm}, clipped like every example; score = how far the canary's coordinate moved
 *       against its gradient, θ₀[j] − θ_T[j]. When the first layer is dense, the coordinates are weights from
 *       input features that are 0 in every training example, whose data gradient is exactly 0 (so only the
 *       noise and the canary move them); otherwise any coordinates.</li>
 *   <li>{@link Kind#INPUT} (black-box): canaries are examples of {@code canarySource} (never training data) given
 *       a random wrong label; score = the released model's log-probability of that label (minus its loss).</li>
 * </ul>
 */
public final class CanaryAudit {
    /** The canary type. */
    public enum Kind {
        /** White-box Dirac canaries in parameter space. */
        GRADIENT,
        /** Black-box mislabelled input canaries. */
        INPUT
    }

    /**
     * An audited run.
     *
     * @param audit    the lower bound and the guesses behind it
     * @param network  the trained network
     * @param included whether each canary was in the training set, one per canary
     * @param scores   each canary's score, higher meaning "more likely included": θ₀[j] − θ_T[j] for a gradient
     *                 canary, the natural log of the wrong label's probability (averaged over augmented copies
     *                 when the run augments) for an input canary
     * @param design   how the canaries were placed (for the report)
     */
    public record Outcome(OneRunAudit.Result audit, Model network, boolean[] included, double[] scores, String design) {
    }

    private CanaryAudit() {
    }

    /**
     * Trains {@code network} in place on {@code train} plus the included canaries and audits the result. The clipped
     * sums are computed on this JVM ({@code ClippedSums.local()}).
     *
     * @param network      the network to train, in place (its parameters are changed); for gradient canaries its
     *                     parameters before training are θ₀
     * @param train        the training examples, without canaries
     * @param canarySource examples for input canaries (for example the test split); at least m; unused for gradient
     *                     canaries (may then be null)
     * @param config       the DP-SGD settings of the run; its δ is the δ of the audited claim
     * @param kind         the canary type
     * @param m            the number of canaries, &gt;= 2
     * @param canaryNorm   raw L2 norm of a gradient canary, finite and &gt; 0 (C is the honest choice; larger is
     *                     clipped to C); unused for input canaries
     * @param confidence   the audit's confidence, in (0, 1), for example 0.95
     * @param inclusion    draws the inclusion bits, then the seeds that place (or pick and mislabel) the canaries and
     *                     that score augmented copies (independent of the run: use a {@link java.security.SecureRandom}
     *                     in earnest, a seeded generator in tests)
     * @return the audit's lower bound on ε, the trained network, the inclusion bits, the scores and the design
     * @throws IllegalArgumentException if m &lt; 2, there is no room for m canaries, or a setting is out of range
     * @throws NullPointerException     if {@code inclusion} is null
     */
    public static Outcome run(Model network, ExampleSource train, LabeledData canarySource, DpSgdConfig config, Kind kind,
                              int m, double canaryNorm, double confidence, RandomGenerator inclusion) {
        return run(network, train, canarySource, config, kind, m, canaryNorm, confidence, inclusion,
                org.dpdl4j.dpsgd.ClippedSums.local());
    }

    /**
     * {@link #run} with the run's clipped sums computed {@code where} (for example on a Spark cluster); the canaries,
     * the noise and the update stay on this JVM, so the audited mechanism is the same.
     *
     * @param network      the network to train, in place (its parameters are changed); for gradient canaries its
     *                     parameters before training are θ₀
     * @param train        the training examples, without canaries
     * @param canarySource examples for input canaries (for example the test split); at least m; unused for gradient
     *                     canaries (may then be null)
     * @param config       the DP-SGD settings of the run; its δ is the δ of the audited claim
     * @param kind         the canary type
     * @param m            the number of canaries, &gt;= 2
     * @param canaryNorm   raw L2 norm of a gradient canary, finite and &gt; 0 (C is the honest choice; larger is
     *                     clipped to C); unused for input canaries
     * @param confidence   the audit's confidence, in (0, 1), for example 0.95
     * @param inclusion    draws the inclusion bits, then the seeds that place (or pick and mislabel) the canaries and
     *                     that score augmented copies (independent of the run: use a {@link java.security.SecureRandom}
     *                     in earnest, a seeded generator in tests)
     * @param where        where the run's clipped sums are computed
     * @return the audit's lower bound on ε, the trained network, the inclusion bits, the scores and the design
     * @throws IllegalArgumentException if m &lt; 2, there is no room for m canaries, or a setting is out of range
     * @throws NullPointerException     if {@code inclusion} is null
     */
    public static Outcome run(Model network, ExampleSource train, LabeledData canarySource, DpSgdConfig config, Kind kind,
                              int m, double canaryNorm, double confidence, RandomGenerator inclusion,
                              org.dpdl4j.dpsgd.ClippedSums where) {
        return run(network, train, canarySource, config, kind, m, canaryNorm, confidence, inclusion, where, null);
    }

    /** Copies of each input canary that its score averages over, when the run trains on augmented copies. */
    public static final int SCORED_COPIES = 32;

    /**
     * {@link #run(Model, ExampleSource, LabeledData, DpSgdConfig, Kind, int, double, double, RandomGenerator,
     * org.dpdl4j.dpsgd.ClippedSums)} for a run that trains on augmented copies of its examples (augmentation
     * multiplicity, {@link org.dpdl4j.dpsgd.ClippedSums#augmented}): an input canary's score is then the log of its
     * wrong label's probability averaged over {@value #SCORED_COPIES} copies drawn by {@code augmentation} from a seed
     * independent of the inclusion bits, for a model that saw only shifted copies of a canary barely fits the canary
     * itself. The score is a function of the released model and public randomness alone, as the audit requires.
     *
     * <p>For gradient canaries the augmentation decides which first-layer inputs are quiet
     * ({@link #gradientDesign(Model, ExampleSource, boolean[], long, org.dpdl4j.datasets.ImageAugmentation)}).
     *
     * @param network      the network to train, in place (its parameters are changed); for gradient canaries its
     *                     parameters before training are θ₀
     * @param train        the training examples, without canaries
     * @param canarySource examples for input canaries (for example the test split); at least m; unused for gradient
     *                     canaries (may then be null)
     * @param config       the DP-SGD settings of the run; its δ is the δ of the audited claim
     * @param kind         the canary type
     * @param m            the number of canaries, &gt;= 2
     * @param canaryNorm   raw L2 norm of a gradient canary, finite and &gt; 0 (C is the honest choice; larger is
     *                     clipped to C); unused for input canaries
     * @param confidence   the audit's confidence, in (0, 1), for example 0.95
     * @param inclusion    draws the inclusion bits, then the seeds that place (or pick and mislabel) the canaries and
     *                     that score augmented copies (independent of the run: use a {@link java.security.SecureRandom}
     *                     in earnest, a seeded generator in tests)
     * @param where        where the run's clipped sums are computed
     * @param augmentation the run's augmentation (null: score each input canary as it is, and look for quiet inputs in
     *                     the training images as they are)
     * @return the audit's lower bound on ε, the trained network, the inclusion bits, the scores and the design
     * @throws IllegalArgumentException if m &lt; 2, there is no room for m canaries, or a setting is out of range
     * @throws NullPointerException     if {@code inclusion} is null
     */
    public static Outcome run(Model network, ExampleSource train, LabeledData canarySource, DpSgdConfig config, Kind kind,
                              int m, double canaryNorm, double confidence, RandomGenerator inclusion,
                              org.dpdl4j.dpsgd.ClippedSums where, org.dpdl4j.datasets.ImageAugmentation augmentation) {
        DpSgdTrainer trainer = new DpSgdTrainer().withClippedSums(where);
        if (m < 2) {
            throw new IllegalArgumentException("canaries m must be >= 2, got " + m);
        }
        boolean[] included = inclusionBits(m, inclusion);
        if (kind == Kind.GRADIENT) {
            GradientDesign d = gradientDesign(network, train, included, inclusion.nextLong(), augmentation);
            INDArray before = network.params().dup();
            trainer.withGradientCanaries(d.canaries(canaryNorm)).train(network, train, config);
            double[] scores = d.scores(before, network.params());
            return new Outcome(OneRunAudit.audit(scores, included, config.delta(), confidence), network, included, scores, d.description());
        }
        if (canarySource.size() < m) {
            throw new IllegalArgumentException("input canaries need " + m + " examples outside the training data, have "
                    + canarySource.size());
        }
        LabeledData canaries = canarySource.randomSubset(m, inclusion.nextLong());
        int classes = canaries.numClasses();
        int[] truth = canaries.classIndices();
        INDArray wrong = Nd4j.zeros(canaries.labels().dataType(), m, classes);
        int[] wrongLabel = new int[m];
        SplittableRandom labels = new SplittableRandom(inclusion.nextLong());
        for (int i = 0; i < m; i++) {
            wrongLabel[i] = (truth[i] + 1 + labels.nextInt(classes - 1)) % classes;
            wrong.putScalar(i, wrongLabel[i], 1);
        }
        LabeledData mislabelled = new LabeledData(canaries.features(), wrong, canaries.channels(), canaries.height(), canaries.width());
        int[] in = java.util.stream.IntStream.range(0, m).filter(i -> included[i]).toArray();
        ExampleSource withCanaries = in.length == 0 ? train : train.followedBy(mislabelled.rows(in)); // the last indices
        long scoringSeed = inclusion.nextLong();
        trainer.train(network, withCanaries, config);
        int r = augmentation == null ? 1 : SCORED_COPIES;
        PerExampleGradients engine = PerExampleGradients.of(network);
        double[] scores = new double[m];
        try {
            int block = Math.max(1, 1024 / r); // canaries per forward pass: at most 1,024 rows, whose activations are all kept
            for (int first = 0; first < m; first += block) {
                INDArray rows = mislabelled.features().get(NDArrayIndex.interval(first, Math.min(m, first + block)), NDArrayIndex.all());
                INDArray x = augmentation == null ? rows : augmentation.copies(rows, r, scoringSeed + first);
                INDArray probabilities = engine.output(engine.inputRank() > 0 ? mislabelled.features(x, engine.inputRank()) : x);
                for (int i = first; i < Math.min(m, first + block); i++) {
                    double p = 0;
                    for (int j = 0; j < r; j++) { // copy j of canary i is row (i − first)·r + j
                        p += probabilities.getDouble((long) (i - first) * r + j, wrongLabel[i]);
                    }
                    scores[i] = Math.log(Math.max(p / r, 1e-300));
                }
            }
        } finally {
            engine.releaseScratch();
        }
        return new Outcome(OneRunAudit.audit(scores, included, config.delta(), confidence), network, included, scores,
                "input canaries: " + m + " held-out examples with a random wrong label"
                        + (augmentation == null ? "" : ", each scored on " + r + " augmented copies"));
    }

    /**
     * m inclusion bits, each true with probability ½.
     *
     * @param m         the number of canaries, &gt;= 0
     * @param inclusion draws one boolean per canary, in order
     * @return a new array of m bits, true meaning the canary is included (S_i = +1)
     * @throws NullPointerException if {@code inclusion} is null
     */
    public static boolean[] inclusionBits(int m, RandomGenerator inclusion) {
        Objects.requireNonNull(inclusion, "inclusion");
        boolean[] included = new boolean[m];
        for (int i = 0; i < m; i++) {
            included[i] = inclusion.nextBoolean();
        }
        return included;
    }

    /**
     * Where m gradient canaries sit in a network's parameters and which are in the training set.
     *
     * @param coordinates each canary's coordinate in the flattened parameters (distinct, &gt;= 0), one per canary
     * @param included    whether each canary is in the training set, one per canary
     * @param description how the coordinates were chosen
     */
    public record GradientDesign(int[] coordinates, boolean[] included, String description) {
        /**
         * The included canaries, with this raw gradient norm, for the trainer.
         *
         * @param norm the L2 norm of each canary's raw gradient, finite and &gt; 0
         * @return the coordinates of the included canaries, in canary order, with this norm
         * @throws IllegalArgumentException if the norm is not finite and &gt; 0, or the coordinates repeat
         */
        public GradientCanaries canaries(double norm) {
            return new GradientCanaries(java.util.stream.IntStream.range(0, coordinates.length).filter(i -> included[i])
                    .map(i -> coordinates[i]).toArray(), norm);
        }

        /**
         * Each canary's score: how far its coordinate moved against its gradient, θ₀[j] − θ_T[j].
         *
         * @param before θ₀, the flattened parameters before training
         * @param after  θ_T, the flattened parameters after training
         * @return a new array with one score per canary, in parameter units
         */
        public double[] scores(INDArray before, INDArray after) {
            double[] scores = new double[coordinates.length];
            for (int i = 0; i < coordinates.length; i++) {
                scores[i] = before.getDouble(coordinates[i]) - after.getDouble(coordinates[i]);
            }
            return scores;
        }
    }

    /**
     * Places gradient canaries: on first-layer weights whose inputs are 0 in all of {@code train} (data gradient
     * exactly 0) when the first layer is dense and there are enough, else uniformly over the parameters.
     *
     * @param net      the network whose parameters hold the canaries
     * @param train    the training examples (read in chunks of 4096 when the first layer is dense)
     * @param included whether each canary is in the training set; its length is m
     * @param seed     draws the canaries' coordinates
     * @return m distinct coordinates, a copy of {@code included} and a description of the placement
     * @throws IllegalArgumentException if there are fewer parameters than canaries, or a dense first layer's input
     *                                  count differs from the training data's features
     */
    public static GradientDesign gradientDesign(Model net, ExampleSource train, boolean[] included, long seed) {
        return gradientDesign(net, train, included, seed, null);
    }

    /**
     * {@link #gradientDesign(Model, ExampleSource, boolean[], long)} for a run that trains on augmented copies: a
     * first-layer input is quiet only if it is 0 in every copy the augmentation can make of every training image.
     *
     * @param net          the network whose parameters hold the canaries
     * @param train        the training examples (read in chunks of 4096 when the first layer is dense)
     * @param included     whether each canary is in the training set; its length is m
     * @param seed         draws the canaries' coordinates
     * @param augmentation the run's augmentation, or null when it trains on the images as they are
     * @return m distinct coordinates, a copy of {@code included} and a description of the placement
     * @throws IllegalArgumentException if there are fewer parameters than canaries, a dense first layer's input count
     *                                  differs from the training data's features, or the augmentation's image shape
     *                                  does not match them
     */
    public static GradientDesign gradientDesign(Model net, ExampleSource train, boolean[] included, long seed,
                                                org.dpdl4j.datasets.ImageAugmentation augmentation) {
        int m = included.length;
        SplittableRandom random = new SplittableRandom(seed);
        List<Integer> quiet = new ArrayList<>();
        org.deeplearning4j.nn.api.Layer first = Networks.layers(net)[0];
        if (first.conf().getLayer() instanceof DenseLayer) {
            INDArray w = first.getParam("W"); // [nIn, nOut], a view into the flattened parameters
            long base = w.offset() - net.params().offset();
            boolean[] quietInput = quietInputs(train, augmentation);
            if (quietInput.length != w.size(0)) {
                throw new IllegalArgumentException("the first layer takes " + w.size(0) + " inputs, the training data has "
                        + quietInput.length + " features");
            }
            for (int i = 0; i < w.size(0); i++) {
                if (quietInput[i]) {
                    for (int h = 0; h < w.size(1); h++) {
                        quiet.add((int) (base + i * w.stride(0) + h * w.stride(1)));
                    }
                }
            }
        }
        int[] chosen = new int[m];
        if (quiet.size() >= m) {
            for (int i = 0; i < m; i++) { // partial Fisher-Yates
                int j = i + random.nextInt(quiet.size() - i);
                java.util.Collections.swap(quiet, i, j);
                chosen[i] = quiet.get(i);
            }
            return new GradientDesign(chosen, included.clone(), "gradient canaries on " + m + " of " + quiet.size()
                    + " first-layer weights whose inputs are 0 in all training data" + (augmentation == null ? "" : " and its augmented copies")
                    + " (data gradient exactly 0)");
        }
        long p = net.numParams();
        if (p < m) {
            throw new IllegalArgumentException("canaries m = " + m + " exceed the " + p + " parameters");
        }
        java.util.Set<Integer> set = new java.util.LinkedHashSet<>();
        while (set.size() < m) {
            set.add((int) random.nextLong(p));
        }
        int k = 0;
        for (int c : set) {
            chosen[k++] = c;
        }
        return new GradientDesign(chosen, included.clone(), "gradient canaries on " + m
                + " uniformly chosen parameters (the data's gradients move them too)");
    }

    /**
     * Which inputs (flattened NCHW, C order) are 0 in every training image and, with an augmentation, in every copy it
     * can make: a copy's pixel (y, x) comes from within maxShift of (y, x), or of (y, w − 1 − x) when mirrored, in the
     * same channel, or is the zero fill. Length: the features' width.
     */
    static boolean[] quietInputs(ExampleSource train, org.dpdl4j.datasets.ImageAugmentation augmentation) {
        double[] maxAbs = null;
        for (int from = 0; from < train.size(); from += 4096) { // read in chunks: the data may not fit in memory
            int[] idx = java.util.stream.IntStream.range(from, Math.min(train.size(), from + 4096)).toArray();
            double[] chunk = Transforms.abs(train.read(idx).features(2), true).max(0).toDoubleVector();
            if (maxAbs == null) {
                maxAbs = chunk;
            } else {
                for (int i = 0; i < chunk.length; i++) {
                    maxAbs[i] = Math.max(maxAbs[i], chunk[i]);
                }
            }
        }
        if (maxAbs == null) {
            maxAbs = new double[(int) java.util.Arrays.stream(train.exampleShape()).reduce(1, (a, b) -> a * b)];
        }
        boolean[] quiet = new boolean[maxAbs.length];
        if (augmentation == null) {
            for (int i = 0; i < quiet.length; i++) {
                quiet[i] = maxAbs[i] == 0;
            }
            return quiet;
        }
        int c = augmentation.channels(), h = augmentation.height(), w = augmentation.width(), s = augmentation.maxShift();
        if ((long) c * h * w != maxAbs.length) {
            throw new IllegalArgumentException("the augmentation's " + c + "x" + h + "x" + w + " images do not match the training "
                    + "data's " + maxAbs.length + " features");
        }
        for (int ch = 0; ch < c; ch++) {
            for (int y = 0; y < h; y++) {
                for (int x = 0; x < w; x++) {
                    boolean zero = true;
                    for (int yy = Math.max(0, y - s); yy <= Math.min(h - 1, y + s) && zero; yy++) {
                        for (int xx = Math.max(0, x - s); xx <= Math.min(w - 1, x + s) && zero; xx++) {
                            int base = (ch * h + yy) * w;
                            zero = maxAbs[base + xx] == 0 && (!augmentation.flips() || maxAbs[base + w - 1 - xx] == 0);
                        }
                    }
                    quiet[(ch * h + y) * w + x] = zero;
                }
            }
        }
        return quiet;
    }
}
