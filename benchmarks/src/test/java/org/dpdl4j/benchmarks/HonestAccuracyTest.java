package org.dpdl4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import org.dpdl4j.tuning.Candidate;
import org.junit.jupiter.api.Test;

class HonestAccuracyTest {
    /**
     * The search's grid, scaled by n/m = 10 for the final run, is the middle four points of the earlier final grid
     * lr·3^(2i/5 − 1), i = 0..5 (i = 1..4) (computed here anew), for both data sets' recipes, and the factors the CLI's help
     * publishes are those points to four significant digits.
     */
    @Test
    void theFinalLearningRatesAreTheMiddleFourOfTheEarlierGridAndAsPublished() {
        String published = HonestAccuracy.FINAL_LR_FACTORS_TEXT.split(" ")[0];
        double[] text = Arrays.stream(published.split(",")).mapToDouble(Double::parseDouble).toArray();
        for (String dataset : List.of("mnist", "fashion-mnist")) {
            HonestAccuracy.Recipe r = HonestAccuracy.Recipe.of("scatternet", dataset, false, 0);
            List<Candidate> grid = r.space().candidates();
            assertEquals(4, grid.size());
            assertEquals(4, text.length);
            for (int i = 0; i < 4; i++) {
                double factor = grid.get(i).number("lr") * 10 / r.lr();
                assertEquals(Math.pow(3, 2.0 * (i + 1) / 5 - 1), factor, 1e-12, dataset + " point " + i);
                assertEquals(text[i], factor, 5e-4 * factor, dataset + " point " + i + " as published");
            }
        }
    }
}
