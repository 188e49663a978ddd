/**
 * What a mechanism costs: sealed {@link org.dpdl4j.accounting.PrivacyEvent} records (Gaussian, Poisson-sampled,
 * composed, repeat-and-select, subsampled tuning, …) and the {@link org.dpdl4j.accounting.RdpAccountant} that turns
 * any event into (ε, δ), the {@link org.dpdl4j.accounting.PldAccountant} that does so more tightly for the events it
 * supports, and noise calibration against either ({@link org.dpdl4j.accounting.NoiseCalibration}). Every bound cites its paper and theorem, and errs
 * upward when in doubt.
 *
 * @serial exclude
 */
package org.dpdl4j.accounting;
