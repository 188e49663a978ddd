package org.dpdl4j.dpsgd;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.deeplearning4j.nn.api.Layer;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.ComputationGraphConfiguration;
import org.deeplearning4j.nn.conf.InputPreProcessor;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.graph.ElementWiseVertex;
import org.deeplearning4j.nn.conf.graph.GraphVertex;
import org.deeplearning4j.nn.conf.graph.LayerVertex;
import org.deeplearning4j.nn.conf.graph.MergeVertex;
import org.deeplearning4j.nn.conf.graph.PreprocessorVertex;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.layers.FrozenLayer;
import org.deeplearning4j.nn.layers.FrozenLayerWithBackprop;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;

/**
 * A network as the engine runs it: its vertices in topological order, each a {@link LayerKernel} with the indices of
 * the steps whose outputs it reads ({@link #NETWORK_INPUT} for the features). A {@link MultiLayerNetwork} is the chain
 * of its layers (each preprocessor a step before its layer); a {@link ComputationGraph} is its topological sort. The
 * last step is the output layer. One plan per {@link PerExampleGradients}.
 */
final class NetworkPlan {
    static final int NETWORK_INPUT = -1;

    /**
     * One vertex.
     *
     * @param kernel    what it computes
     * @param inputs    the steps it reads, in the vertex's input order
     * @param layer     the DL4J layer whose parameters it trains, or null (no parameters, or frozen)
     * @param where     the vertex's position and name, for messages
     */
    record Step(LayerKernel kernel, int[] inputs, Layer layer, String where) {
        boolean trainable() {
            return layer != null;
        }
    }

    final Model network;
    final List<Step> steps = new ArrayList<>();
    /** Whether a step's output rows are a sequence's time steps (after DL4J's RnnToFeedForwardPreProcessor). */
    private final List<Boolean> distributed = new ArrayList<>();
    /** The steps that pass no gradient to their inputs (DL4J's FrozenLayer). */
    final java.util.Set<Integer> stopsGradient = new java.util.HashSet<>();

    private NetworkPlan(Model network) {
        this.network = network;
    }

    static NetworkPlan of(Model network) {
        if (network instanceof MultiLayerNetwork m) {
            return of(m);
        }
        if (network instanceof ComputationGraph g) {
            return of(g);
        }
        throw new IllegalArgumentException("network must be a MultiLayerNetwork or a ComputationGraph, got "
                + (network == null ? "null" : network.getClass().getName()));
    }

    static NetworkPlan of(MultiLayerNetwork network) {
        MultiLayerConfiguration conf = network.getLayerWiseConfigurations();
        DpCompatibility.check(conf);
        requireInitialised(network);
        NetworkPlan plan = new NetworkPlan(network);
        int previous = NETWORK_INPUT;
        for (int i = 0; i < network.getnLayers(); i++) {
            String where = DpCompatibility.where("layer " + i, conf.getConf(i).getLayer());
            InputPreProcessor pre = conf.getInputPreProcess(i);
            if (pre != null) {
                previous = plan.add(LayerKernels.preprocessor(pre, where), null, where, previous);
            }
            previous = plan.addLayer(network.getLayer(i), conf.getConf(i), where, previous);
        }
        return plan;
    }

    static NetworkPlan of(ComputationGraph graph) {
        ComputationGraphConfiguration conf = graph.getConfiguration();
        DpCompatibility.check(conf);
        requireInitialised(graph);
        NetworkPlan plan = new NetworkPlan(graph);
        Map<Integer, Integer> stepOfVertex = new HashMap<>();
        org.deeplearning4j.nn.graph.vertex.GraphVertex[] vertices = graph.getVertices();
        for (int v : graph.topologicalSortOrder()) {
            org.deeplearning4j.nn.graph.vertex.GraphVertex vertex = vertices[v];
            if (vertex.isInputVertex()) {
                stepOfVertex.put(v, NETWORK_INPUT);
                continue;
            }
            var indices = vertex.getInputVertices();
            int[] inputs = new int[indices.length];
            for (int j = 0; j < indices.length; j++) {
                inputs[j] = stepOfVertex.get(indices[j].getVertexIndex());
            }
            GraphVertex vc = DpCompatibility.unwrap(conf.getVertices().get(vertex.getVertexName()));
            String where = DpCompatibility.where("vertex '" + vertex.getVertexName() + "'",
                    vc instanceof LayerVertex lv ? lv.getLayerConf().getLayer() : null);
            int out;
            if (vc instanceof LayerVertex lv) {
                int in = inputs[0];
                if (lv.getPreProcessor() != null) {
                    in = plan.add(LayerKernels.preprocessor(lv.getPreProcessor(), where), null, where, in);
                }
                out = plan.addLayer(vertex.getLayer(), lv.getLayerConf(), where, in);
            } else if (vc instanceof ElementWiseVertex e && ElementWiseKernel.supports(e.getOp())) {
                out = plan.add(new ElementWiseKernel(e.getOp(), where), null, where, inputs);
            } else if (vc instanceof MergeVertex m) {
                out = plan.add(new MergeKernel(m.getMergeAxis()), null, where, inputs);
            } else if (vc instanceof PreprocessorVertex p) {
                out = plan.add(LayerKernels.preprocessor(p.getPreProcessor(), where), null, where, inputs);
            } else { // any other vertex without parameters: DL4J's own, checked not to mix the examples
                out = plan.add(VertexFallbackKernel.of(vc, graph, vertex.getVertexName(), v, where, graph.params().dataType()), null,
                        where, inputs);
            }
            stepOfVertex.put(v, out);
        }
        Integer output = stepOfVertex.get(graph.getVertex(conf.getNetworkOutputs().get(0)).getVertexIndex());
        if (output != plan.steps.size() - 1) {
            throw new IllegalArgumentException("the graph's output vertex '" + conf.getNetworkOutputs().get(0)
                    + "' must come last in its topological order (no vertex may lead nowhere)");
        }
        return plan;
    }

    private static void requireInitialised(Model network) {
        if (network.params() == null) {
            throw new IllegalArgumentException("the network must be initialised (call init())");
        }
    }

    /**
     * Adds the kernels of one layer (its dropout first, if any); frozen layers get no parameter step. The layer's
     * configuration is the network configuration's ({@code configured}), not the runtime layer's: a wrapper such as
     * {@code LastTimeStep} answers {@code conf()} with the wrapped layer's configuration.
     */
    private int addLayer(Layer layer, org.deeplearning4j.nn.conf.NeuralNetConfiguration configured, String where, int input) {
        boolean frozen = Networks.isFrozen(layer);
        Layer inner = unwrap(layer);
        boolean wrapper = !frozen && configured.getLayer() != inner.conf().getLayer()
                && configured.getLayer().getClass() != inner.conf().getLayer().getClass();
        org.deeplearning4j.nn.conf.layers.Layer conf = wrapper ? configured.getLayer() : inner.conf().getLayer();
        int in = input;
        if (conf.getIDropout() != null && !frozen && appliesDropout(conf)) {
            in = add(new DropoutKernel(((org.deeplearning4j.nn.conf.dropout.Dropout) conf.getIDropout()).getP()), null, where, in);
        }
        LayerKernels.Registration<?> r = LayerKernels.find(conf, where);
        LayerKernel kernel = r != null && !wrapper ? r.kernel(inner) : null;
        if (kernel == null && r == null && !wrapper) {
            kernel = LayerKernels.external(inner); // a user's kernel, if one is registered for this layer class
        }
        if (kernel == null && configured.getLayer() instanceof org.deeplearning4j.nn.conf.layers.recurrent.LastTimeStep
                && inner instanceof org.deeplearning4j.nn.layers.wrapper.BaseWrapperLayer w) { // its layer on a kernel, if it has one
            Layer wrapped = w.getUnderlying();
            LayerKernels.Registration<?> ri = LayerKernels.find(wrapped.conf().getLayer(), where);
            LayerKernel innerKernel = ri != null ? ri.kernel(wrapped) : null;
            if (innerKernel != null) {
                kernel = new LastTimeStepKernel(innerKernel, FallbackKernel.of(inner, configured, where, network.params().dataType(),
                        false));
            }
        }
        if (kernel == null) {
            kernel = FallbackKernel.of(inner, wrapper ? configured : inner.conf(), where, network.params().dataType());
        }
        // DL4J's FrozenLayer passes no gradient to the layers below it (FrozenLayerWithBackprop does)
        int out = add(kernel, frozen || inner.numParams() == 0 ? null : inner, where, in);
        if (layer instanceof FrozenLayer) {
            stopsGradient.add(out);
        }
        return out;
    }

    /**
     * Whether DL4J applies a layer's dropout: layers with parameters (and {@code DropoutLayer}) do, on their input in
     * training; layers without ({@code SubsamplingLayer}, {@code GlobalPoolingLayer}, {@code ZeroPaddingLayer},
     * {@code ActivationLayer}) ignore the dropout that a network-wide {@code dropOut(p)} copies into them, and so do
     * {@code EmbeddingLayer} and {@code EmbeddingSequenceLayer} (their input is indices; DL4J never calls their dropout).
     */
    static boolean appliesDropout(org.deeplearning4j.nn.conf.layers.Layer conf) {
        return conf instanceof org.deeplearning4j.nn.conf.layers.BaseLayer
                && !(conf instanceof org.deeplearning4j.nn.conf.layers.EmbeddingLayer)
                && !(conf instanceof org.deeplearning4j.nn.conf.layers.EmbeddingSequenceLayer);
    }

    /** The layer inside DL4J's frozen wrappers (the layer itself otherwise). */
    static Layer unwrap(Layer layer) {
        if (layer instanceof FrozenLayer f) {
            return unwrap(f.getInsideLayer());
        }
        if (layer instanceof FrozenLayerWithBackprop f) {
            return unwrap(f.getUnderlying());
        }
        return layer;
    }

    private int add(LayerKernel kernel, Layer layer, String where, int... inputs) {
        boolean d = false;
        for (int in : inputs) {
            d |= in != NETWORK_INPUT && distributed.get(in);
        }
        if (kernel instanceof SequenceReshapeKernel) {
            d = isUnfold(kernel);
        } else if (d && !(kernel instanceof OutputKernel)) { // the layer runs on every time step: its gradient sums them
            kernel = new TimeDistributedKernel(kernel, layer != null, where);
        }
        steps.add(new Step(kernel, inputs, layer, where));
        distributed.add(d);
        return steps.size() - 1;
    }

    /**
     * The largest k such that steps 0..k−1 form a fixed prefix: leading steps that train nothing upstream
     * ({@code upstream[s]} false), draw no random numbers and are not the output layer, whose last output is all that
     * later steps read, and that do more than reshape; 0 if none (see {@link PerExampleGradients#hasFixedPrefix}).
     */
    static int fixedPrefix(List<Step> steps, boolean[] upstream) {
        int candidates = 0; // leading steps that train nothing upstream and are deterministic (never the output layer)
        while (candidates < steps.size() - 1 && !upstream[candidates] && steps.get(candidates).kernel().deterministic()) {
            candidates++;
        }
        for (int k = candidates; k > 0; k--) {
            boolean cut = true;
            for (int t = k; t < steps.size() && cut; t++) {
                for (int in : steps.get(t).inputs()) {
                    cut &= in == k - 1 || in >= k;
                }
            }
            for (int s = 0; s < k && cut; s++) { // the prefix's output must be one row per example: no time steps as rows
                cut = !(steps.get(s).kernel() instanceof SequenceReshapeKernel q && q.unfolds());
            }
            if (cut) { // and something to save: a prefix of reshapes (or a fixed standardisation) costs nothing to recompute
                for (int s = 0; s < k; s++) {
                    if (!(steps.get(s).kernel() instanceof ReshapeKernel) && !(steps.get(s).kernel() instanceof FeatureStandardizationKernel)) {
                        return k;
                    }
                }
                return 0;
            }
        }
        return 0;
    }

    private static boolean isUnfold(LayerKernel k) {
        return k instanceof SequenceReshapeKernel s && s.unfolds();
    }
}
