package com.example.kernels;

import org.deeplearning4j.nn.conf.layers.misc.ElementWiseMultiplicationLayer;
import org.deeplearning4j.nn.api.Layer;
import org.dpdl4j.dpsgd.spi.KernelFactory;
import org.dpdl4j.dpsgd.spi.PerExampleKernel;

/** A layer class of a user's own whose kernel is found through META-INF/services (see {@link UserKernelTest}). */
public class ServiceLoadedLayer extends ElementWiseMultiplicationLayer {
    public ServiceLoadedLayer() {
    }

    public ServiceLoadedLayer(ElementWiseMultiplicationLayer.Builder builder) {
        super(builder);
    }

    /** Listed in the test resources' META-INF/services/org.dpdl4j.dpsgd.spi.KernelFactory. */
    public static final class Factory implements KernelFactory {
        @Override
        public Class<? extends org.deeplearning4j.nn.conf.layers.Layer> layerType() {
            return ServiceLoadedLayer.class;
        }

        @Override
        public PerExampleKernel create(Layer layer) {
            return new UserKernelTest.ElementWiseKernel(layer, false);
        }
    }
}
