package org.dpdl4j.tuning;

import org.dpdl4j.release.PrivacyLedger;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.dpdl4j.accounting.AdaptiveRepeatAndSelectEvent;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.TruncatedNegativeBinomial;
import org.junit.jupiter.api.Test;

/** DP-HyPO's parts (Wang et al. 2023, arXiv:2306.05734): projection, Gaussian process, the tuner's bounded adaptivity. */
class DpHypoTest {

    // ---- projection ----

    /** Against Dykstra's alternating projections onto the box and the hyperplane Σp = 1 (converges to the projection). */
    @Test
    void projectionMatchesDykstraAndSatisfiesKkt() {
        SplittableRandom r = new SplittableRandom(4);
        for (int trial = 0; trial < 200; trial++) {
            int n = 2 + r.nextInt(6);
            double[] prior = new double[n];
            double[] target = new double[n];
            double ps = 0;
            for (int i = 0; i < n; i++) {
                prior[i] = 0.2 + r.nextDouble();
                ps += prior[i];
                target[i] = r.nextDouble() * (r.nextBoolean() ? 1 : 5);
            }
            for (int i = 0; i < n; i++) {
                prior[i] /= ps;
            }
            double c = 0.2 + 0.8 * r.nextDouble();
            double cc = 1 + 2 * r.nextDouble();
            double[] p = BoundedDensityProjection.project(target, prior, c, cc);
            double sum = 0;
            for (int i = 0; i < n; i++) {
                assertTrue(p[i] >= c * prior[i] && p[i] <= cc * prior[i], "inside the box");
                sum += p[i];
            }
            assertEquals(1, sum, 1e-12);
            assertArrayEquals(dykstra(target, prior, c, cc), p, 1e-7, "trial " + trial);
            // KKT: one threshold nu with p_i = clip(target_i - nu) for every i
            double nu = Double.NaN;
            for (int i = 0; i < n; i++) {
                if (p[i] > c * prior[i] + 1e-12 && p[i] < cc * prior[i] - 1e-12) {
                    double here = target[i] - p[i];
                    assertTrue(Double.isNaN(nu) || Math.abs(here - nu) < 1e-9, "a common threshold");
                    nu = here;
                }
            }
            if (!Double.isNaN(nu)) {
                for (int i = 0; i < n; i++) {
                    double expect = Math.max(c * prior[i], Math.min(cc * prior[i], target[i] - nu));
                    assertEquals(expect, p[i], 1e-9);
                }
            }
            assertArrayEquals(p, BoundedDensityProjection.project(p, prior, c, cc), 1e-12, "idempotent");
        }
    }

    private static double[] dykstra(double[] target, double[] prior, double c, double cc) {
        int n = target.length;
        double[] x = target.clone();
        double[] pBox = new double[n];
        double[] qPlane = new double[n];
        for (int it = 0; it < 100000; it++) {
            double[] y = new double[n];
            for (int i = 0; i < n; i++) {
                y[i] = Math.max(c * prior[i], Math.min(cc * prior[i], x[i] + pBox[i]));
                pBox[i] = x[i] + pBox[i] - y[i];
            }
            double s = 0;
            for (int i = 0; i < n; i++) {
                s += y[i] + qPlane[i];
            }
            double shift = (s - 1) / n;
            double[] z = new double[n];
            for (int i = 0; i < n; i++) {
                z[i] = y[i] + qPlane[i] - shift;
                qPlane[i] = y[i] + qPlane[i] - z[i];
            }
            x = z;
        }
        for (int i = 0; i < n; i++) { // the last iterate sits on the plane; land it in the box too
            x[i] = Math.max(c * prior[i], Math.min(cc * prior[i], x[i]));
        }
        return x;
    }

    @Test
    void projectionChecksItsPreconditions() {
        double[] prior = {0.5, 0.5};
        var e = assertThrows(IllegalArgumentException.class, () -> BoundedDensityProjection.project(prior, prior, 1.1, 2));
        assertTrue(e.getMessage().contains("c") && e.getMessage().contains("1.1"));
        assertThrows(IllegalArgumentException.class, () -> BoundedDensityProjection.project(prior, prior, 0.5, 0.9));
        assertThrows(IllegalArgumentException.class, () -> BoundedDensityProjection.project(prior, new double[]{0.5, 0.6}, 0.5, 2));
        assertThrows(IllegalArgumentException.class, () -> BoundedDensityProjection.project(new double[]{-1, 1}, prior, 0.5, 2));
    }

    // ---- Gaussian process ----

    /** Two 1-D points, squared-exponential kernel: the posterior mean and variance written out by hand. */
    @Test
    void posteriorMatchesTheClosedFormOnTwoPoints() {
        double ell = 0.4;
        double s2 = 2.0;
        double n2 = 0.1;
        double[][] x = {{0.1}, {0.7}};
        double[] y = {1.0, 3.0};
        double[] w = {1, 2}; // the second observation averages two runs: noise n2/2
        GaussianProcess gp = GaussianProcess.condition(GaussianProcess.Kernel.SQUARED_EXPONENTIAL,
                new GaussianProcess.Hyperparameters(ell, s2, n2), x, y, w);
        double m = (1.0 * 1 + 3.0 * 2) / 3; // weighted mean
        double k12 = s2 * Math.exp(-0.36 / (2 * ell * ell));
        double a = s2 + n2;
        double d = s2 + n2 / 2;
        double det = a * d - k12 * k12;
        double r1 = y[0] - m;
        double r2 = y[1] - m;
        double al1 = (d * r1 - k12 * r2) / det;
        double al2 = (-k12 * r1 + a * r2) / det;
        double xs = 0.5;
        double ks1 = s2 * Math.exp(-0.16 / (2 * ell * ell));
        double ks2 = s2 * Math.exp(-0.04 / (2 * ell * ell));
        double mean = m + ks1 * al1 + ks2 * al2;
        double var = s2 - (ks1 * (d * ks1 - k12 * ks2) + ks2 * (-k12 * ks1 + a * ks2)) / det;
        assertEquals(mean, gp.mean(new double[]{xs}), 1e-12);
        assertEquals(Math.sqrt(var), gp.sd(new double[]{xs}), 1e-12);
    }

    @Test
    void logMarginalLikelihoodGradientMatchesFiniteDifferences() {
        SplittableRandom r = new SplittableRandom(9);
        double[][] x = new double[7][2];
        double[] y = new double[7];
        double[] w = new double[7];
        for (int i = 0; i < 7; i++) {
            x[i] = new double[]{r.nextDouble(), r.nextDouble()};
            y[i] = Math.sin(3 * x[i][0]) + x[i][1] + 0.1 * r.nextGaussian();
            w[i] = 1 + r.nextInt(3);
        }
        for (GaussianProcess.Kernel k : GaussianProcess.Kernel.values()) {
            double[] logTheta = {Math.log(0.3), Math.log(0.8), Math.log(0.05)};
            double[] g = GaussianProcess.logMarginalLikelihoodGradient(k, x, y, w, at(logTheta));
            for (int j = 0; j < 3; j++) {
                double h = 1e-5;
                double[] up = logTheta.clone();
                double[] down = logTheta.clone();
                up[j] += h;
                down[j] -= h;
                double fd = (GaussianProcess.logMarginalLikelihood(k, x, y, w, at(up))
                        - GaussianProcess.logMarginalLikelihood(k, x, y, w, at(down))) / (2 * h);
                assertEquals(fd, g[j], 1e-5 * (1 + Math.abs(fd)), k + " component " + j);
            }
            // fitting does not lower the marginal likelihood of the start
            GaussianProcess fit = GaussianProcess.fit(k, x, y, w, at(logTheta));
            assertTrue(GaussianProcess.logMarginalLikelihood(k, x, y, w, fit.hyperparameters())
                    >= GaussianProcess.logMarginalLikelihood(k, x, y, w, at(logTheta)) - 1e-9);
        }
    }

    private static GaussianProcess.Hyperparameters at(double[] logTheta) {
        return new GaussianProcess.Hyperparameters(Math.exp(logTheta[0]), Math.exp(logTheta[1]), Math.exp(logTheta[2]));
    }

    // ---- the tuner ----

    /** A mechanism whose scores are adversarial (huge, random): the densities must still stay in the box. */
    private static final class Adversary implements TrainingMechanism {
        @Override
        public PrivacyEvent event(Candidate c) {
            return new GaussianEvent(3);
        }

        @Override
        public TrialResult run(Candidate c, long seed, TuningListener listener, int trial) {
            double score = new SplittableRandom(seed).nextDouble() < 0.5 ? 1e6 : -1e6;
            return new TrialResult(trial, c, null, c.number("lr") > 0.5 ? score : 0, event(c), 0, null);
        }
    }

    @Test
    void samplingDensitiesStayWithinTheBoundsWhateverTheScores() {
        HyperparameterSpace space = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=log:0.01:1:8"),
                HyperparameterSpace.parseAxis("clip=lin:0.5:2:3"));
        double[] prior = space.priorProbabilities();
        List<double[]> seen = new ArrayList<>();
        for (double beta : new double[]{1, 1e3}) {
            DpHypoTuner tuner = new DpHypoTuner(RepetitionDistribution.pointMass(30), 0.75, 2,
                    new GpUcbSoftmax(GaussianProcess.Kernel.MATERN_52, 0.1, beta), 3).withDensityObserver(seen::add);
            TuningResult r = tuner.tune(space, new Adversary(), null, TuningListener.NONE);
            assertEquals(30, r.trials().size());
        }
        assertEquals(60, seen.size());
        double maxRatio = 0;
        for (double[] p : seen) {
            double sum = 0;
            for (int i = 0; i < p.length; i++) {
                assertTrue(p[i] >= 0.75 * prior[i] && p[i] <= 2 * prior[i], "within [c, C] x prior");
                maxRatio = Math.max(maxRatio, p[i] / prior[i]);
                sum += p[i];
            }
            assertEquals(1, sum, 1e-9);
        }
        assertTrue(maxRatio > 1.5, "with beta = 1000 the rule pushes against the upper bound: " + maxRatio);
    }

    @Test
    void withoutRoomToAdaptItIsRandomSearch() {
        HyperparameterSpace space = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=log:0.01:1:5"));
        List<double[]> seen = new ArrayList<>();
        DpHypoTuner tuner = new DpHypoTuner(new TruncatedNegativeBinomial(1, 0.1), 1, 1, GpUcbSoftmax.defaults(), 5)
                .withDensityObserver(seen::add);
        TuningResult r = tuner.tune(space, new FakeMechanism(10), null, TuningListener.NONE);
        for (double[] p : seen) {
            assertArrayEquals(space.priorProbabilities(), p, 1e-15);
        }
        assertEquals(new AdaptiveRepeatAndSelectEvent(new GaussianEvent(5), new TruncatedNegativeBinomial(1, 0.1), 1, 1), r.event());
    }

    /** On a smooth landscape the GP rule finds the optimum region more often than uniform sampling. */
    @Test
    void gpRuleConcentratesOnGoodCandidates() {
        HyperparameterSpace space = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=lin:0:1:21"));
        List<double[]> seen = new ArrayList<>();
        new DpHypoTuner(RepetitionDistribution.pointMass(40), 0.75, 2, new GpUcbSoftmax(GaussianProcess.Kernel.MATERN_52, 0.1, 50), 7)
                .withDensityObserver(seen::add).tune(space, new FakeMechanism(10), null, TuningListener.NONE);
        double[] last = seen.get(seen.size() - 1);
        double mass = 0;
        for (int i = 0; i < last.length; i++) {
            if (Math.abs(i / 20.0 - 0.3) <= 0.1) {
                mass += last[i];
            }
        }
        assertTrue(mass > 5.0 / 21 + 0.05, "more than the uniform mass near lr = 0.3: " + mass);
    }

    /**
     * With revealed trials the candidates (drawn from score-dependent densities) are released, so Theorem 1 no
     * longer applies: the charge is the composition of the K drawn runs, each bounded by one run's event over
     * the space, made before the first run; without it the sequence stays in the operator record.
     */
    @Test
    void revealedTrialsAreChargedAsTheCompositionOfTheAdaptiveRuns(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        HyperparameterSpace s = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=log:0.01:1:8"),
                HyperparameterSpace.parseAxis("sigma=cat:3,6"));
        PrivacyEvent base = Trials.baseEvent(s, new FakeMechanism(10));
        DpHypoTuner hidden = new DpHypoTuner(RepetitionDistribution.pointMass(5), 0.75, 2, GpUcbSoftmax.defaults(), 3);
        TuningResult r = hidden.tune(s, new FakeMechanism(10), null, TuningListener.NONE);
        assertEquals(new AdaptiveRepeatAndSelectEvent(base, RepetitionDistribution.pointMass(5), 0.75, 2), r.event());
        assertTrue(r.release().trials().isEmpty() && r.release().repetitions() == null);
        assertTrue(r.notes().stream().noneMatch(n -> n.contains("observed")), "observed density ratios are operator-only");
        assertTrue(r.operatorNotes().stream().anyMatch(n -> n.contains("observed density ratios")), r.operatorNotes().toString());

        try (PrivacyLedger ledger = PrivacyLedger.open(dir.resolve("l.jsonl"), "toy", 1000, 1e-5)) {
            TuningResult revealed = hidden.withRevealedTrials().tune(s, new FakeMechanism(10), ledger, TuningListener.NONE);
            assertEquals(new org.dpdl4j.accounting.SelfComposedEvent(base, 5), revealed.event());
            assertEquals(revealed.event(), ledger.entries().get(0).event());
            assertEquals(1, ledger.entries().stream().filter(PrivacyLedger.Entry::charged).count());
            assertEquals(5, ledger.entries().size() - 1, "every trial recorded under the charge");
            assertEquals(5L, revealed.release().repetitions());
            assertEquals(5, revealed.release().trials().size());
        }
        assertThrows(IllegalStateException.class, () -> hidden.withRevealedTrials().event(s, new FakeMechanism(10)));
    }
}
