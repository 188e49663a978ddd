package org.dpdl4j.models;

import java.util.Collection;
import org.deeplearning4j.nn.api.Layer;
import org.deeplearning4j.nn.api.ParamInitializer;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * What every DL4J layer configuration's {@code instantiate} does with a new runtime layer (as DL4J's own layers do), for
 * layers of your own: {@code return LayerWiring.wire(new MyLayer(conf, dataType), conf, listeners, index, paramsView,
 * initializeParams, initializer());}.
 */
public final class LayerWiring {
    private LayerWiring() {
    }

    /**
     * Sets the runtime layer's listeners, index, parameter view and parameter table (from the initializer) and its
     * configuration.
     *
     * @param layer            the new runtime layer
     * @param conf             its configuration, as {@code instantiate} receives it
     * @param listeners        the network's listeners, as received
     * @param index            the layer's index, as received
     * @param paramsView       its view of the network's flattened parameters, as received (empty for none)
     * @param initializeParams whether to initialise the parameters, as received
     * @param initializer      the layer configuration's {@code initializer()}
     * @param <T>              the runtime layer's type
     * @return {@code layer}, wired
     */
    public static <T extends Layer> T wire(T layer, NeuralNetConfiguration conf, Collection<TrainingListener> listeners, int index,
                                    INDArray paramsView, boolean initializeParams, ParamInitializer initializer) {
        layer.setListeners(listeners);
        layer.setIndex(index);
        layer.setParamsViewArray(paramsView);
        layer.setParamTable(initializer.init(conf, paramsView, initializeParams));
        layer.setConf(conf);
        return layer;
    }
}
