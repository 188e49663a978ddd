package org.dpdl4j.tuning;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.PoissonSampledEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.SelfComposedEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointedMechanismTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * A finished trial is reused when its saved event lists its keys in another order (as another JVM writes it: immutable
     * maps randomise their order per JVM); before the fix, tune --resume re-ran every finished trial.
     */
    @Test
    void aFinishedTrialIsReusedWhateverTheOrderOfItsEventsKeys(@TempDir Path dir) throws Exception {
        PrivacyEvent event = ComposedEvent.of(new SelfComposedEvent(new PoissonSampledEvent(new GaussianEvent(1), 0.01), 40),
                new GaussianEvent(30));
        AtomicInteger runs = new AtomicInteger();
        TrainingMechanism counting = new TrainingMechanism() {
            @Override
            public PrivacyEvent event(Candidate c) {
                return event;
            }

            @Override
            public TrialResult run(Candidate c, long seed, TuningListener listener, int trial) {
                runs.incrementAndGet();
                return new TrialResult(trial, c, null, 0.5, event, 1.0, null);
            }
        };
        Candidate c = new Candidate(Map.of("lr", 0.1));
        new CheckpointedMechanism(counting, dir, "run-1").run(c, 7, TuningListener.NONE, 0);
        Path saved = dir.resolve("trial-0.json");
        @SuppressWarnings("unchecked")
        Map<String, Object> m = JSON.readValue(saved.toFile(), LinkedHashMap.class);
        m.put("event", JSON.writeValueAsString(reversed(JSON.readValue((String) m.get("event"), Map.class))));
        Files.writeString(saved, JSON.writeValueAsString(m));
        TrialResult again = new CheckpointedMechanism(counting, dir, "run-1").run(c, 7, TuningListener.NONE, 0);
        assertEquals(1, runs.get(), "the finished trial was run again");
        assertEquals(0.5, again.score());
        new CheckpointedMechanism(counting, dir, "run-2").run(c, 7, TuningListener.NONE, 0);
        assertEquals(2, runs.get(), "another tuning's trial is never reused");
    }

    /** The same map with every level's keys in reverse order. */
    private static Object reversed(Object o) {
        if (o instanceof Map<?, ?> m) {
            List<Map.Entry<?, ?>> entries = new ArrayList<>(m.entrySet());
            java.util.Collections.reverse(entries);
            Map<Object, Object> out = new LinkedHashMap<>();
            entries.forEach(e -> out.put(e.getKey(), reversed(e.getValue())));
            return out;
        }
        if (o instanceof List<?> l) {
            return l.stream().map(CheckpointedMechanismTest::reversed).toList();
        }
        return o;
    }
}
