/**
 * What a mechanism costs: sealed {@link org.dpdl4j.accounting.PrivacyEvent} records (Gaussian, Poisson-sampled,
 * composed, repeat-and-select, subsampled tuning, …) and the {@link org.dpdl4j.accounting.RdpAccountant} that turns
 * any event into (ε, δ), with noise calibration against it. Every bound cites its paper and theorem, and errs
 * upward when in doubt.
 */
package org.dpdl4j.accounting;
