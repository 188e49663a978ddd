/**
 * Real data, verified: MNIST, Fashion-MNIST and CIFAR-10 readers that check sizes, magic numbers and SHA-256,
 * image folders through DataVec, the cache the fetch step fills, and record-by-record splits and client
 * partitions whose shape does not depend on the data.
 *
 * @serial exclude
 */
package org.dpdl4j.datasets;
