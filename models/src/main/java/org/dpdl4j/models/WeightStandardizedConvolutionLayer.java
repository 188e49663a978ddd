package org.dpdl4j.models;

import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.gradient.Gradient;
import org.deeplearning4j.nn.layers.convolution.ConvolutionLayer;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.nd4j.common.primitives.Pair;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The runtime of {@link WeightStandardizedConvolution}: DL4J's convolution reading Ŵ wherever it reads W, and its
 * weight gradient dL/dŴ mapped to dL/dW in place.
 */
final class WeightStandardizedConvolutionLayer extends ConvolutionLayer {
    WeightStandardizedConvolutionLayer(NeuralNetConfiguration conf, DataType dataType) {
        super(conf, dataType);
    }

    private double eps() {
        return ((WeightStandardizedConvolution) conf().getLayer()).getEps();
    }

    @Override
    protected INDArray getParamWithNoise(String param, boolean training, LayerWorkspaceMgr workspaceMgr) {
        INDArray p = super.getParamWithNoise(param, training, workspaceMgr);
        return "W".equals(param) ? WeightStandardization.standardise(p, eps())[0].reshape('c', p.shape()) : p;
    }

    @Override
    public Pair<Gradient, INDArray> backpropGradient(INDArray epsilon, LayerWorkspaceMgr workspaceMgr) {
        Pair<Gradient, INDArray> out = super.backpropGradient(epsilon, workspaceMgr);
        INDArray view = gradientViews.get("W");
        INDArray w = getParam("W");
        long oc = w.size(0);
        INDArray[] s = WeightStandardization.standardise(w, eps());
        INDArray g = WeightStandardization.weightGradient(view.dup('c').reshape('c', 1, oc, w.length() / oc), s[0], s[1]);
        view.assign(g.reshape('c', view.shape()));
        return out;
    }
}
