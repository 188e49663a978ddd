package org.dpdl4j.tuning;

import org.dpdl4j.release.PrivacyLedger;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.SplittableRandom;
import org.dpdl4j.accounting.PureDpEvent;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.accounting.SelfComposedEvent;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.models.ModelOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Ding &amp; Wu's propose-test tuner: one iteration's ε₀ by Monte Carlo, the cap, and what is charged. */
class ProposeTestTunerTest {

    /**
     * One iteration on two neighbouring utility vectors (every u_s moved by 1/k, in the worst
     * directions): the empirical probability of each outcome (which candidate, or none) on one must be
     * within e^{ε₀} of the other's, up to Monte-Carlo error.
     */
    @Test
    void oneIterationIsEpsilon0DpByMonteCarlo() {
        int k = 10;
        double eps0 = 1.0;
        double[] u = {0.50, 0.56, 0.47};
        double[] uPrime = {0.50 + 0.1, 0.56 - 0.1, 0.47 + 0.1};
        ProposeTestTuner t = new ProposeTestTuner(k, 0.05, eps0, 0.45, 1, 0);
        int n = 1_000_000;
        double[] p = outcomes(t, u, n, 1);
        double[] pp = outcomes(t, uPrime, n, 2);
        double worst = 0;
        for (int o = 0; o < p.length; o++) {
            double se = Math.sqrt(p[o] * (1 - p[o]) / n) / p[o] + Math.sqrt(pp[o] * (1 - pp[o]) / n) / pp[o];
            double ratio = Math.abs(Math.log(p[o] / pp[o]));
            assertTrue(ratio <= eps0 + 4 * se, "outcome " + o + ": |log ratio| " + ratio + " > eps0 + 4 se (" + se + ")");
            worst = Math.max(worst, ratio);
        }
        assertTrue(worst > 0.2, "the toy is informative: some outcome's probability moves, by " + worst);
    }

    private static double[] outcomes(ProposeTestTuner t, double[] u, int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] count = new double[u.length + 1];
        for (int i = 0; i < n; i++) {
            count[t.select(u, r).index() + 1]++;
        }
        for (int o = 0; o < count.length; o++) {
            count[o] /= n;
        }
        return count;
    }

    /** The loop never runs past T_max, and with the default T_max it ends on its own almost always. */
    @Test
    void terminatesUnderTheCap() {
        SplittableRandom r = new SplittableRandom(3);
        ProposeTestTuner t = new ProposeTestTuner(10, 0.01, 0.1, 0, null, 0);
        assertEquals(202, t.maxIterations());
        int capped = 0;
        for (int seed = 0; seed < 300; seed++) {
            double[] u = new double[100];
            for (int s = 0; s < u.length; s++) {
                u[s] = r.nextDouble();
            }
            ProposeTestTuner.Selection sel = t.select(u, r);
            assertTrue(sel.iterations() <= t.maxIterations());
            capped += sel.capped() ? 1 : 0;
        }
        assertTrue(capped <= 3, capped + " of 300 runs hit the cap");
        ProposeTestTuner tight = new ProposeTestTuner(10, 0.01, 0.1, 0, 5, 0);
        assertTrue(tight.select(new double[]{0.9}, r).iterations() <= 5);
    }

    /** What is charged is T_max ε₀-DP iterations, the same whatever the data and the realised count. */
    @Test
    void chargedEpsilonDoesNotDependOnTheRealisedCount() {
        ProposeTestTuner t = new ProposeTestTuner(10, 0.01, 0.1, 0, null, 7);
        SplittableRandom r = new SplittableRandom(1);
        java.util.Set<Integer> counts = new java.util.HashSet<>();
        for (int i = 0; i < 50; i++) {
            counts.add(t.select(new double[]{r.nextDouble(), r.nextDouble()}, r).iterations());
        }
        assertTrue(counts.size() > 1, "the realised count varies: " + counts);
        assertEquals(new SelfComposedEvent(new PureDpEvent(0.1), 202), t.loopEvent());
        // RDP of T eps0-DP steps: T min(eps0, alpha eps0^2 / 2) at every order (eps0-DP => eps0^2/2-zCDP)
        double[] orders = RdpAccountant.defaultOrders();
        double[] curve = RdpAccountant.rdp(t.loopEvent(), orders);
        for (int i = 0; i < orders.length; i++) {
            assertEquals(202 * Math.min(0.1, orders[i] * 0.01 / 2), curve[i], 1e-12);
        }
        var e = assertThrows(IllegalArgumentException.class, () -> new ProposeTestTuner(10, 1.5, 0.1, 0, null, 0));
        assertTrue(e.getMessage().contains("granularity") && e.getMessage().contains("1.5"));
    }

    @Test
    void endToEndPicksTheTrainableCandidateAndChargesFirst(@TempDir Path dir) throws Exception {
        DpSgdMechanism q = DpSgdMechanism.builder(DpSgdMechanismTest.data(600, 2)).model("mlp", new ModelOptions(6, 6, 1, 2,
                        ModelOptions.activationNamed("tanh"), ModelOptions.updaterNamed("sgd", 0.5), 0,
                        org.nd4j.linalg.api.buffer.DataType.FLOAT))
                .noiseMultiplier(1.0).expectedBatchSize(40).epochs(1).validation(0.2, 3).build();
        HyperparameterSpace space = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.00001,0.5"));
        PrivacyLedger ledger = PrivacyLedger.open(dir.resolve("l.jsonl"), "synthetic", 1000, 1e-5);
        ProposeTestTuner t = new ProposeTestTuner(5, 0.05, 20.0, 0, null, 11); // large eps0: the selection is nearly exact
        ProposeTestTuner.Result r = t.tune(space, q, ledger, TuningListener.NONE);
        assertEquals(0.5, r.candidate().number("lr"));
        assertTrue(DpSgdTrainer.accuracy(r.model(), DpSgdMechanismTest.data(300, 5)) > 0.9);
        assertEquals(2, ledger.entries().size());
        assertTrue(ledger.entries().get(0).charged());
        assertEquals(r.event(), ledger.entries().get(0).event());
        ledger.close();
        assertTrue(r.release().toMap().keySet().equals(java.util.Set.of("best", "best_score")), r.release().toMap().toString());
        assertTrue(r.operatorRecord().facts().containsKey("iterations") && r.operatorRecord().facts().containsKey("part_sizes"));
        // the utilities' trainings on three threads: every seed is drawn up front, so nothing changes
        ProposeTestTuner.Result parallel = t.withThreads(3).tune(space, q, null, TuningListener.NONE);
        assertEquals(r.selection(), parallel.selection());
        assertEquals(r.candidate(), parallel.candidate());
        org.junit.jupiter.api.Assertions.assertArrayEquals(r.model().params().data().asFloat(), parallel.model().params().data().asFloat());
    }

    /**
     * The final run trains with exactly the q it is charged for: B over the expected training-split size
     * (1 − f)·n, not over the realised size of the (random, record-by-record) split.
     */
    @Test
    void theFinalRunTrainsWithTheChargedSamplingRate() {
        DpSgdMechanism q = DpSgdMechanism.builder(DpSgdMechanismTest.data(600, 2)).model("mlp", new ModelOptions(6, 6, 1, 2,
                        ModelOptions.activationNamed("tanh"), ModelOptions.updaterNamed("sgd", 0.5), 0,
                        org.nd4j.linalg.api.buffer.DataType.FLOAT))
                .noiseMultiplier(1.0).expectedBatchSize(40).epochs(1).validation(0.2, 3).build();
        double chargedRate = 40 / (0.8 * 600);
        assertTrue(q.train().size() != 480, "the split's realised size differs from its expectation: " + q.train().size());
        HyperparameterSpace space = HyperparameterSpace.of(HyperparameterSpace.parseAxis("lr=cat:0.5"));
        ProposeTestTuner.Result r = new ProposeTestTuner(5, 0.05, 20.0, 0, null, 11).tune(space, q, null, TuningListener.NONE);
        long steps = org.dpdl4j.dpsgd.DpSgdConfig.stepsForEpochs(1, chargedRate);
        assertEquals(DpSgdTrainer.event(chargedRate, 1.0, steps), r.trainedEvent());
        assertEquals(r.finalRun(), r.trainedEvent(), "one candidate: the charged final run is the trained one");
        assertTrue(!DpSgdTrainer.event(40.0 / q.train().size(), 1.0, steps).equals(r.trainedEvent()));
    }
}
