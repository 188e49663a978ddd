package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.dpdl4j.datasets.ImageAugmentation;
import org.dpdl4j.release.CheckpointState;
import org.junit.jupiter.api.Test;

/** The one settings record of a DP-SGD run: its checks, its map for plans and sidecars, and the engine's configuration. */
class DpSgdSettingsTest {

    private static DpSgdSettings full() {
        return DpSgdSettings.builder().clipNorm(0.7).noiseMultiplier(1.3).targetEpsilon(2).expectedBatchSize(128)
                .samplingRate(0.02).epochs(3.5).delta(1e-6).accountant("pld").physicalBatchSize(64).emaDecay(0.9)
                .augmult(ImageAugmentation.forDataset("mnist"), 4).nonPrivate(false).secureRandom(true).dataNormalisation(8).optimizer("adam").learningRate(0.01).build();
    }

    @Test
    void eachBadValueIsRefusedByItsKeyAndValue() {
        Object[][] bad = {
                {"clip_norm must be finite and > 0, got 0.0", (Runnable) () -> DpSgdSettings.builder().clipNorm(0)},
                {"clip_norm must be finite and > 0, got Infinity", (Runnable) () -> DpSgdSettings.builder().clipNorm(Double.POSITIVE_INFINITY)},
                {"noise_multiplier must be finite and >= 0, got -1.0", (Runnable) () -> DpSgdSettings.builder().noiseMultiplier(-1)},
                {"target_epsilon must be finite and > 0, got 0.0", (Runnable) () -> DpSgdSettings.builder().targetEpsilon(0)},
                {"batch_size must be >= 1, got 0", (Runnable) () -> DpSgdSettings.builder().expectedBatchSize(0)},
                {"sampling_rate must be in (0, 1], got 1.5", (Runnable) () -> DpSgdSettings.builder().samplingRate(1.5)},
                {"epochs must be finite and > 0, got -2.0", (Runnable) () -> DpSgdSettings.builder().epochs(-2)},
                {"delta must be in (0, 1), got 1.0", (Runnable) () -> DpSgdSettings.builder().delta(1)},
                {"accountant: ", (Runnable) () -> DpSgdSettings.builder().accountant("moments")},
                {"physical_batch_size must be >= 1, got 0", (Runnable) () -> DpSgdSettings.builder().physicalBatchSize(0)},
                {"ema_decay must be in [0, 1)", (Runnable) () -> DpSgdSettings.builder().emaDecay(1)},
                {"augmult must be in [1, 64], got 65", (Runnable) () -> DpSgdSettings.builder().augmult(ImageAugmentation.forDataset("mnist"), 65)},
                {"augmult above 1 needs an augmentation", (Runnable) () -> DpSgdSettings.builder().augmult(null, 2)},
                {"data_normalisation must be a finite noise multiplier > 0, got 0.0", (Runnable) () -> DpSgdSettings.builder().dataNormalisation(0)},
                {"optimizer must be one of sgd, momentum, adam, got 'lbfgs'", (Runnable) () -> DpSgdSettings.builder().optimizer("lbfgs")},
                {"learning_rate must be finite and > 0, got 0.0", (Runnable) () -> DpSgdSettings.builder().learningRate(0)},
                {"data_normalisation releases private statistics", (Runnable) () -> DpSgdSettings.builder().nonPrivate(true).dataNormalisation(8)}};
        for (Object[] b : bad) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, ((Runnable) b[1])::run, (String) b[0]);
            assertTrue(e.getMessage().startsWith((String) b[0]), e.getMessage());
        }
    }

    @Test
    void theMapReadsBackAndOlderMapsKeepTheDefaults() {
        DpSgdSettings s = full();
        Map<String, Object> m = s.toMap();
        assertEquals(DpSgdSettings.KEYS, List.copyOf(m.keySet()));
        DpSgdSettings back = DpSgdSettings.fromMap(m);
        assertEquals(m, back.toMap());
        assertEquals(List.of(), back.differences(s));
        // what the map leaves out: the seed (secret) and the augmentation (rebuilt from the data set)
        assertEquals(null, back.seed());
        assertEquals(null, back.augmentation());
        // a plan written before target_epsilon and augmult existed: absent keys keep their defaults
        Map<String, Object> old = new LinkedHashMap<>(m);
        old.remove("target_epsilon");
        old.remove("augmult");
        old.remove("data_normalisation");
        DpSgdSettings fromOld = DpSgdSettings.fromMap(old);
        assertTrue(Double.isNaN(fromOld.targetEpsilon()));
        assertEquals(1, fromOld.augmult());
        assertTrue(Double.isNaN(fromOld.dataNormalisation()));
        // PrivateTraining's plans before the optimiser was a setting wrote "the network's own": read as unset
        Map<String, Object> ownUpdater = new LinkedHashMap<>(m);
        ownUpdater.put("optimizer", "the network's own");
        assertEquals(null, DpSgdSettings.fromMap(ownUpdater).optimizer());
        assertEquals(List.of("target_epsilon", "augmult", "data_normalisation"), fromOld.differences(s));
        // a value of the wrong type or range is named
        Map<String, Object> wrong = new LinkedHashMap<>(m);
        wrong.put("clip_norm", "one");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DpSgdSettings.fromMap(wrong)).getMessage()
                .startsWith("clip_norm must be a number"));
        wrong.put("clip_norm", -1);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DpSgdSettings.fromMap(wrong)).getMessage()
                .startsWith("clip_norm must be finite and > 0"));
        assertEquals(List.of(), DpSgdSettings.fromMap(Map.of()).differences(DpSgdSettings.DEFAULTS));
    }

    @Test
    void theRunIsResolvedFromTheSettings() {
        DpSgdSettings s = DpSgdSettings.builder().expectedBatchSize(250).epochs(2).clipNorm(0.5).physicalBatchSize(32)
                .emaDecay(0.99).delta(1e-7).seed(42).build();
        assertEquals(0.025, s.samplingRate(10_000), 0);
        assertEquals(80, s.steps(0.025)); // ⌈2 / 0.025⌉
        assertEquals(81, s.steps(2.0 / 80.5)); // ⌈80.5⌉
        DpSgdConfig c = s.config(0.025, 1.1, 80, 3);
        assertEquals(List.of(0.025, 1.1, 0.5, 80L, 32, 42L, false, 1e-7, 3, 0.99),
                List.of(c.samplingRate(), c.noiseMultiplier(), c.clipNorm(), c.steps(), c.physicalBatchSize(), c.seed(),
                        c.secureRandom(), c.delta(), c.workers(), c.emaDecay()));
        assertEquals(s, c.settings(), "the engine reads every setting from the record itself");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> s.samplingRate(100)).getMessage()
                .contains("batch_size must be in [1, n = 100], got 250"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> s.config(0.025, 0, 80, 1)).getMessage()
                .contains("sigma = 0 gives no privacy"));
        assertEquals(0.0, DpSgdSettings.builder().settings(s).nonPrivate(true).build().config(0.025, 0, 80, 1).noiseMultiplier());
        assertEquals(0.3, DpSgdSettings.builder().settings(s).samplingRate(0.3).build().samplingRate(10_000), 0); // q given wins
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DpSgdSettings.DEFAULTS.steps(0.1)).getMessage()
                .contains("epochs must be set"));
        assertEquals(null, DpSgdSettings.DEFAULTS.clippedSums());
        assertTrue(full().clippedSums() != null);
    }

    @Test
    void aPlanHashIgnoresSettingsAStateDoesNotHave() {
        Map<String, Object> state = new LinkedHashMap<>();
        for (String key : CheckpointState.PLAN) {
            state.put(key, key.length()); // any values
        }
        String before = CheckpointState.planHash(state);
        // the plan hash of an older checkpoint, which lacks the keys of later settings, is what it was
        Map<String, Object> legacy = new LinkedHashMap<>();
        for (String key : CheckpointState.PLAN) {
            legacy.put(key, state.get(key));
        }
        assertEquals(before, CheckpointState.planHash(legacy));
        state.put("target_epsilon", 3.0); // a setting outside the legacy list is hashed when present
        String with = CheckpointState.planHash(state);
        assertNotEquals(before, with);
        state.put("target_epsilon", 3.5);
        String changed = CheckpointState.planHash(state);
        assertNotEquals(with, changed);
        state.put("not_a_setting", 1); // a key that is no setting is not in the plan
        assertEquals(changed, CheckpointState.planHash(state));
    }
}
