package org.dpdl4j.cli;

import org.dpdl4j.dpsgd.DpSgdSettings;
import org.dpdl4j.dpsgd.PrivateNormalisation;
import picocli.CommandLine.Option;

/**
 * {@code --data-normalisation SIGMA}, shared by {@code train} and {@code audit train}: Tramèr &amp; Boneh's private data
 * normalisation of ScatterNet features (and, in {@code train}, of any MultiLayerNetwork model's input, through a
 * {@code FeatureStandardization} layer put first) ({@link PrivateNormalisation}; "Differentially Private Learning Needs Better
 * Features (or Much More Data)", ICLR 2021, arXiv:2011.11660, Sec. 3), released before DP-SGD; its event comes first in
 * the run's composition and DP-SGD's σ is calibrated for the total: a setting of the run
 * ({@link DpSgdSettings#dataNormalisation()}), which holds its event and its calibration.
 */
final class DataNormalisationOption {
    @Option(names = "--data-normalisation", paramLabel = "SIGMA", description = {"Standardise by a per-channel mean and variance "
            + "released with Tramer & Boneh's private data normalisation, noise multiplier SIGMA (theirs: 8): scatternet-* "
            + "normalise their scattering features (instead of GroupNorm; clipping norms 0.25 and 0.1), train's other models "
            + "(not the residual networks) their input, by a FeatureStandardization layer put first (clipping norms sqrt(c) "
            + "for c colour channels in [0, 1]). Its two Gaussian mechanisms are composed into epsilon (train charges them to "
            + "the ledger with the run), and sigma is calibrated for the total."})
    Double sigma;

    /** Whether the option was given. */
    boolean on() {
        return sigma != null;
    }

    /**
     * Checks the option against the run: a value the settings accept ({@link DpSgdSettings#dataNormalisation()}: finite
     * and &gt; 0, not in a non-private run) and a ScatterNet model (with {@code anyModel}, any model but the residual
     * networks).
     *
     * @throws IllegalArgumentException naming --data-normalisation, the value or the conflicting option
     */
    void check(String model, boolean nonPrivate, boolean anyModel) {
        if (sigma == null) {
            return;
        }
        TrainingOptions.byOptionName(() -> DpSgdSettings.builder().nonPrivate(nonPrivate).dataNormalisation(sigma).build());
        if (anyModel && !model.startsWith("small-resnet") && !model.startsWith("wrn-") && !model.equals("resnet50")) {
            return;
        }
        if (anyModel && !model.startsWith("scatternet-")) {
            throw new IllegalArgumentException("--data-normalisation standardises the input of a MultiLayerNetwork model (or the "
                    + "features of scatternet-*), not of the residual network " + model + " (a ComputationGraph): in Java, put a "
                    + "FeatureStandardization layer first in your own graph");
        }
        if (!model.startsWith("scatternet-")) {
            throw new IllegalArgumentException("--data-normalisation normalises scattering features: it needs --model scatternet-linear "
                    + "or scatternet-cnn, not " + model);
        }
    }

    /**
     * {@code b} with the option's data normalisation, if given.
     *
     * @return {@code b}
     */
    DpSgdSettings.Builder applyTo(DpSgdSettings.Builder b) {
        return sigma == null ? b : b.dataNormalisation(sigma);
    }
}
