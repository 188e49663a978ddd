/**
 * Hyperparameter tuning as a privacy mechanism: drivers that treat a whole DP-SGD run as the base
 * mechanism Q (Papernot–Steinke random search, DP-HyPO, Koskela–Kulkarni subsampled tuning,
 * propose-test, DP-HYPE voting). Each driver returns a tuning event for the accountant; see
 * ../shared/DESIGN.md. Depends on {@code org.dpdl4j.dpsgd} and {@code org.dpdl4j.accounting}.
 */
package org.dpdl4j.tuning;
