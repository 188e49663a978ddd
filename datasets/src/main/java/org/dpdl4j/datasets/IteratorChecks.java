package org.dpdl4j.datasets;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.nd4j.linalg.dataset.api.DataSetPreProcessor;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * What a {@link DataSetIterator} must not do for DP-SGD to count each person once: replay or resample examples (then n
 * counts copies and the guarantee is for groups), or hand them over through a pre-processor whose values are statistics
 * of the private data (a normaliser fitted on it) or of the batch (then one example's record depends on others).
 *
 * <p>The iterator is looked at with the iterators it wraps (every field declared of a {@link DataSetIterator} type,
 * through wrappers of wrappers: DL4J's asynchronous, shielding, early-terminating, caching and epoch wrappers, and one's
 * own; an iterator held in a list or behind another interface is not seen) and the pre-processors of each (its
 * {@code getPreProcessor()}, its fields of a {@link DataSetPreProcessor} type, and the members of DL4J's composite
 * pre-processors). Nothing is read from the data: a replay that no class shows is found by its identical records
 * ({@code PackedExamples.duplicates}), and only exact copies are.
 */
public final class IteratorChecks {
    /** Iterators (and their subclasses) that yield an example more than once in one pass. */
    static final Set<String> REPLAYING = Set.of(
            "org.nd4j.linalg.dataset.api.iterator.MultipleEpochsIterator",      // passes over its iterator several times
            "org.deeplearning4j.datasets.iterator.MultipleEpochsIterator",
            "org.nd4j.linalg.dataset.api.iterator.SamplingDataSetIterator",    // batches drawn independently: repeats
            "org.deeplearning4j.datasets.iterator.SamplingDataSetIterator",
            "org.nd4j.linalg.dataset.api.iterator.KFoldIterator",              // each example in k − 1 training folds
            "org.deeplearning4j.datasets.iterator.utilty.BenchmarkDataSetIterator"); // one batch, again and again
    /** Parallel iterators that replay a producer that ran out, when their inequality handling is RESET. */
    private static final Set<String> RESETTING = Set.of(
            "org.deeplearning4j.datasets.iterator.parallel.BaseParallelDataSetIterator");
    /** Pre-processors whose output for an example is a fixed function of that example alone (exact classes). */
    static final Set<String> FIXED = Set.of(
            "org.nd4j.linalg.dataset.api.preprocessor.ImagePreProcessingScaler",      // x / 2^bits, into a set range
            "org.nd4j.linalg.dataset.api.preprocessor.VGG16ImagePreProcessor",       // VGG's published channel means
            "org.nd4j.linalg.dataset.api.preprocessor.LabelLastTimeStepPreProcessor",
            "org.nd4j.linalg.dataset.api.preprocessor.PermuteDataSetPreProcessor",
            "org.nd4j.linalg.dataset.api.preprocessor.ImageFlatteningDataSetPreProcessor",
            "org.nd4j.linalg.dataset.api.preprocessor.RGBtoGrayscaleDataSetPreProcessor",
            "org.nd4j.linalg.dataset.api.preprocessor.CropAndResizeDataSetPreProcessor",
            "org.deeplearning4j.datasets.iterator.DummyPreProcessor");
    /** Pre-processors that hold others (their members are checked). */
    private static final Set<String> COMPOSITE = Set.of(
            "org.nd4j.linalg.dataset.api.preprocessor.CompositeDataSetPreProcessor",
            "org.deeplearning4j.datasets.iterator.CombinedPreProcessor");
    /** Pre-processors whose values are statistics of the data they were fitted on. */
    private static final Set<String> FITTED = Set.of(
            "org.nd4j.linalg.dataset.api.preprocessor.AbstractDataSetNormalizer",
            "org.nd4j.linalg.dataset.api.preprocessor.AbstractNormalizer");

    private IteratorChecks() {
    }

    /**
     * Refuses an iterator that replays or resamples examples, by the class that does (before anything is read).
     *
     * @param data the iterator, as given
     * @throws IllegalArgumentException naming the iterator's class (and the wrapper it is in) and what to do instead
     */
    public static void refuseReplaying(DataSetIterator data) {
        for (Object it : chain(data)) {
            String replaying = matching(it.getClass(), REPLAYING);
            boolean resetting = matching(it.getClass(), RESETTING) != null && "RESET".equals(String.valueOf(field(it, "inequalityHandling")));
            if (replaying != null || resetting) {
                throw new IllegalArgumentException("the DataSetIterator " + describe(data, it) + " yields examples more than once ("
                        + (resetting ? "it resets a producer that ran out" : replaying.substring(replaying.lastIndexOf('.') + 1)
                        + " repeats or resamples them") + "): DP-SGD counts every example it reads as one person, so the "
                        + "guarantee would be for groups of copies, not for one person. Give an iterator that passes over the "
                        + "data once (the epochs setting makes the passes, with Poisson sampling)");
            }
        }
    }

    /**
     * The pre-processors an iterator applies that are not a fixed function of each example alone and are not declared:
     * normalisers fitted on data (DL4J's {@code NormalizerStandardize}, {@code NormalizerMinMaxScaler}, …: their means,
     * deviations or ranges are statistics of the data), and any pre-processor of a class not known to be fixed (it may
     * hold such statistics, or compute them over the batch it is given).
     *
     * @param data     the iterator, as given
     * @param declared pre-processors the caller declared public (their statistics come from no private data, and each
     *                 example's output depends on that example alone), by identity; may be empty
     * @return a sentence per refused pre-processor, naming its class, where it is and what it holds; empty when none
     */
    public static List<String> undeclaredPreProcessors(DataSetIterator data, Collection<DataSetPreProcessor> declared) {
        Set<Object> ok = Collections.newSetFromMap(new IdentityHashMap<>());
        ok.addAll(declared);
        List<String> problems = new ArrayList<>();
        Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Object it : chain(data)) {
            List<DataSetPreProcessor> found = new ArrayList<>();
            if (it instanceof DataSetIterator d) {
                try {
                    found.add(d.getPreProcessor());
                } catch (RuntimeException e) {
                    // an iterator that does not say: its fields are read below
                }
            }
            for (Object f : fieldsOf(it, DataSetPreProcessor.class)) {
                found.add((DataSetPreProcessor) f);
            }
            for (DataSetPreProcessor p : found) {
                check(p, ok, seen, describe(data, it), problems);
            }
        }
        return problems;
    }

    private static void check(DataSetPreProcessor p, Set<Object> ok, Set<Object> seen, String where, List<String> problems) {
        if (p == null || !seen.add(p) || ok.contains(p)) {
            return;
        }
        String name = p.getClass().getName();
        if (COMPOSITE.contains(name)) {
            for (Object f : fieldsOf(p, Object.class)) {
                if (f instanceof DataSetPreProcessor[] members) {
                    for (DataSetPreProcessor m : members) {
                        check(m, ok, seen, where, problems);
                    }
                } else if (f instanceof Collection<?> members) {
                    for (Object m : members) {
                        if (m instanceof DataSetPreProcessor q) {
                            check(q, ok, seen, where, problems);
                        }
                    }
                }
            }
            return;
        }
        if (FIXED.contains(name)) {
            return;
        }
        String simple = p.getClass().getSimpleName().isEmpty() ? name : p.getClass().getSimpleName();
        problems.add(matching(p.getClass(), FITTED) != null
                ? "the pre-processor " + simple + " of the DataSetIterator " + where + " is a normaliser fitted on data: its "
                + "statistics (means, deviations, ranges) are computed from the examples it was fitted on, and if those are the "
                + "private data, no privacy guarantee covers them. Remove it and let the network standardise its input with "
                + "statistics released privately (dataNormalisation(σ) with a FeatureStandardization first layer), or, if its "
                + "statistics come from public data only, declare it with publicPreProcessor(it)"
                : "the pre-processor " + name + " of the DataSetIterator " + where + " is of a kind dpdl4j does not know: it may "
                + "hold statistics of the data or compute them over each batch (then one example's values depend on the "
                + "others), which no privacy guarantee covers. If it transforms each example by itself with fixed, public "
                + "constants, declare it with publicPreProcessor(it); else remove it");
    }

    /** The iterator and every iterator it wraps, outermost first (each object once). */
    static List<Object> chain(DataSetIterator data) {
        List<Object> out = new ArrayList<>();
        Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        java.util.ArrayDeque<Object> todo = new java.util.ArrayDeque<>(List.of(data));
        while (!todo.isEmpty() && out.size() < 64) {
            Object it = todo.poll();
            if (it == null || !seen.add(it)) {
                continue;
            }
            out.add(it);
            todo.addAll(fieldsOf(it, DataSetIterator.class));
        }
        return out;
    }

    /** The non-null values of an object's instance fields (its class's and superclasses') of a type assignable to {@code type}. */
    private static List<Object> fieldsOf(Object o, Class<?> type) {
        List<Object> values = new ArrayList<>();
        for (Class<?> c = o.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()
                        || !(type.isAssignableFrom(f.getType()) || type == Object.class)) {
                    continue;
                }
                try {
                    f.setAccessible(true);
                    Object v = f.get(o);
                    if (v != null && type.isInstance(v)) {
                        values.add(v);
                    }
                } catch (RuntimeException | IllegalAccessException e) {
                    // a field that cannot be read (a module's): nothing to look at
                }
            }
        }
        return values;
    }

    private static Object field(Object o, String name) {
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(o);
            } catch (NoSuchFieldException e) {
                // the superclass's, maybe
            } catch (RuntimeException | IllegalAccessException e) {
                return null;
            }
        }
        return null;
    }

    /** The name in {@code names} of the class or one of its superclasses, or null. */
    private static String matching(Class<?> c, Set<String> names) {
        for (; c != null; c = c.getSuperclass()) {
            if (names.contains(c.getName())) {
                return c.getName();
            }
        }
        return null;
    }

    private static String describe(DataSetIterator outer, Object it) {
        return it == outer ? "(" + it.getClass().getName() + ")"
                : "(" + it.getClass().getName() + ", inside " + outer.getClass().getName() + ")";
    }
}
