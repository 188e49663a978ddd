package org.dpdl4j.tuning;

import java.util.Set;
import org.dpdl4j.models.ModelOptions;

/**
 * The hyperparameters of a DP-SGD run that a {@link DpSgdMechanism} understands, and the checks of their values, made
 * on a whole space before anything is read or charged and on every candidate a run is configured with.
 */
public final class DpSgdSpace {
    private DpSgdSpace() {
    }

    /** The candidate axes a {@link DpSgdMechanism} understands. */
    public static final Set<String> AXES = Set.of("learning_rate", "optimizer", "activation", "noise_multiplier", "clip_norm", "batch_size", "sampling_rate",
            "epochs");

    /** The refusal of σ = 0 in a private run. */
    static IllegalArgumentException sigmaZero(Candidate c) {
        return new IllegalArgumentException("noise multiplier sigma = 0 (noise_multiplier) in " + c + " trains without privacy: allow it explicitly "
                + "(Builder.nonPrivate(true); on the command line --non-private)");
    }

    /**
     * Checks every candidate of a space as a trial would, before any data are read (a space too large to enumerate,
     * more than {@link HyperparameterSpace#MAX_CANDIDATES}, is left to its trials): known axes, optimiser and
     * activation; lr, C and epochs finite and &gt; 0; σ finite and &gt;= 0, and 0 only when {@code nonPrivate}.
     *
     * @param space      the space a tuner will draw from
     * @param nonPrivate whether σ = 0 is allowed ({@link DpSgdMechanism.Builder#nonPrivate})
     * @throws IllegalArgumentException naming the hyperparameter, its value and the candidate
     */
    public static void checkSpace(HyperparameterSpace space, boolean nonPrivate) {
        if (space.size() > HyperparameterSpace.MAX_CANDIDATES) {
            return;
        }
        for (Candidate c : space.candidates()) {
            check(c);
            if (!nonPrivate && c.has("noise_multiplier") && c.number("noise_multiplier") == 0) {
                throw sigmaZero(c);
            }
        }
    }

    /** Checks every value a candidate sets, so that a bad space is refused before anything is charged. */
    static void check(Candidate c) {
        for (String axis : c.values().keySet()) {
            if (!AXES.contains(axis)) {
                throw new IllegalArgumentException("hyperparameter '" + axis + "' is not one of " + AXES);
            }
        }
        if (c.has("optimizer") || c.has("learning_rate")) {
            try {
                ModelOptions.updaterNamed(c.text("optimizer", "sgd"), c.has("learning_rate") ? c.number("learning_rate") : null);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("hyperparameter " + (c.has("learning_rate") && !(c.number("learning_rate") > 0) ? "learning_rate" : "optimizer")
                        + " in " + c + ": " + e.getMessage());
            }
        }
        if (c.has("activation")) {
            try {
                ModelOptions.activationNamed(c.text("activation", "tanh"));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("hyperparameter activation in " + c + ": " + e.getMessage());
            }
        }
        positive(c, "clip_norm", false);
        positive(c, "epochs", false);
        positive(c, "noise_multiplier", true);
    }

    private static void positive(Candidate c, String axis, boolean zeroAllowed) {
        if (c.has(axis)) {
            double v = c.number(axis);
            if (!(zeroAllowed ? v >= 0 : v > 0) || Double.isInfinite(v)) {
                throw new IllegalArgumentException("hyperparameter " + axis + " must be finite and " + (zeroAllowed ? ">= 0" : "> 0")
                        + ", got " + v + " in " + c);
            }
        }
    }
}
