package org.dpdl4j.dpsgd;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.deeplearning4j.nn.api.Layer;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * Exact per-example gradients of a DL4J {@link MultiLayerNetwork} or {@link ComputationGraph}, computed on ND4J's
 * declarable ops (conv2d, conv2d_bp, im2col, maxpool2d, batched matmul) rather than DL4J's layer objects, one kernel
 * per vertex in topological order ({@link NetworkPlan}); a layer without a kernel runs through DL4J's own backprop one
 * example at a time (exact, slower). Frozen layers ({@code FrozenLayer}, {@code FrozenLayerWithBackprop},
 * {@code TransferLearning.setFeatureExtractor}) keep no per-example state, and the frozen prefix runs forward only.
 * The network stays the model's description: its configuration says what to run, its parameter
 * views are read in place, and gradients are written into flattened arrays with the network's own
 * parameter layout — so a privately trained model is served like any other DL4J model.
 *
 * <p>One {@link #compute} = one forward pass keeping each vertex's input, one backward pass keeping
 * each trainable layer's per-example output delta; then {@link #squaredNorms()} gives
 * ‖g_i‖² over <em>all</em> trainable parameters of example i, and {@link #addWeightedSum} adds
 * Σ_i w_i g_i into a gradient array. With w_i = min(1, C/‖g_i‖) that is DP-SGD's clipped sum.
 * No approximations, and no batch-of-1 loops outside the fallback. A step's sums ({@link #clippedSum} and the others:
 * physical chunks, the clipping, augmentation multiplicity's mean of copies) are formed on this engine by the
 * package-private {@code StepSums}; a fixed prefix's output, computed once per example, by {@code FixedPrefix}.
 *
 * <p>The loss is the per-example (un-averaged) softmax cross-entropy, so g_i is the gradient of
 * example i's loss, as in DL4J where a batch gradient is the sum over the batch.
 * Not thread-safe: one instance per network and thread. Its scratch memory is an ND4J workspace of the thread that
 * computes, kept between calls; {@link #releaseScratch()} frees it when the instance is done with.
 */
public final class PerExampleGradients {
    /** Scratch memory reused across batches and chunks: allocation outside a workspace costs more than the maths. */
    final ScratchMemory scratch = new ScratchMemory("dpdl4j-pex-" + System.identityHashCode(this));
    /** A step's sums over its rows on this engine: the chunks, the clipping, augmentation multiplicity. */
    private final StepSums sums = new StepSums(this);
    private final Model network;
    final List<NetworkPlan.Step> steps;
    private final OutputKernel output;
    final DataType dataType;
    /** Whether a step's backward pass is needed: it trains parameters, or one of its inputs' steps needs its gradient. */
    private final boolean[] backward;
    /** Whether a step must return the gradient with respect to its inputs (some step upstream of it trains). */
    private final boolean[] inputGradient;
    /** The fixed prefix (steps whose output is computed once per example) and whether the sums read its output. */
    final FixedPrefix prefix;
    INDArray squaredNorms;
    INDArray losses;
    /** The rank of the network's input: 2, 3 or 4; 0 when its first steps take any shape. */
    private final int inputRank;
    /** Whether a step's kernel may mix examples ({@link LayerKernel#mayMixExamples}), and whether a real batch checked it. */
    private final boolean mayMix;
    boolean mixingChecked;
    /** Whether a real batch showed a step mixing examples: every later batch is computed one example at a time. */
    boolean oneAtATime;

    /** From now on one example at a time: a real batch showed a step that mixes examples ({@code why}). */
    void computeOneAtATime(MixingCheck.Mixed why) {
        oneAtATime = true;
        LOG.warn("{}; from here on this engine computes one example at a time (each example's gradient its own), which is "
                + "slower", why.getMessage());
    }
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PerExampleGradients.class);
    /** Whether a step runs a user's kernel ({@link ExternalKernel}, also inside another), whose cached values the engine cannot zero. */
    private final boolean userKernels;

    /** Whether a step runs a user's kernel: a non-finite example is then left out by computing its chunk again. */
    boolean hasUserKernels() {
        return userKernels;
    }

    /**
     * The per-example gradients of a MultiLayerNetwork, reading its parameters in place.
     *
     * @param network an initialised network that passes {@link DpCompatibility#check(org.deeplearning4j.nn.conf.MultiLayerConfiguration)}
     * @throws IllegalArgumentException if the network has a layer the engine cannot run exactly
     */
    public PerExampleGradients(MultiLayerNetwork network) {
        this(NetworkPlan.of(network));
    }

    /**
     * The per-example gradients of a ComputationGraph, reading its parameters in place.
     *
     * @param network an initialised graph with one input and one output that passes
     *                {@link DpCompatibility#check(org.deeplearning4j.nn.conf.ComputationGraphConfiguration)}
     * @throws IllegalArgumentException if the graph has a vertex the engine cannot run exactly
     */
    public PerExampleGradients(ComputationGraph network) {
        this(NetworkPlan.of(network));
    }

    /**
     * The per-example gradients of either network type.
     *
     * @param network a {@link MultiLayerNetwork} or a {@link ComputationGraph}, initialised
     * @return a new instance for that network (one per thread)
     * @throws IllegalArgumentException if it is neither, or has a layer the engine cannot run exactly
     */
    public static PerExampleGradients of(Model network) {
        return new PerExampleGradients(NetworkPlan.of(network));
    }

    private PerExampleGradients(NetworkPlan plan) {
        this.network = plan.network;
        this.steps = plan.steps;
        this.dataType = network.params().dataType();
        int n = steps.size();
        this.output = (OutputKernel) steps.get(n - 1).kernel();
        // a step needs its input gradient when some step it reads trains or needs its own input gradient
        boolean[] upstream = new boolean[n]; // the step or a step before it on some path trains
        this.inputGradient = new boolean[n];
        for (int s = 0; s < n; s++) {
            NetworkPlan.Step step = steps.get(s);
            for (int in : step.inputs()) {
                inputGradient[s] |= in != NetworkPlan.NETWORK_INPUT && upstream[in] && !plan.stopsGradient.contains(s);
            }
            upstream[s] = step.trainable() || inputGradient[s];
        }
        this.backward = upstream;
        for (int s = 0; s < n; s++) {
            steps.get(s).kernel().trainable = steps.get(s).trainable();
            if (inputGradient[s] && !steps.get(s).kernel().hasInputGradient()) {
                throw new IllegalArgumentException(steps.get(s).where() + " has no input gradient, so no layer before it can be "
                        + "trained: put it first, or freeze the layers before it");
            }
        }
        this.prefix = new FixedPrefix(NetworkPlan.fixedPrefix(steps, upstream));
        this.inputRank = inputRank(steps);
        this.mayMix = steps.stream().anyMatch(s -> s.kernel().mayMixExamples());
        this.userKernels = steps.stream().anyMatch(s -> !s.kernel().zeroesNonFinite());
    }

    /**
     * Checks, on a batch of at least two distinct examples, that every step the engine cannot vouch for (DL4J's fallback
     * for a layer or vertex without a kernel, a user's kernel) gives each example an output of its own, wherever it
     * stands in the network (trained, frozen, or before every trained layer): run on each example alone and beside
     * other partners, its output for an example must equal that example's rows of the batch's output; an embedding's
     * index out of its vocabulary is refused here too (in a run it gives its example factor 0). The engine checks
     * again on the first real batch of two or more examples it computes; {@link DpCompatibility#check(Model,
     * org.dpdl4j.datasets.ExampleSource)} runs this at plan time on a synthetic batch, before anything is charged.
     *
     * @param features    a batch of at least two examples, in the rank the network reads ({@link #inputRank()})
     * @param featureMask their feature mask [B, T], or null
     * @throws IllegalArgumentException naming the first step whose output for one example depends on the others (or is
     *                                  random, or cannot be computed for one example alone), or if the features are not
     *                                  of the rank the network reads
     */
    public void requireExamplesUnmixed(INDArray features, INDArray featureMask) {
        features = conform(features);
        if (inputRank > 0 && features.rank() != inputRank) {
            throw new IllegalArgumentException("the network reads " + describeRank(inputRank) + " input, got features of shape "
                    + java.util.Arrays.toString(features.shape()));
        }
        List<EmbeddingKernel> embeddings = kernels(EmbeddingKernel.class);
        if (!mayMix && embeddings.isEmpty()) {
            return; // every step is the engine's own and reads any value: nothing to check
        }
        for (NetworkPlan.Step step : steps) {
            step.kernel().training = true;
        }
        embeddings.forEach(e -> e.strict = true); // indices from the data's first examples: refused here, not mid-run
        try (MemoryWorkspace ws = scratch.open()) {
            forward(features.castTo(dataType), featureMask, false, false, true);
        } finally {
            embeddings.forEach(e -> e.strict = false);
            clear();
        }
    }

    /** The rank the steps reading the network's input declare (looking through the kernels that pass any shape on). */
    private static int inputRank(List<NetworkPlan.Step> steps) {
        int rank = 0;
        java.util.Deque<Integer> readers = new java.util.ArrayDeque<>();
        for (int s = 0; s < steps.size(); s++) {
            for (int in : steps.get(s).inputs()) {
                if (in == NetworkPlan.NETWORK_INPUT) {
                    readers.add(s);
                }
            }
        }
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        while (!readers.isEmpty() && rank == 0) {
            int s = readers.poll();
            if (!seen.add(s)) {
                continue;
            }
            LayerKernel k = steps.get(s).kernel();
            if (k.inputRank() > 0) {
                rank = k.inputRank();
            } else if (k.passesShape()) {
                for (int t = s + 1; t < steps.size(); t++) {
                    for (int in : steps.get(t).inputs()) {
                        if (in == s) {
                            readers.add(t);
                        }
                    }
                }
            }
        }
        return rank;
    }

    /**
     * The rank of the features this network reads: 2 ([B, d]: a first dense layer, or DL4J's feed-forward-to-CNN
     * preprocessor of {@code InputType.convolutionalFlat}), 4 ([B, c, h, w]: a first convolution, as
     * {@code InputType.convolutional} builds it), 3 ([B, f, T]: a recurrent or 1-D first layer), or 0 when its first
     * layers take any shape. {@link org.dpdl4j.datasets.LabeledData#features(int)} gives data in this rank.
     *
     * @return 2, 3 or 4, or 0 for any rank
     */
    public int inputRank() {
        return inputRank;
    }

    /**
     * Images or sequences for a network that reads them flat (DL4J's {@code InputType.convolutionalFlat}, whose
     * FeedForwardToCnn preprocessor takes [B, c, h, w] as DL4J's own {@code fit} does): flattened in C order, as that
     * preprocessor reads them; any other input as it is.
     */
    private INDArray conform(INDArray features) {
        return inputRank == 2 && features.rank() > 2 ? features.reshape('c', features.size(0), features.length() / features.size(0))
                : features;
    }

    /**
     * @throws IllegalArgumentException if {@code features} are not of the rank the network reads (saying which, and
     *                                  how to give them)
     */
    private void requireInputRank(INDArray features) {
        if (inputRank > 0 && features.rank() != inputRank && !prefix.read) {
            throw new IllegalArgumentException("the network reads " + describeRank(inputRank) + " input (its first layer: "
                    + steps.get(0).where() + "), got features of shape " + java.util.Arrays.toString(features.shape())
                    + ": give the data in that shape (LabeledData.features(" + inputRank + ") reshapes flattened images)");
        }
    }

    private static String describeRank(int rank) {
        return switch (rank) {
            case 2 -> "flat [B, d]";
            case 3 -> "sequence [B, f, T]";
            case 4 -> "image [B, c, h, w]";
            default -> "rank-" + rank;
        };
    }

    /**
     * Whether the network starts with a fixed prefix: layers that nothing trains (frozen, or without parameters, such
     * as the scattering transform) and that draw no random numbers, whose output can be computed once per example with
     * {@link #fixedPrefixOutput} and read by every later step in place of the network's input.
     *
     * @return true if the network has a fixed prefix
     */
    public boolean hasFixedPrefix() {
        return prefix.length > 0;
    }

    /**
     * The fixed prefix's output for rows [from, to) of {@code features}, one flattened row per example, computed in
     * chunks of at most {@code chunk} rows. After {@link #readFixedPrefixOutput}, {@link #clippedSum} and friends take
     * rows of such an array as their features and give exactly what they give on the raw rows (the prefix is a
     * function of each row alone).
     *
     * @param features network inputs [n, c·h·w] (or [n, c, h, w])
     * @param from     the first row, in [0, n]
     * @param to       the end row (exclusive), in [from, n]
     * @param chunk    rows computed at once, ≥ 1
     * @return [to − from, d] in the network's data type, outside any workspace; null when {@code from == to}
     * @throws IllegalStateException if the network has no fixed prefix
     */
    public INDArray fixedPrefixOutput(INDArray features, int from, int to, int chunk) {
        return prefix.output(this, features, from, to, chunk);
    }

    /**
     * Makes {@link #compute}, {@link #clippedSum}, {@link #addClippedSum} and {@link #addBatchGradient} read their
     * features as rows of {@link #fixedPrefixOutput} of the same network ({@code true}) or as network inputs
     * ({@code false}, the default). {@link #output} always reads network inputs.
     *
     * @param yes          true to read rows of the fixed prefix's output, false to read network inputs
     * @param exampleShape the per-example shape of that output, [1, ...] ({@link #fixedPrefixShape()} of the instance
     *                     that computed it); ignored when {@code yes} is false
     * @throws IllegalStateException if {@code yes} and the network has no fixed prefix or the shape is missing
     */
    public void readFixedPrefixOutput(boolean yes, long[] exampleShape) {
        prefix.read(yes, exampleShape);
        sums.forgetChunkRows(); // the chunk depends on what the sums read
    }

    /**
     * The per-example shape [1, ...] of the last {@link #fixedPrefixOutput}, or null before the first.
     *
     * @return a copy of the shape, or null
     */
    public long[] fixedPrefixShape() {
        return prefix.exampleShape == null ? null : prefix.exampleShape.clone();
    }

    static INDArray[] inputsOf(NetworkPlan.Step step, INDArray features, INDArray[] outputs) {
        int[] in = step.inputs();
        INDArray[] x = new INDArray[in.length];
        for (int j = 0; j < in.length; j++) {
            x[j] = in[j] == NetworkPlan.NETWORK_INPUT ? features : outputs[in[j]];
        }
        return x;
    }

    /** The kernels of this class, in topological order (tests reach into them, e.g. to fix a dropout mask). */
    <K extends LayerKernel> List<K> kernels(Class<K> type) {
        return steps.stream().map(NetworkPlan.Step::kernel).filter(type::isInstance).map(type::cast).toList();
    }

    /**
     * The network these gradients belong to: a {@link MultiLayerNetwork} or a {@link ComputationGraph}.
     *
     * @return the network, not a copy
     */
    public Model network() {
        return network;
    }

    /**
     * Class probabilities [B, classes] for features [B, c·h·w] (or [B, c, h, w]); equals
     * {@code network.output(features)}.
     *
     * @param features the examples' features, in the rank the network reads ({@link #inputRank()})
     * @return the network's output [B, ...], detached from any workspace
     * @throws IllegalArgumentException if the features are not of the rank the network reads
     */
    public INDArray output(INDArray features) {
        return output(features, null);
    }

    /**
     * {@link #output(INDArray)} for sequences with a feature mask ([B, T], or null).
     *
     * @param features    the examples' features, in the rank the network reads ({@link #inputRank()})
     * @param featureMask [B, T] (1: a step of the example, 0: padding), or null
     * @return the network's output [B, ...], detached from any workspace
     * @throws IllegalArgumentException if the features are not of the rank the network reads, or a mask reaches a layer
     *                                  whose kernel takes none
     */
    public INDArray output(INDArray features, INDArray featureMask) {
        features = conform(features);
        if (inputRank > 0 && features.rank() != inputRank) {
            throw new IllegalArgumentException("the network reads " + describeRank(inputRank) + " input, got features of shape "
                    + java.util.Arrays.toString(features.shape()));
        }
        for (NetworkPlan.Step step : steps) {
            step.kernel().training = false;
        }
        try (MemoryWorkspace ws = scratch.open()) {
            return forward(features.castTo(dataType), featureMask, false, false, false).detach();
        } finally {
            clear();
        }
    }

    /**
     * The forward pass; keeps what the backward pass needs in the steps that have one when {@code keep}. With
     * {@code fromPrefix}, {@code features} are rows of the fixed prefix's output and the pass starts after it. With
     * {@code checkMixing}, each step that {@link LayerKernel#mayMixExamples} is first checked on the inputs it receives
     * ({@link MixingCheck}).
     */
    private INDArray forward(INDArray features, INDArray featureMask, boolean keep, boolean fromPrefix, boolean checkMixing) {
        INDArray[] outputs = new INDArray[steps.size()];
        INDArray[] masks = new INDArray[steps.size()];
        int start = fromPrefix ? prefix.enter(features, outputs) : 0;
        INDArray inputMask = featureMask == null ? null : featureMask.castTo(dataType);
        for (int s = start; s < steps.size(); s++) {
            NetworkPlan.Step step = steps.get(s);
            LayerKernel k = step.kernel();
            INDArray mask = null;
            for (int in : step.inputs()) {
                mask = mask != null ? mask : in == NetworkPlan.NETWORK_INPUT ? inputMask : masks[in];
            }
            if (mask != null && !k.acceptsMask()) {
                throw new IllegalArgumentException(step.where() + " is given a feature mask (a sequence's padding), which its "
                        + "DP-SGD kernel does not take; masks are for recurrent, 1-D, pooling and output layers over sequences");
            }
            k.mask = mask;
            k.examples = features.size(0);
            if (checkMixing && k.mayMixExamples()) {
                MixingCheck.requireUnmixed(k, inputsOf(step, features, outputs), mask, step.where());
            }
            outputs[s] = k.forward(inputsOf(step, features, outputs), keep && backward[s]);
            masks[s] = mask == null ? null : k.outputMask();
        }
        INDArray out = outputs[steps.size() - 1];
        if (!(output instanceof SequenceLossKernel) && out.size(0) != features.size(0)) {
            throw new IllegalArgumentException(steps.get(steps.size() - 1).where() + " receives " + out.size(0) + " rows for "
                    + features.size(0) + " examples: one per time step (DL4J's RnnToFeedForwardPreProcessor before it); use "
                    + "an RnnOutputLayer, or pool the time steps first (GlobalPoolingLayer, LastTimeStep)");
        }
        return out;
    }
    /**
     * DP-SGD's clipped sum for one physical batch, in scratch memory: adds
     * Σ_i min(1, C/‖g_i‖)·g_i over the given rows into {@code target}.
     *
     * @param features all features [n, c·h·w]
     * @param labels   all one-hot labels [n, classes]
     * @param rows     the rows of this batch (non-empty)
     * @param clipNorm C &gt; 0
     * @param target   flattened gradient [1, numParams] (outside any workspace)
     * @return the sum of the batch's per-example losses
     * @throws IllegalArgumentException if {@code rows} is empty, the features are not of the rank the network reads, or
     *                                  {@code target} does not hold one value per parameter
     */
    public double addClippedSum(INDArray features, INDArray labels, int[] rows, double clipNorm, INDArray target) {
        return sums.addClippedSum(features, labels, null, null, rows, clipNorm, target);
    }

    /**
     * A step's whole clipped sum: {@code target} is set to Σ_i min(1, C/‖g_i‖)·g_i over the rows (with C = ∞, the
     * non-private mode: Σ_i g_i), computed in physical chunks of at most {@code physicalBatchSize} rows (DP-SGD: at most
     * {@link ChunkRows}, which bounds DL4J's memory estimate of a chunk). The one
     * place where every executor of the engine (local workers, Spark tasks) forms its part of a step's sum.
     *
     * @param features          all features [n, c·h·w]
     * @param labels            all one-hot labels [n, classes]
     * @param rows              the rows (may be empty: the sum is then 0)
     * @param clipNorm          C &gt; 0, or +∞ for the non-private mode
     * @param physicalBatchSize rows pushed through the network at once, ≥ 1
     * @param target            flattened gradient [1, numParams] (outside any workspace), overwritten
     * @return the sum of the rows' per-example losses
     * @throws IllegalArgumentException if the features are not of the rank the network reads, or {@code target} does not
     *                                  hold one value per parameter
     */
    public double clippedSum(INDArray features, INDArray labels, int[] rows, double clipNorm, int physicalBatchSize, INDArray target) {
        return clippedSum(features, labels, null, null, rows, clipNorm, physicalBatchSize, target);
    }

    /**
     * {@link #clippedSum(INDArray, INDArray, int[], double, int, INDArray)} for sequences with masks (rows of them are
     * taken with the features' rows).
     *
     * @param features          all features [n, f, T] (or of the rank the network reads)
     * @param labels            all labels [n, classes] or [n, classes, T]
     * @param featureMask       all feature masks [n, T], or null
     * @param labelMask         all label masks [n, T] (or [n, 1]), or null
     * @param rows              the rows (may be empty: the sum is then 0)
     * @param clipNorm          C &gt; 0, or +∞ for the non-private mode
     * @param physicalBatchSize rows pushed through the network at once, ≥ 1
     * @param target            flattened gradient [1, numParams] (outside any workspace), overwritten
     * @return the sum of the rows' per-example losses
     * @throws IllegalArgumentException if the features are not of the rank the network reads, a mask reaches a layer
     *                                  whose kernel takes none, or {@code target} does not hold one value per parameter
     */
    public double clippedSum(INDArray features, INDArray labels, INDArray featureMask, INDArray labelMask, int[] rows, double clipNorm,
                             int physicalBatchSize, INDArray target) {
        return sums.clippedSum(features, labels, featureMask, labelMask, rows, clipNorm, physicalBatchSize, target);
    }

    /**
     * {@link #clippedSum} with augmentation multiplicity (De et al., "Unlocking High-Accuracy Differentially Private Image
     * Classification through Scale", arXiv:2204.13650, Sec. 3.2): {@code features} holds k consecutive rows per example,
     * its augmented copies (example i at rows i·k … i·k + k − 1), and example i's gradient is the mean of its copies',
     * ḡ_i = (1/k) Σ_j g_ij, clipped as a whole: {@code target} = Σ_i min(1, C/‖ḡ_i‖)·ḡ_i over the rows. One example
     * still changes the sum by at most C, whatever k, so a step's event is DP-SGD's. Where every trained layer has
     * grouped norms (all but layers on the DL4J fallback: dense and output layers from Gram matrices, GroupNorm and
     * convolutions from their copies' summed gradients) the chunks are as in {@link #clippedSum}; otherwise each
     * example's summed gradient is formed one example at a time (exact, slower).
     *
     * @param features k·n rows: the copies of n examples (network inputs, or the fixed prefix's output)
     * @param labels   one-hot labels of the n examples [n, classes]
     * @param rows     the examples (indices into labels; may be empty: the sum is then 0)
     * @param clipNorm C: finite and &gt; 0 when k &gt; 1 (with k = 1, as for {@link #clippedSum})
     * @param physicalBatchSize rows (copies) pushed through the network at once, ≥ 1
     * @param target   flattened gradient [1, numParams] (outside any workspace), overwritten
     * @param copies   k ≥ 1 (1: {@link #clippedSum})
     * @return the rows' per-example losses, each the mean over its copies, summed
     * @throws IllegalArgumentException if k &lt; 1, C is not finite and positive, or features do not hold k rows per label
     */
    public double clippedSum(INDArray features, INDArray labels, int[] rows, double clipNorm, int physicalBatchSize, INDArray target,
                             int copies) {
        return sums.clippedSum(features, labels, rows, clipNorm, physicalBatchSize, target, copies);
    }

    /**
     * Frees this object's scratch memory on the calling thread (each thread that computed with it has its own). ND4J
     * keeps a thread's workspaces until they are destroyed, so without this every training run or trial in a
     * long-lived thread kept its scratch memory (hundreds of MB for ResNet50) for the life of the thread.
     */
    public void releaseScratch() {
        scratch.release();
    }

    /** The chunks the last clipped sum was computed in (for tests). */
    int lastChunks() {
        return sums.lastChunks;
    }

    /** Whether the calling thread holds this object's scratch memory (for tests). */
    boolean holdsScratch() {
        return scratch.held();
    }

    /**
     * The non-private mode of the engine (no clipping, no per-example state): adds the gradient of
     * the summed loss over the given rows, Σ_i g_i, into {@code target}, with the same forward
     * kernels as {@link #addClippedSum} and each layer's batch backward pass (libnd4j's conv2d_bp for
     * convolutions). It is DL4J's batch gradient; it gives no privacy and is what the DP-SGD engine
     * is measured against.
     *
     * @param features all features [n, c·h·w]
     * @param labels   all one-hot labels [n, classes]
     * @param rows     the rows of this batch (non-empty)
     * @param target   flattened gradient [1, numParams] (outside any workspace)
     * @return the sum of the batch's per-example losses
     * @throws IllegalArgumentException if {@code rows} is empty, the features are not of the rank the network reads, or
     *                                  {@code target} does not hold one value per parameter
     */
    public double addBatchGradient(INDArray features, INDArray labels, int[] rows, INDArray target) {
        return sums.addBatchGradient(features, labels, null, null, rows, target);
    }

    /**
     * Forward and backward pass on a batch, keeping per-example state for {@link #squaredNorms()}
     * and {@link #addWeightedSum}.
     *
     * @param features [B, c·h·w] (or already [B, c, h, w]), B ≥ 1
     * @param labels   one-hot [B, classes]
     * @throws IllegalArgumentException if the batch is empty or shapes disagree
     */
    public void compute(INDArray features, INDArray labels) {
        compute(features, labels, null, null);
    }

    /**
     * {@link #compute(INDArray, INDArray)} for sequences with masks: each example's own masks in its own gradient.
     *
     * @param features    [B, f, T] (or of the rank the network reads), B ≥ 1
     * @param labels      [B, classes] or [B, classes, T]
     * @param featureMask [B, T] (1: a step of the example, 0: padding), or null
     * @param labelMask   [B, T] for an RnnOutputLayer, [B, 1] for an output layer with one label per example, or null
     * @throws IllegalArgumentException if the batch is empty, shapes disagree, or a mask reaches a layer whose kernel
     *                                  takes none
     */
    public void compute(INDArray features, INDArray labels, INDArray featureMask, INDArray labelMask) {
        passes(features, labels, featureMask, labelMask, true, true);
        squaredNorms = Nd4j.zeros(DataType.DOUBLE, features.size(0)); // accumulated in float64
        for (NetworkPlan.Step step : steps) {
            if (step.trainable()) {
                step.kernel().addSquaredNorms(squaredNorms);
            }
        }
    }

    void passes(INDArray features, INDArray labels, boolean perExample) {
        passes(features, labels, null, null, perExample, false);
    }

    /**
     * The forward and backward passes; with {@code checkMixing}, the first batch of two or more examples is also checked
     * ({@link MixingCheck}). A step found to mix them then (the check before the run passed: a difference that only real
     * data shows, or rounding that differs between a batch and one example) is not a refusal after the run was charged:
     * this engine computes one example at a time from then on ({@link #oneAtATime}), which keeps every example's
     * gradient its own, and {@link MixingCheck.Mixed} tells the caller to compute this batch so too.
     */
    void passes(INDArray features, INDArray labels, INDArray featureMask, INDArray labelMask, boolean perExample,
                boolean checkMixing) {
        features = prefix.read ? features : conform(features);
        requireInputRank(features);
        if (features.size(0) == 0 || features.size(0) != labels.size(0)) {
            throw new IllegalArgumentException("features and labels must have the same non-zero number of rows, got "
                    + features.size(0) + " and " + labels.size(0));
        }
        INDArray y = labels.castTo(dataType);
        for (NetworkPlan.Step step : steps) {
            step.kernel().perExample = perExample;
            step.kernel().training = true;
        }
        boolean check = checkMixing && !mixingChecked && !oneAtATime && features.size(0) >= 2 && mayMix; // a first real batch
        try {
            forward(features.castTo(dataType), featureMask, true, prefix.read, check);
        } finally {
            mixingChecked |= check;
        }
        INDArray lm = labelMask == null ? null : labelMask.castTo(dataType);
        losses = output.loss(y, lm);
        int last = steps.size() - 1;
        INDArray[] grads = new INDArray[steps.size()]; // dL/d(output of step s), summed over the steps that read it
        propagate(steps.get(last), new INDArray[]{output.backwardFromLabels(y, lm, inputGradient[last])}, grads);
        for (int s = last - 1; s >= 0; s--) {
            if (backward[s] && grads[s] != null) {
                propagate(steps.get(s), steps.get(s).kernel().backwardInputs(grads[s], inputGradient[s]), grads);
                grads[s] = null;
            }
        }
    }

    /** Rows of features, labels or masks of any rank, the rank kept (null for a null array). */
    static INDArray rowsOf(INDArray a, int[] rows) {
        return a == null ? null : org.dpdl4j.datasets.LabeledData.gatherRows(a, rows);
    }

    /** Adds a step's input gradients to the gradients of the steps it reads. */
    private static void propagate(NetworkPlan.Step step, INDArray[] inputGrads, INDArray[] grads) {
        if (inputGrads == null) {
            return;
        }
        for (int j = 0; j < step.inputs().length; j++) {
            int in = step.inputs()[j];
            if (in != NetworkPlan.NETWORK_INPUT && inputGrads[j] != null) {
                grads[in] = grads[in] == null ? inputGrads[j] : grads[in].add(inputGrads[j]);
            }
        }
    }

    /**
     * ‖g_i‖² over all trainable parameters, per example [B] (float64), of the last {@link #compute}.
     *
     * @return the squared norms [B], float64, each ≥ 0 up to rounding (not finite for a non-finite gradient)
     * @throws IllegalStateException if nothing has been computed since the last {@link #clear()}
     */
    public INDArray squaredNorms() {
        requireComputed();
        return squaredNorms;
    }

    /**
     * Per-example loss [B] of the last {@link #compute}.
     *
     * @return the per-example losses [B]
     * @throws IllegalStateException if nothing has been computed since the last {@link #clear()}
     */
    public INDArray losses() {
        requireComputed();
        return losses;
    }

    /**
     * Clip factors min(1, C/‖g_i‖) [B] for the last batch (float64), shrunk by a relative margin
     * ({@code 1e-5} in float32, {@code 1e-12} in float64) so that rounding when the factors are
     * applied cannot leave a clipped gradient above C. An example whose gradient is not finite
     * (NaN or overflow) gets factor 0 and its cached values are zeroed: it contributes nothing,
     * whatever it holds, so a poisoned example cannot change the run's behaviour.
     *
     * @param clipNorm C &gt; 0
     * @return the clip factors [B], float64, in [0, 1]
     * @throws IllegalStateException if nothing has been computed since the last {@link #clear()}
     */
    public INDArray clipFactors(double clipNorm) {
        requireComputed();
        return Nd4j.createFromArray(clipFactors(squaredNorms.toDoubleVector(), clipNorm, 1));
    }

    /**
     * min(1, C/(s·√sq_i)) per entry, shrunk by the margin of {@link #clipFactors(double)}; 0 where sq_i is not finite
     * (and then every kernel's cached non-finite values are zeroed). A negative sq_i (float64 rounding of a sum whose
     * true value is about 0) counts as 0.
     */
    double[] clipFactors(double[] sq, double clipNorm, double scale) {
        double margin = dataType == DataType.DOUBLE ? 1e-12 : 1e-5;
        double c = clipNorm * (1 - margin);
        double[] factors = new double[sq.length];
        boolean nonFinite = false;
        for (int i = 0; i < sq.length; i++) {
            if (Double.isFinite(sq[i])) {
                double norm = scale * Math.sqrt(Math.max(0, sq[i]));
                factors[i] = norm <= c ? 1.0 : c / norm;
            } else {
                nonFinite = true;
            }
        }
        if (nonFinite) {
            for (NetworkPlan.Step step : steps) {
                step.kernel().zeroNonFinite();
            }
        }
        return factors;
    }

    /**
     * Adds Σ_i w_i g_i into {@code target}, a flattened gradient with the network's parameter layout
     * (e.g. {@code network.getFlattenedGradients()}).
     *
     * @param weights [B] per-example weights (clip factors, or one-hot to read a single g_i)
     * @param target  [1, numParams] with the network's data type
     * @throws IllegalStateException    if nothing has been computed since the last {@link #clear()}
     * @throws IllegalArgumentException if {@code target} does not hold one value per parameter
     */
    public void addWeightedSum(INDArray weights, INDArray target) {
        requireComputed();
        INDArray w = weights.castTo(dataType).reshape(weights.length(), 1);
        forEachKernelWithViews(target, (kernel, views) -> kernel.addWeightedSum(w, views));
    }

    /** Calls {@code action} with each trainable kernel and its layer's gradient views into {@code target}. */
    void forEachKernelWithViews(INDArray target, java.util.function.BiConsumer<LayerKernel, Map<String, INDArray>> action) {
        if (target.length() != network.numParams()) {
            throw new IllegalArgumentException("target has " + target.length() + " elements, the network has "
                    + network.numParams() + " parameters");
        }
        INDArray row = target.reshape(1, target.length());
        long base = network.params().offset();
        for (NetworkPlan.Step step : steps) {
            if (!step.trainable()) {
                continue;
            }
            Layer layer = step.layer();
            long n = layer.numParams();
            long offset = layer.params().offset() - base; // the layer's parameters are a view of the network's
            INDArray slice = row.get(NDArrayIndex.point(0), NDArrayIndex.interval(offset, offset + n)).reshape(1, n);
            action.accept(step.kernel(), step.kernel().addsFlatGradients() ? Map.of(LayerKernel.FLAT, slice)
                    : layer.conf().getLayer().initializer().getGradientsFromFlattened(layer.conf(), slice));
        }
    }

    /** Drops the cached activations of the last batch. */
    public void clear() {
        for (NetworkPlan.Step step : steps) {
            step.kernel().clear();
        }
        squaredNorms = null;
        losses = null;
    }

    private void requireComputed() {
        if (squaredNorms == null) {
            throw new IllegalStateException("call compute(features, labels) first");
        }
    }
}
