package org.dpdl4j.cli;

import picocli.CommandLine.Option;

/** DP-HyPO's density bounds c:C (Wang et al. 2023, arXiv:2306.05734), shared by {@code tune} and {@code account tuning}. */
final class DensityBoundsOption {
    @Option(names = "--density-bounds", paramLabel = "c:C", description = {"DP-HyPO: sampling densities stay within [c, C] x prior, 0 < c <= 1 <= C (tune default 0.8:1.25, "
                        + "whose adaptivity cost fits a total epsilon of 3; the paper's 0.75:2 alone costs about 3; account: "
                        + "none, i.e. random search; 1:1 is random search)."})
    String densityBounds;

    /**
     * {c, C}, or {@code fallback} when the option is absent (null fallback: null).
     *
     * @throws IllegalArgumentException on a malformed or out-of-range value
     */
    double[] bounds(double[] fallback) {
        if (densityBounds == null) {
            return fallback;
        }
        String[] p = densityBounds.split(":");
        double c;
        double cc;
        try {
            if (p.length != 2) {
                throw new NumberFormatException();
            }
            c = Double.parseDouble(p[0]);
            cc = Double.parseDouble(p[1]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--density-bounds must be c:C, for example 0.75:2, got '" + densityBounds + "'");
        }
        if (!(c > 0 && c <= 1) || !(cc >= 1) || Double.isInfinite(cc)) {
            throw new IllegalArgumentException("--density-bounds needs 0 < c <= 1 <= C (finite), got '" + densityBounds + "'");
        }
        return new double[]{c, cc};
    }
}
