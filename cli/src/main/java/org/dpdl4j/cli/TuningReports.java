package org.dpdl4j.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import org.dpdl4j.benchmarks.Reporting;
import org.dpdl4j.tuning.Candidate;
import org.dpdl4j.tuning.DpSgdMechanism;

/**
 * The schema of what {@code tune} releases ({@code tuning.json} and the {@code --json} line), written once: one
 * record per tuner, with the parts they share ({@link RunSettings}, {@link Config}, {@link Provenance}). Jackson
 * writes a record's components in declaration order and in snake_case; a component marked {@code NON_NULL} is left
 * out when null (a field only some runs have), every other one is written, as null when it is. Everything here is
 * covered by the tuning's ε: nothing that depends on the data beyond the released outputs belongs in these records
 * (that goes to the operator record).
 */
final class TuningReports {
    private TuningReports() {
    }

    /** A report as the {@code --json} line prints it: the release without the (long) event. */
    static ObjectNode jsonLine(Object report) {
        ObjectNode n = Reporting.JSON.valueToTree(report);
        n.remove("event");
        return n;
    }

    /**
     * The released model's DP-SGD settings: data-independent (q from the public dataset size).
     *
     * @param samplingRate    q ∈ (0, 1]
     * @param noiseMultiplier σ ≥ 0
     * @param clipNorm        C &gt; 0 ({@code clip_norm}, as in the sidecar)
     * @param steps           T
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record RunSettings(double samplingRate, double noiseMultiplier, double clipNorm, long steps) {
        static RunSettings of(DpSgdMechanism mechanism, Candidate c) {
            org.dpdl4j.dpsgd.DpSgdConfig cfg = mechanism.config(c, 0);
            return new RunSettings(cfg.samplingRate(), cfg.noiseMultiplier(), cfg.clipNorm(), cfg.steps());
        }
    }

    /**
     * The data-independent configuration of a tuning, as the user gave it.
     *
     * @param clipNorm   the default clipping norm C ({@code clip_norm}, as in the sidecar)
     * @param learningRate the default learning rate ({@code learning_rate}, as in the settings; {@code lr} before), or null for
     *                   the optimiser's
     * @param scoreNoise the standard deviation of the Gaussian noise on a released validation accuracy (a fraction: 0.005 is
     *                   half a percentage point; on the count of correct predictions of the f·n validation examples it is
     *                   scoreNoise·f·n, the noise multiplier of the score's {@code GaussianEvent}), or null when the score
     *                   is on a split declared public
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Config(String space, double epochs, int batchSize, double clipNorm, String optimizer, Double learningRate, String activation,
                  double validationFraction, Double scoreNoise) {
    }

    /**
     * What every report ends with: where the run came from.
     *
     * @param datasetSize the public size n of the training data
     * @param notes       data-independent statements (which theorem charged the event), or null for none
     * @param event       the whole tuning's event ({@code PrivacyEvent.toMap()}); not in the --json line
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Provenance(String dataset, int datasetSize, String model, Config config,
                      @JsonInclude(JsonInclude.Include.NON_NULL) List<String> notes, Map<String, Object> event,
                      String libraryVersion) {
    }

    /**
     * {@code tune random-search} and {@code tune dp-hypo} (Papernot &amp; Steinke, ICLR 2022, arXiv:2110.03620;
     * Wang et al., NeurIPS 2023, arXiv:2306.05734).
     *
     * @param best             the best candidate (the data-independent default when K = 0)
     * @param bestScore        its noisy validation score, or null when there is none
     * @param repetitions      the realised K, only with --reveal-trials (then charged for)
     * @param testAccuracy     the released model's test accuracy, or null when no model was trained or the test split is
     *                         private (then in the operator record)
     * @param adaptivity       DP-HyPO's extra cost, or null for random search or revealed trials
     * @param rdpOrder         the RDP order of the conversion (NaN for an accountant that does not use RDP)
     * @param score            the scoring: private-validation or public-holdout
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record RandomSearch(String tuner, Map<String, Object> best, @JsonInclude(JsonInclude.Include.ALWAYS) Double bestScore,
                        @JsonInclude(JsonInclude.Include.NON_NULL) Long repetitions, RunSettings bestRun, Double testAccuracy,
                        double epsilonTotal, double epsilonSingleRun, @JsonUnwrapped Adaptivity adaptivity, double delta,
                        double rdpOrder, String distribution, double expectedRepetitions, Double noiseMultiplier, String score,
                        boolean trialsRevealed, @JsonUnwrapped Provenance provenance) {
    }

    /**
     * DP-HyPO's adaptivity (Wang et al. 2023, arXiv:2306.05734, Theorem 1).
     *
     * @param densityBounds       [c, C], the density bounds
     * @param epsilonRandomSearch ε of random search with the same runs
     * @param adaptivityCost      ε minus that
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Adaptivity(List<Double> densityBounds, double epsilonRandomSearch, double adaptivityCost) {
    }

    /**
     * {@code tune subsampled} (Koskela &amp; Kulkarni, NeurIPS 2023, arXiv:2301.11989).
     *
     * @param best            the candidate tuned on X₁
     * @param bestScore       always null: the score on X₁ is not released
     * @param extrapolation   the rule that transferred it
     * @param finalCandidate  the candidate the final model was trained with
     * @param epsilonBaseline the same search on all the data (Papernot–Steinke), for comparison
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Subsampled(String tuner, int variant, double tuneFraction, Map<String, Object> best,
                      @JsonInclude(JsonInclude.Include.ALWAYS) Double bestScore, String extrapolation,
                      Map<String, Object> finalCandidate, RunSettings bestRun, Double testAccuracy, double epsilonTotal,
                      double epsilonBaseline, double epsilonSingleRun, double delta, double rdpOrder, String distribution,
                      double expectedRepetitions, Double noiseMultiplier, double samplingRate,
                      @JsonUnwrapped Provenance provenance) {
    }

    /**
     * {@code tune propose-test} (Ding &amp; Wu, arXiv:2211.01852, Algorithm 1).
     *
     * @param bestScore    always null: the utilities are not released
     * @param epsilonTotal the smaller of {@code epsilonTotalRdp} and {@code epsilonTotalAdvancedComposition}
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ProposeTest(String tuner, Map<String, Object> best, @JsonInclude(JsonInclude.Include.ALWAYS) Double bestScore,
                       RunSettings bestRun, Double testAccuracy, double epsilonTotal, double epsilonTotalRdp,
                       double epsilonTotalAdvancedComposition, double epsilonSelectionLoop, double epsilonFinalRun, double delta,
                       int maxIterations, int partitions, double granularity, double epsilon0, double lowerUtility, Double noiseMultiplier,
                       @JsonUnwrapped Provenance provenance) {
    }

    /**
     * {@code tune dp-hype}: the vote's winner and the noisy vote counts (Liebenow, Peinemann &amp; Mohammadi,
     * DP-HYPE, arXiv:2510.04902, Algorithm 1; client-level privacy by the distributed discrete Gaussian).
     *
     * @param winnerIndex the winner's index in the candidate list
     * @param noisyVotes  the released noisy vote per candidate
     * @param candidates  how many candidates were voted on
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record DpHype(String tuner, Map<String, Object> best, int winnerIndex, double[] noisyVotes, double epsilonTotal, double delta,
                  double rdpOrder, int clients, int minClients, int votes, int candidates, String partition, String transport,
                  double localSigma, long voteScale, double summedNoiseVotes, @JsonUnwrapped Provenance provenance) {
    }

    /**
     * What {@code tune --dry-run} releases: nothing is trained or charged.
     *
     * @param epsilonTotal the whole tuning's ε, or null when it is the composition of the K runs yet to be drawn
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record DryRun(boolean dryRun, Double noiseMultiplier, Double epsilonTotal, double delta, double expectedRepetitions,
                  double estimatedSeconds) {
    }
}
