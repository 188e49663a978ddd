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

/** The runtime of {@link FeatureStandardization}: the fixed per-channel standardisation, and its input gradient. */
final class FeatureStandardizationLayer extends AbstractLayer<FeatureStandardization> {
    FeatureStandardizationLayer(NeuralNetConfiguration conf, DataType dataType) {
        super(conf, dataType);
    }

    @Override
    public INDArray activate(boolean training, LayerWorkspaceMgr workspaceMgr) {
        assertInputSet(false);
        INDArray out = layerConf().standardise(input.castTo(dataType));
        return workspaceMgr.leverageTo(ArrayType.ACTIVATIONS, out == input ? input.dup() : out);
    }

    @Override
    public Pair<Gradient, INDArray> backpropGradient(INDArray epsilon, LayerWorkspaceMgr workspaceMgr) {
        INDArray g = layerConf().inputGradient(epsilon);
        return new Pair<>(new DefaultGradient(), workspaceMgr.leverageTo(ArrayType.ACTIVATION_GRAD, g == epsilon ? epsilon.dup() : g));
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
        return Type.FEED_FORWARD;
    }
}
