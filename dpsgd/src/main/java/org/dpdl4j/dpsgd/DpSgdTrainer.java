package org.dpdl4j.dpsgd;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.gradient.Gradient;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PoissonSampledEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.SelfComposedEvent;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.PackedExamples;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * DP-SGD (Abadi et al., Deep Learning with Differential Privacy, CCS 2016, arXiv:1607.00133) on a DL4J
 * network: each step
 * draws a Poisson batch with rate q, clips every example's full-model gradient to L2 norm C
 * ({@link PerExampleGradients}, exact), adds one draw of N(0, σ²C² I) to the clipped sum, divides
 * by the <em>expected</em> batch size q·n (never the realised one, which is private), and applies the
 * network's own DL4J updater (SGD, momentum, Adam, with its learning rate and regularisation)
 * exactly as {@code fit()} would. The clipped sums are computed by this JVM's workers or, with
 * {@link #withClippedSums}, elsewhere (a Spark cluster); the noise is always drawn here. An empty batch still adds noise and still counts. With
 * {@link DpSgdConfig#emaDecay()} &gt; 0 the network ends with the moving average of its iterates instead of the
 * last one (post-processing: DP-SGD's event covers every iterate).
 *
 * <p>The run's privacy event is T self-composed Poisson-sampled Gaussians (q, σ); the accountant
 * converts it. With an ε budget the trainer stops <em>before</em> the first step whose cumulative ε
 * would exceed it. The trainer holds no global state; it starts threads only when asked for
 * {@link DpSgdConfig#workers()} &gt; 1, and stops them before returning (see {@link ClippedSums#local()} for
 * their native threads).
 *
 * <p>A run can hand {@link Checkpoint}s to a sink every N steps and be resumed from one
 * ({@link #resume}). A resumed run draws <em>fresh</em> sampling and noise randomness: replaying the
 * stream from the start would add the same noise vectors a second time to other gradients, and the
 * difference of two such updates cancels the noise. Its event is the planned T steps: the steps before the
 * checkpoint were made (and count), those after it until a crash were discarded unsaved and released nothing.
 */
public final class DpSgdTrainer {
    private final PrivacyAccountant accountant;
    private final GradientCanaries canaries;
    private final ClippedSums sums;

    /** A trainer whose budget and progress ε use the standard RDP accountant. */
    public DpSgdTrainer() {
        this(Accountants.standard());
    }

    /**
     * A trainer whose budget and progress ε use the given accountant.
     *
     * @param accountant used for the ε budget and the ε reported to listeners; not null
     * @throws NullPointerException if {@code accountant} is null
     */
    public DpSgdTrainer(PrivacyAccountant accountant) {
        this(accountant, null, ClippedSums.local());
    }

    private DpSgdTrainer(PrivacyAccountant accountant, GradientCanaries canaries, ClippedSums sums) {
        this.accountant = java.util.Objects.requireNonNull(accountant, "accountant");
        this.canaries = canaries;
        this.sums = java.util.Objects.requireNonNull(sums, "sums");
    }

    /**
     * The same trainer with white-box audit canaries in the training set (see {@link GradientCanaries}); the
     * canaries' coordinates must lie within the network's parameters.
     *
     * @param c the canaries, not null; a run throws IllegalArgumentException if a coordinate is &gt;= the network's
     *          number of parameters
     * @return a new trainer with the same accountant and sums, and these canaries
     * @throws NullPointerException if {@code c} is null
     */
    public DpSgdTrainer withGradientCanaries(GradientCanaries c) {
        return new DpSgdTrainer(accountant, java.util.Objects.requireNonNull(c, "canaries"), sums);
    }

    /** Whether the caller made {@link DpCompatibility#check(Model, ExampleSource)} already (before a charge). */
    private boolean networkChecked;

    /** This trainer, told that its caller checked the network before anything was charged: a run does not check again. */
    DpSgdTrainer networkChecked() {
        networkChecked = true;
        return this;
    }

    /**
     * The same trainer with each step's clipped sum computed by {@code where} (for example on a Spark cluster) instead
     * of this JVM's workers. The batches, the noise (drawn here), the update and the event are those of a local run with
     * the same seed; only the summation order of the clipped gradients may differ.
     *
     * @param where where the clipped sums are computed, not null
     * @return a new trainer with the same accountant and canaries, and these sums
     * @throws NullPointerException if {@code where} is null
     */
    public DpSgdTrainer withClippedSums(ClippedSums where) {
        return new DpSgdTrainer(accountant, canaries, java.util.Objects.requireNonNull(where, "where"));
    }

    /**
     * The privacy event of a DP-SGD run with the given settings and step count: T self-composed Poisson-sampled
     * Gaussians (q, σ).
     *
     * @param samplingRate    q, in [0, 1]
     * @param noiseMultiplier σ, finite and ≥ 0
     * @param steps           T, in steps, ≥ 0
     * @return the run's event
     * @throws IllegalArgumentException if a value is out of range
     */
    public static PrivacyEvent event(double samplingRate, double noiseMultiplier, long steps) {
        return NoiseCalibration.dpSgd(samplingRate, noiseMultiplier, steps); // built in one place
    }

    /**
     * Trains the network in place.
     *
     * @param network   an initialised {@code MultiLayerNetwork} or {@code ComputationGraph} passing the DP-compatibility
     *                  check, whose updater has a finite positive learning rate
     * @param train     training data; its features are cast to the network's data type
     * @param config    the run's privacy settings
     * @param listeners progress listeners (may be empty), called after every step on the calling thread
     * @return the result with the run's privacy event
     * @throws IllegalArgumentException if the network or data are unusable (the message says why), the training set is
     *                                  empty, or a canary coordinate is outside the network's parameters
     */
    public TrainingResult train(Model network, LabeledData train, DpSgdConfig config,
                                TrainingListener... listeners) {
        return run(network, train, config, 0, null, 0, null, listeners);
    }

    /**
     * Trains the network in place on examples read by index: each step reads only the rows of its Poisson batch
     * ({@link ExampleSource#read}), so data larger than memory train (e.g. {@link org.dpdl4j.datasets.PackedShards}). The
     * sampler and its batches are those of in-memory data, so the same seed trains bit-identically from a
     * {@link LabeledData} and from a source holding the same examples. The sums run where this trainer's run them
     * ({@link ClippedSums#open(Model, ExampleSource, DpSgdConfig, PoissonBatchSampler)}): this JVM's workers, or a Spark
     * cluster's executors reading packed shards from a shared path.
     *
     * @param network   an initialised {@code MultiLayerNetwork} or {@code ComputationGraph} passing the DP-compatibility
     *                  check, whose updater has a finite positive learning rate; trained in place
     * @param train     the training examples (a {@link LabeledData} takes {@link #train(Model, LabeledData, DpSgdConfig,
     *                  TrainingListener...)})
     * @param config    the run's privacy settings
     * @param listeners progress listeners (may be empty), called after every step on the calling thread
     * @return the result with the run's privacy event
     * @throws IllegalArgumentException if the network or data are unusable, or this trainer's sums cannot read
     *                                  {@code train} by index (augmentation multiplicity; a cluster, but for packed shards)
     */
    public TrainingResult train(Model network, ExampleSource train, DpSgdConfig config, TrainingListener... listeners) {
        if (train instanceof LabeledData inMemory) {
            return train(network, inMemory, config, listeners);
        }
        return run(network, train, null, reading(train), config, 0, null, 0, null, listeners);
    }

    /**
     * {@link #train(Model, ExampleSource, DpSgdConfig, TrainingListener...)} with a {@link Checkpoint} for {@code sink}
     * every {@code checkpointEvery} steps (not after the last).
     *
     * @param network   an initialised {@code MultiLayerNetwork} or {@code ComputationGraph} passing the DP-compatibility
     *                  check, whose updater has a finite positive learning rate; trained in place
     * @param train     the training examples
     * @param config    the run's privacy settings
     * @param checkpointEvery steps between checkpoints, &gt;= 1
     * @param sink      receives the checkpoints, not null
     * @param listeners progress listeners (may be empty), called after every step on the calling thread
     * @return the result with the run's privacy event
     * @throws IllegalArgumentException if checkpointEvery &lt; 1, or as the call without checkpoints
     * @throws NullPointerException     if {@code sink} is null
     */
    public TrainingResult train(Model network, ExampleSource train, DpSgdConfig config, long checkpointEvery,
                                Checkpoint.Sink sink, TrainingListener... listeners) {
        if (train instanceof LabeledData inMemory) {
            return train(network, inMemory, config, checkpointEvery, sink, listeners);
        }
        if (checkpointEvery < 1) {
            throw new IllegalArgumentException("checkpointEvery must be >= 1 step, got " + checkpointEvery);
        }
        return run(network, train, null, reading(train), config, 0, null, checkpointEvery, Objects.requireNonNull(sink, "sink"),
                listeners);
    }

    /**
     * {@link #resume(Checkpoint, LabeledData, long, Checkpoint.Sink, TrainingListener...)} on examples read by index.
     *
     * @param from      the checkpoint to continue from; its network is trained in place
     * @param train     the same training examples as the checkpointed run's
     * @param checkpointEvery steps between further checkpoints, &gt;= 0 (0 for no further checkpoints)
     * @param sink      receives the further checkpoints; may be null when {@code checkpointEvery} is 0
     * @param listeners progress listeners (may be empty), called after every step on the calling thread
     * @return the result with the whole run's privacy event (T steps)
     * @throws IllegalArgumentException as that call, or as {@link #train(Model, ExampleSource, DpSgdConfig, TrainingListener...)}
     */
    public TrainingResult resume(Checkpoint from, ExampleSource train, long checkpointEvery, Checkpoint.Sink sink,
                                 TrainingListener... listeners) {
        if (train instanceof LabeledData inMemory) {
            return resume(from, inMemory, checkpointEvery, sink, listeners);
        }
        if (checkpointEvery < 0 || checkpointEvery > 0 && sink == null) {
            throw new IllegalArgumentException("checkpointEvery must be >= 0 (and needs a sink when > 0), got " + checkpointEvery);
        }
        return run(from.network(), train, null, reading(train), from.config(), from.stepsDone(), from.ema(), checkpointEvery,
                sink, listeners);
    }

    /** This trainer's sums, each step reading its batch from {@code train} ({@link ClippedSums#open(Model, ExampleSource,
     * DpSgdConfig, PoissonBatchSampler)}). */
    private ClippedSums reading(ExampleSource train) {
        ClippedSums where = sums;
        return new ClippedSums() {
            @Override
            public Session open(Model net, LabeledData ignored, DpSgdConfig cfg, PoissonBatchSampler sampler) {
                return where.open(net, train, cfg, sampler);
            }
        };
    }

    /**
     * {@link #train} that hands a {@link Checkpoint} to {@code sink} after every {@code checkpointEvery} steps (not
     * after the last).
     *
     * @param network   an initialised {@code MultiLayerNetwork} or {@code ComputationGraph} passing the DP-compatibility
     *                  check, whose updater has a finite positive learning rate; trained in place
     * @param train     training data; its features are cast to the network's data type
     * @param config    the run's privacy settings
     * @param checkpointEvery steps between checkpoints, &gt;= 1
     * @param sink      receives the checkpoints, not null
     * @param listeners progress listeners (may be empty), called after every step on the calling thread
     * @return the result with the run's privacy event
     * @throws IllegalArgumentException if checkpointEvery &lt; 1, or as {@link #train(Model, LabeledData, DpSgdConfig,
     *                                  TrainingListener...)}
     * @throws NullPointerException     if {@code sink} is null
     */
    public TrainingResult train(Model network, LabeledData train, DpSgdConfig config, long checkpointEvery,
                                Checkpoint.Sink sink, TrainingListener... listeners) {
        if (checkpointEvery < 1) {
            throw new IllegalArgumentException("checkpointEvery must be >= 1 step, got " + checkpointEvery);
        }
        return run(network, train, config, 0, null, checkpointEvery, Objects.requireNonNull(sink, "sink"), listeners);
    }

    /**
     * Continues a checkpointed run to its planned T on the same training data, with fresh randomness (see the
     * class comment; with a fixed seed the streams are derived from the seed and the step, never the first ones).
     * The result's event is the whole run's: T steps.
     *
     * @param from      the checkpoint to continue from; its network is trained in place
     * @param train     the same training data as the checkpointed run's
     * @param checkpointEvery steps between further checkpoints, &gt;= 0 (0 for no further checkpoints)
     * @param sink      receives the further checkpoints; may be null when {@code checkpointEvery} is 0
     * @param listeners progress listeners (may be empty), called after every step on the calling thread
     * @return the result with the whole run's privacy event (T steps)
     * @throws IllegalArgumentException if checkpointEvery &lt; 0, or &gt; 0 without a sink, or if the data or network
     *                                  do not fit the checkpoint
     */
    public TrainingResult resume(Checkpoint from, LabeledData train, long checkpointEvery, Checkpoint.Sink sink,
                                 TrainingListener... listeners) {
        if (checkpointEvery < 0 || checkpointEvery > 0 && sink == null) {
            throw new IllegalArgumentException("checkpointEvery must be >= 0 (and needs a sink when > 0), got " + checkpointEvery);
        }
        return run(from.network(), train, from.config(), from.stepsDone(), from.ema(), checkpointEvery, sink, listeners);
    }

    private TrainingResult run(Model network, LabeledData train, DpSgdConfig config, long firstStep, INDArray emaSoFar,
                               long checkpointEvery, Checkpoint.Sink sink, TrainingListener... listeners) {
        return run(network, train, train, sums, config, firstStep, emaSoFar, checkpointEvery, sink, listeners);
    }

    /**
     * Trains the network in place on examples read from an iterator instead of memory: the iterator is read once (from its
     * start when it can be reset) into a temporary file of fixed-size records ({@link PackedExamples}), each step reads
     * only the rows of its Poisson batch from there, and the file is deleted when the run ends. A line on standard error
     * says where the file is and how large. The sums run on this JVM's workers, as for data in memory, and the same seed
     * trains as from a {@link LabeledData} of the same examples.
     *
     * @param network   an initialised {@code MultiLayerNetwork} or {@code ComputationGraph} passing the DP-compatibility
     *                  check, whose updater has a finite positive learning rate; trained in place
     * @param data      DataSets of features [k, …] (rank 2 to 4 with k: flattened per example in C order, as
     *                  {@code InputType.convolutionalFlat} expects, or of the network's input rank), labels [k, …] and
     *                  optional masks [k, T]
     * @param config    the run's privacy settings
     * @param listeners progress listeners (may be empty), called after every step on the calling thread
     * @return the result with the run's privacy event
     * @throws IllegalArgumentException if the iterator is empty or its DataSets differ in per-example shape or masks, or as
     *                                  {@link #train(Model, ExampleSource, DpSgdConfig, TrainingListener...)}
     * @throws java.io.UncheckedIOException if the temporary file cannot be written or read
     */
    public TrainingResult train(Model network, org.nd4j.linalg.dataset.api.iterator.DataSetIterator data,
                                DpSgdConfig config, TrainingListener... listeners) {
        try (PackedExamples packed = packOnce(data, java.util.List.of())) {
            return train(network, packed, config, listeners);
        }
    }

    /**
     * Reads an iterator once into a temporary file of records, and says so on standard error; refused, naming the
     * iterator, when it replays or resamples examples (by its class, before anything is read, or by identical records
     * after: an example counted twice is a group of two, not one person), or applies a pre-processor that is not a fixed
     * function of each example (a normaliser fitted on data) unless the caller declared it public.
     *
     * @throws IllegalArgumentException as {@link org.dpdl4j.datasets.IteratorChecks}, or when records repeat
     */
    static PackedExamples packOnce(org.nd4j.linalg.dataset.api.iterator.DataSetIterator data,
                                   java.util.Collection<org.nd4j.linalg.dataset.api.DataSetPreProcessor> publicPreProcessors) {
        org.dpdl4j.datasets.IteratorChecks.refuseReplaying(data);
        java.util.List<String> preProcessors = org.dpdl4j.datasets.IteratorChecks.undeclaredPreProcessors(data, publicPreProcessors);
        if (!preProcessors.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", preProcessors));
        }
        PackedExamples packed = PackedExamples.packToTemporaryFile(data);
        PackedExamples.Duplicates d = packed.duplicates();
        if (d.repeated() > 0) {
            packed.close();
            throw new IllegalArgumentException("the DataSetIterator (" + data.getClass().getName() + ") yielded " + packed.size()
                    + " examples of which " + d.repeated() + " repeat an earlier one, byte for byte (features, labels and masks; "
                    + "example " + d.firstCopy() + " equals example " + d.firstOriginal() + ", and one example comes " + d.largestGroup()
                    + " times): DP-SGD counts every example it reads as one person, so its guarantee would hold for groups of "
                    + d.largestGroup() + ", not for one person. Pass each example once (the epochs setting makes the passes) and "
                    + "remove the copies from the data (a copy is the same person's example)");
        }
        System.err.printf("dpdl4j: read the DataSetIterator once into %s (%d examples, %.1f MB); each step reads its batch "
                + "from there; the file is deleted when the run ends%n", packed.file(), packed.size(), packed.bytes() / 1e6);
        return packed;
    }

    private TrainingResult run(Model network, ExampleSource examples, LabeledData train, ClippedSums sums, DpSgdConfig config,
                               long firstStep, INDArray emaSoFar, long checkpointEvery, Checkpoint.Sink sink,
                               TrainingListener... listeners) {
        Networks.require(network);
        Networks.requirePositiveLearningRate(network);
        int n = examples.size();
        if (n == 0) {
            throw new IllegalArgumentException("the training set is empty");
        }
        if (!networkChecked) { // PrivateTraining checked it before the charge (and a resume before the first charge)
            DpCompatibility.check(network, examples); // every layer it cannot vouch for, checked not to mix examples
        }
        double q = config.samplingRate();
        double sigma = config.noiseMultiplier();
        double c = config.clipNorm();

        // one-way derivations: the sampling seed travels to wherever the sums are computed (a Spark cluster), and must not
        // give away the noise seed, which never leaves this JVM; a resumed run gets streams the first part never used
        long samplerSeed = derivedSeed("sampling", config.seed(), firstStep);
        long noiseSeed = derivedSeed("noise", config.seed(), firstStep);
        if (config.secureRandom()) {
            SecureRandom secure = new SecureRandom();
            samplerSeed = secure.nextLong();
            noiseSeed = secure.nextLong();
        }
        PoissonBatchSampler sampler = new PoissonBatchSampler(n, q, samplerSeed);
        int[] canaryCoordinates = canaries == null ? new int[0] : canaries.coordinates();
        for (int j : canaryCoordinates) {
            if (j >= network.numParams()) {
                throw new IllegalArgumentException("canary coordinate " + j + " is outside the " + network.numParams() + " parameters");
            }
        }
        SplittableRandom canarySampler = new SplittableRandom(samplerSeed ^ 0x632BE59BD9B4E019L);
        double canaryContribution = canaries == null ? 0 : Math.min(canaries.norm(), config.clipNorm()); // clipped like any example
        long members = (long) n + canaryCoordinates.length; // the canaries are members of the training set
        PoissonSampledEvent perStep = new PoissonSampledEvent(new GaussianEvent(sigma), q);
        long steps = stepsWithinBudget(accountant, perStep, config);
        ProgressEpsilon progressEpsilon = new ProgressEpsilon(accountant, perStep, steps, config.delta());

        INDArray flat = Networks.flattenedGradients(network);
        Gradient gradient = Networks.gradientViews(network, flat);
        List<TrainingListener> ls = Arrays.asList(listeners);
        INDArray params = network.params();
        INDArray ema = config.emaDecay() == 0 ? null
                : (emaSoFar != null ? emaSoFar : params).reshape(params.shape()).castTo(params.dataType()).dup();

        long start = System.nanoTime();
        try (ClippedSums.Session session = sums.open(network, train, config, sampler);
             GaussianNoise noise = new GaussianNoise(noiseSeed)) {
            for (long t = firstStep + 1; t <= steps; t++) {
                ClippedSums.Sum sum = session.step(t, flat); // throws before anything of step t is applied
                for (int j : canaryCoordinates) { // each canary is sampled like an example, independently with rate q
                    if (canarySampler.nextDouble() < q) {
                        flat.putScalar(j, flat.getDouble(j) + canaryContribution);
                    }
                }
                if (sigma > 0) { // sigma = 0 only in the non-private mode (where C may be infinite)
                    noise.addTo(flat, sigma * c);
                }
                flat.divi(q * members);
                Networks.applyUpdate(network, gradient, flat, (int) Math.floor((t - 1) * q));
                if (ema != null) { // θ̄ = β_t·θ̄ + (1 − β_t)·θ
                    double beta = config.emaDecayAt(t);
                    ema.muli(beta).addi(params.mul(1 - beta));
                }
                Networks.notifyListeners(network, sum.batchSize() == 0 ? Double.NaN : sum.lossSum() / sum.batchSize(),
                        (int) Math.floor((t - 1) * q), (int) Math.floor(t * q));
                if (!ls.isEmpty()) {
                    double secs = (System.nanoTime() - start) / 1e9;
                    long step = t;
                    StepInfo info = new StepInfo(t, config.steps(), t * q, sum.batchSize(),
                            sum.batchSize() == 0 ? Double.NaN : sum.lossSum() / sum.batchSize(),
                            () -> progressEpsilon.at(step), q * n * (t - firstStep) / secs);
                    for (TrainingListener l : ls) {
                        l.onStep(info);
                    }
                }
                if (sink != null && checkpointEvery > 0 && t % checkpointEvery == 0 && t < steps) {
                    examples.checkUnchanged(); // shards changed in place since they were opened: not this run's data
                    sink.save(new Checkpoint(network, config, t, ema));
                }
            }
        }
        examples.checkUnchanged(); // and before the release
        double seconds = (System.nanoTime() - start) / 1e9;
        if (ema != null) { // the release is the average (post-processing of the iterates)
            params.assign(ema);
        }
        return new TrainingResult(network, event(q, sigma, steps), steps, steps < config.steps(), q * n * (steps - firstStep),
                seconds);
    }

    /** The first 8 bytes of SHA-256(purpose, seed, first step): seeds from which neither the others nor the seed follow. */
    static long derivedSeed(String purpose, long seed, long firstStep) {
        try {
            java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
            md.update(("dpdl4j " + purpose).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            md.update(java.nio.ByteBuffer.allocate(16).putLong(seed).putLong(firstStep).array());
            return java.nio.ByteBuffer.wrap(md.digest()).getLong();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /**
     * The ε listeners see after step t: the accountant's ε at the next of 100 evenly spaced steps (t itself at those
     * steps and at T), computed once each. It is never below the ε of the steps done (ε grows with t), and a slow
     * accountant (PLD: about 0.1 s per call) is asked 100 times per run instead of once per step.
     */
    private static final class ProgressEpsilon {
        private static final int POINTS = 100;
        private final PrivacyAccountant accountant;
        private final PrivacyEvent perStep;
        private final long steps;
        private final double delta;
        private final java.util.Map<Long, Double> cache = new java.util.concurrent.ConcurrentHashMap<>(); // read when a listener asks

        ProgressEpsilon(PrivacyAccountant accountant, PrivacyEvent perStep, long steps, double delta) {
            this.accountant = accountant;
            this.perStep = perStep;
            this.steps = steps;
            this.delta = delta;
        }

        double at(long t) {
            long k = (long) Math.ceil((double) t * POINTS / Math.max(1, steps));
            long point = Math.min(steps, Math.max(t, (long) Math.ceil((double) k * steps / POINTS)));
            return cache.computeIfAbsent(point, s -> accountant.epsilon(new SelfComposedEvent(perStep, s), delta));
        }
    }

    /** The planned T, or the largest t ≤ T whose cumulative ε stays within the budget. */
    private static long stepsWithinBudget(PrivacyAccountant accountant, PrivacyEvent perStep, DpSgdConfig config) {
        if (Double.isInfinite(config.epsilonBudget())) {
            return config.steps();
        }
        long lo = 0;
        long hi = config.steps();
        while (lo < hi) { // largest t in [0, T] with eps(t) <= budget; eps is non-decreasing in t
            long mid = lo + (hi - lo + 1) / 2;
            if (accountant.epsilon(new SelfComposedEvent(perStep, mid), config.delta()) <= config.epsilonBudget()) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /**
     * Accuracy of the network on labelled data (the fraction of examples whose most probable class
     * is the labelled one), computed with the engine's forward pass in chunks of 1,000, the chunks shared among one
     * worker per core (as a run's workers share a step: each with its own engine and its share of the native threads).
     *
     * @param network an initialised {@code MultiLayerNetwork} or {@code ComputationGraph} whose layers the engine runs
     * @param data    the labelled examples, labels one-hot (or scores) [n, classes]
     * @return the accuracy in [0, 1]; NaN for no examples
     * @throws IllegalArgumentException if the engine cannot run the network
     * @throws IllegalStateException    if the evaluation is interrupted or fails with a checked exception
     */
    public static double accuracy(Model network, LabeledData data) {
        return accuracy(network, (ExampleSource) data);
    }

    /**
     * {@link #accuracy(Model, LabeledData)} on examples read by index: each chunk of 1,000 is read when a worker scores
     * it, so data larger than memory are scored.
     *
     * @param network an initialised {@code MultiLayerNetwork} or {@code ComputationGraph} whose layers the engine runs
     * @param data    the examples (a source's {@link ExampleSource#read} must be thread-safe, as its contract says)
     * @return the accuracy in [0, 1]; NaN for no examples
     * @throws java.io.UncheckedIOException if the source cannot be read
     * @throws IllegalArgumentException     if the engine cannot run the network
     * @throws IllegalStateException        if the evaluation is interrupted or fails with a checked exception
     */
    public static double accuracy(Model network, ExampleSource data) {
        int n = data.size();
        if (n == 0) {
            return Double.NaN;
        }
        int chunks = (n + 999) / 1000;
        int workers = Math.max(1, Math.min(chunks, Runtime.getRuntime().availableProcessors()));
        int nativeThreads = NativeThreads.perWorker(workers);
        int rank = PerExampleGradients.of(network).inputRank();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(workers, r -> {
            Thread th = new Thread(r, "dpdl4j-evaluation");
            th.setDaemon(true);
            return th;
        });
        try {
            List<java.util.concurrent.Future<Long>> parts = new java.util.ArrayList<>();
            for (int w = 0; w < workers; w++) {
                int first = w;
                parts.add(pool.submit(() -> {
                    NativeThreads.setForCallingThread(nativeThreads);
                    PerExampleGradients forward = PerExampleGradients.of(network);
                    long correct = 0;
                    try {
                        for (int c = first; c < chunks; c += workers) {
                            int[] idx = java.util.stream.IntStream.range(c * 1000, Math.min(n, c * 1000 + 1000)).toArray();
                            LabeledData chunk = data.read(idx);
                            INDArray predicted = forward.output(rank > 0 ? chunk.features(rank) : chunk.features()).argMax(1);
                            INDArray truth = chunk.labels().argMax(1);
                            correct += predicted.eq(truth).castTo(DataType.INT).sumNumber().longValue();
                        }
                    } finally {
                        forward.releaseScratch();
                    }
                    return correct;
                }));
            }
            long correct = 0;
            for (java.util.concurrent.Future<Long> part : parts) {
                correct += part.get();
            }
            return (double) correct / n;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while evaluating", e);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException("evaluation failed", e.getCause());
        } finally {
            pool.shutdownNow();
        }
    }
}
