package org.dpdl4j.tuning;

import java.util.SplittableRandom;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.PrivacyEvent;

/** A base mechanism without a network: score = −(lr − 0.3)² + noise from the seed; σ from the candidate. */
final class FakeMechanism implements TrainingMechanism {
    private final double failAbove;

    /** Runs with lr above {@code failAbove} throw. */
    FakeMechanism(double failAbove) {
        this.failAbove = failAbove;
    }

    @Override
    public PrivacyEvent event(Candidate c) {
        return new GaussianEvent(c.number("sigma", 5));
    }

    @Override
    public TrialResult run(Candidate c, long seed, TuningListener listener, int trial) {
        double lr = c.number("lr");
        if (lr > failAbove) {
            throw new IllegalStateException("diverged at lr " + lr);
        }
        double noise = new SplittableRandom(seed).nextGaussian() * 0.001;
        return new TrialResult(trial, c, null, -(lr - 0.3) * (lr - 0.3) + noise, event(c), 0, null);
    }
}
