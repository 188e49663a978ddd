package org.dpdl4j.dpsgd;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.deeplearning4j.nn.api.Layer;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.layers.BaseLayer;
import org.deeplearning4j.nn.gradient.DefaultGradient;
import org.deeplearning4j.nn.gradient.Gradient;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.deeplearning4j.util.ModelSerializer;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * What the trainer needs of a network, for both DL4J network types ({@link MultiLayerNetwork} and
 * {@link ComputationGraph}): its layers, its flattened gradient, DL4J's updater step exactly as {@code fit()} takes it,
 * copies, and restoring a saved one as the type it was saved as.
 */
public final class Networks {
    private Networks() {
    }

    /**
     * Checks that the model is one of the two DL4J network types the trainer supports.
     *
     * @param network the model to check; may be null (which fails the check)
     * @return {@code network} itself
     * @throws IllegalArgumentException if the model is neither a MultiLayerNetwork nor a ComputationGraph
     */
    public static Model require(Model network) {
        if (!(network instanceof MultiLayerNetwork) && !(network instanceof ComputationGraph)) {
            throw new IllegalArgumentException("network must be a MultiLayerNetwork or a ComputationGraph, got "
                    + (network == null ? "null" : network.getClass().getName()));
        }
        return network;
    }

    /**
     * The network's layers, as DL4J's {@code getLayers()} gives them (a MultiLayerNetwork's in layer-index order).
     *
     * @param network a {@code MultiLayerNetwork} or a {@code ComputationGraph}
     * @return the network's own layer array (not a copy)
     * @throws ClassCastException if the model is neither
     */
    public static Layer[] layers(Model network) {
        return network instanceof MultiLayerNetwork m ? m.getLayers() : ((ComputationGraph) network).getLayers();
    }

    /**
     * The network's flattened gradient array (created on first use).
     *
     * @param network a {@code MultiLayerNetwork} or a {@code ComputationGraph}
     * @return the network's own flattened gradient view, one value per parameter
     * @throws ClassCastException if the model is neither
     */
    public static INDArray flattenedGradients(Model network) {
        if (network instanceof MultiLayerNetwork m) {
            if (m.getFlattenedGradients() == null) {
                m.initGradientsView();
            }
            return m.getFlattenedGradients();
        }
        ComputationGraph g = (ComputationGraph) network;
        if (g.getFlattenedGradients() == null) {
            g.initGradientsView();
        }
        return g.getFlattenedGradients();
    }

    /**
     * The gradient keyed as DL4J's updater expects it ("3_W" in a MultiLayerNetwork, "conv1_W" in a graph) over {@code flat}.
     * Layers without parameters and frozen layers ({@link #isFrozen}) have no entry.
     *
     * @param network a {@code MultiLayerNetwork} or a {@code ComputationGraph}
     * @param flat    the network's flattened gradient ({@link #flattenedGradients}), whose layer views the entries are
     * @return the gradient, its entries views of the layers' gradient arrays
     * @throws ClassCastException if the model is neither
     */
    public static Gradient gradientViews(Model network, INDArray flat) {
        Gradient g = new DefaultGradient(flat);
        Layer[] layers = layers(network);
        for (int i = 0; i < layers.length; i++) {
            Layer layer = layers[i];
            if (layer.numParams() == 0 || isFrozen(layer)) {
                continue;
            }
            String prefix = network instanceof MultiLayerNetwork ? String.valueOf(i) : layer.conf().getLayer().getLayerName();
            var views = layer.conf().getLayer().initializer().getGradientsFromFlattened(layer.conf(), layer.getGradientsViewArray());
            for (var e : views.entrySet()) {
                g.setGradientFor(prefix + "_" + e.getKey(), e.getValue());
            }
        }
        return g;
    }

    /**
     * What DL4J's {@code fit} tells a network's own listeners ({@code ScoreIterationListener}, {@code CheckpointListener},
     * {@code EvaluativeListener}, DL4J's UI {@code StatsListener}, …) after a step: the network's score set to the
     * batch's mean per-example loss, {@code iterationDone}, and at an epoch's end {@code onEpochEnd} and
     * {@code onEpochStart}. The score is computed on private data without noise: it is for the operator (console, UI),
     * never for a release.
     *
     * @param network   a {@code MultiLayerNetwork} or {@code ComputationGraph}, after the step's update
     * @param meanLoss  the batch's mean per-example loss (NaN for an empty batch)
     * @param epoch     the epoch the step belonged to, ≥ 0
     * @param nextEpoch the epoch of the next step (above {@code epoch} when this step ended one)
     */
    public static void notifyListeners(Model network, double meanLoss, int epoch, int nextEpoch) {
        java.util.Collection<org.deeplearning4j.optimize.api.TrainingListener> listeners = network instanceof MultiLayerNetwork m
                ? m.getListeners() : ((ComputationGraph) network).getListeners();
        if (listeners == null || listeners.isEmpty()) {
            return;
        }
        int iteration;
        if (network instanceof MultiLayerNetwork m) {
            m.setScore(meanLoss);
            iteration = m.getLayerWiseConfigurations().getIterationCount();
        } else {
            ComputationGraph g = (ComputationGraph) network;
            g.setScore(meanLoss);
            iteration = g.getConfiguration().getIterationCount();
        }
        for (org.deeplearning4j.optimize.api.TrainingListener l : java.util.List.copyOf(listeners)) {
            l.iterationDone(network, iteration, epoch);
            if (nextEpoch > epoch) {
                l.onEpochEnd(network);
                l.onEpochStart(network);
            }
        }
    }

    /**
     * What {@code fit()} does with a computed gradient: the DL4J updater in place on {@code flat}, then params −= update;
     * the configuration's iteration count advances and its epoch count is set to {@code epoch}. Frozen layers do not
     * move.
     *
     * @param network  a {@code MultiLayerNetwork} or a {@code ComputationGraph}, updated in place
     * @param gradient the gradient views over {@code flat} ({@link #gradientViews})
     * @param flat     the network's flattened gradient ({@link #flattenedGradients}) holding the gradient to apply;
     *                 overwritten with the update
     * @param epoch    the epoch count handed to the updater (for learning-rate schedules), &gt;= 0
     * @throws ClassCastException if the model is neither
     */
    public static void applyUpdate(Model network, Gradient gradient, INDArray flat, int epoch) {
        if (network instanceof MultiLayerNetwork m) {
            var conf = m.getLayerWiseConfigurations();
            int iteration = conf.getIterationCount();
            conf.setEpochCount(epoch);
            m.getUpdater().update(m, gradient, iteration, epoch, 1, LayerWorkspaceMgr.noWorkspaces());
            conf.setIterationCount(iteration + 1);
        } else {
            ComputationGraph g = (ComputationGraph) network;
            var conf = g.getConfiguration();
            int iteration = conf.getIterationCount();
            conf.setEpochCount(epoch);
            g.getUpdater().update(gradient, iteration, epoch, 1, LayerWorkspaceMgr.noWorkspaces());
            conf.setIterationCount(iteration + 1);
        }
        // frozen layers: DL4J's no-op updater passes the noise there through; their parameters must not move
        INDArray row = flat.reshape(1, flat.length());
        long base = network.params().offset();
        for (Layer layer : layers(network)) {
            if (layer.numParams() > 0 && isFrozen(layer)) {
                long from = layer.params().offset() - base;
                row.get(NDArrayIndex.point(0), NDArrayIndex.interval(from, from + layer.numParams())).assign(0);
            }
        }
        network.params().subi(flat.reshape(network.params().shape()));
    }

    /**
     * Whether DL4J froze the layer ({@code FrozenLayer}, {@code FrozenLayerWithBackprop}, as TransferLearning does).
     *
     * @param layer a network's layer (runtime)
     * @return true if the layer is frozen
     */
    public static boolean isFrozen(Layer layer) {
        return layer instanceof org.deeplearning4j.nn.layers.FrozenLayer || layer instanceof org.deeplearning4j.nn.layers.FrozenLayerWithBackprop;
    }

    /**
     * The learning rate of the first layer whose updater has one (at iteration 0), or null if none has.
     *
     * @param network a {@code MultiLayerNetwork} or a {@code ComputationGraph}
     * @return the learning rate at iteration 0 and epoch 0, or null
     * @throws ClassCastException if the model is neither
     */
    public static Double learningRate(Model network) {
        for (Layer layer : layers(network)) {
            if (layer.conf().getLayer() instanceof BaseLayer b && b.getIUpdater() != null && b.getIUpdater().hasLearningRate()) {
                return b.getIUpdater().getLearningRate(0, 0);
            }
        }
        return null;
    }

    /**
     * The optimiser that trains the network, by the names of the settings' {@code optimizer}: {@code sgd} (DL4J's
     * {@code Sgd}), {@code momentum} ({@code Nesterovs}), {@code adam} ({@code Adam}), another updater's class name in
     * lower case, or {@code mixed} when its trainable layers differ ({@code NoOp} layers are frozen and not counted).
     *
     * @param network a {@code MultiLayerNetwork} or a {@code ComputationGraph}
     * @return the optimiser's name, or null if no layer has an updater
     * @throws ClassCastException if the model is neither
     */
    public static String optimizerName(Model network) {
        String name = null;
        for (Layer layer : layers(network)) {
            if (layer.conf().getLayer() instanceof BaseLayer b && b.getIUpdater() != null
                    && !(b.getIUpdater() instanceof org.nd4j.linalg.learning.config.NoOp)) {
                String own = switch (b.getIUpdater().getClass().getSimpleName()) {
                    case "Sgd" -> "sgd";
                    case "Nesterovs" -> "momentum";
                    case "Adam" -> "adam";
                    default -> b.getIUpdater().getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT);
                };
                if (name != null && !name.equals(own)) {
                    return "mixed";
                }
                name = own;
            }
        }
        return name;
    }

    /**
     * Checks that every layer whose updater has a learning rate has a finite positive one (at iteration 0).
     *
     * @param network a {@code MultiLayerNetwork} or a {@code ComputationGraph}
     * @throws IllegalArgumentException naming the first layer whose learning rate is not finite and positive
     * @throws ClassCastException       if the model is neither
     */
    public static void requirePositiveLearningRate(Model network) {
        Layer[] layers = layers(network);
        for (int i = 0; i < layers.length; i++) {
            if (layers[i].conf().getLayer() instanceof BaseLayer b && b.getIUpdater() != null && b.getIUpdater().hasLearningRate()) {
                double lr = b.getIUpdater().getLearningRate(0, 0);
                if (!(lr > 0) || Double.isInfinite(lr)) {
                    throw new IllegalArgumentException("learning rate of layer " + i + " must be finite and > 0, got " + lr);
                }
            }
        }
    }

    /**
     * A network saved by {@code ModelSerializer}, restored as the type it was saved as.
     *
     * @param zip         the saved model's bytes
     * @param loadUpdater whether to restore the updater state too
     * @return the restored {@code MultiLayerNetwork} or {@code ComputationGraph}
     * @throws IOException if the bytes are not a saved DL4J network
     */
    public static Model restore(byte[] zip, boolean loadUpdater) throws IOException {
        return isSavedGraph(zip) ? ModelSerializer.restoreComputationGraph(new ByteArrayInputStream(zip), loadUpdater)
                : ModelSerializer.restoreMultiLayerNetwork(new ByteArrayInputStream(zip), loadUpdater);
    }

    /**
     * {@link #restore(byte[], boolean)} from a file.
     *
     * @param file        the file {@code ModelSerializer} wrote
     * @param loadUpdater whether to restore the updater state too
     * @return the restored {@code MultiLayerNetwork} or {@code ComputationGraph}
     * @throws IOException if the file cannot be read or is not a saved DL4J network
     */
    public static Model restore(java.io.File file, boolean loadUpdater) throws IOException {
        return restore(java.nio.file.Files.readAllBytes(file.toPath()), loadUpdater);
    }

    /**
     * A deep copy (parameters, updater state, configuration).
     *
     * @param network a {@code MultiLayerNetwork} or a {@code ComputationGraph}
     * @return the copy, of the same type
     * @throws IllegalArgumentException if the model is neither
     */
    public static Model copy(Model network) {
        return network instanceof MultiLayerNetwork m ? m.clone() : ((ComputationGraph) require(network)).clone();
    }

    /**
     * Sets every layer's learning rate, as DL4J's {@code setLearningRate} does.
     *
     * @param network      a {@code MultiLayerNetwork} or a {@code ComputationGraph}, changed in place
     * @param learningRate the new learning rate (not checked here; training needs it finite and &gt; 0)
     * @throws IllegalArgumentException if the model is neither
     */
    public static void setLearningRate(Model network, double learningRate) {
        if (network instanceof MultiLayerNetwork m) {
            m.setLearningRate(learningRate);
        } else {
            ((ComputationGraph) require(network)).setLearningRate(learningRate);
        }
    }

    /**
     * The network's configuration as DL4J's JSON (a {@code MultiLayerConfiguration} or a {@code ComputationGraphConfiguration}).
     *
     * @param network a {@code MultiLayerNetwork} or a {@code ComputationGraph}
     * @return the configuration's JSON
     * @throws IllegalArgumentException if the model is neither
     */
    public static String configurationJson(Model network) {
        return network instanceof MultiLayerNetwork m ? m.getLayerWiseConfigurations().toJson()
                : ((ComputationGraph) require(network)).getConfiguration().toJson();
    }

    /**
     * A new, initialised network from {@link #configurationJson} (its parameters are the configuration's seeded
     * initialisation; assign the trained ones).
     *
     * @param json a configuration's JSON, as {@link #configurationJson} gives it
     * @return the new initialised network: a {@code ComputationGraph} if the JSON has top-level "vertices", else a
     *         {@code MultiLayerNetwork}
     * @throws IOException if the JSON is not a DL4J network configuration
     */
    public static Model fromConfigurationJson(String json) throws IOException {
        Model network = isGraph(json.getBytes(java.nio.charset.StandardCharsets.UTF_8))
                ? new ComputationGraph(org.deeplearning4j.nn.conf.ComputationGraphConfiguration.fromJson(json))
                : new MultiLayerNetwork(org.deeplearning4j.nn.conf.MultiLayerConfiguration.fromJson(json));
        network.init();
        return network;
    }

    /** Whether a saved model's configuration is a graph's: its top-level JSON object has "vertices". */
    private static boolean isSavedGraph(byte[] zip) throws IOException {
        try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                if (e.getName().equals("configuration.json")) {
                    return isGraph(in.readAllBytes());
                }
            }
        }
        throw new IOException("not a saved DL4J network: no configuration.json in the archive");
    }

    /** A graph's configuration JSON has "vertices" at the top level; a MultiLayerNetwork's has "confs". */
    private static boolean isGraph(byte[] json) throws IOException {
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree(json).has("vertices");
    }
}
