package org.dpdl4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.dpdl4j.tuning.Candidate;
import org.junit.jupiter.api.Test;

class HonestAccuracyTest {
    /**
     * The ScatterNet recipes' grid (GroupNorm and data-normalised, both data sets), scaled by n/m = 10 for the final
     * run, is the recipe's learning rate times 9^(i/10) for i = c − 1, c, c + 1, computed here anew, with c = 0 at total
     * ε ≥ √6 (3, 2.45), c = −2 for √2 ≤ ε &lt; √6 (2.44, 2, 1.42) and c = −4 below √2 (1.41, 1), the edges the geometric
     * means of the studied ε 1, 2 and 3; μ = 2; the factors the CLI's help publishes are those to four significant
     * digits, band by band; the standard CNN keeps the first grid's six points, lr·3^(2i/5 − 1), i = 0..5, and μ = 5, at
     * every ε.
     */
    @Test
    void theFinalLearningRatesAreTheRecipesAndItsNeighboursAndAsPublished() {
        // "a,b,c times the recipe's at epsilon >= 2.449, d,e,f at 1.414 to 2.449, g,h,i below": the bands, highest first
        String[] bands = HonestAccuracy.FINAL_LR_FACTORS_TEXT.split(", (?=[0-9.]+,[0-9.]+,[0-9.]+ )");
        assertEquals(3, bands.length, HonestAccuracy.FINAL_LR_FACTORS_TEXT);
        assertTrue(bands[0].endsWith("at epsilon >= " + String.format(java.util.Locale.ROOT, "%.3f", Math.sqrt(6))), bands[0]);
        assertTrue(bands[1].endsWith(String.format(java.util.Locale.ROOT, "at %.3f to %.3f", Math.sqrt(2), Math.sqrt(6))), bands[1]);
        assertTrue(bands[2].endsWith("below"), bands[2]);
        double[][] text = {parse(bands[0].split(" ")[0]), parse(bands[1].split(" ")[0]), parse(bands[2].split(" ")[0])};
        double[] epsilons = {3, Math.sqrt(6), 2.44, 2, 1.42, Math.sqrt(2), 1.41, 1};
        int[] band = {0, 0, 1, 1, 1, 1, 2, 2};
        int[] centre = {0, -2, -4};
        for (String name : List.of("scatternet", "scatternet-datanorm")) {
            for (String dataset : List.of("mnist", "fashion-mnist")) {
                for (int e = 0; e < epsilons.length; e++) {
                    HonestAccuracy.Recipe r = HonestAccuracy.Recipe.of(name, dataset, false, 0, epsilons[e]);
                    String what = name + " " + dataset + " epsilon " + epsilons[e];
                    assertEquals(2, r.mu(), what + " mu");
                    List<Candidate> grid = r.space().candidates();
                    assertEquals(3, grid.size());
                    for (int i = 0; i < 3; i++) {
                        double factor = grid.get(i).number("lr") * 10 / r.lr();
                        assertEquals(Math.pow(9, (i - 1 + centre[band[e]]) / 10.0), factor, 1e-12, what + " point " + i);
                        assertEquals(text[band[e]][i], factor, 5e-4 * factor, what + " point " + i + " as published");
                    }
                }
            }
        }
        for (double epsilon : new double[]{3, 1}) {
            HonestAccuracy.Recipe cnn = HonestAccuracy.Recipe.of("standard-cnn", "mnist", false, 0, epsilon);
            List<Candidate> first = cnn.space().candidates();
            assertEquals(6, first.size(), "the standard CNN keeps the first grid");
            assertEquals(5, cnn.mu(), "the standard CNN keeps mu 5");
            for (int i = 0; i < 6; i++) {
                assertEquals(Math.pow(3, 2.0 * i / 5 - 1), first.get(i).number("lr") * 10 / cnn.lr(), 1e-12, "standard-cnn point " + i);
            }
        }
    }

    private static double[] parse(String factors) {
        return Arrays.stream(factors.split(",")).mapToDouble(Double::parseDouble).toArray();
    }
}
