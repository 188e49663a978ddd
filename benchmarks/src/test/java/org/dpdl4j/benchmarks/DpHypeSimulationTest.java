package org.dpdl4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.dpdl4j.accounting.DpHypeVoting;
import org.junit.jupiter.api.Test;

/** DP-HYPE Figure 2's simulation: the paper's qualitative findings, and Theorem V.1 below the simulated rate. */
class DpHypeSimulationTest {
    @Test
    void votesBehaveAsThePaperReports() {
        double[][] sigma = new double[DpHypeSimulation.EPSILONS.length][DpHypeSimulation.VOTES.length];
        for (int e = 0; e < sigma.length; e++) {
            for (int v = 0; v < sigma[e].length; v++) {
                sigma[e][v] = DpHypeVoting.noiseMultiplier(DpHypeSimulation.VOTES[v], DpHypeSimulation.EPSILONS[e], 1e-5);
            }
        }
        double[][] rate = DpHypeSimulation.simulate(5, 0.2, sigma, 300, 3);
        int k100 = DpHypeSimulation.VOTES.length - 1;
        assertTrue(rate[1][2] > 0.97, "k = 5 at epsilon 1 almost always finds a good candidate: " + rate[1][2]);
        assertTrue(rate[0][k100] < 0.15 && rate[1][k100] < 0.15, "k = 100 votes for everything: near chance (5/100)");
        assertTrue(rate[0][2] <= rate[1][2] + 0.02, "smaller epsilon, no better");
        // Theorem V.1 at k = 5: the noise-free votes of this setting give gap ~ n (good always in everyone's top 5 at s = 0.05)
        double[][] clean = DpHypeSimulation.simulate(5, 0.05, sigma, 200, 4);
        double bound = DpHypeVoting.successBound(250, 95, sigma[0][2]);
        assertTrue(bound <= clean[0][2] + 0.03, "Theorem V.1 " + bound + " <= simulated " + clean[0][2]);
    }
}
