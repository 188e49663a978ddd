package org.dpdl4j.dpsgd;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.ComputationGraphConfiguration;
import org.deeplearning4j.nn.conf.GradientNormalization;
import org.deeplearning4j.nn.conf.InputPreProcessor;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.dropout.Dropout;
import org.deeplearning4j.nn.conf.graph.ElementWiseVertex;
import org.deeplearning4j.nn.conf.graph.FrozenVertex;
import org.deeplearning4j.nn.conf.graph.GraphVertex;
import org.deeplearning4j.nn.conf.graph.LayerVertex;
import org.deeplearning4j.nn.conf.graph.MergeVertex;
import org.deeplearning4j.nn.conf.graph.PreprocessorVertex;
import org.deeplearning4j.nn.conf.layers.BaseLayer;
import org.deeplearning4j.nn.conf.layers.BatchNormalization;
import org.deeplearning4j.nn.conf.layers.Layer;
import org.deeplearning4j.nn.conf.layers.LossLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.misc.FrozenLayer;
import org.deeplearning4j.nn.conf.layers.misc.FrozenLayerWithBackprop;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.models.GroupNormalization;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Checks that a network is one whose per-example gradients the DP-SGD engine computes exactly, and {@link #fix}es what
 * can be fixed, as Opacus's {@code ModuleValidator} does.
 *
 * <p>Accepted: a {@link MultiLayerNetwork}, or a {@link ComputationGraph} with one input and one output, reading flat
 * vectors, images [B, c, h, w] or sequences [B, f, T] (with DL4J's masks), whose last layer is an {@link OutputLayer},
 * {@link LossLayer}, {@code RnnOutputLayer} or {@code RnnLossLayer} with a loss that is a sum of per-example terms (any
 * of DL4J's but the F-measure). Layers with a kernel in {@link LayerKernels} (convolution in any 2-D mode, Same
 * included, weight-standardised convolution, pooling, dense, group normalisation, global pooling, activation, zero
 * padding, dropout, the output layers) run fast; any other layer runs through the exact fallback (DL4J's own backprop,
 * one example at a time) with a warning. Graph vertices: layers, {@link ElementWiseVertex} (Add, Subtract, Average,
 * Product), {@link MergeVertex}, {@link PreprocessorVertex} on kernels; any other vertex without parameters (Scale,
 * Shift, L2Normalize, Subset, Reshape, ElementWise Max, a SameDiff lambda, …) on DL4J's own vertex. Every layer or
 * vertex on DL4J's own code, and every user's kernel, is checked not to mix the examples ({@link #check(Model,
 * org.dpdl4j.datasets.ExampleSource)} on a synthetic batch before a run, and the engine again on its first batch of two or
 * more examples). Frozen layers and vertices (DL4J's {@code FrozenLayer},
 * {@code FrozenLayerWithBackprop}, {@code FrozenVertex}, as {@code TransferLearning} makes them) are not trained.
 * Dropout is DL4J's {@link Dropout} (inverted, fixed retain probability), applied where DL4J applies it (on the input
 * of layers with parameters and of {@code DropoutLayer}). Refused, with the layer or vertex named and what to use
 * instead: batch normalisation and its subclasses (it mixes the examples of a batch), layers and vertices that move
 * examples along the batch (SpaceToBatch, Stack, Unstack), 3-D layers, detection and segmentation heads, a fallback
 * layer or vertex whose output for an example depends on the others, vertices with parameters or
 * that read the graph's input, a {@code FrozenVertex} around a layer, the RReLU activation, other dropout kinds,
 * weight noise, parameter constraints and DL4J's own gradient normalisation (they would act on the noisy gradient or
 * are not executed by the engine).
 *
 * <p>{@link #problems} lists every problem of a configuration at once; {@link #check} throws them all in one message.
 */
public final class DpCompatibility {
    private DpCompatibility() {
    }

    /** The output layer classes the engine trains (exact classes). */
    private static final List<Class<? extends Layer>> OUTPUTS = List.of(OutputLayer.class, LossLayer.class,
            org.deeplearning4j.nn.conf.layers.RnnOutputLayer.class, org.deeplearning4j.nn.conf.layers.RnnLossLayer.class);

    /**
     * Checks a network configuration, throwing all its {@link #problems(MultiLayerConfiguration)} at once.
     *
     * @param conf a DL4J network configuration
     * @throws IllegalArgumentException naming every unsupported layer, setting or preprocessor, and what to use instead
     *                                  (one problem: its message alone; several: numbered, in one message)
     */
    public static void check(MultiLayerConfiguration conf) {
        throwIfAny(problems(conf));
    }

    /**
     * Checks a graph configuration, throwing all its {@link #problems(ComputationGraphConfiguration)} at once.
     *
     * @param conf a DL4J graph configuration
     * @throws IllegalArgumentException naming every unsupported vertex, layer, setting or preprocessor, and what to use
     *                                  instead (one problem: its message alone; several: numbered, in one message)
     */
    public static void check(ComputationGraphConfiguration conf) {
        throwIfAny(problems(conf));
    }

    /**
     * {@link #check} for either network type.
     *
     * @param network an initialised {@link MultiLayerNetwork} or {@link ComputationGraph}
     * @throws IllegalArgumentException naming every problem, or if the network is of neither type
     */
    public static void check(Model network) {
        throwIfAny(problems(network));
    }

    /**
     * {@link #check(Model)}, then the checks that need the data's shape: the engine is built for the network and every
     * step it cannot vouch for (DL4J's fallback for a layer or vertex without a kernel, a user's kernel), wherever it
     * stands, is run on a batch of the data's first examples and {@value MixingCheck#SYNTHETIC_EXAMPLES} synthetic ones
     * in the data's shape (values drawn from those of the first examples, with different lengths under a feature mask): each
     * example alone and beside other partners must get the output it gets in the batch
     * ({@link PerExampleGradients#requireExamplesUnmixed}). Runs and trainings call it before anything is charged.
     *
     * @param network an initialised {@link MultiLayerNetwork} or {@link ComputationGraph}
     * @param data    the data it is to train on, at least one example (its first three are read for their shape and kind
     *                of values; nothing is released)
     * @throws IllegalArgumentException naming every configuration problem, or the first step whose output for one example
     *                                  depends on the other examples (or is random, or cannot be computed for one example
     *                                  alone), or if the data are empty or not of the shape the network reads
     */
    public static void check(Model network, org.dpdl4j.datasets.ExampleSource data) {
        check(network);
        if (data.size() == 0) {
            throw new IllegalArgumentException("the training data hold no example");
        }
        PerExampleGradients g = PerExampleGradients.of(network);
        try {
            org.dpdl4j.datasets.LabeledData first = data.read(java.util.stream.IntStream.range(0, Math.min(2, data.size())).toArray());
            requireLabelsFit(g, first);
            org.dpdl4j.datasets.LabeledData batch = MixingCheck.syntheticBatch(data);
            int rank = g.inputRank();
            g.requireExamplesUnmixed(rank > 0 ? batch.features(rank) : batch.features(), batch.featureMask());
        } finally {
            g.releaseScratch();
        }
    }

    /**
     * Refuses data the network cannot read, or whose labels do not have the network's output shape (an RnnOutputLayer's
     * labels per step must have as many steps as its output: a sequence's label and input lengths that differ), on the
     * data's first examples, before anything is charged; with the shapes named.
     */
    private static void requireLabelsFit(PerExampleGradients g, org.dpdl4j.datasets.LabeledData first) {
        int rank = g.inputRank();
        INDArray out;
        try {
            out = g.output(rank > 0 ? first.features(rank) : first.features(), first.featureMask());
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) { // ND4J's own (a matrix product of the wrong sizes, …): the data's shape, named
            throw new IllegalArgumentException("the network cannot read the data's examples (features "
                    + java.util.Arrays.toString(first.features().shape()) + "): " + e.getMessage() + "; give the data in "
                    + "the shape of the network's input type; nothing was charged", e);
        }
        INDArray y = first.labels();
        boolean fits = out.size(0) == y.size(0) && (out.rank() != 3 || y.rank() == 3 && y.size(2) == out.size(2) && y.size(1) == out.size(1));
        if (!fits) {
            throw new IllegalArgumentException("the network's output for the data's first examples has shape "
                    + java.util.Arrays.toString(out.shape()) + " and their labels " + java.util.Arrays.toString(y.shape())
                    + " (features " + java.util.Arrays.toString(first.features().shape()) + "): "
                    + (out.rank() == 3 ? "an RnnOutputLayer's labels are [B, outputs, T] with the steps of its input; the "
                    + "examples' label and input lengths differ" : "every example needs labels of the output's shape")
                    + "; nothing was charged");
        }
    }

    /**
     * Every problem of a network (empty when the engine trains it).
     *
     * @param network a {@link MultiLayerNetwork} or {@link ComputationGraph}
     * @return one message per problem, naming the layer or vertex and what to use instead; empty when there is none
     * @throws IllegalArgumentException if the network is of neither type (or null)
     */
    public static List<String> problems(Model network) {
        if (network instanceof MultiLayerNetwork m) {
            return problems(m.getLayerWiseConfigurations());
        }
        if (network instanceof ComputationGraph g) {
            return problems(g.getConfiguration());
        }
        throw new IllegalArgumentException("network must be a MultiLayerNetwork or a ComputationGraph, got "
                + (network == null ? "null" : network.getClass().getName()));
    }

    private static void throwIfAny(List<String> problems) {
        if (problems.size() == 1) {
            throw new IllegalArgumentException(problems.get(0));
        }
        if (!problems.isEmpty()) {
            StringBuilder sb = new StringBuilder(problems.size() + " problems: ");
            for (int i = 0; i < problems.size(); i++) {
                sb.append(i == 0 ? "" : "; ").append('(').append(i + 1).append(") ").append(problems.get(i));
            }
            throw new IllegalArgumentException(sb.toString());
        }
    }

    /** Runs one check, adding its message to {@code problems} instead of throwing. */
    private static void collect(List<String> problems, Runnable check) {
        try {
            check.run();
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
    }

    /**
     * Every problem of a network configuration (empty when the engine trains it).
     *
     * @param conf a DL4J network configuration
     * @return one message per problem, in layer order, then the preprocessors' problems; empty when there is none
     */
    public static List<String> problems(MultiLayerConfiguration conf) {
        List<String> problems = new ArrayList<>();
        if (conf.getBackpropType() == org.deeplearning4j.nn.conf.BackpropType.TruncatedBPTT) {
            problems.add("the network trains by truncated backpropagation through time (tBPTTLength " + conf.getTbpttBackLength()
                    + "): a DP-SGD step takes each example's gradient over its whole sequence (clipped as one), so it cannot "
                    + "update within a sequence; build it with BackpropType.Standard (DL4J's default), and cut long sequences "
                    + "into examples of their own if they are too long");
        }
        int n = conf.getConfs().size();
        if (n == 0) {
            problems.add("the network has no layers");
            return problems;
        }
        for (int i = 0; i < n; i++) {
            Layer layer = conf.getConf(i).getLayer();
            checkLayer(layer, where("layer " + i, layer), i == n - 1, problems);
        }
        for (Map.Entry<Integer, InputPreProcessor> e : new java.util.TreeMap<>(conf.getInputPreProcessors()).entrySet()) {
            collect(problems, () -> LayerKernels.preprocessor(e.getValue(), "layer " + e.getKey()));
        }
        return problems;
    }

    /**
     * Every problem of a graph configuration (empty when the engine trains it).
     *
     * @param conf a DL4J graph configuration
     * @return one message per problem; only the input/output-count problem when the graph does not have one input and
     *         one output; empty when there is none
     */
    public static List<String> problems(ComputationGraphConfiguration conf) {
        List<String> problems = new ArrayList<>();
        if (conf.getBackpropType() == org.deeplearning4j.nn.conf.BackpropType.TruncatedBPTT) {
            problems.add("the graph trains by truncated backpropagation through time (tBPTTLength " + conf.getTbpttBackLength()
                    + "): a DP-SGD step takes each example's gradient over its whole sequence, so it cannot update within a "
                    + "sequence; build it with BackpropType.Standard");
        }
        if (conf.getNetworkInputs().size() != 1 || conf.getNetworkOutputs().size() != 1) {
            problems.add("the graph must have one input and one output, got " + conf.getNetworkInputs().size() + " inputs "
                    + conf.getNetworkInputs() + " and " + conf.getNetworkOutputs().size() + " outputs " + conf.getNetworkOutputs());
            return problems;
        }
        String output = conf.getNetworkOutputs().get(0);
        for (Map.Entry<String, GraphVertex> e : conf.getVertices().entrySet()) {
            GraphVertex v = unwrap(e.getValue());
            String name = "vertex '" + e.getKey() + "'";
            if (v instanceof LayerVertex && e.getValue() instanceof FrozenVertex) {
                problems.add(name + ": a FrozenVertex around a layer is not supported; freeze layers with FrozenLayer "
                        + "(TransferLearning.GraphBuilder.setFeatureExtractor does)");
                continue;
            }
            boolean last = e.getKey().equals(output);
            if (v instanceof LayerVertex lv) {
                Layer layer = lv.getLayerConf().getLayer();
                String where = where(name, layer);
                checkLayer(layer, where, last, problems);
                if (lv.getPreProcessor() != null) {
                    collect(problems, () -> LayerKernels.preprocessor(lv.getPreProcessor(), where));
                }
            } else if (last) {
                problems.add(name + " (" + v.getClass().getSimpleName() + "): the graph's output must be an OutputLayer or a "
                        + "LossLayer");
            } else if (v instanceof PreprocessorVertex p) {
                collect(problems, () -> LayerKernels.preprocessor(p.getPreProcessor(), name));
            } else if (v instanceof org.deeplearning4j.nn.conf.graph.StackVertex
                    || v instanceof org.deeplearning4j.nn.conf.graph.UnstackVertex) {
                problems.add(name + " (" + v.getClass().getSimpleName() + ") moves examples along the batch dimension, so one "
                        + "example's gradient is not its own; the DP-SGD engine does not support it (use a graph with one "
                        + "input per example)");
            } else if (v instanceof org.deeplearning4j.nn.conf.graph.rnn.DuplicateToTimeSeriesVertex) {
                problems.add(name + " (DuplicateToTimeSeriesVertex) reads the graph's input directly, which the DP-SGD engine "
                        + "does not give its vertices; repeat the vector with RepeatVector instead");
            } else if (v.numParams(false) > 0) {
                problems.add(name + " (" + v.getClass().getSimpleName() + ") has parameters, which the DP-SGD engine does not "
                        + "train in a vertex; use a layer");
            }
        }
        return problems;
    }

    /** A graph vertex inside DL4J's {@link FrozenVertex} (the vertex itself otherwise). */
    static GraphVertex unwrap(GraphVertex v) {
        return v instanceof FrozenVertex f ? unwrap(f.getUnderlying()) : v;
    }

    /** A layer configuration inside DL4J's frozen wrappers (the layer itself otherwise). */
    static Layer unwrap(Layer layer) {
        if (layer instanceof FrozenLayer f) {
            return unwrap(f.getLayer());
        }
        if (layer instanceof FrozenLayerWithBackprop f) {
            return unwrap(f.getUnderlying());
        }
        return layer;
    }

    /** "layer 3 (DenseLayer 'fc')": a position and the layer's class and name, for messages. */
    static String where(String position, Layer layer) {
        if (layer == null) {
            return position;
        }
        Layer inner = unwrap(layer);
        return position + " (" + (inner != layer ? "frozen " : "") + inner.getClass().getSimpleName()
                + (layer.getLayerName() != null ? " '" + layer.getLayerName() + "'" : "") + ")";
    }

    private static void checkLayer(Layer wrapped, String where, boolean last, List<String> problems) {
        Layer layer = unwrap(wrapped);
        collect(problems, () -> {
            LayerKernels.Registration<?> r = LayerKernels.find(layer, where);
            if (r != null) {
                r.check(layer, where);
            }
        });
        boolean output = layer instanceof org.deeplearning4j.nn.conf.layers.BaseOutputLayer
                || layer instanceof LossLayer || layer instanceof org.deeplearning4j.nn.conf.layers.CnnLossLayer
                || layer instanceof org.deeplearning4j.nn.conf.layers.RnnLossLayer
                || layer instanceof org.deeplearning4j.nn.conf.layers.objdetect.Yolo2OutputLayer;
        if (output && !last) {
            problems.add(where + ": an output layer must be the network's last layer");
        } else if (last && !OUTPUTS.contains(layer.getClass())) {
            problems.add(where + ": the last layer must be an OutputLayer, LossLayer, RnnOutputLayer or RnnLossLayer (with any "
                    + "per-example loss)"
                    + (layer instanceof org.deeplearning4j.nn.conf.layers.CenterLossOutputLayer
                    ? "; a CenterLossOutputLayer updates its class centres from each batch's examples outside the gradient "
                    + "(DL4J's centre update, alpha), which DP-SGD neither clips nor noises: use an OutputLayer (MCXENT), or "
                    + "learn the centres as parameters of a layer of your own"
                    : output ? "; " + layer.getClass().getSimpleName() + " is not supported by the DP-SGD engine" : "")
                    + (!output && !(layer instanceof org.deeplearning4j.nn.conf.layers.ActivationLayer)
                    ? "; DP-SGD trains a supervised loss, so a network without one (an unsupervised VariationalAutoencoder or "
                    + "AutoEncoder trained by its own pretraining) is refused: add an OutputLayer or LossLayer, e.g. an "
                    + "autoencoder as layers ending in an OutputLayer with MSE whose labels are the features; a "
                    + "VariationalAutoencoder inside a supervised network runs on the exact fallback (its pretraining is not run)"
                    : "")
                    + (layer instanceof org.deeplearning4j.nn.conf.layers.ActivationLayer
                    ? " (a final softmax ActivationLayer: DpCompatibility.fix makes it a LossLayer with MCXENT)" : ""));
        }
        if (layer instanceof BaseLayer b && b.getActivationFn() instanceof org.nd4j.linalg.activations.impl.ActivationRReLU
                || layer instanceof org.deeplearning4j.nn.conf.layers.ActivationLayer a
                && a.getActivationFn() instanceof org.nd4j.linalg.activations.impl.ActivationRReLU) {
            problems.add(where + ": the RReLU activation keeps its random slopes in shared state between its forward and "
                    + "backward pass, which the engine's workers cannot share; use LeakyReLU");
        }
        if (NetworkPlan.appliesDropout(layer) && layer.getIDropout() != null && (layer.getIDropout().getClass() != Dropout.class
                || ((Dropout) layer.getIDropout()).getPSchedule() != null)) {
            problems.add(where + ": dropout " + layer.getIDropout() + " is not supported by the DP-SGD engine; use DL4J's "
                    + "Dropout with a fixed retain probability (dropOut(p))");
        }
        if (layer instanceof BaseLayer b) {
            if (b.getWeightNoise() != null) {
                problems.add(where + ": weight noise is not supported by the DP-SGD engine");
            }
            if (b.getGradientNormalization() != null && b.getGradientNormalization() != GradientNormalization.None) {
                problems.add(where + ": DL4J gradient normalisation " + b.getGradientNormalization() + " would act on the "
                        + "noisy gradient; use DP-SGD's clipping norm C instead (DpCompatibility.fix removes it)");
            }
            if (b.getConstraints() != null && !b.getConstraints().isEmpty()) {
                problems.add(where + ": parameter constraints are not supported by the DP-SGD engine");
            }
        }
    }

    /**
     * A network made DP-compatible, and what was changed.
     *
     * @param network the new network (the input is not modified); the input itself when nothing needed changing
     * @param changes one line per change, empty when nothing needed changing
     * @param <N>     the network type, {@link MultiLayerNetwork}, {@link ComputationGraph} or {@link Model}
     */
    public record Fixed<N extends Model>(N network, List<String> changes) {
        /**
         * The changes as one message ("nothing to fix" when there were none).
         *
         * @return the changes joined by "; ", or "nothing to fix"
         */
        public String message() {
            return changes.isEmpty() ? "nothing to fix" : String.join("; ", changes);
        }
    }

    /**
     * {@link #fix(MultiLayerNetwork)} or {@link #fix(ComputationGraph)}, for either network type.
     *
     * @param network an initialised {@link MultiLayerNetwork} or {@link ComputationGraph} (not modified)
     * @return the fixed network and the changes
     * @throws IllegalArgumentException if the network is of neither type
     */
    public static Fixed<Model> fix(Model network) {
        if (network instanceof MultiLayerNetwork m) {
            Fixed<MultiLayerNetwork> f = fix(m);
            return new Fixed<>(f.network(), f.changes());
        }
        if (network instanceof ComputationGraph g) {
            Fixed<ComputationGraph> f = fix(g);
            return new Fixed<>(f.network(), f.changes());
        }
        throw new IllegalArgumentException("network must be a MultiLayerNetwork or a ComputationGraph, got "
                + (network == null ? "null" : network.getClass().getName()));
    }

    /**
     * The network made trainable by the engine where a change keeps what it computes or is the usual DP replacement,
     * every other layer's parameters copied (the updater state starts afresh):
     * <ul>
     *   <li>each {@link BatchNormalization} becomes a {@link GroupNormalization} over the same channels (G = the largest
     *       divisor of C that is at most 32, as Opacus's {@code ModuleValidator.fix} uses min(32, C) groups, γ = 1,
     *       β = 0, the batch normalisation's activation);</li>
     *   <li>DL4J's gradient normalisation is removed (DP-SGD's clipping norm C bounds each example's gradient instead);</li>
     *   <li>a last {@code ActivationLayer} with softmax, which DL4J cannot train (no loss), becomes a {@link LossLayer}
     *       with softmax and MCXENT;</li>
     *   <li>a {@code CenterLossOutputLayer} becomes an {@link OutputLayer} with the same weights, activation and loss (its
     *       center-loss term, which updates class centres from a batch's examples together, is dropped).</li>
     * </ul>
     * Other incompatibilities are left for {@link #check} to report.
     *
     * @param network an initialised network (not modified)
     * @return a new initialised network and the changes, or {@code network} itself and no changes when nothing needed
     *         changing
     */
    public static Fixed<MultiLayerNetwork> fix(MultiLayerNetwork network) {
        MultiLayerConfiguration conf = network.getLayerWiseConfigurations().clone();
        List<String> changes = new ArrayList<>();
        for (int i = 0; i < conf.getConfs().size(); i++) {
            fixLayer(conf.getConf(i), "layer " + i, i == conf.getConfs().size() - 1, changes);
        }
        if (changes.isEmpty()) {
            return new Fixed<>(network, List.of());
        }
        MultiLayerNetwork fixed = new MultiLayerNetwork(conf);
        fixed.init();
        for (int i = 0; i < network.getnLayers(); i++) {
            copyParameters(network.getLayer(i), fixed.getLayer(i));
        }
        return new Fixed<>(fixed, List.copyOf(changes));
    }

    /**
     * {@link #fix(MultiLayerNetwork)} for a graph: each layer vertex.
     *
     * @param graph an initialised graph (not modified)
     * @return a new initialised graph and the changes, or {@code graph} itself and no changes when nothing needed
     *         changing
     */
    public static Fixed<ComputationGraph> fix(ComputationGraph graph) {
        ComputationGraphConfiguration conf = graph.getConfiguration().clone();
        List<String> changes = new ArrayList<>();
        String output = conf.getNetworkOutputs().size() == 1 ? conf.getNetworkOutputs().get(0) : null;
        for (Map.Entry<String, GraphVertex> e : conf.getVertices().entrySet()) {
            if (e.getValue() instanceof LayerVertex lv) {
                fixLayer(lv.getLayerConf(), "vertex '" + e.getKey() + "'", e.getKey().equals(output), changes);
            }
        }
        if (changes.isEmpty()) {
            return new Fixed<>(graph, List.of());
        }
        ComputationGraph fixed = new ComputationGraph(conf);
        fixed.init();
        for (org.deeplearning4j.nn.api.Layer l : graph.getLayers()) {
            copyParameters(l, fixed.getLayer(l.conf().getLayer().getLayerName()));
        }
        return new Fixed<>(fixed, List.copyOf(changes));
    }

    /** The parameters a replaced layer shares with its replacement (same name, same shape); a group norm starts afresh. */
    private static void copyParameters(org.deeplearning4j.nn.api.Layer from, org.deeplearning4j.nn.api.Layer to) {
        if (to.conf().getLayer() instanceof GroupNormalization) {
            return;
        }
        for (Map.Entry<String, org.nd4j.linalg.api.ndarray.INDArray> p : to.paramTable().entrySet()) {
            org.nd4j.linalg.api.ndarray.INDArray old = from.paramTable().get(p.getKey());
            if (old != null && java.util.Arrays.equals(old.shape(), p.getValue().shape())) {
                p.getValue().assign(old);
            }
        }
    }

    private static void fixLayer(NeuralNetConfiguration c, String position, boolean last, List<String> changes) {
        replaceBatchNorm(c, position, changes);
        if (c.getLayer() instanceof org.deeplearning4j.nn.conf.layers.CenterLossOutputLayer cl) {
            OutputLayer out = new OutputLayer.Builder(cl.getLossFn()).nIn(cl.getNIn()).nOut(cl.getNOut()).hasBias(cl.hasBias())
                    .activation(cl.getActivationFn()).name(cl.getLayerName()).weightInit(cl.getWeightInitFn()).biasInit(cl.getBiasInit())
                    .gainInit(cl.getGainInit()).updater(cl.getIUpdater()).biasUpdater(cl.getBiasUpdater())
                    .gradientNormalization(GradientNormalization.None).gradientNormalizationThreshold(1.0).build();
            out.setRegularization(cl.getRegularization());
            out.setRegularizationBias(cl.getRegularizationBias());
            c.setLayer(out);
            changes.add(position + ": CenterLossOutputLayer became an OutputLayer with the same weights, activation and loss; "
                    + "its center-loss term is dropped (its class centres are updated from each batch's examples together, "
                    + "so an example's gradient would not be its own)");
        }
        if (c.getLayer() instanceof BaseLayer b && b.getGradientNormalization() != null
                && b.getGradientNormalization() != GradientNormalization.None) {
            changes.add(position + ": DL4J gradient normalisation " + b.getGradientNormalization() + " removed (DP-SGD's "
                    + "clipping norm C bounds each example's gradient)");
            b.setGradientNormalization(GradientNormalization.None);
        }
        if (last && c.getLayer() instanceof org.deeplearning4j.nn.conf.layers.ActivationLayer a
                && a.getActivationFn() instanceof org.nd4j.linalg.activations.impl.ActivationSoftmax) {
            // every field set as a network builder would set it: DL4J's JSON reader refuses the raw defaults (NaN)
            LossLayer loss = new LossLayer.Builder(org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction.MCXENT)
                    .activation(a.getActivationFn()).name(a.getLayerName()).biasInit(0).gainInit(1)
                    .weightInit(org.deeplearning4j.nn.weights.WeightInit.XAVIER).updater(new org.nd4j.linalg.learning.config.NoOp())
                    .gradientNormalization(GradientNormalization.None).gradientNormalizationThreshold(1.0).build();
            c.setLayer(loss);
            changes.add(position + ": the final softmax ActivationLayer (no loss) became a LossLayer with softmax and MCXENT");
        }
    }

    private static void replaceBatchNorm(NeuralNetConfiguration c, String position, List<String> changes) {
        if (!(c.getLayer() instanceof BatchNormalization bn)) {
            return;
        }
        GroupNormalization gn = GroupNormalization.replacing(bn);
        c.setLayer(gn);
        changes.add(position + ": BatchNormalization(" + bn.getNOut() + " channels) replaced by GroupNormalization(" + gn.getGroups()
                + " groups, " + bn.getNOut() + " channels)");
    }
}
