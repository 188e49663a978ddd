package org.dpdl4j.datasets;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.commons.math3.distribution.GammaDistribution;
import org.apache.commons.math3.random.RandomGenerator;
import org.apache.commons.math3.random.Well19937c;

/**
 * Splits one dataset among n simulated clients, for experiments with distributed procedures such as
 * DP-HYPE (Liebenow et al. 2025, arXiv:2510.04902, Sections VI.C and VI.D). Each method returns, per client,
 * the sorted row indices it holds; every index is held by exactly one client.
 */
public final class ClientPartition {
    private ClientPartition() {
    }

    /**
     * iid shards (Sec. VI.C): a seeded uniform permutation cut into n shards whose sizes differ by at most one.
     *
     * @param size    the number of examples, ≥ n
     * @param clients the number of clients n, in [1, size]
     * @param seed    the seed of the permutation (a {@code Well19937c} generator); any value
     * @return n arrays, one per client, of ascending row indices in [0, size); each holds ⌊size/n⌋ or ⌈size/n⌉ indices
     * @throws IllegalArgumentException if n &lt; 1 or n &gt; size
     */
    public static int[][] iid(int size, int clients, long seed) {
        checkClients(size, clients);
        int[] perm = shuffled(identity(size), new Well19937c(seed));
        int[][] out = new int[clients][];
        for (int c = 0; c < clients; c++) {
            int from = (int) ((long) size * c / clients);
            int to = (int) ((long) size * (c + 1) / clients);
            out[c] = Arrays.copyOfRange(perm, from, to);
            Arrays.sort(out[c]);
        }
        return out;
    }

    /**
     * Dirichlet label partition (Sec. VI.D and App. B): for each label, proportions
     * (p_1, …, p_n) ~ Dirichlet(α, …, α) are drawn, the label's examples are shuffled, and client i
     * receives the next round(m·(p_1+…+p_i)) − round(m·(p_1+…+p_{i−1})) of them (m examples with the
     * label). Small α concentrates a label on few clients and makes client sizes unequal; large α
     * approaches iid. Clients may end up empty for small α.
     *
     * @param labels  the class index of every example, each in [0, numClasses) (an example with a negative label is held by
     *                no client)
     * @param clients the number of clients n, in [1, labels.length]
     * @param alpha   the concentration α, finite and &gt; 0 (the paper uses 30, 5 and 0.5)
     * @param seed    the seed of the shuffles and Gamma draws (a {@code Well19937c} generator); any value
     * @return n arrays, one per client, of ascending row indices in [0, labels.length); some may be empty
     * @throws IllegalArgumentException if n is outside [1, labels.length] or α is not finite and &gt; 0
     */
    public static int[][] dirichlet(int[] labels, int clients, double alpha, long seed) {
        checkClients(labels.length, clients);
        if (!(alpha > 0) || Double.isInfinite(alpha)) {
            throw new IllegalArgumentException("Dirichlet concentration alpha must be finite and > 0, got " + alpha);
        }
        RandomGenerator random = new Well19937c(seed);
        GammaDistribution gamma = new GammaDistribution(random, alpha, 1);
        int classes = Arrays.stream(labels).max().orElse(-1) + 1;
        List<List<Integer>> held = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            held.add(new ArrayList<>());
        }
        for (int label = 0; label < classes; label++) {
            final int l = label;
            int[] members = shuffled(java.util.stream.IntStream.range(0, labels.length).filter(i -> labels[i] == l).toArray(), random);
            double[] p = dirichletDraw(gamma, clients);
            double cumulative = 0;
            int from = 0;
            for (int c = 0; c < clients; c++) {
                cumulative += p[c];
                int to = c == clients - 1 ? members.length : (int) Math.round(members.length * Math.min(1, cumulative));
                for (int i = from; i < to; i++) {
                    held.get(c).add(members[i]);
                }
                from = Math.max(from, to);
            }
        }
        int[][] out = new int[clients][];
        for (int c = 0; c < clients; c++) {
            out[c] = held.get(c).stream().mapToInt(Integer::intValue).sorted().toArray();
        }
        return out;
    }

    /**
     * The clients' datasets for the given index sets: one copy of the selected rows per index set ({@link LabeledData#rows}).
     *
     * @param data    the whole dataset
     * @param indices one array of row indices per client, each index in [0, data.size()), e.g. from {@link #iid} or
     *                {@link #dirichlet}
     * @return one dataset per client, in the order of {@code indices}
     */
    public static List<LabeledData> shards(LabeledData data, int[][] indices) {
        List<LabeledData> out = new ArrayList<>();
        for (int[] idx : indices) {
            out.add(data.rows(idx));
        }
        return out;
    }

    /** Normalised independent Gamma(α, 1) draws: a Dirichlet(α, …, α) vector. */
    private static double[] dirichletDraw(GammaDistribution gamma, int n) {
        double[] p = new double[n];
        double total = 0;
        while (!(total > 0)) { // with tiny α every draw can underflow to 0; draw again
            total = 0;
            for (int i = 0; i < n; i++) {
                p[i] = gamma.sample();
                total += p[i];
            }
        }
        for (int i = 0; i < n; i++) {
            p[i] /= total;
        }
        return p;
    }

    private static void checkClients(int size, int clients) {
        if (clients < 1 || clients > size) {
            throw new IllegalArgumentException("clients n must be in [1, " + size + "] (the number of examples), got " + clients);
        }
    }

    private static int[] identity(int n) {
        return java.util.stream.IntStream.range(0, n).toArray();
    }

    private static int[] shuffled(int[] a, RandomGenerator random) {
        for (int i = a.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
        return a;
    }
}
