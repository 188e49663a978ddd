/**
 * One private training run: DP-SGD (Abadi et al., Deep Learning with Differential Privacy, CCS 2016,
 * arXiv:1607.00133) on a DL4J network with Poisson-sampled batches, exact per-example clipping to norm C, one
 * draw of N(0, σ²C²) per step on the clipped sum, and checkpoints a run can resume from
 * ({@link org.dpdl4j.dpsgd.DpSgdTrainer}, {@link org.dpdl4j.dpsgd.DpSgdConfig}). The trainer never computes ε:
 * each run returns a {@link org.dpdl4j.accounting.PrivacyEvent} for an accountant.
 *
 * @serial exclude
 */
package org.dpdl4j.dpsgd;
