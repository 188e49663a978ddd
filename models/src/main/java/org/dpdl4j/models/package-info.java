/**
 * The DL4J networks the papers train (the standard MNIST CNN, the all-convolutional net, a CIFAR CNN, an MLP),
 * the tempered sigmoid, and the check that a configuration is one DP-SGD supports.
 */
package org.dpdl4j.models;
