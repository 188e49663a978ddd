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

    private Model network; // null until a resumed run's checkpoint is read
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
    private java.nio.file.Path output;
    private org.dpdl4j.release.PrivacyLedger ledger;
    private long checkpointEvery;
    private java.nio.file.Path resumeFrom;

    private PrivateTraining(Model network, ExampleSource data, DataSetIterator iterator) {
        this.network = network;
        this.data = data;
        this.iterator = iterator;
    }

    /** Training on data held in memory (features [n, c·h·w]); the input shape c×h×w is recorded, with pixel scale 255. */
    public static PrivateTraining of(Model network, LabeledData data) {
        PrivateTraining p = new PrivateTraining(Objects.requireNonNull(network, "network"), Objects.requireNonNull(data, "data"), null);
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
        PrivateTraining p = new PrivateTraining(Objects.requireNonNull(network, "network"), Objects.requireNonNull(data, "data"), null);
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
        return new PrivateTraining(Objects.requireNonNull(network, "network"), null, Objects.requireNonNull(data, "data"));
    }

    /**
     * Continues a run that was started with {@link #output} and stopped (killed, or failed) after its start: the settings,
     * the network and the moving average come from its last checkpoint, which is checked on its own and against the
     * ledger's charge; the run goes on from there under that charge with fresh randomness, and {@link #train()} releases
     * it into {@code dir}. Only {@link #workers}, {@link #listeners} and {@link #checkpointEvery} may be set; the data
     * must be the data the run was planned on (its size and digest are checked).
     *
     * <pre>{@code
     * PrivateModel m = PrivateTraining.resume(Path.of("runs/a"), data).workers(2).train();
     * }</pre>
     *
     * @param dir  the run's output directory
     * @param data the training data, as at the start
     * @return a training that continues the run when {@link #train()} is called
     */
    public static PrivateTraining resume(java.nio.file.Path dir, ExampleSource data) {
        PrivateTraining p = new PrivateTraining(null, Objects.requireNonNull(data, "data"), null);
        p.resumeFrom = Objects.requireNonNull(dir, "dir");
        return p;
    }

    /**
     * Runs the training through the lifecycle of {@link org.dpdl4j.release.PrivateRun} in {@code dir}: the plan and the
     * starting model are written, the ledger (if any) charged once, checkpoints taken every {@link #checkpointEvery}
     * steps, and {@link #train()} releases {@code model.zip} and {@code privacy.json} into {@code dir} (bound to the
     * charge); a run stopped on the way is continued with {@link #resume}. Without it nothing is written.
     *
     * @param dir a directory without a release in it (created if missing)
     */
    public PrivateTraining output(java.nio.file.Path dir) {
        this.output = Objects.requireNonNull(dir, "dir");
        return this;
    }

    /**
     * The privacy ledger to charge the run to, once, before it trains (needs {@link #output}): its data set name is
     * recorded in the run's plan, and its budget refuses a run that would exceed it.
     */
    public PrivateTraining ledger(org.dpdl4j.release.PrivacyLedger ledger) {
        this.ledger = Objects.requireNonNull(ledger, "ledger");
        return this;
    }

    /** Steps between checkpoints, ≥ 1 (needs {@link #output}; default: none but the start's). */
    public PrivateTraining checkpointEvery(long steps) {
        if (steps < 1) {
            throw new IllegalArgumentException("checkpointEvery must be >= 1 step, got " + steps);
        }
        this.checkpointEvery = steps;
        return this;
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
        if (resumeFrom != null) {
            return resumeRun();
        }
        if ((ledger != null || checkpointEvery > 0) && output == null) {
            throw new IllegalArgumentException("a ledger or checkpoints need output(dir): the run's plan and checkpoints live there");
        }
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
        if (output != null) {
            return trainAsRun(trainer, data, config);
        }
        started = true; // from here on the network changes
        TrainingResult result = data instanceof LabeledData inMemory ? trainer.train(network, inMemory, config, listeners)
                : trainer.train(network, data, config, listeners);
        java.util.Map<String, Object> configuration = config.describe(n, result.stepsTaken());
        configuration.put("augmult", augmult);
        return PrivateModel.of(network, "training", result.event(), accountant, delta, input, configuration);
    }

    /** The run's plan in the checkpoint state's fields ({@link org.dpdl4j.release.CheckpointState#PLAN}). */
    private java.util.Map<String, Object> plan(ExampleSource data, DpSgdConfig config) {
        java.util.Map<String, Object> s = new java.util.LinkedHashMap<>();
        s.put("format", org.dpdl4j.release.CheckpointState.FORMAT);
        s.put("run", java.util.UUID.randomUUID().toString());
        s.put("dataset", ledger != null ? ledger.dataset() : "data");
        s.put("data_sha256", org.dpdl4j.datasets.Sha256.of(data));
        s.put("image_size", input == null ? "unspecified" : input.height() + "x" + input.width() + "x" + input.channels()
                + (input.scale() != 255 ? "/" + input.scale() : ""));
        s.put("n", data.size());
        s.put("model", network.getClass().getSimpleName());
        s.put("optimizer", "the network's own");
        s.put("activation", "the network's own");
        s.put("batch_size", expectedBatchSize);
        s.put("epochs", epochs);
        s.put("sampling_rate", config.samplingRate());
        s.put("noise_multiplier", config.noiseMultiplier());
        s.put("clip_norm", config.clipNorm());
        s.put("steps", config.steps());
        s.put("physical_batch_size", config.physicalBatchSize());
        s.put("ema_decay", config.emaDecay());
        s.put("delta", delta);
        s.put("secure_noise", seed == null);
        s.put("non_private", false);
        s.put("weights_seed", null);
        s.put("ledger", ledger == null ? null : ledger.file().toAbsolutePath().toString());
        s.put("accountant", accountant);
        s.put("data_normalisation", null);
        s.put("augmult", augmult);
        return s;
    }

    /** Trains through the run's lifecycle in {@link #output} and releases there. */
    private PrivateModel trainAsRun(DpSgdTrainer trainer, ExampleSource data, DpSgdConfig config) {
        if (java.nio.file.Files.exists(output.resolve(PrivateModel.SIDECAR_FILE))
                || java.nio.file.Files.exists(output.resolve(PrivateModel.MODEL_FILE))) {
            throw new IllegalArgumentException("output " + output + " holds a release already: choose a new directory");
        }
        java.util.Map<String, Object> plan = plan(data, config);
        try {
            java.nio.file.Files.createDirectories(output);
            org.dpdl4j.release.PrivateRun run = org.dpdl4j.release.PrivateRun.start(output, plan, network, config,
                    DpSgdTrainer.event(config.samplingRate(), config.noiseMultiplier(), config.steps()), ledger,
                    "train " + plan.get("model") + " on " + plan.get("dataset"), checkpointEvery);
            started = true; // from here on the network changes
            return trainAndRelease(run, trainer, data, network, config, 0, null);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("could not write the run in " + output, e);
        }
    }

    /** Trains from step {@code from} with the run's checkpoints, then releases through the run. */
    private PrivateModel trainAndRelease(org.dpdl4j.release.PrivateRun run, DpSgdTrainer trainer, ExampleSource data, Model net,
                                         DpSgdConfig config, long from, org.nd4j.linalg.api.ndarray.INDArray ema)
            throws java.io.IOException {
        try (run) {
            long every = run.checkpointEvery();
            TrainingResult result = from > 0 ? trainer.resume(new Checkpoint(net, config, from, ema), data, every, run.checkpoints(),
                    listeners) : every > 0 ? trainer.train(net, data, config, every, run.checkpoints(), listeners)
                    : trainer.train(net, data, config, listeners);
            java.util.Map<String, Object> configuration = config.describe(data.size(), result.stepsTaken());
            configuration.put("augmult", ((Number) run.state().get("augmult")).intValue());
            configuration.put("resumed_from_step", from > 0 ? from : null);
            configuration.put("ledger_charge", run.charge());
            PrivateModel release = PrivateModel.of(net, "training", result.event(), (String) run.state().get("accountant"),
                    config.delta(), inputOf((String) run.state().get("image_size")), configuration);
            run.release(release, java.util.List.of(), result.event());
            return release;
        }
    }

    /** Continues a stopped run ({@link #resume}). */
    private PrivateModel resumeRun() {
        if (started) {
            throw new IllegalStateException("train() was already called on this PrivateTraining");
        }
        started = true;
        String what = "resume " + resumeFrom;
        java.util.List<String> changed = new java.util.ArrayList<>(); // the plan's settings come from the checkpoint
        java.util.Map<String, Boolean> set = new java.util.LinkedHashMap<>();
        set.put("targetEpsilon", !Double.isNaN(targetEpsilon));
        set.put("delta", delta != 1e-5);
        set.put("epochs", !Double.isNaN(epochs));
        set.put("expectedBatchSize", expectedBatchSize != -1);
        set.put("clipNorm", clipNorm != 1.0);
        set.put("accountant", !accountant.equals(DEFAULT_ACCOUNTANT));
        set.put("input", input != null);
        set.put("seed", seed != null);
        set.put("emaDecay", emaDecay != 0);
        set.put("physicalBatchSize", physicalBatchSize != 512);
        set.put("augmult", augmult != 1);
        set.put("output", output != null);
        set.put("ledger", ledger != null);
        set.forEach((name, isSet) -> {
            if (isSet) {
                changed.add(name);
            }
        });
        if (!changed.isEmpty()) {
            throw new IllegalArgumentException(what + ": " + String.join(", ", changed) + " cannot change on resume (the run "
                    + "continues as it was planned and charged); only workers, listeners and checkpointEvery may be set");
        }
        try {
            org.dpdl4j.release.PrivateRun.Resumption r = org.dpdl4j.release.PrivateRun.resume(resumeFrom, what);
            if (r.releasedNow()) {
                return PrivateModel.load(resumeFrom, org.dpdl4j.release.LoadPolicy.privateOnly());
            }
            org.dpdl4j.release.PrivateRun run = r.run();
            try {
                java.util.Map<String, Object> state = run.state();
                run.checkData(what, (String) state.get("dataset"), data.size(), org.dpdl4j.datasets.Sha256.of(data));
                if (checkpointEvery > 0) {
                    run = run.checkpointEvery(checkpointEvery);
                }
                DpSgdConfig config = DpSgdConfig.builder().samplingRate(((Number) state.get("sampling_rate")).doubleValue())
                        .noiseMultiplier(((Number) state.get("noise_multiplier")).doubleValue())
                        .clipNorm(((Number) state.get("clip_norm")).doubleValue()).steps(((Number) state.get("steps")).longValue())
                        .physicalBatchSize(((Number) state.get("physical_batch_size")).intValue())
                        .emaDecay(((Number) state.get("ema_decay")).doubleValue()).delta(((Number) state.get("delta")).doubleValue())
                        .workers(workers).build(); // fresh randomness: the seed is never kept
                network = run.network();
                int k = ((Number) state.get("augmult")).intValue();
                DpSgdTrainer trainer = new DpSgdTrainer(Accountants.byName((String) state.get("accountant")));
                if (k != 1) {
                    throw new IllegalArgumentException(what + ": the run used augmult k = " + k + ", which a resume from Java "
                            + "cannot rebuild (its augmentation is not in the plan)");
                }
                return trainAndRelease(run, trainer, data, network, config, run.stepsDone(), run.ema());
            } catch (RuntimeException e) {
                run.close();
                throw e;
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("could not continue the run in " + resumeFrom, e);
        }
    }

    /** The input of a plan's image_size ("HxWxC", "HxWxC/scale" or "unspecified"). */
    private static InputSpec inputOf(String imageSize) {
        if (imageSize == null || imageSize.equals("unspecified")) {
            return null;
        }
        String[] scaled = imageSize.split("/");
        String[] hwc = scaled[0].split("x");
        return new InputSpec(Integer.parseInt(hwc[2]), Integer.parseInt(hwc[0]), Integer.parseInt(hwc[1]),
                scaled.length > 1 ? Double.parseDouble(scaled[1]) : 255);
    }
}
