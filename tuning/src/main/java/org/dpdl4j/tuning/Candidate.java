package org.dpdl4j.tuning;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * One point of a {@link HyperparameterSpace}: an immutable assignment of a value to every axis,
 * kept in axis-name order. Values are {@link Double} (grids and ranges) or {@link String}
 * (categorical axes). The clipping norm C is the axis {@code clip_norm} and the noise multiplier σ the axis
 * {@code noise_multiplier}, and the learning rate the axis {@code learning_rate}, as in the sidecar; their older names
 * {@code clip}, {@code sigma} and {@code lr} are read as these everywhere (maps, files written before the rename,
 * lookups, {@code --space lr=…}), see {@link #axisName}.
 *
 * @param values axis name → value ({@link Double} or {@link String}); copied into axis-name order, older axis names
 *               replaced by their current ones
 */
public record Candidate(Map<String, Object> values) implements java.io.Serializable {
    /**
     * Checks and copies the values into axis-name order, older axis names replaced by their current ones
     * ({@link #axisName}).
     *
     * @param values axis name → value, each a {@link Double} or a {@link String}; not null
     * @throws IllegalArgumentException if a value is neither a Double nor a String, or an axis is given under its
     *                                  current and its older name
     */
    public Candidate {
        TreeMap<String, Object> copy = new TreeMap<>();
        for (Map.Entry<String, Object> e : values.entrySet()) {
            if (!(e.getValue() instanceof Double) && !(e.getValue() instanceof String)) {
                throw new IllegalArgumentException("candidate value of '" + e.getKey() + "' must be a Double or a String, got "
                        + e.getValue());
            }
            if (copy.put(axisName(e.getKey()), e.getValue()) != null) {
                throw new IllegalArgumentException("candidate gives '" + axisName(e.getKey()) + "' twice (as '" + e.getKey()
                        + "' and under its other name): " + values);
            }
        }
        values = Collections.unmodifiableMap(copy);
    }

    /**
     * An axis's current name: {@code clip_norm} for {@code clip}, {@code noise_multiplier} for {@code sigma},
     * {@code learning_rate} for {@code lr} (the settings' key), any other name unchanged.
     *
     * @param name an axis name, current or older
     * @return the name candidates, spaces and releases use
     */
    public static String axisName(String name) {
        return switch (name) {
            case "clip" -> "clip_norm";
            case "sigma" -> "noise_multiplier";
            case "lr" -> "learning_rate";
            default -> name;
        };
    }

    /**
     * Whether the candidate assigns this axis (current or older name).
     *
     * @param axis an axis name, current or older
     * @return true if the candidate has a value for the axis
     */
    public boolean has(String axis) {
        return values.containsKey(axisName(axis));
    }

    /**
     * The numeric value of an axis.
     *
     * @param axis an axis name, current or older
     * @return the axis's value
     * @throws IllegalArgumentException if the axis is missing or categorical
     */
    public double number(String axis) {
        if (!(values.get(axisName(axis)) instanceof Double d)) {
            throw new IllegalArgumentException("hyperparameter '" + axis + "' must be numeric in " + this);
        }
        return d;
    }

    /**
     * The numeric value of an axis, or {@code fallback} when the candidate does not assign it.
     *
     * @param axis     an axis name, current or older
     * @param fallback the value returned when the axis is absent
     * @return the axis's value, or {@code fallback}
     * @throws IllegalArgumentException if the axis is present but categorical
     */
    public double number(String axis, double fallback) {
        return has(axis) ? number(axis) : fallback;
    }

    /**
     * The value of an axis as text, or {@code fallback} when absent.
     *
     * @param axis     an axis name, current or older
     * @param fallback the text returned when the axis is absent; may be null
     * @return {@link String#valueOf(Object)} of the axis's value, or {@code fallback}
     */
    public String text(String axis, String fallback) {
        return has(axis) ? String.valueOf(values.get(axisName(axis))) : fallback;
    }

    /**
     * This candidate with one axis set (added or replaced).
     *
     * @param axis  an axis name, current or older (stored under its current name)
     * @param value the value, a {@link Double} or a {@link String}
     * @return a new candidate; this one is unchanged
     * @throws IllegalArgumentException if the value is neither a Double nor a String
     */
    public Candidate with(String axis, Object value) {
        Map<String, Object> m = new TreeMap<>(values);
        m.put(axisName(axis), value);
        return new Candidate(m);
    }

    /**
     * A JSON-ready copy.
     *
     * @return a new, modifiable map of axis name → value, in axis-name order
     */
    public Map<String, Object> toMap() {
        return new LinkedHashMap<>(values);
    }

    /**
     * The values as {@code name=value} pairs in axis-name order, separated by commas, numbers with 6 significant digits.
     *
     * @return for example {@code lr=0.100000, optimizer=sgd}
     */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, Object> e : values.entrySet()) {
            if (b.length() > 0) {
                b.append(", ");
            }
            b.append(e.getKey()).append('=');
            b.append(e.getValue() instanceof Double d ? String.format("%.6g", d) : e.getValue());
        }
        return b.toString();
    }
}
