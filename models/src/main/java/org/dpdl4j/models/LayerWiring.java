package org.dpdl4j.models;

import java.util.Collection;
import org.deeplearning4j.nn.api.Layer;
import org.deeplearning4j.nn.api.ParamInitializer;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.linalg.api.ndarray.INDArray;

/** What every DL4J layer configuration's {@code instantiate} does with a new runtime layer (as DL4J's own layers do). */
final class LayerWiring {
    private LayerWiring() {
    }

    static <T extends Layer> T wire(T layer, NeuralNetConfiguration conf, Collection<TrainingListener> listeners, int index,
                                    INDArray paramsView, boolean initializeParams, ParamInitializer initializer) {
        layer.setListeners(listeners);
        layer.setIndex(index);
        layer.setParamsViewArray(paramsView);
        layer.setParamTable(initializer.init(conf, paramsView, initializeParams));
        layer.setConf(conf);
        return layer;
    }
}
