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
        assertEquals("clip=cat:1".replace("clip", "clip_norm"), ((Map<?, ?>) json.get("settings")).get("clip_norm"));
        assertEquals("learning_rate=cat:0.5,1", ((Map<?, ?>) json.get("settings")).get("learning_rate"));
        assertTrue(((Map<?, ?>) ((List<?>) json.get("runs")).get(0)).containsKey("learning_rate"), json.toString());
        // a cache written before C, the learning rate and sigma had one spelling (clip, lr, sigma) is read as the same
        // landscape, not retrained
        @SuppressWarnings("unchecked")
        Map<String, Object> cache = Reporting.JSON.readValue(file.toFile(), Map.class);
        Map<String, Object> oldSettings = new java.util.LinkedHashMap<>();
        ((Map<String, Object>) cache.get("settings")).forEach((k, v) -> oldSettings.put(k.equals("clip_norm") ? "clip"
                : k.equals("learning_rate") ? "lr" : k.equals("noise_multiplier") ? "sigma" : k,
                k.equals("clip_norm") ? "clip=cat:1" : k.equals("learning_rate") ? "lr=cat:0.5,1" : v));
        cache.put("settings", oldSettings);
        for (Map<String, Object> run : (List<Map<String, Object>>) cache.get("runs")) {
            run.put("clip", run.remove("clip_norm"));
            run.put("lr", run.remove("learning_rate"));
        }
        String older = Reporting.JSON.writeValueAsString(cache);
        assertTrue(older.contains("\"clip\":\"clip=cat:1\"") && older.contains("\"sigma\":1.0") && older.contains("\"lr\":\"lr=cat:0.5,1\"")
                && !older.contains("clip_norm") && !older.contains("learning_rate"), older);
        Files.writeString(file, older);
        Landscape fromOlder = Landscape.build(s, data, file, progress::add);
        assertEquals(2, progress.size(), "an older cache is not retrained");
        assertEquals(first.actual(c), fromOlder.actual(c), 0.0);
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
