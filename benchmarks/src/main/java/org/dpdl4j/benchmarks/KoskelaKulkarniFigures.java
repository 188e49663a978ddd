package org.dpdl4j.benchmarks;

import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.accounting.RepeatAndSelectEvent;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.SubsampledTuningEvent;

/** Koskela &amp; Kulkarni 2023 (seed 003_cdf356da0d11b876.txt): the analytic Figure 1. */
final class KoskelaKulkarniFigures {
    /** Figure 1's DP-SGD: sampling rate 0.01, σ = 2, 50 epochs (T = 5000), δ = 1e-5. */
    static final double Q = 0.01;
    static final double SIGMA = 2.0;
    static final long STEPS = 5000;
    static final double DELTA = 1e-5;
    static final double[] TUNE_FRACTIONS = {0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.07, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5,
        0.6, 0.7, 0.8, 0.9, 1.0};

    private KoskelaKulkarniFigures() {
    }

    /**
     * ε of variants 1 and 2 against q_tune for μ ∈ {15, 45}, with the Papernot–Steinke baseline (the
     * same search on all the data, no extra final run). Prints the table and where the variants cross.
     */
    static Figure figure1() {
        Figure f = new Figure("koskela-figure1", "Koskela-Kulkarni Fig. 1: DP-SGD q=0.01, sigma=2, 50 epochs, delta=1e-5",
                "tuning fraction q_tune", "epsilon", "mu");
        RdpAccountant acc = RdpAccountant.standard();
        PrivacyEvent run = NoiseCalibration.dpSgd(Q, SIGMA, STEPS);
        System.out.printf("one DP-SGD run: epsilon %.4f%n", acc.epsilon(run, DELTA));
        for (double mu : new double[]{15, 45}) {
            PrivacyEvent search = new RepeatAndSelectEvent(run, RepetitionDistribution.poisson(mu));
            double baseline = acc.epsilon(search, DELTA);
            System.out.printf("mu = %.0f: baseline (Papernot-Steinke on all data) epsilon %.4f%n%8s %10s %10s%n", mu, baseline,
                    "q_tune", "variant 1", "variant 2");
            String crossing = null;
            Boolean v1Below = null;
            double previous = Double.NaN;
            for (double qTune : TUNE_FRACTIONS) {
                double v1 = acc.epsilon(new SubsampledTuningEvent(search, run, qTune, SubsampledTuningEvent.Variant.DISJOINT), DELTA);
                double v2 = acc.epsilon(new SubsampledTuningEvent(search, run, qTune, SubsampledTuningEvent.Variant.FULL), DELTA);
                f.add(String.format("variant 1, mu=%.0f", mu), qTune, v1, mu);
                f.add(String.format("variant 2, mu=%.0f", mu), qTune, v2, mu);
                f.add(String.format("baseline, mu=%.0f", mu), qTune, baseline, mu);
                System.out.printf("%8.3f %10.4f %10.4f%n", qTune, v1, v2);
                if (qTune < 1 && v1Below != null && v1Below != (v1 < v2) && crossing == null) {
                    crossing = String.format("between q_tune = %s and %s (variant %d cheaper below)", previous, qTune, v1Below ? 1 : 2);
                }
                if (qTune < 1) {
                    v1Below = v1 < v2;
                    previous = qTune;
                }
            }
            System.out.println(crossing == null ? "  the variants do not cross on this grid"
                    : "  the variants cross " + crossing);
        }
        System.out.println("paper vs ours: the paper prints no numbers for Figure 1; it observes that at mu = 45 the variants cross "
                + "at small q_tune (variant 2 cheaper there). Compare the table and the picture.");
        return f;
    }
}
