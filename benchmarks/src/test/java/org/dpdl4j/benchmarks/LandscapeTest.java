package org.dpdl4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Datasets;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.tuning.Candidate;
import org.dpdl4j.tuning.TuningListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The landscape cache: real runs written once, resumed, refused under other settings, replayed with noise. */
class LandscapeTest {
    @TempDir
    Path tmp;

    @Test
    void buildsOnceResumesAndReplays() throws Exception {
        TrainTest data = Datasets.load("mnist", DatasetCache.root(), 28, 28, 1, 1);
        Landscape.Settings s = new Landscape.Settings("mnist", 512, "lr=cat:0.5,1", "clip=cat:1", 1, 0.5, 64, 1.0, 5);
        Path file = tmp.resolve("l.json");
        List<String> progress = new ArrayList<>();
        Landscape first = Landscape.build(s, data, file, progress::add);
        assertEquals(2, progress.size(), "two candidates, one run each");
        byte[] written = Files.readAllBytes(file);
        Landscape again = Landscape.build(s, data, file, progress::add);
        assertEquals(2, progress.size(), "nothing is retrained");
        assertTrue(java.util.Arrays.equals(written, Files.readAllBytes(file)));
        Candidate c = again.grid().get(0);
        assertEquals(first.actual(c), again.actual(c), 0.0);
        Map<?, ?> json = Reporting.JSON.readValue(file.toFile(), Map.class);
        assertEquals(2, ((List<?>) json.get("runs")).size());
        var other = new Landscape.Settings("mnist", 512, "lr=cat:0.5,1", "clip=cat:1", 1, 0.5, 64, 2.0, 5);
        var e = assertThrows(IllegalArgumentException.class, () -> Landscape.build(other, data, file, progress::add));
        assertTrue(e.getMessage().contains("other settings"), e.getMessage());
        // replay: cached mean plus N(0, 0.1^2), seeded
        var q = again.replay(new GaussianEvent(1), 0.1);
        double sum = 0;
        for (int i = 0; i < 2000; i++) {
            sum += q.run(c, i, TuningListener.NONE, 0).score();
        }
        assertEquals(again.actual(c), sum / 2000, 4 * 0.1 / Math.sqrt(2000));
    }
}
