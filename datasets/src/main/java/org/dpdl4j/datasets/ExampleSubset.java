package org.dpdl4j.datasets;

import java.util.Arrays;

/**
 * Some examples of another source, by index: what a split, a Poisson subset or a random subset of data read by index is,
 * so that no example is copied before a step reads it. Reads map through to the parent, which stays open as long as the
 * subset is used; closing the subset does not close the parent (it may have other subsets). Serializable when its
 * parent is (data in memory, packed shards), so that a cluster's executors read a trial's split by index too.
 */
final class ExampleSubset implements ExampleSource, java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final ExampleSource parent; // serializable if the parent is (packed shards travel as a reference)
    private final int[] indices;
    private final boolean ascending;

    /** @param indices distinct rows of {@code parent}, in any order (checked) */
    ExampleSubset(ExampleSource parent, int[] indices) {
        int[] sorted = indices.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            if (sorted[i] < 0 || sorted[i] >= parent.size() || i > 0 && sorted[i] == sorted[i - 1]) {
                throw new IllegalArgumentException("a subset's indices must be distinct and in [0, " + parent.size() + "), got "
                        + sorted[i] + (i > 0 && sorted[i] == sorted[i - 1] ? " twice" : ""));
            }
        }
        this.parent = parent;
        this.indices = indices.clone();
        this.ascending = Arrays.equals(sorted, indices);
    }

    @Override
    public int size() {
        return indices.length;
    }

    @Override
    public int numClasses() {
        return parent.numClasses();
    }

    @Override
    public long[] exampleShape() {
        return parent.exampleShape();
    }

    @Override
    public LabeledData read(int[] sortedIndices) {
        Indices.checkAscending(sortedIndices, indices.length);
        int[] mapped = new int[sortedIndices.length];
        for (int i = 0; i < mapped.length; i++) {
            mapped[i] = indices[sortedIndices[i]];
        }
        if (ascending) {
            return parent.read(mapped);
        }
        // the parent reads ascending rows; put them back in this subset's order
        Integer[] order = new Integer[mapped.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Integer.compare(mapped[a], mapped[b]));
        int[] sorted = new int[mapped.length];
        int[] where = new int[mapped.length]; // where[i]: the row of the parent's read that holds example i
        for (int r = 0; r < order.length; r++) {
            sorted[r] = mapped[order[r]];
            where[order[r]] = r;
        }
        return parent.read(sorted).rows(where);
    }

    @Override
    public ExampleSource subset(int[] indices) {
        int[] mapped = new int[indices.length];
        for (int i = 0; i < mapped.length; i++) {
            if (indices[i] < 0 || indices[i] >= this.indices.length) {
                throw new IllegalArgumentException("subset index " + indices[i] + " at position " + i + " is outside [0, "
                        + this.indices.length + ")");
            }
            mapped[i] = this.indices[indices[i]];
        }
        return new ExampleSubset(parent, mapped);
    }

    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return indices.length + " examples of " + parent;
    }

    @Override
    public void checkUnchanged() {
        parent.checkUnchanged();
    }
}
