package org.dpdl4j.accounting;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Reading events back from the map form produced by {@link PrivacyEvent#toMap()}. */
public final class PrivacyEvents {
    private PrivacyEvents() {
    }

    /**
     * Rebuilds an event from {@link PrivacyEvent#toMap()} output (for example after a JSON
     * round-trip, where numbers may come back as any {@link Number}).
     *
     * @param map the event's map: a string {@code "type"} and that event's fields, nested events as maps; not null
     * @return the event
     * @throws IllegalArgumentException on an unknown {@code type}, a missing or ill-typed field, or a value outside the
     *                                  event's range (as its constructor checks)
     */
    public static PrivacyEvent fromMap(Map<?, ?> map) {
        Object type = map.get("type");
        if (!(type instanceof String t)) {
            throw new IllegalArgumentException("event map needs a string 'type', got " + map);
        }
        return switch (t) {
            case "gaussian" -> new GaussianEvent(number(map, "noise_multiplier"));
            case "laplace" -> new LaplaceEvent(number(map, "scale"));
            case "poisson_sampled" -> new PoissonSampledEvent(child(map), number(map, "sampling_rate"));
            case "self_composed" -> new SelfComposedEvent(child(map), count(map));
            case "composed" -> new ComposedEvent(children(map));
            case "pointwise_max" -> new PointwiseMaxEvent(children(map));
            case "pure_dp" -> new PureDpEvent(number(map, "epsilon"));
            case "zcdp" -> new ZcdpEvent(number(map, "rho"));
            case "repeat_and_select" -> new RepeatAndSelectEvent(child(map),
                    RepetitionDistribution.fromMap(asMap(map.get("distribution"))));
            case "adaptive_repeat_and_select" -> new AdaptiveRepeatAndSelectEvent(child(map),
                    RepetitionDistribution.fromMap(asMap(map.get("distribution"))), number(map, "lower_bound"),
                    number(map, "upper_bound"));
            case "subsampled_tuning" -> new SubsampledTuningEvent(fromMap(asMap(map.get("tuning"))),
                    fromMap(asMap(map.get("final_run"))), number(map, "tune_fraction"),
                    variant(map));
            case "distributed_discrete_gaussian" -> new DistributedDiscreteGaussianEvent(number(map, "l2_sensitivity"),
                    number(map, "l1_sensitivity"), number(map, "local_sigma"), integer(map, "min_clients"),
                    integer(map, "max_clients"), integer(map, "dimension"));
            case "non_private" -> new NonPrivateEvent();
            case "no_op" -> new NoOpEvent();
            default -> throw new IllegalArgumentException("unknown event type '" + t + "'");
        };
    }

    /**
     * A map in the order its keys are given ({@code type} first), for {@code toMap}: files that hold an event (ledgers,
     * sidecars, {@code tuning.json}) then write the same bytes for the same event in every JVM, which {@code Map.of}'s
     * per-JVM iteration order does not.
     */
    static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], java.util.Objects.requireNonNull(keysAndValues[i + 1], (String) keysAndValues[i]));
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    private static List<PrivacyEvent> children(Map<?, ?> map) {
        if (!(map.get("events") instanceof List<?> items)) {
            throw new IllegalArgumentException("event needs a list 'events', got " + map);
        }
        List<PrivacyEvent> events = new ArrayList<>();
        for (Object item : items) {
            events.add(fromMap(asMap(item)));
        }
        return events;
    }

    private static PrivacyEvent child(Map<?, ?> map) {
        return fromMap(asMap(map.get("event")));
    }

    private static Map<?, ?> asMap(Object o) {
        if (!(o instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException("expected a map, got " + o);
        }
        return m;
    }

    private static SubsampledTuningEvent.Variant variant(Map<?, ?> map) {
        double v = number(map, "variant");
        if (v != 1 && v != 2) {
            throw new IllegalArgumentException("event field 'variant' must be 1 or 2, got " + v);
        }
        return SubsampledTuningEvent.Variant.of((int) v);
    }

    private static long count(Map<?, ?> map) {
        double c = number(map, "count");
        if (c != Math.rint(c) || c < 0 || c > 9.007199254740992E15) {
            throw new IllegalArgumentException("event field 'count' must be a non-negative integer, got " + c);
        }
        return (long) c;
    }

    private static int integer(Map<?, ?> map, String key) {
        double c = number(map, key);
        if (c != Math.rint(c) || Math.abs(c) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("event field '" + key + "' must be an integer, got " + c);
        }
        return (int) c;
    }

    private static double number(Map<?, ?> map, String key) {
        Object v = map.get(key);
        if (!(v instanceof Number n)) {
            throw new IllegalArgumentException("event field '" + key + "' must be a number, got " + v);
        }
        return n.doubleValue();
    }
}
