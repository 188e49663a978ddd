package org.dpdl4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import org.dpdl4j.tuning.Candidate;
import org.junit.jupiter.api.Test;

class HonestAccuracyTest {
    /**
     * The ScatterNet recipes' grid (GroupNorm and data-normalised, both data sets), scaled by n/m = 10 for the final
     * run, is the recipe's learning rate times 9^(i/10), i = −1, 0, 1, computed here anew, with μ = 2; the factors the
     * CLI's help publishes are those to four significant digits; the standard CNN keeps the first grid's six points,
     * lr·3^(2i/5 − 1), i = 0..5, and μ = 5.
     */
    @Test
    void theFinalLearningRatesAreTheRecipesAndItsNeighboursAndAsPublished() {
        String published = HonestAccuracy.FINAL_LR_FACTORS_TEXT.split(" ")[0];
        double[] text = Arrays.stream(published.split(",")).mapToDouble(Double::parseDouble).toArray();
        assertEquals(3, text.length);
        for (String name : List.of("scatternet", "scatternet-datanorm")) {
            for (String dataset : List.of("mnist", "fashion-mnist")) {
                HonestAccuracy.Recipe r = HonestAccuracy.Recipe.of(name, dataset, false, 0);
                assertEquals(2, r.mu(), name + " " + dataset + " mu");
                List<Candidate> grid = r.space().candidates();
                assertEquals(3, grid.size());
                for (int i = 0; i < 3; i++) {
                    double factor = grid.get(i).number("lr") * 10 / r.lr();
                    assertEquals(Math.pow(9, (i - 1) / 10.0), factor, 1e-12, name + " " + dataset + " point " + i);
                    assertEquals(text[i], factor, 5e-4 * factor, name + " " + dataset + " point " + i + " as published");
                }
            }
        }
        HonestAccuracy.Recipe cnn = HonestAccuracy.Recipe.of("standard-cnn", "mnist", false, 0);
        List<Candidate> first = cnn.space().candidates();
        assertEquals(6, first.size(), "the standard CNN keeps the first grid");
        assertEquals(5, cnn.mu(), "the standard CNN keeps mu 5");
        for (int i = 0; i < 6; i++) {
            assertEquals(Math.pow(3, 2.0 * i / 5 - 1), first.get(i).number("lr") * 10 / cnn.lr(), 1e-12, "standard-cnn point " + i);
        }
    }
}
