package org.dpdl4j.benchmarks;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import me.tongfei.progressbar.ProgressBar;
import org.dpdl4j.dpsgd.StepInfo;
import org.dpdl4j.tuning.Candidate;
import org.dpdl4j.tuning.TrialResult;
import org.dpdl4j.tuning.TuningListener;

/**
 * A tuning rendered on the console: a progress bar over trials with the running trials' steps in its message, and
 * one {@code [operator]} line per finished trial (its score only when the trials are revealed).
 */
public final class TrialProgress implements TuningListener, AutoCloseable {
    private final boolean quiet;
    private final boolean reveal;
    private final Map<Integer, String> running = new ConcurrentHashMap<>();
    private ProgressBar bar;
    private long total;

    /**
     * A console listener; the per-trial {@code [operator]} lines go to stdout even when {@code quiet}.
     *
     * @param quiet  true for no progress bars
     * @param reveal true to print each trial's score; false to print that it is withheld
     */
    public TrialProgress(boolean quiet, boolean reveal) {
        this.quiet = quiet;
        this.reveal = reveal;
    }

    @Override
    public synchronized void onStart(long trials) {
        total = trials;
        if (trials > 0) {
            bar = Reporting.progressBar("trials", trials, quiet);
        }
    }

    @Override
    public void onTrialStart(int index, Candidate candidate) {
        running.put(index, "starting");
    }

    @Override
    public void onTrialStep(int index, StepInfo s) {
        running.put(index, String.format("%d/%d %.0f ex/s", s.step(), s.totalSteps(), s.examplesPerSecond()));
        ProgressBar b = bar;
        if (b != null) {
            StringBuilder m = new StringBuilder();
            running.forEach((i, v) -> m.append(" | trial ").append(i + 1).append(": step ").append(v));
            b.setExtraMessage(m.toString());
        }
    }

    @Override
    public synchronized void onTrialEnd(TrialResult r) {
        running.remove(r.index());
        if (bar != null) {
            bar.step();
        }
        String outcome = r.failed() ? "failed (" + r.failure() + ")"
                : reveal ? String.format("score %.4f", r.score()) : "score withheld (only the best is released)";
        System.out.printf("[operator] trial %d/%d  %s  %s  %.1f s%n", r.index() + 1, total, r.candidate(), outcome, r.seconds());
    }

    @Override
    public synchronized void onFinalRunStart(Candidate candidate) {
        if (bar != null) {
            bar.close();
            bar = null;
        }
        System.out.printf("[operator] final run: %s%n", candidate);
    }

    @Override
    public synchronized void onFinalRunStep(StepInfo s) {
        if (bar == null) {
            bar = Reporting.progressBar("final run", s.totalSteps(), quiet);
        }
        if (bar != null) {
            bar.stepTo(s.step());
            bar.setExtraMessage(String.format(" %.0f ex/s", s.examplesPerSecond()));
        }
    }

    @Override
    public synchronized void close() {
        if (bar != null) {
            bar.close();
        }
    }
}
