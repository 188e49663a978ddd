package org.dpdl4j.cli;

import org.dpdl4j.accounting.SubsampledTuningEvent;
import picocli.CommandLine.Option;

/** The options of tuning on a Poisson subset (Koskela &amp; Kulkarni 2023) shared by {@code tune} and {@code account}. */
final class SubsampleOptions {
    @Option(names = "--tune-fraction", paramLabel = "q_tune", defaultValue = "0.1",
            description = "Subsampled tuning: probability that a training example is in the tuning subset X1 (default ${DEFAULT-VALUE}).")
    double tuneFraction;

    @Option(names = "--variant", paramLabel = "1|2", defaultValue = "1",
            description = "Subsampled tuning: final model on X \\ X1 (1, Koskela & Kulkarni Theorem 6) or on all of X (2) (default ${DEFAULT-VALUE}).")
    int variant;

    /**
     * q_tune, checked against the allowed range.
     *
     * @param open if true, q_tune must lie in (0, 1) (something is tuned and something trained), else in [0, 1]
     */
    double tuneFraction(boolean open) {
        boolean ok = open ? tuneFraction > 0 && tuneFraction < 1 : tuneFraction >= 0 && tuneFraction <= 1;
        if (!ok) {
            throw new IllegalArgumentException("--tune-fraction must be in " + (open ? "(0, 1)" : "[0, 1]") + ", got " + tuneFraction);
        }
        return tuneFraction;
    }

    /** The variant the number stands for. */
    SubsampledTuningEvent.Variant variant() {
        if (variant != 1 && variant != 2) {
            throw new IllegalArgumentException("--variant must be 1 (final run on X \\ X1) or 2 (on X), got " + variant);
        }
        return SubsampledTuningEvent.Variant.of(variant);
    }
}
