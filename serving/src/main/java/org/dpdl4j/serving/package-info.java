/**
 * Serving released models over HTTP: {@link org.dpdl4j.serving.ModelServer} loads a model directory only through
 * {@link org.dpdl4j.release.PrivateModel#load} (the verified sidecar loader) and answers {@code POST /predict},
 * {@code GET /privacy} and {@code GET /health}.
 *
 * @serial exclude
 */
package org.dpdl4j.serving;
