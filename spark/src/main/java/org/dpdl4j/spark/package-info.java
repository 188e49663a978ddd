/**
 * Optional: Apache Spark for the work one machine is too small for ({@link org.dpdl4j.spark.SparkCluster}): the trials of
 * a tuning as Spark tasks, and one DP-SGD run data-parallel over the cluster ({@link org.dpdl4j.spark.SparkClippedSums}).
 * The driver keeps everything that touches privacy (K, candidates, seeds, the noise, the ledger, the selection, the
 * release); executors compute models, scores or clipped sums, and write nothing.
 *
 * @serial exclude
 */
package org.dpdl4j.spark;
