package org.dpdl4j.models;

import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.gradient.DefaultGradient;
import org.deeplearning4j.nn.gradient.Gradient;
import org.deeplearning4j.nn.layers.BaseLayer;
import org.deeplearning4j.nn.workspace.ArrayType;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.nd4j.common.primitives.Pair;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/** The runtime of {@link GroupNormalization} (forward and backward on {@link GroupNormMath}). */
final class GroupNormalizationLayer extends BaseLayer<GroupNormalization> {
    GroupNormalizationLayer(NeuralNetConfiguration conf, DataType dataType) {
        super(conf, dataType);
    }

    @Override
    public INDArray activate(boolean training, LayerWorkspaceMgr workspaceMgr) {
        assertInputSet(false);
        applyDropOutIfNecessary(training, workspaceMgr);
        INDArray z = preOutput(training, workspaceMgr);
        INDArray a = layerConf().getActivationFn().getActivation(z, training);
        return workspaceMgr.leverageTo(ArrayType.ACTIVATIONS, a);
    }

    @Override
    protected INDArray preOutput(boolean training, LayerWorkspaceMgr workspaceMgr) {
        GroupNormalization c = layerConf();
        INDArray xHat = GroupNormMath.normalise(GroupNormMath.asChannels(input), c.getGroups(), c.getEps())[0];
        return GroupNormMath.affine(xHat, getParam(GroupNormalization.Params.GAMMA), getParam(GroupNormalization.Params.BETA))
                .reshape('c', input.shape());
    }

    @Override
    public Pair<Gradient, INDArray> backpropGradient(INDArray epsilon, LayerWorkspaceMgr workspaceMgr) {
        assertInputSet(true);
        GroupNormalization c = layerConf();
        INDArray[] normalised = GroupNormMath.normalise(GroupNormMath.asChannels(input), c.getGroups(), c.getEps());
        INDArray xHat = normalised[0];
        INDArray gamma = getParam(GroupNormalization.Params.GAMMA);
        INDArray z = GroupNormMath.affine(xHat, gamma, getParam(GroupNormalization.Params.BETA)).reshape('c', input.shape());
        INDArray dz = GroupNormMath.asChannels(c.getActivationFn().backprop(z, epsilon.dup()).getFirst());
        INDArray gammaGrad = gradientViews.get(GroupNormalization.Params.GAMMA);
        INDArray betaGrad = gradientViews.get(GroupNormalization.Params.BETA);
        gammaGrad.assign(dz.mul(xHat).sum(0, 2).reshape(gammaGrad.shape()));
        betaGrad.assign(dz.sum(0, 2).reshape(betaGrad.shape()));
        INDArray dxHat = org.nd4j.linalg.factory.Broadcast.mul(dz, gamma.reshape(gamma.length()), dz.ulike(), 1);
        INDArray dx = GroupNormMath.inputGradient(dxHat, xHat, normalised[1], c.getGroups()).reshape('c', input.shape());
        Gradient g = new DefaultGradient(gradientsFlattened);
        g.gradientForVariable().put(GroupNormalization.Params.GAMMA, gammaGrad);
        g.gradientForVariable().put(GroupNormalization.Params.BETA, betaGrad);
        dx = backpropDropOutIfPresent(dx);
        return new Pair<>(g, workspaceMgr.leverageTo(ArrayType.ACTIVATION_GRAD, dx));
    }

    @Override
    public boolean isPretrainLayer() {
        return false;
    }

    @Override
    public boolean hasBias() {
        return false;
    }
}
