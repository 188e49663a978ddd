/**
 * The released model and its privacy sidecar: {@link org.dpdl4j.release.PrivateModel} (a DL4J network and
 * the privacy claim that covers it), {@link org.dpdl4j.release.PrivacySidecar} (the versioned
 * {@code privacy.json} schema, documented in docs/SIDECAR.md) and the verified loader with its
 * {@link org.dpdl4j.release.LoadPolicy}. Nothing else in dpdl4j writes {@code privacy.json}.
 *
 * @serial exclude
 */
package org.dpdl4j.release;
