/**
 * The {@code dpdl4j} command line: one picocli class per command ({@code train}, {@code tune}, {@code account},
 * {@code audit}, {@code ledger}, {@code evaluate}, {@code reproduce}, {@code bench}), one subcommand class per tuner
 * under {@code tune}, and the release reports' schema ({@code TuningReports}). The only package that
 * exits the JVM; it depends on every other module and nothing depends on it.
 */
package org.dpdl4j.cli;
