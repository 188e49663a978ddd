package org.dpdl4j.cli;

import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.PrivateNormalisation;
import picocli.CommandLine.Option;

/**
 * {@code --data-normalisation SIGMA}, shared by {@code train} and {@code audit train}: Tramèr &amp; Boneh's private data
 * normalisation of ScatterNet features ({@link PrivateNormalisation}; "Differentially Private Learning Needs Better
 * Features (or Much More Data)", ICLR 2021, arXiv:2011.11660, Sec. 3), released before DP-SGD; its event comes first in
 * the run's composition and DP-SGD's σ is calibrated for the total.
 */
final class DataNormalisationOption {
    @Option(names = "--data-normalisation", paramLabel = "SIGMA", description = {"scatternet-*: normalise the scattering features "
            + "by their per-channel mean and variance released with Tramer & Boneh's private data normalisation, noise "
            + "multiplier SIGMA (theirs: 8), instead of GroupNorm; its two Gaussian mechanisms are composed into epsilon "
            + "(train charges them to the ledger with the run), and sigma is calibrated for the total.",
            "Clipping norms 0.25 (channel means) and 0.1 (means of squares), for images in [0, 1]."})
    Double sigma;

    /** Whether the option was given. */
    boolean on() {
        return sigma != null;
    }

    /**
     * Checks the option against the run: a finite noise multiplier &gt; 0, a ScatterNet model, a private run.
     *
     * @throws IllegalArgumentException naming --data-normalisation, the value or the conflicting option
     */
    void check(String model, boolean nonPrivate) {
        if (sigma == null) {
            return;
        }
        if (!(sigma > 0) || Double.isInfinite(sigma)) {
            throw new IllegalArgumentException("--data-normalisation must be a finite noise multiplier > 0, got " + sigma);
        }
        if (!model.startsWith("scatternet-")) {
            throw new IllegalArgumentException("--data-normalisation normalises scattering features: it needs --model scatternet-linear "
                    + "or scatternet-cnn, not " + model);
        }
        if (nonPrivate) {
            throw new IllegalArgumentException("--data-normalisation releases private statistics: it does not go with --non-private");
        }
    }

    /** The statistics' event (two Gaussian mechanisms, {@link PrivateNormalisation#event}); only with the option. */
    private PrivacyEvent event() {
        return PrivateNormalisation.event(sigma);
    }

    /** A DP-SGD event preceded, with the option, by the statistics' release: what the run releases in all. */
    PrivacyEvent compose(PrivacyEvent sgd) {
        return sigma != null ? ComposedEvent.of(event(), sgd) : sgd;
    }

    /** The run's whole planned event: {@link #compose} of DP-SGD with (q, σ, T). */
    PrivacyEvent planned(double q, double noiseMultiplier, long steps) {
        return compose(DpSgdTrainer.event(q, noiseMultiplier, steps));
    }

    /**
     * DP-SGD's smallest σ (within 1e-4, rounded up: {@link NoiseCalibration#smallestNoise}) such that {@link #planned} is
     * (target, δ)-DP.
     *
     * @throws IllegalArgumentException naming --target-epsilon when the statistics alone spend the target, or no σ reaches it
     */
    double calibrate(double q, long steps, double target, double delta, PrivacyAccountant accountant) {
        if (sigma != null && !(accountant.epsilon(event(), delta) < target)) {
            throw new IllegalArgumentException("--data-normalisation " + sigma + " alone costs epsilon " + accountant.epsilon(event(), delta)
                    + " at delta " + delta + ", not below --target-epsilon " + target + ": use a larger noise multiplier there or a larger target");
        }
        try {
            return NoiseCalibration.smallestNoise(x -> planned(q, x, steps), target, delta, accountant, 1e-4);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--target-epsilon " + target + ": " + e.getMessage());
        }
    }
}
