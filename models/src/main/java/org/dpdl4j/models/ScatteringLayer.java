package org.dpdl4j.models;

import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.gradient.DefaultGradient;
import org.deeplearning4j.nn.gradient.Gradient;
import org.deeplearning4j.nn.layers.AbstractLayer;
import org.deeplearning4j.nn.workspace.ArrayType;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.nd4j.common.primitives.Pair;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/** The runtime of {@link Scattering}: the transform in the forward pass, no gradient in the backward pass. */
final class ScatteringLayer extends AbstractLayer<Scattering> {
    private Scattering2D transform; // for the last input size seen (one network sees one size)

    ScatteringLayer(NeuralNetConfiguration conf, DataType dataType) {
        super(conf, dataType);
    }

    /** The transform for images of this size (built once per size: the filter bank takes a few milliseconds). */
    Scattering2D transform(int height, int width) {
        Scattering2D t = transform;
        if (t == null || t.inputHeight() != height || t.inputWidth() != width) {
            t = new Scattering2D(height, width, layerConf().getScales(), layerConf().getAngles());
            transform = t;
        }
        return t;
    }

    @Override
    public INDArray activate(boolean training, LayerWorkspaceMgr workspaceMgr) {
        assertInputSet(false);
        INDArray x = layerConf().images(input);
        INDArray out = layerConf().normalise(transform((int) x.size(2), (int) x.size(3)).transform(x).castTo(dataType));
        return workspaceMgr.leverageTo(ArrayType.ACTIVATIONS, out);
    }

    /**
     * No gradient flows through the transform: the returned input gradient is null, which DL4J discards when the layer
     * is the network's first (the only place this layer may stand when anything before it is trained).
     */
    @Override
    public Pair<Gradient, INDArray> backpropGradient(INDArray epsilon, LayerWorkspaceMgr workspaceMgr) {
        return new Pair<>(new DefaultGradient(), null);
    }

    @Override
    public boolean isPretrainLayer() {
        return false;
    }

    @Override
    public void clearNoiseWeightParams() {
    }

    @Override
    public Type type() {
        return Type.CONVOLUTIONAL;
    }
}
