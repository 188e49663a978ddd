package org.dpdl4j.tuning;

import java.util.Set;

/**
 * How hyperparameters tuned on a subset of m examples are transferred to a final run on n examples
 * (Koskela &amp; Kulkarni, Practical Differentially Private Hyperparameter Tuning with Subsampling, NeurIPS 2023,
 * arXiv:2301.11989, Section 3.2). A rule may change only settings that do not affect
 * privacy (learning rate, optimiser options): σ, C, the DP-SGD sampling rate q and T are kept, so the
 * final run's event is the tuned candidate's.
 */
public interface Extrapolation {
    /**
     * The rule's name, reported with the result.
     *
     * @return a human-readable name (with its source, where it has one)
     */
    String name();

    /**
     * The candidate for the final run.
     *
     * @param tuned        the winning candidate, with its learning rate and optimiser explicit
     * @param tuneSize     m, the number of examples the tuning runs train on (&gt; 0; an expected size, so
     *                     that the transfer does not depend on the realised, private subset size)
     * @param finalSize    n, the number of examples the final run trains on (&gt; 0; expected, likewise)
     * @return the transferred candidate
     * @throws IllegalArgumentException if a size is not positive or a needed axis is missing
     */
    Candidate transfer(Candidate tuned, double tuneSize, double finalSize);

    /** Keeps every hyperparameter as tuned. */
    Extrapolation NONE = new Extrapolation() {
        @Override
        public String name() {
            return "none (hyperparameters kept as tuned)";
        }

        @Override
        public Candidate transfer(Candidate tuned, double tuneSize, double finalSize) {
            return tuned;
        }
    };

    /**
     * The paper's rule (Koskela &amp; Kulkarni 2023, arXiv:2301.11989, Section 3.2, after van der Veen et al. 2018): the learning rate η is
     * multiplied by n/m for plain and momentum SGD and kept for Adam. With q, σ, C and T kept, the
     * noise added to the model over T steps, Σ_j (n/m)η·Z_j/(q n) with Z_j ~ N(0, σ²C²), has the same
     * distribution N(0, Tη²σ²C²/(qm)²) as in the tuned run (the identity below eq. 3.2). Momentum is
     * scaled like SGD because its update is linear in η; the paper tests plain SGD and Adam only.
     */
    Extrapolation LINEAR_LEARNING_RATE = new Extrapolation() {
        private static final Set<String> SCALED = Set.of("sgd", "momentum");

        @Override
        public String name() {
            return "learning rate x n/m for sgd/momentum, kept for adam (Koskela & Kulkarni 2023, arXiv:2301.11989, Sec. 3.2)";
        }

        @Override
        public Candidate transfer(Candidate tuned, double tuneSize, double finalSize) {
            if (!(tuneSize > 0 && finalSize > 0) || Double.isInfinite(tuneSize) || Double.isInfinite(finalSize)) {
                throw new IllegalArgumentException("tuning and final set sizes must be >= 1, got m = " + tuneSize + ", n = " + finalSize);
            }
            if (!tuned.has("learning_rate") || !tuned.has("optimizer")) {
                throw new IllegalArgumentException("learning-rate scaling needs 'learning_rate' and 'optimizer' in the tuned candidate, got " + tuned);
            }
            String optimizer = tuned.text("optimizer", "");
            return SCALED.contains(optimizer) ? tuned.with("learning_rate", tuned.number("learning_rate") * finalSize / tuneSize) : tuned;
        }
    };
}
