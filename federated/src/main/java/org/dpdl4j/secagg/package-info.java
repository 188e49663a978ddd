/**
 * Secure summation: each party's integer vector is hidden from the aggregator by pairwise masks
 * that cancel in the sum (Bonawitz et al., "Practical Secure Aggregation for Privacy-Preserving
 * Machine Learning", CCS 2017, Section 4, the semi-honest variant without secret-shared recovery),
 * and the distributed discrete Gaussian noise that makes the revealed sum differentially private
 * (Kairouz, Liu &amp; Steinke, ICML 2021; Canonne, Kamath &amp; Steinke, NeurIPS 2020).
 *
 * <p>All arithmetic is on 64-bit two's-complement integers, i.e. modulo 2^64. Pure JDK: X25519
 * ({@code KeyAgreement "XDH"}), HMAC-SHA256 and AES-CTR.
 *
 * @serial exclude
 */
package org.dpdl4j.secagg;
