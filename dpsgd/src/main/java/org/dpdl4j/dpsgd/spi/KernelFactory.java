package org.dpdl4j.dpsgd.spi;

import org.deeplearning4j.nn.api.Layer;

/**
 * Gives the DP-SGD engine the {@link PerExampleKernel} of a layer configuration class, found by
 * {@link java.util.ServiceLoader} (list the factory's class name in
 * {@code META-INF/services/org.dpdl4j.dpsgd.spi.KernelFactory} of your jar) or registered with
 * {@link org.dpdl4j.dpsgd.Kernels#register}. A layer class with a factory runs on its kernel; without one, on the exact
 * fallback (DL4J's own layer, one example at a time: correct, slower).
 */
public interface KernelFactory {
    /**
     * The exact DL4J layer configuration class this factory's kernels run (a subclass needs its own factory).
     *
     * @return the layer configuration class, not null
     */
    Class<? extends org.deeplearning4j.nn.conf.layers.Layer> layerType();

    /**
     * The kernel of one layer of a network, reading the layer's parameters in place ({@code layer.getParam(name)}).
     *
     * @param layer the network's layer (runtime), of {@link #layerType()}
     * @return its kernel, or null to run this layer on the exact fallback (e.g. for settings the kernel does not cover)
     */
    PerExampleKernel create(Layer layer);
}
