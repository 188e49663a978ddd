/**
 * The {@code dpdl4j} command line (train, tune, account, audit, ledger, evaluate, reproduce, bench) and the
 * reproductions of the papers' figures and tables. The only package that prints or exits.
 */
package org.dpdl4j.benchmarks;
