/** JMH benchmarks of a DP-SGD step and of the accountant, run by {@code dpdl4j bench jmh}.
 *
 * @serial exclude
 */
package org.dpdl4j.benchmarks.jmh;
