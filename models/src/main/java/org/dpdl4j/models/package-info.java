/**
 * The DL4J networks the papers train (the standard MNIST CNN, the all-convolutional net, a CIFAR CNN, an MLP,
 * ScatterNets, wide residual networks, and DL4J zoo models adapted for DP-SGD), built by {@link org.dpdl4j.models.Models}
 * from {@link org.dpdl4j.models.ModelOptions}; the tempered sigmoid; and the layers DP-SGD can use where batch
 * normalisation cannot (group normalisation, weight-standardised convolution, the scattering transform). The check
 * that a configuration is one DP-SGD supports is {@code org.dpdl4j.dpsgd.DpCompatibility}, in module dpsgd.
 *
 * @serial exclude
 */
package org.dpdl4j.models;
