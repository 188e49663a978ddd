/**
 * Hyperparameter tuning as a privacy mechanism: drivers that treat a whole DP-SGD run as the base
 * mechanism Q (Papernot–Steinke random search, DP-HyPO, Koskela–Kulkarni subsampled tuning,
 * propose-test, DP-HYPE voting). Each driver returns a tuning event for the accountant, and a result
 * that separates the release (what the event covers) from the operator record. Depends on {@code org.dpdl4j.dpsgd} and {@code org.dpdl4j.accounting}.
 */
package org.dpdl4j.tuning;
