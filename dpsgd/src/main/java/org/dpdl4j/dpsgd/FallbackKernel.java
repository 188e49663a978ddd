package org.dpdl4j.dpsgd;

import java.util.List;
import java.util.Map;
import org.deeplearning4j.nn.api.Layer;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.gradient.Gradient;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.nd4j.common.primitives.Pair;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.INDArrayIndex;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * The exact fallback for a layer that has no kernel of its own: DL4J's own {@code activate} for the batch and its own
 * {@code backpropGradient} one example at a time, so that each example's gradient is the layer's gradient of that
 * example alone (exact by construction, B backward calls per batch instead of one). The kernel runs a private copy of
 * the layer that reads the network's parameters in place and writes gradients into its own buffer, so the network's
 * gradient arrays are never touched. Only layers that treat examples independently may use it: batch normalisation
 * (and its subclasses) is refused before (see {@link LayerKernels}), and any other layer whose output for an example
 * alone differs from that example's row of the batch output is refused by the engine's {@link MixingCheck}, at plan time
 * on a synthetic batch and on its first real batch of two or more examples, wherever the layer stands (trained or not);
 * a trained layer's every example is compared again as its gradient is taken.
 */
final class FallbackKernel extends LayerKernel {
    /** A layer of unknown kind may draw random numbers or keep state in its forward pass. */
    @Override
    boolean deterministic() {
        return false;
    }

    /** DL4J's code for a layer of unknown kind may mix the examples of a batch: checked by {@link MixingCheck}. */
    @Override
    boolean mayMixExamples() {
        return true;
    }

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FallbackKernel.class);
    private final Layer layer;
    private final INDArray gradientView; // [1, n], the copy's gradient buffer (outside any workspace)
    private final long n;
    private INDArray input;
    private INDArray output; // the batch's output, compared with each example's own
    private INDArray grads; // [B, n], one row per example
    private INDArray sum; // [1, n], non-private mode

    private final String where;
    private final int rank;

    private FallbackKernel(Layer layer, INDArray gradientView, String where) {
        this.where = where;
        this.layer = layer;
        this.gradientView = gradientView;
        this.n = gradientView == null ? 0 : gradientView.length();
        this.rank = rankOf(layer);
    }

    /**
     * The rank DL4J's layer reads: 2 for feed-forward layers, 3 for recurrent, attention and 1-D layers ([B, f, T]), 4
     * for 2-D ones ([B, c, h, w]), 5 for 3-D ones; 0 when it is not known (a SameDiff layer of a user's: the data are
     * handed over as they come).
     */
    static int rankOf(Layer layer) {
        if (layer instanceof org.deeplearning4j.nn.layers.recurrent.TimeDistributedLayer) { // a layer on every step of [B, f, T]
            return 3;
        }
        org.deeplearning4j.nn.conf.layers.Layer c = layer.conf().getLayer();
        if (layer instanceof org.deeplearning4j.nn.layers.wrapper.BaseWrapperLayer w
                && !(w instanceof org.deeplearning4j.nn.layers.recurrent.TimeDistributedLayer)) { // LastTimeStep, MaskZero
            return rankOf(w.getUnderlying());
        }
        return rankOfConfiguration(c, layer);
    }

    private static int rankOfConfiguration(org.deeplearning4j.nn.conf.layers.Layer c, Layer layer) {
        String name = c.getClass().getName();
        if (c instanceof org.deeplearning4j.nn.conf.layers.BaseRecurrentLayer || c instanceof org.deeplearning4j.nn.conf.layers.recurrent.Bidirectional
                || c instanceof org.deeplearning4j.nn.conf.layers.recurrent.TimeDistributed
                || c instanceof org.deeplearning4j.nn.conf.layers.Convolution1DLayer || c instanceof org.deeplearning4j.nn.conf.layers.Subsampling1DLayer
                || c instanceof org.deeplearning4j.nn.conf.layers.Upsampling1D || c instanceof org.deeplearning4j.nn.conf.layers.convolutional.Cropping1D
                || c instanceof org.deeplearning4j.nn.conf.layers.ZeroPadding1DLayer || c instanceof org.deeplearning4j.nn.conf.layers.LocallyConnected1D
                || c instanceof org.deeplearning4j.nn.conf.layers.SelfAttentionLayer || c instanceof org.deeplearning4j.nn.conf.layers.RecurrentAttentionLayer
                || c instanceof org.deeplearning4j.nn.conf.layers.LearnedSelfAttentionLayer) {
            return 3;
        }
        if (c instanceof org.deeplearning4j.nn.conf.layers.PrimaryCapsules || c instanceof org.deeplearning4j.nn.conf.layers.LocallyConnected2D) {
            return 4;
        }
        if (name.contains(".samediff.") || c instanceof org.deeplearning4j.nn.conf.layers.samediff.AbstractSameDiffLayer
                || c instanceof org.deeplearning4j.nn.conf.layers.EmbeddingSequenceLayer) { // indices [B, T] or [B, 1, T]
            return 0;
        }
        return switch (layer.type()) {
            case FEED_FORWARD -> 2;
            case RECURRENT -> 3;
            case CONVOLUTIONAL, SUBSAMPLING, UPSAMPLING -> 4;
            case CONVOLUTIONAL3D -> 5;
            default -> 0;
        };
    }

    /** Whether the layer has parameters: only then does it run one example at a time (else once for the batch). */
    boolean oneExampleAtATime() {
        return n > 0;
    }

    /** {@inheritDoc} (what DL4J's layer reads) */
    @Override
    int inputRank() {
        return rank;
    }

    /**
     * @param original   the network's layer (its parameters are read, never written)
     * @param configured the layer's configuration as the network's configuration holds it (a wrapper's own, e.g.
     *                   {@code LastTimeStep}, where the runtime layer's {@code conf()} would give the wrapped layer's)
     * @param where      the layer's position and name, for the warning
     */
    static FallbackKernel of(Layer original, NeuralNetConfiguration configured, String where, DataType dataType) {
        return of(original, configured, where, dataType, true);
    }

    /** {@link #of(Layer, NeuralNetConfiguration, String, DataType)}; {@code warn}: log that the layer has no kernel. */
    static FallbackKernel of(Layer original, NeuralNetConfiguration configured, String where, DataType dataType, boolean warn) {
        NeuralNetConfiguration conf = configured.clone();
        conf.getLayer().setIDropout(null); // the engine's dropout kernel runs before this layer, with one mask per pass
        long n = original.numParams();
        INDArray view = null;
        try (var outside = Nd4j.getWorkspaceManager().scopeOutOfWorkspaces()) {
            if (n > 0) { // rank 1, as the network's own flattened gradient: Bidirectional splits it along dimension 0
                view = Nd4j.zeros(dataType, n);
            }
        }
        Layer copy = conf.getLayer().instantiate(conf, List.of(), original.getIndex(), n > 0 ? original.params() : null,
                false, dataType);
        if (n > 0 && copy.numParams() != n) {
            throw new IllegalStateException(where + ": the fallback's copy of the layer has " + copy.numParams()
                    + " parameters, the network's " + n);
        }
        if (n > 0) {
            copy.setBackpropGradientsViewArray(view);
        }
        if (n > 0 && warn) {
            LOG.warn("{}: {} has no DP-SGD kernel; its per-example gradients use DL4J's backprop one example at a time "
                    + "(exact; expect this layer's backward pass to be about batch-size times slower)", where,
                    conf.getLayer().getClass().getSimpleName());
        }
        return new FallbackKernel(copy, view, where);
    }

    private static LayerWorkspaceMgr workspaces() {
        return LayerWorkspaceMgr.noWorkspaces();
    }

    /** {@inheritDoc} (DL4J's own layer takes it: {@code setMaskArray}, {@code feedForwardMaskArray}) */
    @Override
    boolean acceptsMask() {
        return true;
    }

    private INDArray maskOut;
    private INDArray keptMask;

    @Override
    INDArray outputMask() {
        return maskOut;
    }

    /**
     * Hands the copy its mask (rows [i, i+1) of the pass's mask, or all of it for i = −1) as DL4J's networks do: through
     * {@code feedForwardMaskArray}, which most layers answer by keeping the mask, but DL4J's 1-D convolution and pooling
     * layers only reduce it for the layers after them and compute every step ({@code setMaskArray} would make them zero
     * their masked outputs, which DL4J's own network does not).
     */
    private void useMask(INDArray m, int i) {
        layer.setMaskArray(null);
        if (m != null) {
            INDArray rows = i < 0 ? m : row(m, i);
            layer.feedForwardMaskArray(rows, org.deeplearning4j.nn.api.MaskState.Active, (int) rows.size(0));
        }
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        if (keep) {
            input = x;
            keptMask = mask;
        }
        useMask(mask, -1);
        maskOut = mask == null ? null : layer.feedForwardMaskArray(mask, org.deeplearning4j.nn.api.MaskState.Active,
                (int) x.size(0)).getFirst();
        // a copy: some DL4J layers activate in place at inference, and x may be read by another vertex
        INDArray out = layer.activate(x.dup(), training, workspaces());
        if (out.isView() || out.ordering() != 'c') { // e.g. Cropping2D's view: ND4J's get() on it can come back empty
            out = out.dup('c');
        }
        if (out.dataType() != x.dataType()) { // some DL4J layers create float arrays whatever the network's type (masks)
            out = out.castTo(x.dataType());
        }
        if (keep) {
            output = out;
        }
        return out;
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        if (!trainable || n == 0 || !perExample) { // one backward call for the batch (the engine checked it mixes nothing)
            useMask(keptMask, -1);
            if (n > 0) {
                gradientView.assign(0);
            }
            Pair<Gradient, INDArray> p = backpropOf(input, gradOutput, -1);
            if (n > 0 && trainable) {
                sum = gradientView.dup();
            }
            // a copy: DL4J may hand back a view (ZeroPadding1D's), on which ND4J's get() of a row can come back empty
            return needInputGradient && p.getSecond() != null ? p.getSecond().castTo(input.dataType()).dup('c') : null;
        }
        long b = input.size(0);
        grads = Nd4j.create(gradientView.dataType(), b, n);
        INDArray inputGradient = needInputGradient ? Nd4j.create(input.dataType(), input.shape()) : null;
        for (int i = 0; i < b; i++) {
            gradientView.assign(0); // a layer whose backprop adds into its views, or skips one, must not carry example i − 1
            useMask(keptMask, i);
            Pair<Gradient, INDArray> p = backpropOf(row(input, i), row(gradOutput, i), i);
            grads.putRow(i, gradientView.reshape(n));
            if (inputGradient != null) {
                inputGradient.get(index(inputGradient, i)).assign(p.getSecond().castTo(inputGradient.dataType()));
            }
        }
        return inputGradient;
    }

    /** DL4J's backprop on x (example {@code example} alone, or the batch when it is −1). */
    private Pair<Gradient, INDArray> backpropOf(INDArray x, INDArray gradOutput, int example) {
        layer.setInput(x, workspaces());
        INDArray out = layer.activate(true, workspaces());
        if (example >= 0) {
            requireOwnOutput(out.dup('c'), example);
        }
        return layer.backpropGradient(gradOutput, workspaces());
    }

    /**
     * @throws MixingCheck.Mixed if example i's output alone differs from its row of the batch's output (beyond rounding;
     *                            NaN matches NaN): the layer mixes the examples of a batch, and DP-SGD's per-example
     *                            gradients are then not defined for the batch (the engine then computes one example
     *                            at a time)
     */
    private void requireOwnOutput(INDArray alone, int i) {
        INDArray inBatch = row(output, i);
        double scale = Math.max(1e-30, MixingCheck.finiteMax(inBatch)); // NaN matches NaN: a non-finite example gets factor 0
        double diff = MixingCheck.difference(alone.reshape(inBatch.shape()).castTo(inBatch.dataType()), inBatch);
        double tolerance = inBatch.dataType() == DataType.DOUBLE ? 1e-9 : 1e-4;
        if (!(diff <= tolerance * scale)) {
            throw new MixingCheck.Mixed(where + ": the layer's output for one example depends on the other examples "
                    + "of the batch (relative difference " + diff / scale + "); layers that mix examples cannot be trained "
                    + "with DP-SGD", null);
        }
    }

    private static INDArray row(INDArray a, int i) {
        return a.get(index(a, i)).dup('c');
    }

    private static INDArrayIndex[] index(INDArray a, int i) {
        INDArrayIndex[] index = NDArrayIndex.allFor(a);
        index[0] = NDArrayIndex.interval(i, i + 1);
        return index;
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        sq.addi(LayerKernel.rowSquaredNorms(grads));
    }

    @Override
    void zeroNonFinite() {
        LayerKernel.zeroNonFinite(grads);
    }

    /** {@inheritDoc} (the copy's gradients are in the layer's own parameter layout, which is the slice's) */
    @Override
    boolean addsFlatGradients() {
        return true;
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> views) {
        addInto(views.get(FLAT), w.castTo(grads.dataType()).reshape(1, w.length()).mmul(grads));
    }

    @Override
    void addSum(Map<String, INDArray> views) {
        addInto(views.get(FLAT), sum);
    }

    @Override
    void clear() {
        input = null;
        keptMask = null;
        layer.setMaskArray(null);
        output = null;
        grads = null;
        sum = null;
    }
}
