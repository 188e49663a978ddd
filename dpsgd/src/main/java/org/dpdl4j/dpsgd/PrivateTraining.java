package org.dpdl4j.dpsgd;

import java.util.Objects;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.PackedShards;
import org.dpdl4j.release.InputSpec;
import org.dpdl4j.release.PrivateModel;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * Private training in one call, in the spirit of Opacus's {@code make_private_with_epsilon}: give a network, data, a
 * target (ε, δ), epochs and the expected batch size; {@link #train()} calibrates the smallest noise multiplier σ that
 * meets the target with {@link #DEFAULT_ACCOUNTANT} (the accountant {@code dpdl4j train} uses for one run), or takes σ as
 * given ({@code noiseMultiplier}, as Opacus's {@code make_private}; the claim is then what σ gives), trains with
 * DP-SGD (Poisson sampling at q = B/n, per-example clipping to C, Gaussian noise σC) and returns the network with its
 * claim as a {@link PrivateModel}, ready for {@link PrivateModel#save}. δ is given once.
 *
 * <pre>{@code
 * PrivateModel m = PrivateTraining.of(network, mnist.train())
 *         .targetEpsilon(3).delta(1e-5).epochs(5).expectedBatchSize(256).train();
 * m.save(Path.of("out"));   // model.zip + privacy.json
 * }</pre>
 */
public final class PrivateTraining extends DpSgdSettings.Setters<PrivateTraining> {
    /** The accountant that calibrates σ and states ε: PLD, the tighter one for a single DP-SGD run. */
    public static final String DEFAULT_ACCOUNTANT = "pld";

    private Model network; // null until a resumed run's checkpoint is read
    private final ExampleSource data;
    private final DataSetIterator iterator;
    private InputSpec input;
    private int workers = 1;
    private TrainingListener[] listeners = new TrainingListener[0];
    private boolean started;
    private java.nio.file.Path output;
    private boolean overwrite;
    private org.dpdl4j.release.PrivacyLedger ledger;
    private long checkpointEvery;
    private java.nio.file.Path resumeFrom;
    private Provenance provenance;
    private ClippedSums clippedSums;
    private org.dpdl4j.accounting.PrivacyEvent earlierClaim; // what the network's weights cost before this run, if given
    private LabeledData validation; // early stopping: the held-out split, how often, its score noise (NaN: declared public)
    private int validationEvery;
    private double scoreNoise = Double.NaN;
    private boolean publicPretraining; // declared: the network's earlier training read no private data
    private final java.util.List<org.nd4j.linalg.dataset.api.DataSetPreProcessor> publicPreProcessors = new java.util.ArrayList<>();
    private Plan planned; // plan()'s, reused by train() while the settings, the workers and the data are as they were
    private Object[] plannedFor;

    /** The files a release replaces in its output besides its own: an earlier tuning's, which would pass for this run's. */
    private static final java.util.List<String> OBSOLETE = java.util.List.of("tuning.json", "trials.json");

    private PrivateTraining(Model network, ExampleSource data, DataSetIterator iterator) {
        super(DpSgdSettings.DEFAULTS);
        this.network = network;
        this.data = data;
        this.iterator = iterator;
    }

    /**
     * Training on data held in memory (features [n, c·h·w]); the input shape c×h×w is recorded, with pixel scale 255.
     *
     * @param network an initialised {@code MultiLayerNetwork} or {@code ComputationGraph} that {@link DpCompatibility}
     *                accepts; trained in place
     * @param data    the private training data
     * @return the training, to complete with its settings
     */
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
     *
     * @param network an initialised network that {@link DpCompatibility} accepts; trained in place
     * @param data    the private training data, read by index
     * @return the training, to complete with its settings
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
     *
     * @param network an initialised network that {@link DpCompatibility} accepts; trained in place
     * @param data    the private training data, read once
     * @return the training, to complete with its settings
     */
    public static PrivateTraining of(Model network, DataSetIterator data) {
        return new PrivateTraining(Objects.requireNonNull(network, "network"), null, Objects.requireNonNull(data, "data"));
    }

    /**
     * Continues a run that was started with {@link #output} and stopped (killed, or failed) after its start: the settings,
     * the network and the moving average come from its last checkpoint, which is checked on its own and against the
     * ledger's charge; the run goes on from there under that charge with fresh randomness, and {@link #train()} releases
     * it into {@code dir}. Only how the rest is computed and described may be set ({@link #workers}, {@link #listeners},
     * {@link #checkpointEvery}, {@link #clippedSums}, the seed, the read cache, {@link #input}, {@link #provenance}); the
     * data must be the data the run was planned on (its size and digest are checked, by the provenance's when given).
     * To choose the data by the plan (the data set it names), read it first with
     * {@link org.dpdl4j.release.PrivateRun#plan}.
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
     * Where a run's data and network came from, as its plan records them: a resume checks the data against
     * {@code dataset} and {@code dataSha256}; the rest is recorded for people. Without it the plan records the ledger's
     * data set name (else {@code data}), the data's {@link org.dpdl4j.datasets.Sha256#of} digest, the input's HxWxC,
     * the network's class name and "the network's own" activation.
     *
     * @param dataset     the data set's name (also the sidecar configuration's {@code dataset}), not null
     * @param dataSha256  a digest of the training data that a resume recomputes alike, or null when the name fixes the
     *                    content (a named data set whose files are verified by their checksums)
     * @param imageSize   how the images were sized, as the caller writes it (e.g. {@code 28x28x1}), or null
     * @param model       the network's name, not null
     * @param activation  its activation's name, or null
     * @param weightsSeed the seed its weights were drawn with, or null
     */
    public record Provenance(String dataset, String dataSha256, String imageSize, String model, String activation,
                             Long weightsSeed) {
        /**
         * Checks the names that must be given.
         *
         * @param dataset     the data set's name, not null
         * @param dataSha256  the data's digest, or null
         * @param imageSize   how the images were sized, or null
         * @param model       the network's name, not null
         * @param activation  its activation's name, or null
         * @param weightsSeed the seed of its weights, or null
         * @throws NullPointerException if dataset or model is null
         */
        public Provenance {
            Objects.requireNonNull(dataset, "dataset");
            Objects.requireNonNull(model, "model");
        }
    }

    /**
     * Sets where the run's data and network came from ({@link Provenance}); on a resume, the data given are checked
     * against the plan's name and digest with it.
     *
     * @param provenance the names and the digest
     * @return this training
     */
    public PrivateTraining provenance(Provenance provenance) {
        this.provenance = Objects.requireNonNull(provenance, "provenance");
        return this;
    }

    /**
     * Sets where each step's sum of clipped per-example gradients is computed (default: this JVM, with
     * {@link #workers} threads), e.g. on a cluster; the noise is drawn here either way. Not with augmult k &gt; 1, whose
     * copies are made here.
     *
     * @param sums the clipped sums' computation
     * @return this training
     */
    public PrivateTraining clippedSums(ClippedSums sums) {
        this.clippedSums = Objects.requireNonNull(sums, "sums");
        return this;
    }

    /**
     * What a run will use and release, known before it trains: its engine configuration (q, σ, T, δ, the seed) and its
     * whole event (with data normalisation, the statistics' release first).
     *
     * @param config the run's DP-SGD configuration
     * @param event  the whole event a run trained to its T releases
     */
    public record Plan(DpSgdConfig config, org.dpdl4j.accounting.PrivacyEvent event) {
    }

    /**
     * Resolves the run without training it (a dry run): q from the expected batch size, T from the epochs, and σ,
     * calibrated for the target (the calibration {@link #train()} then reuses) or as given.
     *
     * @return the run's configuration and whole event
     * @throws IllegalArgumentException as {@link #train()}, for the settings
     * @throws IllegalStateException    for a training of a {@link DataSetIterator} (its size is known only once read)
     *                                  or a resumed run (whose plan is its checkpoint's)
     */
    public Plan plan() {
        if (data == null) {
            throw new IllegalStateException(resumeFrom != null ? "plan(): a resumed run's plan is its checkpoint's"
                    : "plan() needs the data's size: a DataSetIterator is read only by train()");
        }
        checkSettings();
        return plan(data);
    }

    private Plan plan(ExampleSource data) {
        DpSgdSettings settings = settings();
        org.dpdl4j.accounting.PrivacyEvent earlier = earlier();
        Object[] key = {settings, workers, data, data.size(), earlier};
        if (planned == null || !java.util.Arrays.equals(key, plannedFor)) {
            int n = data.size();
            double q = settings.samplingRate(n);
            long steps = settings.steps(q);
            if (validation != null && steps < validationEvery) {
                throw new IllegalArgumentException("validation every " + validationEvery + " steps: the run has T = " + steps
                        + " steps, so nothing would be scored; give everySteps in [1, " + steps + "]");
            }
            org.dpdl4j.accounting.PrivacyEvent besides = claimed(earlier, validationEvent(steps)); // cost besides DP-SGD's
            double sigma = Double.isNaN(settings.noiseMultiplier()) // calibrated for the whole claim, or as given
                    ? settings.calibrateNoise(q, steps, Accountants.byName(accountant()), besides) : settings.noiseMultiplier();
            planned = new Plan(settings.config(q, sigma, steps, workers), claimed(besides, settings.event(q, sigma, steps)));
            plannedFor = key;
        }
        return planned;
    }

    /**
     * Runs the training through the lifecycle of {@link org.dpdl4j.release.PrivateRun} in {@code dir}: the plan and the
     * starting model are written, the ledger (if any) charged once, checkpoints taken every {@link #checkpointEvery}
     * steps, and {@link #train()} releases {@code model.zip} and {@code privacy.json} into {@code dir} (bound to the
     * charge); a run stopped on the way is continued with {@link #resume}. Without it nothing is written.
     *
     * @param dir a directory without a release in it (created if missing)
     * @return this training
     */
    public PrivateTraining output(java.nio.file.Path dir) {
        return output(dir, false);
    }

    /**
     * As {@link #output(java.nio.file.Path)}, and with {@code overwrite} an earlier release in {@code dir} is replaced by
     * this run's (its files stay until this run releases; a ledger records both charges).
     *
     * @param dir       the run's directory (created if missing)
     * @param overwrite whether an earlier release there is replaced, not refused
     * @return this training
     */
    public PrivateTraining output(java.nio.file.Path dir, boolean overwrite) {
        this.output = Objects.requireNonNull(dir, "dir");
        this.overwrite = overwrite;
        return this;
    }

    /**
     * The privacy ledger to charge the run to, once, before it trains (needs {@link #output}): its data set name is
     * recorded in the run's plan, and its budget refuses a run that would exceed it.
     *
     * @param ledger an open ledger, not null
     * @return this training
     */
    public PrivateTraining ledger(org.dpdl4j.release.PrivacyLedger ledger) {
        this.ledger = Objects.requireNonNull(ledger, "ledger");
        return this;
    }

    /**
     * Sets the steps between checkpoints (needs {@link #output}; default: none but the start's).
     *
     * @param steps steps between checkpoints, ≥ 1
     * @return this training
     * @throws IllegalArgumentException if steps &lt; 1
     */
    public PrivateTraining checkpointEvery(long steps) {
        if (steps < 1) {
            throw new IllegalArgumentException("checkpointEvery must be >= 1 step, got " + steps);
        }
        this.checkpointEvery = steps;
        return this;
    }

    /**
     * Sets the input the model expects, recorded in the sidecar.
     *
     * @param input the input's shape and pixel scale (null: unknown)
     * @return this training
     */
    public PrivateTraining input(InputSpec input) {
        this.input = input;
        return this;
    }

    /**
     * Early stopping with the selection counted: every {@code everySteps} steps the network is scored on a held-out split
     * of the private data, and the release is the network of the best score, not the last. Each score is the split's
     * correct count with Gaussian noise of standard deviation {@code scoreNoise}·|V| added (sensitivity 1: one example
     * changes the count by at most 1), divided by |V|; the k = ⌊T/everySteps⌋ scores are k Gaussian mechanisms composed
     * with DP-SGD's event (adaptive composition, e.g. Mironov, "Rényi Differential Privacy", CSF 2017, Proposition 1),
     * and choosing the best of them, and the iterate it scored, is post-processing of what is released (DP-SGD's event
     * covers every iterate). σ is calibrated for the whole composition. The split must be held out of the training data
     * (e.g. {@link LabeledData#splitByRecord}, which moves no other example when one is added); its size |V| is treated
     * as public, as n is. The sidecar states the validation: private, k, the score noise, the step chosen and its noisy
     * score. Not with {@link #output} (a run that checkpoints) nor a moving average.
     *
     * @param split      the held-out examples, disjoint from the training data, at least one
     * @param everySteps steps between evaluations, ≥ 1 (at most T: at least one evaluation)
     * @param scoreNoise the standard deviation of the released accuracy, a fraction in (0, 1] (0.01: one point)
     * @return this training
     * @throws IllegalArgumentException naming the parameter out of range
     */
    public PrivateTraining validation(LabeledData split, int everySteps, double scoreNoise) {
        if (!(scoreNoise > 0 && scoreNoise <= 1)) {
            throw new IllegalArgumentException("scoreNoise must be in (0, 1] (a standard deviation of accuracy), got " + scoreNoise);
        }
        return validationSplit(split, everySteps, scoreNoise);
    }

    /**
     * Early stopping on a split declared public (nobody's private data: its exact accuracy is released and costs
     * nothing): as {@link #validation(LabeledData, int, double)} without noise and without a cost. The sidecar says
     * that the validation split was declared public.
     *
     * @param split      public examples, at least one
     * @param everySteps steps between evaluations, ≥ 1
     * @return this training
     * @throws IllegalArgumentException naming the parameter out of range
     */
    public PrivateTraining publicValidation(LabeledData split, int everySteps) {
        return validationSplit(split, everySteps, Double.NaN);
    }

    private PrivateTraining validationSplit(LabeledData split, int everySteps, double noise) {
        if (Objects.requireNonNull(split, "split").size() < 1) {
            throw new IllegalArgumentException("the validation split must hold at least one example");
        }
        if (everySteps < 1) {
            throw new IllegalArgumentException("everySteps must be >= 1, got " + everySteps);
        }
        this.validation = split;
        this.validationEvery = everySteps;
        this.scoreNoise = noise;
        return this;
    }

    /** The validation's event for T steps: k = ⌊T/every⌋ Gaussian releases of a count, or null (none, or public). */
    private org.dpdl4j.accounting.PrivacyEvent validationEvent(long steps) {
        if (validation == null || Double.isNaN(scoreNoise)) {
            return null;
        }
        long k = steps / validationEvery;
        return new org.dpdl4j.accounting.SelfComposedEvent(new org.dpdl4j.accounting.GaussianEvent(scoreNoise * validation.size()), k);
    }

    /**
     * Gives the privacy claim the network's weights already carry (a model released before: its
     * {@link org.dpdl4j.release.PrivateModel#event()}), for a network trained again: the run's release then claims the
     * composition of that event and this run's, σ is calibrated so that the composition meets the target, and the ledger
     * is charged this run's own event. A network released by dpdl4j carries its claim with it
     * ({@link PrivateHistory}, also after {@link org.dpdl4j.release.PrivateModel#load}); this is for one whose claim it
     * lost (a model read by DL4J's {@code ModelSerializer}, say).
     *
     * @param event the earlier claim's event, not null
     * @return this training
     */
    public PrivateTraining earlierClaim(org.dpdl4j.accounting.PrivacyEvent event) {
        this.earlierClaim = Objects.requireNonNull(event, "event");
        return this;
    }

    /**
     * Declares a pre-processor of the iterator's public: its statistics come from no private data (a published mean
     * and deviation, a fixed range), and it transforms each example by itself. Without this, an iterator's
     * pre-processor that is not a fixed scaler ({@code ImagePreProcessingScaler}, {@code VGG16ImagePreProcessor}, the
     * reshaping ones) is refused: a {@code NormalizerStandardize} or {@code NormalizerMinMaxScaler} fitted on the training
     * iterator holds statistics of the private data that ε does not cover. The private alternative is
     * {@link #dataNormalisation} with a network whose first layer is a
     * {@link org.dpdl4j.models.FeatureStandardization}.
     *
     * @param preProcessor the pre-processor, as the iterator holds it (compared by identity), not null
     * @return this training
     */
    public PrivateTraining publicPreProcessor(org.nd4j.linalg.dataset.api.DataSetPreProcessor preProcessor) {
        publicPreProcessors.add(Objects.requireNonNull(preProcessor, "preProcessor"));
        return this;
    }

    /**
     * Declares that the network's earlier training (DL4J's iteration count is above 0: pre-trained weights, transfer
     * learning) read no private data, so that its release claims this run's cost alone. Without it (or
     * {@link #earlierClaim}), a network trained before whose claim dpdl4j does not know is refused.
     *
     * @return this training
     */
    public PrivateTraining pretrainedOnPublicData() {
        this.publicPretraining = true;
        return this;
    }

    /**
     * Sets the worker threads computing each batch's clipped sum.
     *
     * @param workers threads in [1, 256] (default 1; checked when the run starts)
     * @return this training
     */
    public PrivateTraining workers(int workers) {
        this.workers = workers;
        return this;
    }

    /**
     * Sets the progress listeners (optional).
     *
     * @param listeners called after each step
     * @return this training
     */
    public PrivateTraining listeners(TrainingListener... listeners) {
        this.listeners = listeners.clone();
        return this;
    }

    /**
     * Calibrates σ, trains the network in place, and returns it with its claim. ε of the result is at most the target.
     * Call it once: the claim covers one run, and a network that a failed run (an exception) has begun to train carries
     * that run's privacy cost with no claim for it, so discard it.
     *
     * @return the trained network with its claim (the run's event, the accountant, δ, the input and the settings)
     * @throws IllegalArgumentException if a required setting is missing or out of range (the message names it), both or
     *                                  neither of target_epsilon and noise_multiplier are set, or no σ ≤ 10⁶ meets the target
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
        checkSettings();
        DpSgdTrainer trainer = trainer(settings(), data == null ? "a DataSetIterator" : data);
        ExampleSource source = data != null ? data : DpSgdTrainer.packOnce(iterator, publicPreProcessors); // read once
        try {
            return train(trainer, source);
        } finally {
            if (data == null) {
                source.close();
            }
        }
    }

    /** The settings' checks before anything is read, trained or charged (the message names the setting). */
    private void checkSettings() {
        DpSgdSettings settings = settings();
        if (Double.isNaN(settings.targetEpsilon()) == Double.isNaN(settings.noiseMultiplier())) {
            throw new IllegalArgumentException(Double.isNaN(settings.targetEpsilon()) ? "target_epsilon must be set (finite and > 0), "
                    + "or noise_multiplier" : "noise_multiplier is calibrated from target_epsilon: set one of them, not both");
        }
        if (settings.noiseMultiplier() == 0 && ledger != null) {
            throw new IllegalArgumentException("noise_multiplier 0 (non_private) has infinite epsilon and is never charged to a "
                    + "ledger: drop ledger(...)");
        }
        settings.steps(1); // epochs set
        earlier(); // a network trained before, with no claim dpdl4j knows, is refused here
        if (validation != null && (output != null || resumeFrom != null)) {
            throw new IllegalArgumentException("validation (early stopping) runs without output(dir): a run that checkpoints "
                    + "and resumes does not keep its scores yet; drop output(...) or the validation");
        }
        if (validation != null && settings.emaDecay() > 0) {
            throw new IllegalArgumentException("validation (early stopping) scores the iterates, and ema_decay releases their "
                    + "average instead: set one of them");
        }
        if (!Double.isNaN(settings.dataNormalisation())) {
            PrivateNormalisation.normalisedLayer(network); // refused before anything is read or charged
        }
        if (settings.optimizer() != null && !settings.optimizer().equals(Networks.optimizerName(network))) {
            throw new IllegalArgumentException("optimizer " + settings.optimizer() + ": the network's updater is "
                    + Networks.optimizerName(network) + ", and PrivateTraining trains the network with its own updater "
                    + "(DL4J's IUpdater in its configuration): build it with the optimiser you want (the setting names it "
                    + "for the plan and the sidecar); learningRate may be set here");
        }
    }

    /**
     * What the network's weights cost before this run: the claim given ({@link #earlierClaim}), or the one recorded on the
     * network ({@link PrivateHistory}), or nothing for a network never trained (or declared pre-trained on public data).
     *
     * @throws IllegalArgumentException for a network trained before whose claim is not known
     */
    private org.dpdl4j.accounting.PrivacyEvent earlier() {
        PrivateHistory recorded = PrivateHistory.of(network);
        if (earlierClaim != null) {
            if (recorded != null && !PrivateHistory.covers(earlierClaim, recorded.event())) {
                throw new IllegalArgumentException("earlierClaim " + earlierClaim + ": the network carries the claim of its earlier "
                        + "release, " + recorded.event() + ", which the given one does not include");
            }
            return earlierClaim;
        }
        long iterations = PrivateHistory.iterationCount(network);
        if (recorded != null && (recorded.current(network) || publicPretraining)) {
            return recorded.event(); // trained since on public data only, as declared: the recorded claim still holds
        }
        if (iterations > 0 && !publicPretraining) {
            throw new IllegalArgumentException("network: it has been trained before (DL4J's iteration count is " + iterations
                    + (recorded != null ? ", " + (iterations - recorded.iterations()) + " steps after its last private release" : "")
                    + ") and carries no privacy claim that dpdl4j knows for that, so the claim of this run alone would not cover its "
                    + "weights: give the earlier run's claim with earlierClaim(event) (a PrivateModel's event()), declare "
                    + "with pretrainedOnPublicData() that its earlier training read no private data, or start from a freshly "
                    + "initialised network");
        }
        return null;
    }

    /** The claim of a release whose own runs cost {@code own}: composed after the network's earlier claim, if any. */
    private static org.dpdl4j.accounting.PrivacyEvent claimed(org.dpdl4j.accounting.PrivacyEvent earlier,
                                                           org.dpdl4j.accounting.PrivacyEvent own) {
        return earlier == null ? own : own == null ? earlier : org.dpdl4j.accounting.ComposedEvent.of(earlier, own);
    }

    /** The trainer of a run with these settings: its clipped sums computed here (with augmult's copies) or as set. */
    private DpSgdTrainer trainer(DpSgdSettings settings, Object data) {
        DpSgdTrainer trainer = new DpSgdTrainer(Accountants.byName(settings.accountant() != null ? settings.accountant()
                : DEFAULT_ACCOUNTANT)).networkChecked(); // train() checks before the charge (a resume's run did, before its own)
        if (settings.augmult() != 1) {
            if (clippedSums != null) {
                throw new IllegalArgumentException("augmult k = " + settings.augmult() + " makes its copies in this JVM: "
                        + "not with clippedSums(...) computed elsewhere");
            }
            if (!(data instanceof LabeledData)) {
                throw new IllegalArgumentException("augmult k = " + settings.augmult() + " needs in-memory LabeledData, not " + data);
            }
            return trainer.withClippedSums(settings.clippedSums()).networkChecked(); // checks the augmentation
        }
        return clippedSums != null ? trainer.withClippedSums(clippedSums).networkChecked() : trainer;
    }

    private PrivateModel train(DpSgdTrainer trainer, ExampleSource data) {
        DpCompatibility.check(network, data); // before anything is charged: layers it cannot vouch for, checked not to mix examples
        if (validation != null) {
            DpCompatibility.check(network, validation); // the split is scored mid-run: its shapes checked before, as the data's
        }
        org.dpdl4j.accounting.PrivacyEvent before = earlier(); // the weights' claim before this run (training moves it)
        int n = data.size();
        DpSgdSettings settings = settings();
        DpSgdConfig config = plan(data).config();
        DpSgdSettings resolved = DpSgdSettings.builder().settings(settings).samplingRate(config.samplingRate()) // q and σ
                .noiseMultiplier(config.noiseMultiplier()).build();                                             // that ran
        if (output != null) {
            return trainAsRun(trainer, data, config, resolved, before);
        }
        started = true; // from here on the network changes
        applySettings(network, resolved);
        releaseStatistics(network, data, config, resolved);
        ExampleSource source = resolved.trainingData(data);
        EarlyStopping stopping = validation == null ? null : new EarlyStopping(config.seed(), config.secureRandom());
        TrainingListener[] all = stopping == null ? listeners : java.util.stream.Stream.concat(java.util.Arrays.stream(listeners),
                java.util.stream.Stream.of(stopping)).toArray(TrainingListener[]::new);
        TrainingResult result = source instanceof LabeledData inMemory ? trainer.train(network, inMemory, config, all)
                : trainer.train(network, source, config, all);
        java.util.Map<String, Object> configuration = new java.util.LinkedHashMap<>();
        configuration.put("dataset", datasetName());
        configuration.putAll(resolved.configuration(n, result.stepsTaken()));
        clipNormsOf(network, resolved, configuration);
        if (stopping != null) {
            stopping.releaseInto(network, configuration);
        }
        return PrivateModel.of(network, "training", claimed(claimed(before, validationEvent(result.stepsTaken())),
                resolved.event(result.event())), accountant(), settings.delta(), input, configuration);
    }

    /**
     * The scores of {@link #validation}: every {@code validationEvery} steps the network's accuracy on the split, with
     * its noise (none on a public split), and the parameters of the best so far; the release is that network.
     */
    private final class EarlyStopping implements TrainingListener {
        private final java.util.random.RandomGenerator noise;
        private final java.util.List<Double> scores = new java.util.ArrayList<>();
        private org.nd4j.linalg.api.ndarray.INDArray best;
        private double bestScore = Double.NEGATIVE_INFINITY;
        private long bestStep;

        EarlyStopping(long seed, boolean secure) {
            this.noise = secure ? new java.security.SecureRandom()
                    : java.util.random.RandomGeneratorFactory.of("L64X128MixRandom").create(seed ^ 0x3B9F_61D2_4C7A_1E05L);
        }

        @Override
        public void onStep(StepInfo info) {
            if (info.step() % validationEvery != 0) {
                return;
            }
            double correct = Math.round(DpSgdTrainer.accuracy(network, validation) * validation.size());
            double score = (Double.isNaN(scoreNoise) ? correct : correct + noise.nextGaussian() * scoreNoise * validation.size())
                    / validation.size();
            scores.add(score);
            if (score > bestScore) {
                bestScore = score;
                bestStep = info.step();
                best = network.params().dup();
            }
        }

        /** Sets the best scored parameters into the network and states the validation in the sidecar's configuration. */
        void releaseInto(org.deeplearning4j.nn.api.Model net, java.util.Map<String, Object> configuration) {
            if (best != null) {
                net.params().assign(best);
            }
            configuration.put("validation", Double.isNaN(scoreNoise) ? "public (declared)" : "private");
            configuration.put("validation_every", validationEvery);
            configuration.put("validation_evaluations", scores.size());
            configuration.put("validation_score_noise", Double.isNaN(scoreNoise) ? null : scoreNoise);
            configuration.put("validation_size", validation.size());
            configuration.put("validation_scores", java.util.List.copyOf(scores)); // noisy (or on a public split): covered
            configuration.put("validation_best_step", best == null ? null : bestStep);
        }
    }

    /**
     * What the settings change in the network before it trains, once the run is no longer refused for its output:
     * the learning rate (every layer's, as DL4J's setLearningRate) and, with data normalisation, statistics pending
     * (released after any charge, so that a step-0 checkpoint holds none).
     */
    private static void applySettings(Model net, DpSgdSettings settings) {
        if (!Double.isNaN(settings.learningRate())) {
            Networks.setLearningRate(net, settings.learningRate());
        }
        if (!Double.isNaN(settings.dataNormalisation())) {
            PrivateNormalisation.clearStatistics(net);
        }
    }

    /**
     * With data normalisation, releases the feature statistics into the network's scattering layer unless a checkpoint
     * already holds them (a run resumed after their release); without it, nothing.
     */
    private void releaseStatistics(Model net, ExampleSource data, DpSgdConfig config, DpSgdSettings settings) {
        if (!Double.isNaN(settings.dataNormalisation()) && !PrivateNormalisation.hasStatistics(net)) {
            PrivateNormalisation.Release r = PrivateNormalisation.releaseInto(net, data, settings.dataNormalisation(),
                    config.secureRandom() ? new java.security.SecureRandom().nextLong() : config.seed(), config.workers());
            for (TrainingListener l : listeners) {
                l.onStatisticsReleased(r);
            }
        }
    }


    /** With data normalisation, the clipping norms its release used (a FeatureStandardization layer's own). */
    private static void clipNormsOf(Model net, DpSgdSettings settings, java.util.Map<String, Object> configuration) {
        if (!Double.isNaN(settings.dataNormalisation())) {
            double[] c = PrivateNormalisation.clipNorms(net);
            configuration.put("data_normalisation_clip_mean", c[0]);
            configuration.put("data_normalisation_clip_squares", c[1]);
        }
    }

    /** The accountant's name: the settings', else {@link #DEFAULT_ACCOUNTANT}. */
    private String accountant() {
        return settings().accountant() != null ? settings().accountant() : DEFAULT_ACCOUNTANT;
    }

    /** The data set's name in the plan and the sidecar: the provenance's, else the ledger's, else "data". */
    private String datasetName() {
        return provenance != null ? provenance.dataset() : ledger != null ? ledger.dataset() : "data";
    }

    /**
     * The run's plan ({@link org.dpdl4j.release.CheckpointState#plan}): its settings with q, σ and the accountant
     * resolved, where the data and the network came from, and the augmentation's copies (k &gt; 1), which a resume
     * rebuilds.
     */
    private java.util.Map<String, Object> planState(ExampleSource data, DpSgdConfig config, DpSgdSettings settings) {
        DpSgdSettings resolved = DpSgdSettings.builder().settings(settings).samplingRate(config.samplingRate())
                .accountant(accountant()).secureRandom(settings.seed() == null).build();
        Provenance p = provenance != null ? provenance : new Provenance(datasetName(), org.dpdl4j.datasets.Sha256.of(data),
                input == null ? "unspecified" : input.height() + "x" + input.width() + "x" + input.channels()
                        + (input.scale() != 255 ? "/" + input.scale() : ""), network.getClass().getSimpleName(),
                "the network's own", null);
        java.util.Map<String, Object> plan = org.dpdl4j.release.CheckpointState.plan(p.dataset(), p.dataSha256(), p.imageSize(),
                data.size(), p.model(), p.activation(), resolved, config.steps(), p.weightsSeed(),
                ledger == null ? null : ledger.file());
        if (settings.augmult() > 1) {
            org.dpdl4j.datasets.ImageAugmentation a = settings.augmentation();
            plan.put("augmentation", new java.util.LinkedHashMap<>(java.util.Map.of("channels", a.channels(), "height",
                    a.height(), "width", a.width(), "max_shift", a.maxShift(), "flips", a.flips())));
        }
        return plan;
    }

    /**
     * The augmentation a resumed run with k &gt; 1 makes its copies with: its plan's, or for a plan {@code dpdl4j train}
     * wrote before the plan held it (a model of {@link org.dpdl4j.models.Models}), its data set's
     * ({@link org.dpdl4j.datasets.ImageAugmentation#forDataset}), as {@code train --augmult} used.
     */
    private static org.dpdl4j.datasets.ImageAugmentation augmentationOf(java.util.Map<String, Object> state, String what) {
        if (state.get("augmentation") instanceof java.util.Map<?, ?> a) {
            try {
                return new org.dpdl4j.datasets.ImageAugmentation(((Number) a.get("channels")).intValue(),
                        ((Number) a.get("height")).intValue(), ((Number) a.get("width")).intValue(),
                        ((Number) a.get("max_shift")).intValue(), (Boolean) a.get("flips"));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(what + ": the plan's augmentation " + a + " is refused: " + e.getMessage(), e);
            }
        }
        if (state.get("model") instanceof String m && org.dpdl4j.models.Models.isName(m)) {
            return org.dpdl4j.datasets.ImageAugmentation.forDataset((String) state.get("dataset"));
        }
        throw new IllegalArgumentException(what + ": the run used augmult k = " + state.get("augmult") + ", and its plan does "
                + "not hold the augmentation to rebuild its copies with");
    }

    /** Trains through the run's lifecycle in {@link #output} and releases there. */
    private PrivateModel trainAsRun(DpSgdTrainer trainer, ExampleSource data, DpSgdConfig config, DpSgdSettings settings,
                                    org.dpdl4j.accounting.PrivacyEvent before) {
        if (!overwrite && (java.nio.file.Files.exists(output.resolve(PrivateModel.SIDECAR_FILE))
                || java.nio.file.Files.exists(output.resolve(PrivateModel.MODEL_FILE)))) {
            throw new IllegalArgumentException("output " + output + " holds a release already: choose a new directory");
        }
        java.util.Map<String, Object> plan = planState(data, config, settings);
        if (before != null) { // the release claims it too, after a resume as well (the charge is this run's own)
            plan.put(org.dpdl4j.release.CheckpointState.EARLIER_CLAIM, before.toMap());
        }
        try {
            java.nio.file.Files.createDirectories(output);
            applySettings(network, settings); // into the step-0 checkpoint's network
            org.dpdl4j.release.PrivateRun run = org.dpdl4j.release.PrivateRun.start(output, plan, network, config,
                    settings.event(config.samplingRate(), config.noiseMultiplier(), config.steps()), ledger,
                    "train " + plan.get("model") + " on " + plan.get("dataset"), checkpointEvery);
            started = true; // from here on the network changes
            return trainAndRelease(run, trainer, data, network, config, 0, null, settings, before);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("could not write the run in " + output + ": "
                    + org.dpdl4j.release.AtomicFiles.why(e), e);
        }
    }

    /** Trains from step {@code from} with the run's checkpoints, then releases through the run. */
    private PrivateModel trainAndRelease(org.dpdl4j.release.PrivateRun run, DpSgdTrainer trainer, ExampleSource data, Model net,
                                         DpSgdConfig config, long from, org.nd4j.linalg.api.ndarray.INDArray ema,
                                         DpSgdSettings settings, org.dpdl4j.accounting.PrivacyEvent before)
            throws java.io.IOException {
        try (run) {
            long every = run.checkpointEvery();
            releaseStatistics(net, data, config, settings);
            data = settings.trainingData(data);
            TrainingResult result = from > 0 ? trainer.resume(new Checkpoint(net, config, from, ema), data, every, run.checkpoints(),
                    listeners) : every > 0 ? trainer.train(net, data, config, every, run.checkpoints(), listeners)
                    : trainer.train(net, data, config, listeners);
            java.util.Map<String, Object> configuration = new java.util.LinkedHashMap<>();
            configuration.put("dataset", run.state().get("dataset"));
            configuration.putAll(settings.configuration(data.size(), result.stepsTaken()));
            clipNormsOf(net, settings, configuration);
            configuration.put("resumed_from_step", from > 0 ? from : null);
            // not the ledger's charge: its sequence number counts the ledger's entries, among them an earlier tuning's
            // trial records, whose number K that tuning did not release (the ledger binds the release to the charge)
            PrivateModel release = PrivateModel.of(net, "training", claimed(before, settings.event(result.event())),
                    (String) run.state().get("accountant"),
                    config.delta(), input != null ? input : inputOf((String) run.state().get("image_size")), configuration);
            run.release(release, OBSOLETE, release.event());
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
        java.util.List<String> changed = new java.util.ArrayList<>(settings().differences(DpSgdSettings.DEFAULTS));
        if (output != null) {
            changed.add("output");
        }
        if (ledger != null) {
            changed.add("ledger");
        }
        if (!changed.isEmpty()) {
            throw new IllegalArgumentException(what + ": " + String.join(", ", changed) + " cannot change on resume (the run "
                    + "continues as it was planned and charged); only workers, listeners, checkpointEvery, clippedSums, seed, "
                    + "read_cache_mb, input and provenance may be set");
        }
        try {
            org.dpdl4j.release.PrivateRun.Resumption r = org.dpdl4j.release.PrivateRun.resume(resumeFrom, what);
            if (r.releasedNow()) {
                // what this run released, a non-private run's too (the sidecar is verified either way)
                return PrivateModel.load(resumeFrom, org.dpdl4j.release.LoadPolicy.any());
            }
            org.dpdl4j.release.PrivateRun run = r.run();
            try {
                java.util.Map<String, Object> state = run.state();
                if (provenance != null && !provenance.dataset().equals(state.get("dataset"))) { // a named data set has no
                    throw new IllegalArgumentException(what + ": the run was planned and charged on " + state.get("dataset")
                            + ", not on " + provenance.dataset() + ": resume it on that data set");    // digest to tell them apart
                }
                run.checkData(what, provenance != null ? provenance.dataset() : (String) state.get("dataset"), data.size(),
                        provenance != null ? provenance.dataSha256() : org.dpdl4j.datasets.Sha256.of(data));
                if (checkpointEvery > 0) {
                    run = run.checkpointEvery(checkpointEvery);
                }
                DpSgdSettings planned = DpSgdSettings.fromMap(state, settings()); // how it runs (seed, cache): as set here
                if (planned.augmult() > 1) {
                    planned = DpSgdSettings.builder().settings(planned).augmult(augmentationOf(state, what), planned.augmult()).build();
                }
                DpSgdConfig config = planned.config(planned.samplingRate(), planned.noiseMultiplier(),
                        ((Number) state.get("steps")).longValue(), workers); // fresh randomness unless seeded here
                network = run.network();
                return trainAndRelease(run, trainer(planned, data), data, network, config, run.stepsDone(), run.ema(), planned,
                        state.get(org.dpdl4j.release.CheckpointState.EARLIER_CLAIM) instanceof java.util.Map<?, ?> m
                                ? earlierClaimOf(m, what) : null);
            } catch (RuntimeException e) {
                run.close();
                throw e;
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("could not continue the run in " + resumeFrom, e);
        }
    }

    /** The earlier claim a plan holds (a run of a network trained before), read back as the event it was. */
    private static org.dpdl4j.accounting.PrivacyEvent earlierClaimOf(java.util.Map<?, ?> map, String what) {
        try {
            return org.dpdl4j.accounting.PrivacyEvents.fromMap(map);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(what + ": the plan's earlier_claim " + map + " is refused: " + e.getMessage(), e);
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
