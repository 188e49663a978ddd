package org.dpdl4j.cli;

import org.dpdl4j.accounting.RepetitionDistribution;
import picocli.CommandLine.Option;

/** The number of runs K of a random-repetition tuner (random search, DP-HyPO, the inner tuner of subsampled tuning). */
final class RepetitionOptions {
    @Option(names = "--repetitions", paramLabel = "SPEC",
            description = "Distribution of the number of runs K: " + RepetitionSpec.FORMS + " (default poisson:10; "
                    + "geometric:mean=10 for dp-hypo).")
    String repetitions;

    @Option(names = "--max-repetitions", paramLabel = "m", description = "Truncate K at m runs (Papernot & Steinke 2022, arXiv:2110.03620, Lemma 22).")
    Long maxRepetitions;

    /**
     * The distribution of K: --repetitions, or the default (geometric with mean 10 for DP-HyPO, whose Theorem 1 is for
     * truncated negative binomial K, where Poisson would cost far more; Poisson with mean 10 otherwise).
     *
     * @throws IllegalArgumentException on a malformed --repetitions or --max-repetitions
     */
    RepetitionDistribution distribution(boolean adaptive) {
        String spec = repetitions != null ? repetitions : adaptive ? "geometric:mean=10" : "poisson:10";
        try {
            return RepetitionSpec.parse(spec, maxRepetitions);
        } catch (IllegalArgumentException e) {
            String m = String.valueOf(e.getMessage());
            throw m.startsWith("--") ? e : new IllegalArgumentException("--repetitions " + spec + ": " + m, e);
        }
    }
}
