package org.dpdl4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Ding &amp; Wu 2022, arXiv:2211.01852 Figure 2: the loop's length grows like log of (u* − u0)/g and stays far under the charged cap. */
class DingWuFiguresTest {
    @TempDir
    Path tmp;

    @Test
    void iterationsGrowLogarithmicallyAndStayUnderTheCap() throws Exception {
        DingWuFigures.figure2(200).write(tmp);
        List<String> rows = Files.readAllLines(tmp.resolve("dingwu-figure2.csv"));
        double previousX = 0;
        double previousMean = 0;
        int means = 0;
        for (String row : rows.subList(1, rows.size())) {
            String[] c = row.split(",");
            if (!c[0].equals("\"mean\"")) {
                continue;
            }
            double x = Double.parseDouble(c[1]);
            double mean = Double.parseDouble(c[2]);
            double max = Double.parseDouble(c[4]);
            double tMax = Double.parseDouble(c[5]);
            assertTrue(max < tMax, "every run ends on its own before the charged cap");
            assertTrue(mean <= 2 * Math.log(x) / Math.log(2) + 3, "logarithmic, not linear: mean " + mean + " at " + x);
            assertTrue(x > previousX && mean >= previousMean - 0.5);
            previousX = x;
            previousMean = mean;
            means++;
        }
        assertEquals(DingWuFigures.GRANULARITIES.length, means);
    }
}
