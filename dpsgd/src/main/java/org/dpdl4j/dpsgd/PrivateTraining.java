package org.dpdl4j.dpsgd;

import java.util.Objects;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.PackedShards;
import org.dpdl4j.release.InputSpec;
import org.dpdl4j.release.PrivateModel;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * Private training in one call, in the spirit of Opacus's {@code make_private_with_epsilon}: give a network, data, a
 * target (ε, δ), epochs and the expected batch size; {@link #train()} calibrates the smallest noise multiplier σ that
 * meets the target with {@link #DEFAULT_ACCOUNTANT} (the accountant {@code dpdl4j train} uses for one run), trains with
 * DP-SGD (Poisson sampling at q = B/n, per-example clipping to C, Gaussian noise σC) and returns the network with its
 * claim as a {@link PrivateModel}, ready for {@link PrivateModel#save}. δ is given once.
 *
 * <pre>{@code
 * PrivateModel m = PrivateTraining.of(network, mnist.train())
 *         .targetEpsilon(3).delta(1e-5).epochs(5).expectedBatchSize(256).train();
 * m.save(Path.of("out"));   // model.zip + privacy.json
 * }</pre>
 */
public final class PrivateTraining {
    /** The accountant that calibrates σ and states ε: PLD, the tighter one for a single DP-SGD run. */
    public static final String DEFAULT_ACCOUNTANT = "pld";

    private final Model network;
    private final ExampleSource data;
    private final DataSetIterator iterator;
    private double targetEpsilon = Double.NaN;
    private double delta = 1e-5;
    private double epochs = Double.NaN;
    private int expectedBatchSize = -1;
    private double clipNorm = 1.0;
    private String accountant = DEFAULT_ACCOUNTANT;
    private InputSpec input;
    private Long seed;
    private int workers = 1;
    private double emaDecay;
    private int physicalBatchSize = 512;
    private org.dpdl4j.datasets.ImageAugmentation augmentation;
    private int augmult = 1;
    private TrainingListener[] listeners = new TrainingListener[0];
    private boolean started;

    private PrivateTraining(Model network, ExampleSource data, DataSetIterator iterator) {
        this.network = Objects.requireNonNull(network, "network");
        this.data = data;
        this.iterator = iterator;
    }

    /** Training on data held in memory (features [n, c·h·w]); the input shape c×h×w is recorded, with pixel scale 255. */
    public static PrivateTraining of(Model network, LabeledData data) {
        PrivateTraining p = new PrivateTraining(network, Objects.requireNonNull(data, "data"), null);
        p.input = new InputSpec(data.channels(), data.height(), data.width(), 255);
        return p;
    }

    /**
     * Training on examples read by index, each step reading only its Poisson batch (see
     * {@link DpSgdTrainer#train(Model, ExampleSource, DpSgdConfig, TrainingListener...)}): data larger than memory, such as
     * {@link PackedShards}, whose image shape c×h×w is recorded with pixel scale 255; for another source set the input
     * with {@link #input(InputSpec)} for a server to accept raw pixels.
     */
    public static PrivateTraining of(Model network, ExampleSource data) {
        if (data instanceof LabeledData inMemory) {
            return of(network, inMemory);
        }
        PrivateTraining p = new PrivateTraining(network, Objects.requireNonNull(data, "data"), null);
        if (data instanceof PackedShards shards) {
            p.input = new InputSpec(shards.channels(), shards.height(), shards.width(), 255);
        }
        return p;
    }

    /**
     * Training on examples from an iterator, without holding them in memory: at {@link #train()} the iterator is read
     * once into a temporary file, from which each step reads its batch (see
     * {@link DpSgdTrainer#train(Model, DataSetIterator, DpSgdConfig, TrainingListener...)}).
     * The input shape is not known: set it with {@link #input(InputSpec)} for a server to accept raw pixels.
     */
    public static PrivateTraining of(Model network, DataSetIterator data) {
        return new PrivateTraining(network, null, Objects.requireNonNull(data, "data"));
    }

    /** Target ε &gt; 0, finite (required). */
    public PrivateTraining targetEpsilon(double epsilon) {
        this.targetEpsilon = epsilon;
        return this;
    }

    /** δ ∈ (0, 1) (default 1e-5; choose δ well below 1/n). */
    public PrivateTraining delta(double delta) {
        this.delta = delta;
        return this;
    }

    /** Epochs E &gt; 0 (required): T = ⌈E/q⌉ steps. */
    public PrivateTraining epochs(double epochs) {
        this.epochs = epochs;
        return this;
    }

    /** Expected batch size B in [1, n] (required): the sampling rate is q = B/n. */
    public PrivateTraining expectedBatchSize(int b) {
        this.expectedBatchSize = b;
        return this;
    }

    /** Clipping norm C &gt; 0 (default 1). */
    public PrivateTraining clipNorm(double c) {
        this.clipNorm = c;
        return this;
    }

    /** A registered accountant name ({@link Accountants#names()}; default {@value #DEFAULT_ACCOUNTANT}). */
    public PrivateTraining accountant(String name) {
        Accountants.byName(name); // fails now, naming the choices
        this.accountant = name;
        return this;
    }

    /** The input the model expects, recorded in the sidecar (null: unknown). */
    public PrivateTraining input(InputSpec input) {
        this.input = input;
        return this;
    }

    /** A fixed seed for the sampler and the noise (default: drawn from SecureRandom). Keep it secret. */
    public PrivateTraining seed(long seed) {
        this.seed = seed;
        return this;
    }

    /** Worker threads for in-memory data (default 1). */
    public PrivateTraining workers(int workers) {
        this.workers = workers;
        return this;
    }

    /** Exponential moving average of the parameters, β ∈ [0, 1) (default 0: off); no privacy cost. */
    public PrivateTraining emaDecay(double beta) {
        this.emaDecay = beta;
        return this;
    }

    /** Examples pushed through the network at once (default 512); does not change the result. */
    public PrivateTraining physicalBatchSize(int b) {
        this.physicalBatchSize = b;
        return this;
    }

    /**
     * Augmentation multiplicity (De et al. 2022, arXiv:2204.13650, Sec. 3.2; see {@link ClippedSums#augmented}): each
     * sampled example's gradient is the mean over k augmented copies, clipped to C as a whole; no privacy cost. In-memory
     * data only. Default k = 1: none.
     *
     * @param augmentation the copies' transformation (for MNIST-like data {@code ImageAugmentation.forDataset("mnist")})
     * @param k            copies per example, in [1, 64] (checked by {@link #train()})
     */
    public PrivateTraining augmult(org.dpdl4j.datasets.ImageAugmentation augmentation, int k) {
        this.augmentation = augmentation;
        this.augmult = k;
        return this;
    }

    /** Progress listeners (optional). */
    public PrivateTraining listeners(TrainingListener... listeners) {
        this.listeners = listeners.clone();
        return this;
    }

    /**
     * Calibrates σ, trains the network in place, and returns it with its claim. ε of the result is at most the target.
     * Call it once: the claim covers one run, and a network that a failed run (an exception) has begun to train carries
     * that run's privacy cost with no claim for it, so discard it.
     *
     * @throws IllegalArgumentException if a required setting is missing or out of range (the message names it), or no
     *                                  σ ≤ 10⁶ meets the target
     * @throws IllegalStateException    on a second call
     */
    public PrivateModel train() {
        if (started) {
            throw new IllegalStateException("train() was already called on this PrivateTraining: the network has been trained "
                    + "(its claim covers that run only); start from a fresh network");
        }
        if (!(targetEpsilon > 0) || Double.isInfinite(targetEpsilon)) {
            throw new IllegalArgumentException("targetEpsilon must be finite and > 0, got " + targetEpsilon);
        }
        if (!(delta > 0 && delta < 1)) {
            throw new IllegalArgumentException("delta must be in (0, 1), got " + delta);
        }
        if (Double.isNaN(epochs)) {
            throw new IllegalArgumentException("epochs must be set (> 0)");
        }
        DpSgdTrainer trainer = new DpSgdTrainer(Accountants.byName(accountant));
        if (augmult != 1) {
            if (!(data instanceof LabeledData)) {
                throw new IllegalArgumentException("augmult k = " + augmult + " needs in-memory LabeledData, not "
                        + (data == null ? "a DataSetIterator" : data));
            }
            trainer = trainer.withClippedSums(ClippedSums.augmented(augmentation, augmult)); // checks k and the augmentation
        }
        ExampleSource source = data != null ? data : DpSgdTrainer.packOnce(iterator); // the iterator read once
        try {
            return train(trainer, source);
        } finally {
            if (data == null) {
                source.close();
            }
        }
    }

    private PrivateModel train(DpSgdTrainer trainer, ExampleSource data) {
        int n = data.size();
        if (expectedBatchSize < 1 || expectedBatchSize > n) {
            throw new IllegalArgumentException("expectedBatchSize must be in [1, n = " + n + "], got " + expectedBatchSize);
        }
        double q = (double) expectedBatchSize / n;
        long steps = DpSgdConfig.stepsForEpochs(epochs, q);
        double sigma = NoiseCalibration.noiseMultiplier(q, steps, targetEpsilon, delta, Accountants.byName(accountant), 1e-4);
        DpSgdConfig.Builder b = DpSgdConfig.builder().samplingRate(q).noiseMultiplier(sigma).clipNorm(clipNorm).steps(steps)
                .delta(delta).workers(workers).emaDecay(emaDecay).physicalBatchSize(physicalBatchSize);
        if (seed != null) {
            b.seed(seed);
        }
        DpSgdConfig config = b.build();
        started = true; // from here on the network changes
        TrainingResult result = data instanceof LabeledData inMemory ? trainer.train(network, inMemory, config, listeners)
                : trainer.train(network, data, config, listeners);
        java.util.Map<String, Object> configuration = config.describe(n, result.stepsTaken());
        configuration.put("augmult", augmult);
        return PrivateModel.of(network, "training", result.event(), accountant, delta, input, configuration);
    }
}
