package org.dpdl4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import org.dpdl4j.tuning.Candidate;
import org.junit.jupiter.api.Test;

class HonestAccuracyTest {
    /**
     * The ScatterNet recipes' grid (GroupNorm and data-normalised, both data sets), scaled by n/m = 10 for the final
     * run, is the recipe's learning rate times 9^(i/10), i = −1, 0, 1, at total ε ≥ √3 and 9^(i/10), i = −5, −4, −3,
     * below it (ε = 1.7 and 1), computed here anew, with μ = 2; the factors the CLI's help publishes are those to four
     * significant digits; the standard CNN keeps the first grid's six points, lr·3^(2i/5 − 1), i = 0..5, and μ = 5, at
     * every ε.
     */
    @Test
    void theFinalLearningRatesAreTheRecipesAndItsNeighboursAndAsPublished() {
        String[] published = HonestAccuracy.FINAL_LR_FACTORS_TEXT.split(" ");
        double[][] text = {parse(published[0]), parse(published[published.length - 2])};
        assertEquals("below", published[published.length - 1]);
        for (String name : List.of("scatternet", "scatternet-datanorm")) {
            for (String dataset : List.of("mnist", "fashion-mnist")) {
                for (double epsilon : new double[]{3, 1.75, 1.7, 1}) {
                    boolean low = epsilon < 1.73;
                    HonestAccuracy.Recipe r = HonestAccuracy.Recipe.of(name, dataset, false, 0, epsilon);
                    String what = name + " " + dataset + " epsilon " + epsilon;
                    assertEquals(2, r.mu(), what + " mu");
                    List<Candidate> grid = r.space().candidates();
                    assertEquals(3, grid.size());
                    for (int i = 0; i < 3; i++) {
                        double factor = grid.get(i).number("lr") * 10 / r.lr();
                        assertEquals(Math.pow(9, (i - 1 + (low ? -4 : 0)) / 10.0), factor, 1e-12, what + " point " + i);
                        assertEquals(text[low ? 1 : 0][i], factor, 5e-4 * factor, what + " point " + i + " as published");
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
