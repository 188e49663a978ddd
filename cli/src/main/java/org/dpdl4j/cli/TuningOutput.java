package org.dpdl4j.cli;

import org.dpdl4j.benchmarks.Reporting;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.dpdl4j.release.PrivateModel;
import org.dpdl4j.release.StagedRelease;

/**
 * Where a tuning's results go. {@code --output DIR} holds the release, exactly what the printed ε covers:
 * {@code model.zip} with its {@code privacy.json} sidecar, {@code tuning.json} and, with {@code --reveal-trials}, {@code trials.json}.
 * {@code DIR/operator/} holds the operator record (the realised K, every trial, sizes, timings, non-private
 * diagnostics) with a README saying it is not covered and must not be published.
 */
final class TuningOutput {
    static final String OPERATOR_DIRECTORY = "operator";

    static final String OPERATOR_README = """
            OPERATOR RECORD - NOT COVERED BY THE PRIVACY GUARANTEE. DO NOT PUBLISH.

            The files in this directory describe how a tuning ran on the private data: the realised number
            of runs K, every trial's candidate, score, time and failure, adaptive sampling densities, the
            sizes of random subsets and parts, selection-loop iterations, wall-clock times, and any
            non-private diagnostics. They are for the person who holds the data. The epsilon that dpdl4j
            printed does not cover them: publishing any of them may reveal more about the training data
            than that epsilon allows (for example, K together with the best run is not covered by the
            random-K bounds of Papernot & Steinke 2022, arXiv:2110.03620).

            The release is the parent directory's model.zip, privacy.json and tuning.json (and trials.json when the
            tuning was run with --reveal-trials, which charges for it), and the --json line.
            The run's duration also grows with K: do not publish it either.
            """;

    private TuningOutput() {
    }

    /**
     * Writes the operator record, then stages the release ({@link StagedRelease}): the caller binds it to its charge and
     * publishes it.
     *
     * @param out            the output directory (created if missing)
     * @param model          the released model with its claim (model.zip and privacy.json), or null
     * @param release        the release report, one of {@link TuningReports}' records (tuning.json)
     * @param revealedTrials the revealed trials for trials.json, or null when they are not released
     * @param operator       the operator record (written as operator/record.json)
     * @return the staged release, not yet published
     */
    static StagedRelease stage(Path out, PrivateModel model, Object release, List<Map<String, Object>> revealedTrials,
                               Map<String, Object> operator) throws IOException {
        Path op = out.resolve(OPERATOR_DIRECTORY);
        Files.createDirectories(op);
        Reporting.writeAtomically(op.resolve("README.txt"), OPERATOR_README.getBytes(StandardCharsets.UTF_8));
        Reporting.writeJsonAtomically(op.resolve("record.json"), operator);
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("tuning.json", json(release));
        if (revealedTrials != null) {
            Map<String, Object> trials = new LinkedHashMap<>();
            trials.put("repetitions", revealedTrials.size());
            trials.put("trials", revealedTrials);
            files.put("trials.json", json(trials));
        }
        List<String> obsolete = new java.util.ArrayList<>(); // an earlier run's would pass for this one's
        if (revealedTrials == null) {
            obsolete.add("trials.json");
        }
        if (model == null) {
            obsolete.add(PrivateModel.MODEL_FILE);
            obsolete.add(PrivateModel.SIDECAR_FILE);
        }
        return StagedRelease.stage(out, model != null ? model.releaseFiles(files) : files, obsolete);
    }

    private static byte[] json(Object value) throws IOException {
        return (Reporting.PRETTY.writeValueAsString(value) + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** The operator directory of an output directory. */
    static Path operatorDirectory(Path out) {
        return out.resolve(OPERATOR_DIRECTORY);
    }

    /** The console's last word on where the release and the operator record are. */
    static void printWhere(PrintStream console, Path out, boolean model, boolean trials) {
        console.println("release (covered by epsilon_total; what may be published): "
                + (model ? out.resolve("model.zip") + ", " + out.resolve("privacy.json") + ", " : "") + out.resolve("tuning.json")
                + (trials ? ", " + out.resolve("trials.json") : "") + " and the --json line");
        console.println("operator record (NOT covered by epsilon; never publish): " + operatorDirectory(out)
                + " (and the lines above marked [operator], the progress and the run's duration)");
    }
}
