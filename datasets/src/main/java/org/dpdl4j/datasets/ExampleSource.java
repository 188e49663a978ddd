package org.dpdl4j.datasets;

/**
 * Labelled examples read by index, so that a DP-SGD step reads only the rows of its Poisson batch: in memory
 * ({@link LabeledData}) or from files ({@link PackedShards}). Implementations are thread-safe for {@link #read} and give
 * the same examples, in the same layout, for the same indices on every call, so that a seed gives the same run on every
 * source.
 */
public interface ExampleSource extends AutoCloseable {
    /** @return the number of examples n ≥ 0 */
    int size();

    /** @return the number of classes (the width of the one-hot labels) */
    int numClasses();

    /** @return one example's shape in what {@link #read} returns, as {@link LabeledData#exampleShape()} gives it */
    long[] exampleShape();

    /**
     * The examples at the given indices, in that order, as in-memory data of the source's layout.
     *
     * @param sortedIndices distinct indices in [0, n), ascending (a Poisson batch); may be empty
     * @return the examples (features, one-hot labels and masks, if any)
     * @throws IllegalArgumentException if an index is outside [0, n) or the indices are not ascending
     * @throws java.io.UncheckedIOException if the files cannot be read
     */
    LabeledData read(int[] sortedIndices);

    /** Releases the files or mappings; in-memory data holds none. */
    @Override
    void close();
}
