/**
 * The reproductions of the papers' figures and tables (each a {@link org.dpdl4j.benchmarks.Figure} written as CSV and
 * PNG), run by the {@code dpdl4j} command line's {@code reproduce} and {@code bench} commands (module cli), and the
 * output helpers the command line shares with them ({@link org.dpdl4j.benchmarks.Reporting},
 * {@link org.dpdl4j.benchmarks.TrialProgress}). The reproductions print their tables to stdout.
 *
 * @serial exclude
 */
package org.dpdl4j.benchmarks;
