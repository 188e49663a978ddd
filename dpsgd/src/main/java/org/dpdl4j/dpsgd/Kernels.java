package org.dpdl4j.dpsgd;

import org.dpdl4j.dpsgd.spi.KernelFactory;

/**
 * The one public call that adds a per-example gradient kernel for a layer type of a user's own
 * ({@link org.dpdl4j.dpsgd.spi}); factories listed in {@code META-INF/services/org.dpdl4j.dpsgd.spi.KernelFactory} are
 * added without it, when the engine first looks a layer up.
 */
public final class Kernels {
    private Kernels() {
    }

    /**
     * Registers a factory: networks built after this call run its layer type on its kernels (a later registration for the
     * same layer class replaces an earlier one). The engine trusts a kernel to give each example's true gradient: a kernel
     * that understates a norm lets a clipped gradient exceed C, so check it first with
     * {@link KernelChecks#assertExact(org.deeplearning4j.nn.conf.layers.Layer, org.deeplearning4j.nn.conf.inputs.InputType)}.
     *
     * @param factory the factory to register; its {@link KernelFactory#layerType()} is the layer class it serves
     * @throws IllegalArgumentException if dpdl4j has a kernel of its own for that layer class, or refuses it
     */
    public static void register(KernelFactory factory) {
        LayerKernels.registerExternal(factory);
    }

    /**
     * Whether a layer configuration class runs on a kernel (dpdl4j's own or a registered one).
     *
     * @param type the DL4J layer configuration class (exact class, not its subclasses)
     * @return true if it has a kernel; false if it runs on the exact fallback or is refused
     */
    public static boolean hasKernel(Class<? extends org.deeplearning4j.nn.conf.layers.Layer> type) {
        return LayerKernels.supports(type);
    }
}
