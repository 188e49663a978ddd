package org.dpdl4j.tuning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class HyperparameterSpaceTest {
    @Test
    void parsesEveryAxisKind() {
        List<Object> lr = HyperparameterSpace.parseAxis("lr=log:0.025:1:20").values(0);
        assertEquals(20, lr.size());
        assertEquals(0.025, (Double) lr.get(0), 0);
        assertEquals(1.0, (Double) lr.get(19), 0);
        assertEquals(0.025 * Math.pow(40, 1.0 / 19), (Double) lr.get(1), 1e-15);
        assertEquals(List.of(1.0, 1.5, 2.0), HyperparameterSpace.parseAxis("clip=lin:1:2:3").values(0));
        assertEquals(List.of("sgd", "adam"), HyperparameterSpace.parseAxis("optimizer=cat:sgd,adam").values(0));
        assertEquals(List.of(128.0, 256.0), HyperparameterSpace.parseAxis("batch_size=cat:128,256").values(0));
        assertEquals(List.of(5.0), HyperparameterSpace.parseAxis("epochs=5").values(0));
        assertEquals(List.of(1.0, 10.0, 100.0), HyperparameterSpace.parseAxis("x=logrange:1:100").values(3));
        assertEquals(List.of(0.0, 0.5, 1.0), HyperparameterSpace.parseAxis("x=range:0:1").values(3));
        for (String bad : new String[]{"lr", "lr=log:0:1:3", "lr=log:1:2", "lr=lin:a:1:2", "lr=foo:1:2", "lr=range:2:1", "1x=3"}) {
            var e = assertThrows(IllegalArgumentException.class, () -> HyperparameterSpace.parseAxis(bad), bad);
            assertTrue(e.getMessage().contains("axis") || e.getMessage().contains("--space"), e.getMessage());
        }
    }

    /** C and σ are clip_norm and noise_multiplier everywhere; clip and sigma, their older names, are read as these. */
    @Test
    void olderAxisNamesAreReadAsTheCurrentOnes() {
        assertEquals("clip_norm", HyperparameterSpace.parseAxis("clip=lin:1:2:3").name());
        assertEquals("noise_multiplier", HyperparameterSpace.parseAxis("sigma=cat:1,2").name());
        assertEquals("clip_norm", new HyperparameterSpace.Categorical("clip", List.of(1.0)).name());
        assertEquals("learning_rate", HyperparameterSpace.parseAxis("lr=cat:1").name());
        assertEquals("learning_rate=cat:1.0", HyperparameterSpace.parseAxis("lr=cat:1").describe());
        var e = assertThrows(IllegalArgumentException.class, () -> HyperparameterSpace.of(HyperparameterSpace.parseAxis("clip=cat:1"),
                HyperparameterSpace.parseAxis("clip_norm=cat:2")));
        assertTrue(e.getMessage().contains("distinct"), e.getMessage());
        Candidate old = new Candidate(Map.of("sigma", 2.0, "clip", 0.5, "lr", 0.1)); // as read from a file written before
        assertEquals(Map.of("noise_multiplier", 2.0, "clip_norm", 0.5, "learning_rate", 0.1), old.toMap());
        assertEquals(0.1, old.number("lr"), 0.0);
        assertEquals(2.0, old.number("sigma"), 0.0);
        assertEquals(2.0, old.number("noise_multiplier"), 0.0);
        assertTrue(old.has("clip") && old.has("clip_norm"));
        assertEquals(old, new Candidate(Map.of("noise_multiplier", 2.0, "clip_norm", 0.5, "learning_rate", 0.1)));
        assertEquals(Map.of("noise_multiplier", 3.0, "clip_norm", 0.5, "learning_rate", 0.1), old.with("sigma", 3.0).toMap());
        e = assertThrows(IllegalArgumentException.class, () -> new Candidate(Map.of("sigma", 1.0, "noise_multiplier", 2.0)));
        assertTrue(e.getMessage().contains("noise_multiplier") && e.getMessage().contains("twice"), e.getMessage());
    }

    @Test
    void enumeratesTheProductAndSamplesUniformly() {
        HyperparameterSpace space = HyperparameterSpace.of(HyperparameterSpace.parseAxis("a=lin:0:3:4"),
                HyperparameterSpace.parseAxis("b=cat:x,y"));
        assertEquals(8, space.size());
        List<Candidate> all = space.candidates();
        assertEquals(8, all.size());
        assertEquals(8, all.stream().distinct().count());
        assertEquals("a=0.00000, b=x", space.first().toString());
        Map<Candidate, Integer> counts = new HashMap<>();
        SplittableRandom r = new SplittableRandom(3);
        int n = 80_000;
        for (int i = 0; i < n; i++) {
            counts.merge(space.sample(r), 1, Integer::sum);
        }
        double se = Math.sqrt(n * (1 / 8.0) * (7 / 8.0));
        for (Candidate c : all) {
            assertEquals(n / 8.0, counts.get(c), 5 * se, c.toString());
        }
    }

    @Test
    void customPriorIsFollowed() {
        HyperparameterSpace space = HyperparameterSpace.of(HyperparameterSpace.parseAxis("a=lin:1:4:4"))
                .withPrior(c -> c.number("a")); // P[a] = a/10
        int[] counts = new int[5];
        SplittableRandom r = new SplittableRandom(5);
        int n = 100_000;
        for (int i = 0; i < n; i++) {
            counts[(int) space.sample(r).number("a")]++;
        }
        for (int a = 1; a <= 4; a++) {
            double p = a / 10.0;
            assertEquals(n * p, counts[a], 5 * Math.sqrt(n * p * (1 - p)), "a = " + a);
        }
        assertThrows(IllegalArgumentException.class, () -> space.withPrior(c -> -1));
        assertThrows(IllegalArgumentException.class, () -> HyperparameterSpace.of(
                HyperparameterSpace.parseAxis("a=1"), HyperparameterSpace.parseAxis("a=2")));
    }
}
