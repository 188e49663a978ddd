package org.dpdl4j.dpsgd;

import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.accounting.PrivacyEvent;

/**
 * The outcome of one DP-SGD run. The trainer never computes a final ε itself: hand {@link #event()}
 * to an accountant.
 *
 * @param network          the trained network (the same object that was passed in)
 * @param event            what the run cost: T self-composed Poisson-sampled Gaussians (q, σ), T being
 *                         {@code stepsTaken}
 * @param stepsTaken       T actually run, in steps (fewer than planned when stopped at the budget)
 * @param stoppedAtBudget  true when the run stopped before a step that would exceed the ε budget
 * @param expectedExamples q·n·T, the expected number of examples processed, &gt;= 0 (the realised number
 *                         depends on the private sampling and is not reported); for a resumed run, T counts only
 *                         the steps run after the checkpoint
 * @param seconds          wall-clock training time of this call, in seconds
 */
public record TrainingResult(Model network, PrivacyEvent event, long stepsTaken, boolean stoppedAtBudget,
                             double expectedExamples, double seconds) {

    /**
     * Training throughput in (expected) examples per second: {@code expectedExamples / seconds}.
     *
     * @return examples per second, &gt;= 0; 0 when {@code seconds} is not &gt; 0
     */
    public double examplesPerSecond() {
        return seconds > 0 ? expectedExamples / seconds : 0;
    }
}
