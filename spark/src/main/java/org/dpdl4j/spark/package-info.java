/**
 * Optional: the trials of a tuning as Apache Spark tasks ({@link org.dpdl4j.spark.SparkTrials}). The driver keeps
 * everything that touches privacy (K, candidates, seeds, the ledger, the selection, the release); executors train
 * and return models and scores, and write nothing.
 */
package org.dpdl4j.spark;
