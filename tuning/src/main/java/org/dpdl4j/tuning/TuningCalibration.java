package org.dpdl4j.tuning;

import java.util.function.DoubleFunction;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.accounting.PrivacyEvent;

/**
 * The noise multiplier σ of a tuning's base mechanism for the whole tuning's target (ε, δ), shared by
 * {@link PrivateTuning} and the command line's {@code tune}: one accountant ({@link Accountants#standard()}), one
 * tolerance, one refusal when no σ can meet the target.
 */
public final class TuningCalibration {
    /** The tolerance on σ (absolute, rounded up): a tuning's σ is reported to three decimals. */
    public static final double TOLERANCE = 1e-3;

    private TuningCalibration() {
    }

    /**
     * The smallest σ (within {@link #TOLERANCE}, rounded up: {@link NoiseCalibration#smallestNoise}) for which the
     * tuning's event is (targetEpsilon, δ)-DP by {@link Accountants#standard()}.
     *
     * @param eventOf       the whole tuning's event for a σ of its base mechanism; ε non-increasing in σ
     * @param targetEpsilon the whole tuning's ε, finite and &gt; 0
     * @param delta         δ ∈ (0, 1)
     * @param floorCause    what costs privacy whatever σ is (named in the refusal), e.g. "the trials' noisy scores"
     * @return σ &gt; 0
     * @throws IllegalArgumentException starting with "target_epsilon" when no σ meets the target: it names the floor
     *                                  (ε at σ = 10⁶), its cause and that the target must exceed it
     */
    public static double noiseMultiplier(DoubleFunction<PrivacyEvent> eventOf, double targetEpsilon, double delta, String floorCause) {
        PrivacyAccountant accountant = Accountants.standard();
        try {
            return NoiseCalibration.smallestNoise(eventOf::apply, targetEpsilon, delta, accountant, TOLERANCE);
        } catch (IllegalArgumentException e) {
            double floor = accountant.epsilon(eventOf.apply(1e6), delta);
            throw new IllegalArgumentException(String.format("target_epsilon %s cannot be met: with any noise the procedure costs at "
                    + "least epsilon %.4f at delta %s, from %s. Raise the target above %.4f or lower that floor", targetEpsilon, floor,
                    delta, floorCause, floor), e);
        }
    }
}
