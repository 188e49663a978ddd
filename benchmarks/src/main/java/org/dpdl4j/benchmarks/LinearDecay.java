package org.dpdl4j.benchmarks;

import org.nd4j.linalg.schedule.ISchedule;
import org.nd4j.shade.jackson.annotation.JsonProperty;

/**
 * A learning rate that falls linearly from {@code initialValue} at iteration 0 to 0 at iteration {@code steps}:
 * value(i) = initialValue·max(0, 1 − i/steps). (DL4J's {@code PolySchedule} computes initialValue·(1 + i/maxIter)^power,
 * which grows for power 1.)
 *
 * @param initialValue the first iteration's value, finite
 * @param steps        the iterations over which it falls to 0, ≥ 1
 */
record LinearDecay(@JsonProperty("initialValue") double initialValue, @JsonProperty("steps") long steps) implements ISchedule {
    /**
     * Validates the schedule.
     *
     * @param initialValue the first iteration's value, finite
     * @param steps        the iterations over which it falls to 0, ≥ 1
     * @throws IllegalArgumentException if steps &lt; 1 or the value is not finite
     */
    LinearDecay {
        if (steps < 1 || !Double.isFinite(initialValue)) {
            throw new IllegalArgumentException("steps must be >= 1 and initialValue finite, got " + steps + " and " + initialValue);
        }
    }

    @Override
    public double valueAt(int iteration, int epoch) {
        return initialValue * Math.max(0, 1 - (double) iteration / steps);
    }

    @Override
    public ISchedule clone() {
        return new LinearDecay(initialValue, steps);
    }
}
