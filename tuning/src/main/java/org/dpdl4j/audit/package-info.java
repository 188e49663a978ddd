/**
 * Measured lower bounds on ε, so that a privacy bug shows: canaries inserted into one training run (or into every
 * training of a tuning), scored from the released model, and turned into a lower bound by the one-run audit of
 * Steinke, Nasr &amp; Jagielski, Privacy Auditing with One (1) Training Run, NeurIPS 2023, arXiv:2305.08846
 * ({@link org.dpdl4j.audit.OneRunAudit}, {@link org.dpdl4j.audit.CanaryAudit}). A bound above the claimed ε proves
 * that the implementation leaks more than it claims; a bound below it proves nothing.
 *
 * @serial exclude
 */
package org.dpdl4j.audit;
