/**
 * Hyperparameter tuning as a privacy mechanism: drivers that treat a whole DP-SGD run as the base
 * mechanism Q (Papernot–Steinke random search, DP-HyPO, Koskela–Kulkarni subsampled tuning,
 * propose-test). Each driver returns a tuning event for the accountant, and a result
 * that separates the release (what the event covers) from the operator record. DP-HYPE voting has no driver
 * here: its accounting is {@code org.dpdl4j.accounting.DpHypeVoting} and its protocol the {@code federated} module,
 * while the command line's DP-HYPE command takes its candidates, spaces and the clients' local training from this
 * package's {@code Candidate}, {@code HyperparameterSpace} and {@code DpSgdMechanism}. Depends on {@code org.dpdl4j.dpsgd} and {@code org.dpdl4j.accounting}
 * (and, through the dpsgd module, on {@code org.dpdl4j.release}, {@code org.dpdl4j.datasets} and
 * {@code org.dpdl4j.models}).
 *
 * @serial exclude
 */
package org.dpdl4j.tuning;
