package org.dpdl4j.tuning;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.ToDoubleFunction;
import java.util.random.RandomGenerator;

/**
 * A set of hyperparameter candidates: named axes (log-spaced grid, linear grid, categorical, and
 * continuous ranges discretised into {@code rangePoints} values on demand), their product, and a
 * data-independent prior over it (uniform unless {@link #withPrior} is given). Immutable.
 *
 * <p>The prior must not depend on the private data: random search's privacy analysis (Papernot &amp; Steinke,
 * Hyperparameter Tuning with Renyi Differential Privacy, ICLR 2022, arXiv:2110.03620, Section 3) assumes the
 * candidates are drawn from a fixed distribution.
 */
public final class HyperparameterSpace {
    /** The largest product a space may enumerate (for priors and privacy maxima), in candidates. */
    public static final long MAX_CANDIDATES = 1_000_000;

    private final List<Axis> axes;
    private final int rangePoints;
    private final ToDoubleFunction<Candidate> prior;
    private final List<List<Object>> values; // each axis's (discretised) values, computed once
    private final List<Candidate> weighted; // candidates() when a prior is set, else null
    private final double[] cumulative; // the prior's cumulative weights over {@code weighted}

    private HyperparameterSpace(List<Axis> axes, int rangePoints, ToDoubleFunction<Candidate> prior) {
        this.axes = List.copyOf(axes);
        this.rangePoints = rangePoints;
        this.prior = prior;
        this.values = this.axes.stream().map(a -> a.values(rangePoints)).toList();
        if (prior != null) {
            List<Candidate> all = candidates();
            weighted = all;
            cumulative = new double[all.size()];
            double sum = 0;
            for (int i = 0; i < all.size(); i++) {
                double w = prior.applyAsDouble(all.get(i));
                if (!(w >= 0) || Double.isInfinite(w)) {
                    throw new IllegalArgumentException("prior weight must be finite and >= 0, got " + w + " for " + all.get(i));
                }
                sum += w;
                cumulative[i] = sum;
            }
            if (!(sum > 0)) {
                throw new IllegalArgumentException("prior weights must not all be 0");
            }
        } else {
            weighted = null;
            cumulative = null;
        }
    }

    /**
     * A space over the given axes, with uniform prior and 100 points per continuous range.
     *
     * @param axes the axes, at least one, with distinct names; copied
     * @return the space
     * @throws IllegalArgumentException if there are no axes or two share a name
     */
    public static HyperparameterSpace of(List<Axis> axes) {
        if (axes.isEmpty()) {
            throw new IllegalArgumentException("a hyperparameter space needs at least one axis");
        }
        if (axes.stream().map(Axis::name).distinct().count() != axes.size()) {
            throw new IllegalArgumentException("axis names must be distinct, got " + axes.stream().map(Axis::name).toList());
        }
        return new HyperparameterSpace(axes, 100, null);
    }

    /**
     * Convenience for {@link #of(List)}.
     *
     * @param axes the axes, at least one, with distinct names
     * @return the space, with uniform prior and 100 points per continuous range
     * @throws IllegalArgumentException if there are no axes or two share a name
     */
    public static HyperparameterSpace of(Axis... axes) {
        return of(List.of(axes));
    }

    /**
     * This space with continuous ranges discretised into {@code points} values.
     *
     * @param points the number of values per continuous range, &gt;= 2
     * @return a new space with the same axes and prior
     * @throws IllegalArgumentException if points &lt; 2, or (with a prior) a weight becomes invalid
     * @throws IllegalStateException    if a prior is set and the new product exceeds {@value #MAX_CANDIDATES}
     *                                  candidates
     */
    public HyperparameterSpace withRangePoints(int points) {
        if (points < 2) {
            throw new IllegalArgumentException("rangePoints must be >= 2, got " + points);
        }
        return new HyperparameterSpace(axes, points, prior);
    }

    /**
     * This space with a data-independent prior: candidate c is drawn with probability proportional
     * to weight(c). The product is enumerated once (at most {@value #MAX_CANDIDATES} candidates).
     *
     * @param weight a candidate's unnormalised prior weight, finite and &gt;= 0, not all 0; must not depend on the
     *               private data
     * @return a new space with the same axes and this prior
     * @throws IllegalArgumentException if a weight is negative or not finite, or all are 0
     * @throws IllegalStateException    if the product holds more than {@value #MAX_CANDIDATES} candidates
     * @throws NullPointerException     if {@code weight} is null
     */
    public HyperparameterSpace withPrior(ToDoubleFunction<Candidate> weight) {
        return new HyperparameterSpace(axes, rangePoints, Objects.requireNonNull(weight, "weight"));
    }

    /**
     * The axes, in the order given.
     *
     * @return the axes, unmodifiable
     */
    public List<Axis> axes() {
        return axes;
    }

    /**
     * The number of candidates in the (discretised) product.
     *
     * @return the product of the axes' value counts, &gt;= 1
     * @throws ArithmeticException if the product overflows a {@code long}
     */
    public long size() {
        long n = 1;
        for (List<Object> v : values) {
            n = Math.multiplyExact(n, v.size());
        }
        return n;
    }

    /**
     * Every candidate of the product, in axis order (the last axis varies fastest).
     *
     * @return a new list of {@link #size()} candidates
     * @throws IllegalStateException if the product holds more than {@value #MAX_CANDIDATES} candidates
     */
    public List<Candidate> candidates() {
        long size = size();
        if (size > MAX_CANDIDATES) {
            throw new IllegalStateException("the space has " + size + " candidates, more than " + MAX_CANDIDATES
                    + " can be enumerated; use coarser axes");
        }
        List<Candidate> out = new ArrayList<>((int) size);
        int[] index = new int[axes.size()];
        for (long c = 0; c < size; c++) {
            out.add(at(index));
            for (int a = axes.size() - 1; a >= 0; a--) {
                if (++index[a] < values.get(a).size()) {
                    break;
                }
                index[a] = 0;
            }
        }
        return out;
    }

    /**
     * The prior's probability of each candidate of {@link #candidates()}, in that order (summing to 1).
     *
     * @return a new array of probabilities in [0, 1] (all 1/{@link #size()} for the uniform prior)
     * @throws IllegalStateException as {@link #candidates()}
     */
    public double[] priorProbabilities() {
        int n = candidates().size();
        double[] p = new double[n];
        if (cumulative == null) {
            Arrays.fill(p, 1.0 / n);
            return p;
        }
        double total = cumulative[n - 1];
        for (int i = 0; i < n; i++) {
            p[i] = (cumulative[i] - (i == 0 ? 0 : cumulative[i - 1])) / total;
        }
        return p;
    }

    /**
     * The candidate's position in the unit cube, one coordinate per axis: its value's index over
     * (number of values − 1), so log axes are scaled in log space, linear ones linearly, and a
     * categorical axis by the order its values were listed in (0 for a single value).
     *
     * @param c a candidate on this space's grid
     * @return a new array with one coordinate in [0, 1] per axis, in axis order
     * @throws IllegalArgumentException if the candidate is not on this space's grid
     */
    public double[] unitCoordinates(Candidate c) {
        double[] u = new double[axes.size()];
        for (int a = 0; a < u.length; a++) {
            List<Object> v = values.get(a);
            int i = v.indexOf(c.values().get(axes.get(a).name()));
            if (i < 0) {
                throw new IllegalArgumentException(c + " is not on the grid of axis " + axes.get(a).describe());
            }
            u[a] = v.size() == 1 ? 0 : (double) i / (v.size() - 1);
        }
        return u;
    }

    /**
     * The candidate taking each axis's first value (a data-independent default).
     *
     * @return the first candidate of {@link #candidates()}
     */
    public Candidate first() {
        return at(new int[axes.size()]);
    }

    /**
     * One draw from the prior.
     *
     * @param random the source of randomness (its state advances)
     * @return a candidate drawn with the prior's probability (uniform: one independent uniform index per axis)
     */
    public Candidate sample(RandomGenerator random) {
        if (cumulative != null) {
            double u = random.nextDouble() * cumulative[cumulative.length - 1];
            int i = Arrays.binarySearch(cumulative, u);
            i = i >= 0 ? i + 1 : -i - 1;
            return weighted.get(Math.min(i, cumulative.length - 1));
        }
        int[] index = new int[axes.size()];
        for (int a = 0; a < index.length; a++) {
            index[a] = random.nextInt(values.get(a).size());
        }
        return at(index);
    }

    private Candidate at(int[] index) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int a = 0; a < index.length; a++) {
            m.put(axes.get(a).name(), values.get(a).get(index[a]));
        }
        return new Candidate(m);
    }

    /**
     * The axes' descriptions and whether the prior is uniform or custom.
     *
     * @return for example {@code [lr=log:0.025:1:20, optimizer=cat:sgd,adam] (uniform prior)}
     */
    @Override
    public String toString() {
        return axes.stream().map(Axis::describe).toList() + (prior != null ? " (custom prior)" : " (uniform prior)");
    }

    /**
     * Parses the command line's axis syntax: {@code name=log:LO:HI:N} (N log-spaced values),
     * {@code name=lin:LO:HI:N} (N evenly spaced), {@code name=cat:a,b,c} (categorical; numbers stay
     * numbers), {@code name=range:LO:HI} or {@code name=logrange:LO:HI} (continuous, discretised on
     * demand), or {@code name=VALUE} (fixed).
     *
     * @param text one axis specification as written on the command line, such as {@code lr=log:0.025:1:20}
     * @return the parsed axis (older names such as {@code sigma} replaced by their current ones)
     * @throws IllegalArgumentException naming the text on any malformed input
     */
    public static Axis parseAxis(String text) {
        int eq = text.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("--space must look like NAME=log:LO:HI:N, NAME=lin:LO:HI:N, NAME=cat:A,B,"
                    + " NAME=range:LO:HI, NAME=logrange:LO:HI or NAME=VALUE; got '" + text + "'");
        }
        String name = text.substring(0, eq).trim();
        String spec = text.substring(eq + 1).trim();
        String[] p = spec.split(":");
        try {
            switch (p[0]) {
                case "log":
                case "lin":
                    if (p.length != 4) {
                        throw new IllegalArgumentException("--space " + p[0] + " axis needs LO:HI:N, got '" + text + "'");
                    }
                    double lo = Double.parseDouble(p[1]);
                    double hi = Double.parseDouble(p[2]);
                    int n = Integer.parseInt(p[3]);
                    return p[0].equals("log") ? new LogGrid(name, lo, hi, n) : new LinearGrid(name, lo, hi, n);
                case "range":
                case "logrange":
                    if (p.length != 3) {
                        throw new IllegalArgumentException("--space " + p[0] + " axis needs LO:HI, got '" + text + "'");
                    }
                    return new Range(name, Double.parseDouble(p[1]), Double.parseDouble(p[2]), p[0].equals("logrange"));
                case "cat":
                    if (p.length != 2) {
                        throw new IllegalArgumentException("--space cat axis needs cat:A,B,..., got '" + text + "'");
                    }
                    return new Categorical(name, Arrays.stream(p[1].split(",")).map(String::trim).map(HyperparameterSpace::value)
                            .toList());
                default:
                    if (p.length == 1) {
                        return new Categorical(name, List.of(value(spec)));
                    }
                    throw new IllegalArgumentException("--space axis kind must be log, lin, cat, range or logrange, got '" + text + "'");
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--space has a malformed number in '" + text + "'");
        }
    }

    private static Object value(String s) {
        try {
            return Double.parseDouble(s);
        } catch (NumberFormatException e) {
            return s;
        }
    }

    /** One named axis of a space. */
    public sealed interface Axis permits LogGrid, LinearGrid, Categorical, Range {
        /**
         * The axis name (the hyperparameter it sets).
         *
         * @return the current name of the hyperparameter ({@link Candidate#axisName})
         */
        String name();

        /**
         * Its values; continuous ranges are discretised into {@code rangePoints} values.
         *
         * @param rangePoints the number of values of a continuous range (&gt;= 2 in a space; ignored by grids and
         *                    categorical axes)
         * @return the axis's values, each a {@link Double} or a {@link String}, in order
         */
        List<Object> values(int rangePoints);

        /**
         * A short description such as {@code lr=log:0.025:1:20}.
         *
         * @return the axis in the command line's syntax ({@link HyperparameterSpace#parseAxis})
         */
        String describe();
    }

    /**
     * n log-spaced values from lo to hi inclusive: lo·(hi/lo)^{i/(n−1)}, i = 0..n−1.
     *
     * @param name the axis name (older names are replaced by their current ones)
     * @param lo   0 &lt; lo ≤ hi, finite
     * @param hi   hi ≥ lo, finite
     * @param n    n ≥ 1 (n = 1 gives lo)
     */
    public record LogGrid(String name, double lo, double hi, int n) implements Axis {
        /**
         * Checks the range and the count.
         *
         * @param name the axis name: letters, digits, {@code _}, {@code .} or {@code -}, starting with a letter or {@code _}
         * @param lo   0 &lt; lo ≤ hi, finite
         * @param hi   hi ≥ lo, finite
         * @param n    n ≥ 1
         * @throws IllegalArgumentException on an invalid name, range or count
         */
        public LogGrid {
            name = Candidate.axisName(checkName(name));
            if (!(lo > 0 && hi >= lo) || Double.isInfinite(hi) || n < 1) {
                throw new IllegalArgumentException("log axis '" + name + "' needs 0 < LO <= HI finite and N >= 1, got "
                        + lo + ":" + hi + ":" + n);
            }
        }

        /**
         * The n log-spaced values, lo first and exactly hi last (n = 1 gives lo alone).
         *
         * @param rangePoints ignored (a grid has its own n)
         * @return a new list of n {@link Double}s
         */
        @Override
        public List<Object> values(int rangePoints) {
            List<Object> v = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                v.add(n == 1 ? lo : i == n - 1 ? hi : lo * Math.pow(hi / lo, (double) i / (n - 1)));
            }
            return v;
        }

        @Override
        public String describe() {
            return name + "=log:" + lo + ":" + hi + ":" + n;
        }
    }

    /**
     * n evenly spaced values from lo to hi inclusive: lo + (hi − lo)·i/(n − 1), i = 0..n−1.
     *
     * @param name the axis name (older names are replaced by their current ones)
     * @param lo   lo ≤ hi, both finite
     * @param hi   hi ≥ lo, finite
     * @param n    n ≥ 1 (n = 1 gives lo)
     */
    public record LinearGrid(String name, double lo, double hi, int n) implements Axis {
        /**
         * Checks the range and the count.
         *
         * @param name the axis name: letters, digits, {@code _}, {@code .} or {@code -}, starting with a letter or {@code _}
         * @param lo   lo ≤ hi, finite
         * @param hi   hi ≥ lo, finite
         * @param n    n ≥ 1
         * @throws IllegalArgumentException on an invalid name, range or count
         */
        public LinearGrid {
            name = Candidate.axisName(checkName(name));
            if (!(hi >= lo) || Double.isInfinite(lo) || Double.isInfinite(hi) || n < 1) {
                throw new IllegalArgumentException("lin axis '" + name + "' needs finite LO <= HI and N >= 1, got "
                        + lo + ":" + hi + ":" + n);
            }
        }

        /**
         * The n evenly spaced values, lo first and exactly hi last (n = 1 gives lo alone).
         *
         * @param rangePoints ignored (a grid has its own n)
         * @return a new list of n {@link Double}s
         */
        @Override
        public List<Object> values(int rangePoints) {
            List<Object> v = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                v.add(n == 1 ? lo : i == n - 1 ? hi : lo + (hi - lo) * i / (n - 1));
            }
            return v;
        }

        @Override
        public String describe() {
            return name + "=lin:" + lo + ":" + hi + ":" + n;
        }
    }

    /**
     * A finite list of values (Doubles or Strings).
     *
     * @param name   the axis name (older names are replaced by their current ones)
     * @param values at least one value; copied
     */
    public record Categorical(String name, List<Object> values) implements Axis {
        /**
         * Checks and copies the values.
         *
         * @param name   the axis name: letters, digits, {@code _}, {@code .} or {@code -}, starting with a letter or {@code _}
         * @param values at least one value, each a {@link Double} or a {@link String}
         * @throws IllegalArgumentException if the name is invalid, there are no values, or one is neither Double nor String
         * @throws NullPointerException     if {@code values} is null or holds null
         */
        public Categorical {
            name = Candidate.axisName(checkName(name));
            values = List.copyOf(values);
            if (values.isEmpty()) {
                throw new IllegalArgumentException("categorical axis '" + name + "' needs at least one value");
            }
            for (Object v : values) {
                if (!(v instanceof Double) && !(v instanceof String)) {
                    throw new IllegalArgumentException("categorical axis '" + name + "' values must be Double or String, got " + v);
                }
            }
        }

        /**
         * The listed values, in order.
         *
         * @param rangePoints ignored
         * @return the (unmodifiable) list of values
         */
        @Override
        public List<Object> values(int rangePoints) {
            return values;
        }

        @Override
        public String describe() {
            return name + "=cat:" + String.join(",", values.stream().map(String::valueOf).toList());
        }
    }

    /**
     * A continuous interval [lo, hi], discretised on demand into evenly spaced (or, with
     * {@code log}, log-spaced) points, both ends included.
     *
     * @param name the axis name (older names are replaced by their current ones)
     * @param lo   the lower end, finite, &lt; hi (and &gt; 0 when {@code log})
     * @param hi   the upper end, finite
     * @param log  whether the points are log-spaced
     */
    public record Range(String name, double lo, double hi, boolean log) implements Axis {
        /**
         * Checks the interval.
         *
         * @param name the axis name: letters, digits, {@code _}, {@code .} or {@code -}, starting with a letter or {@code _}
         * @param lo   the lower end, finite, &lt; hi (and &gt; 0 when {@code log})
         * @param hi   the upper end, finite
         * @param log  whether the points are log-spaced
         * @throws IllegalArgumentException on an invalid name or interval
         */
        public Range {
            name = Candidate.axisName(checkName(name));
            if (!(hi > lo) || Double.isInfinite(lo) || Double.isInfinite(hi) || (log && !(lo > 0))) {
                throw new IllegalArgumentException("range axis '" + name + "' needs finite LO < HI" + (log ? " and LO > 0" : "")
                        + ", got " + lo + ":" + hi);
            }
        }

        /**
         * The interval discretised into {@code rangePoints} points, both ends included: a {@link LogGrid} when
         * {@code log}, else a {@link LinearGrid}.
         *
         * @param rangePoints the number of points, &gt;= 1 (a space uses &gt;= 2; 1 gives lo alone)
         * @return a new list of {@code rangePoints} {@link Double}s
         * @throws IllegalArgumentException if {@code rangePoints} &lt; 1
         */
        @Override
        public List<Object> values(int rangePoints) {
            return log ? new LogGrid(name, lo, hi, rangePoints).values(0) : new LinearGrid(name, lo, hi, rangePoints).values(0);
        }

        @Override
        public String describe() {
            return name + "=" + (log ? "logrange:" : "range:") + lo + ":" + hi;
        }
    }

    private static String checkName(String name) {
        if (name == null || !name.matches("[A-Za-z_][A-Za-z0-9_.-]*")) {
            throw new IllegalArgumentException("axis name must be letters, digits, _, . or -, got '" + name + "'");
        }
        return name;
    }
}
