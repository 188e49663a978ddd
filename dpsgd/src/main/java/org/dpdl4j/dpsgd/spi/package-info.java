/**
 * The public service-provider interface for per-example gradient kernels of layer types of a user's own:
 * {@link org.dpdl4j.dpsgd.spi.PerExampleKernel} (the contract) and {@link org.dpdl4j.dpsgd.spi.KernelFactory} (found by
 * {@link java.util.ServiceLoader} or registered with {@link org.dpdl4j.dpsgd.Kernels#register}).
 *
 * @serial exclude
 */
package org.dpdl4j.dpsgd.spi;
