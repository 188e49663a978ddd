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
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.misc.FrozenLayer;
import org.deeplearning4j.nn.conf.layers.misc.FrozenLayerWithBackprop;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.models.GroupNormalization;

/**
 * Checks that a network is one whose per-example gradients the DP-SGD engine computes exactly, and {@link #fix}es the
 * usual reason it is not (batch normalisation), as Opacus's {@code ModuleValidator.fix} does.
 *
 * <p>Accepted: a {@link MultiLayerNetwork}, or a {@link ComputationGraph} with one input and one output, whose last
 * layer is an {@link OutputLayer} with softmax and cross-entropy. Layers with a kernel in {@link LayerKernels}
 * (convolution, weight-standardised convolution, pooling, dense, group normalisation, global pooling, activation,
 * zero padding, dropout) run fast; any other layer runs through the exact fallback (DL4J's own backprop, one example at
 * a time) with a warning. Graph vertices: layers, {@link ElementWiseVertex} (Add, Subtract, Average, Product),
 * {@link MergeVertex}, {@link PreprocessorVertex}. Frozen layers and vertices (DL4J's {@code FrozenLayer},
 * {@code FrozenLayerWithBackprop}, {@code FrozenVertex}, as {@code TransferLearning} makes them) are not trained.
 * Dropout is DL4J's {@link Dropout} (inverted, fixed retain probability), applied where DL4J applies it (on the
 * input of layers with parameters and of {@code DropoutLayer}). Refused, with the layer or vertex named and
 * what to use instead: batch normalisation and its subclasses (it mixes the examples of a batch), a fallback layer whose
 * output for an example depends on the others (found when it first runs), other vertex types, a {@code FrozenVertex}
 * around a layer, the RReLU activation, other dropout kinds,
 * weight noise, parameter constraints and DL4J's own gradient normalisation (they would act on the noisy gradient or
 * are not executed by the engine).
 */
public final class DpCompatibility {
    private DpCompatibility() {
    }

    /**
     * @param conf a DL4J network configuration
     * @throws IllegalArgumentException naming the first unsupported layer, setting or preprocessor, and what to use instead
     */
    public static void check(MultiLayerConfiguration conf) {
        int n = conf.getConfs().size();
        if (n == 0) {
            throw new IllegalArgumentException("the network has no layers");
        }
        for (int i = 0; i < n; i++) {
            Layer layer = conf.getConf(i).getLayer();
            checkLayer(layer, where("layer " + i, layer), i == n - 1);
        }
        for (Map.Entry<Integer, InputPreProcessor> e : conf.getInputPreProcessors().entrySet()) {
            LayerKernels.preprocessor(e.getValue(), "layer " + e.getKey()); // throws for one the engine cannot run
        }
    }

    /**
     * @param conf a DL4J graph configuration
     * @throws IllegalArgumentException naming the first unsupported vertex, layer, setting or preprocessor, and what to
     *                                  use instead
     */
    public static void check(ComputationGraphConfiguration conf) {
        if (conf.getNetworkInputs().size() != 1 || conf.getNetworkOutputs().size() != 1) {
            throw new IllegalArgumentException("the graph must have one input and one output, got "
                    + conf.getNetworkInputs().size() + " inputs " + conf.getNetworkInputs() + " and "
                    + conf.getNetworkOutputs().size() + " outputs " + conf.getNetworkOutputs());
        }
        String output = conf.getNetworkOutputs().get(0);
        for (Map.Entry<String, GraphVertex> e : conf.getVertices().entrySet()) {
            GraphVertex v = unwrap(e.getValue());
            String name = "vertex '" + e.getKey() + "'";
            if (v instanceof LayerVertex && e.getValue() instanceof FrozenVertex) {
                throw new IllegalArgumentException(name + ": a FrozenVertex around a layer is not supported; freeze layers "
                        + "with FrozenLayer (TransferLearning.GraphBuilder.setFeatureExtractor does)");
            }
            boolean last = e.getKey().equals(output);
            if (v instanceof LayerVertex lv) {
                Layer layer = lv.getLayerConf().getLayer();
                String where = where(name, layer);
                checkLayer(layer, where, last);
                if (lv.getPreProcessor() != null) {
                    LayerKernels.preprocessor(lv.getPreProcessor(), where);
                }
            } else if (last) {
                throw new IllegalArgumentException(name + " (" + v.getClass().getSimpleName() + "): the graph's output must be "
                        + "an OutputLayer with softmax and MCXENT loss");
            } else if (v instanceof ElementWiseVertex ew) {
                ElementWiseKernel.requireSupported(ew.getOp(), name + " (ElementWiseVertex)");
            } else if (v instanceof PreprocessorVertex p) {
                LayerKernels.preprocessor(p.getPreProcessor(), name);
            } else if (!(v instanceof MergeVertex)) {
                throw new IllegalArgumentException(name + " (" + v.getClass().getSimpleName() + ") is not supported by the "
                        + "DP-SGD engine; supported vertices are layers, ElementWiseVertex (Add, Subtract, Average, Product), "
                        + "MergeVertex and PreprocessorVertex");
            }
        }
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

    private static void checkLayer(Layer wrapped, String where, boolean last) {
        Layer layer = unwrap(wrapped);
        LayerKernels.Registration<?> r = LayerKernels.find(layer, where);
        if (r != null) {
            r.check(layer, where);
        }
        if (layer.getClass() == OutputLayer.class && !last) {
            throw new IllegalArgumentException(where + ": an OutputLayer must be the network's last layer");
        }
        if (last && layer.getClass() != OutputLayer.class) {
            throw new IllegalArgumentException(where + ": the last layer must be an OutputLayer with softmax and MCXENT loss");
        }
        if (layer instanceof BaseLayer b && b.getActivationFn() instanceof org.nd4j.linalg.activations.impl.ActivationRReLU
                || layer instanceof org.deeplearning4j.nn.conf.layers.ActivationLayer a
                && a.getActivationFn() instanceof org.nd4j.linalg.activations.impl.ActivationRReLU) {
            throw new IllegalArgumentException(where + ": the RReLU activation keeps its random slopes in shared state "
                    + "between its forward and backward pass, which the engine's workers cannot share; use LeakyReLU");
        }
        if (NetworkPlan.appliesDropout(layer) && layer.getIDropout() != null && (layer.getIDropout().getClass() != Dropout.class
                || ((Dropout) layer.getIDropout()).getPSchedule() != null)) {
            throw new IllegalArgumentException(where + ": dropout " + layer.getIDropout() + " is not supported by the DP-SGD "
                    + "engine; use DL4J's Dropout with a fixed retain probability (dropOut(p))");
        }
        if (layer instanceof BaseLayer b) {
            if (b.getWeightNoise() != null) {
                throw new IllegalArgumentException(where + ": weight noise is not supported by the DP-SGD engine");
            }
            if (b.getGradientNormalization() != null && b.getGradientNormalization() != GradientNormalization.None) {
                throw new IllegalArgumentException(where + ": DL4J gradient normalisation " + b.getGradientNormalization()
                        + " would act on the noisy gradient; use DP-SGD's clipping norm C instead");
            }
            if (b.getConstraints() != null && !b.getConstraints().isEmpty()) {
                throw new IllegalArgumentException(where + ": parameter constraints are not supported by the DP-SGD engine");
            }
        }
    }

    /**
     * A network made DP-compatible, and what was changed.
     *
     * @param network the new network (the input is not modified)
     * @param changes one line per change, empty when nothing needed changing
     */
    public record Fixed<N extends Model>(N network, List<String> changes) {
        /** The changes as one message ("nothing to fix" when there were none). */
        public String message() {
            return changes.isEmpty() ? "nothing to fix" : String.join("; ", changes);
        }
    }

    /**
     * The network with each {@link BatchNormalization} replaced by a {@link GroupNormalization} over the same channels
     * (G = the largest divisor of C that is at most 32, as Opacus's {@code ModuleValidator.fix} uses min(32, C) groups,
     * γ = 1, β = 0, the batch normalisation's activation) and every other layer's parameters copied. The updater state
     * starts afresh. Other incompatibilities are left for {@link #check} to report.
     *
     * @param network an initialised network (not modified)
     */
    public static Fixed<MultiLayerNetwork> fix(MultiLayerNetwork network) {
        MultiLayerConfiguration conf = network.getLayerWiseConfigurations().clone();
        List<String> changes = new ArrayList<>();
        for (int i = 0; i < conf.getConfs().size(); i++) {
            replaceBatchNorm(conf.getConf(i), "layer " + i, changes);
        }
        if (changes.isEmpty()) {
            return new Fixed<>(network, List.of());
        }
        MultiLayerNetwork fixed = new MultiLayerNetwork(conf);
        fixed.init();
        for (int i = 0; i < network.getnLayers(); i++) {
            if (!(fixed.getLayer(i).conf().getLayer() instanceof GroupNormalization) && network.getLayer(i).numParams() > 0) {
                fixed.getLayer(i).params().assign(network.getLayer(i).params());
            }
        }
        return new Fixed<>(fixed, List.copyOf(changes));
    }

    /** {@link #fix(MultiLayerNetwork)} for a graph: each layer vertex with batch normalisation. */
    public static Fixed<ComputationGraph> fix(ComputationGraph graph) {
        ComputationGraphConfiguration conf = graph.getConfiguration().clone();
        List<String> changes = new ArrayList<>();
        for (Map.Entry<String, GraphVertex> e : conf.getVertices().entrySet()) {
            if (e.getValue() instanceof LayerVertex lv) {
                replaceBatchNorm(lv.getLayerConf(), "vertex '" + e.getKey() + "'", changes);
            }
        }
        if (changes.isEmpty()) {
            return new Fixed<>(graph, List.of());
        }
        ComputationGraph fixed = new ComputationGraph(conf);
        fixed.init();
        for (org.deeplearning4j.nn.api.Layer l : graph.getLayers()) {
            String name = l.conf().getLayer().getLayerName();
            org.deeplearning4j.nn.api.Layer target = fixed.getLayer(name);
            if (!(target.conf().getLayer() instanceof GroupNormalization) && l.numParams() > 0) {
                target.params().assign(l.params());
            }
        }
        return new Fixed<>(fixed, List.copyOf(changes));
    }

    private static void replaceBatchNorm(NeuralNetConfiguration c, String position, List<String> changes) {
        if (!(c.getLayer() instanceof BatchNormalization bn)) {
            return;
        }
        long channels = bn.getNOut();
        int groups = 1;
        for (int g = 1; g <= Math.min(32, channels); g++) {
            if (channels % g == 0) {
                groups = g;
            }
        }
        GroupNormalization gn = new GroupNormalization.Builder().groups(groups).nIn(channels).nOut(channels)
                .activation(bn.getActivationFn()).name(bn.getLayerName()).build();
        gn.setIUpdater(bn.getIUpdater());
        gn.setBiasUpdater(bn.getBiasUpdater());
        c.setLayer(gn);
        changes.add(position + ": BatchNormalization(" + channels + " channels) replaced by GroupNormalization(" + groups
                + " groups, " + channels + " channels)");
    }
}
