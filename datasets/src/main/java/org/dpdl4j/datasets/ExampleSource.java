package org.dpdl4j.datasets;

/**
 * Labelled examples read by index, so that a DP-SGD step reads only the rows of its Poisson batch: in memory
 * ({@link LabeledData}) or from files ({@link PackedShards}). Implementations are thread-safe for {@link #read} and give
 * the same examples, in the same layout, for the same indices on every call, so that a seed gives the same run on every
 * source.
 */
public interface ExampleSource extends AutoCloseable {
    /**
     * The number of examples.
     *
     * @return the number of examples n ≥ 0
     */
    int size();

    /**
     * The number of classes.
     *
     * @return the number of classes (the width of the one-hot labels)
     */
    int numClasses();

    /**
     * The shape of one example, without the leading example dimension.
     *
     * @return one example's shape in what {@link #read} returns, as {@link LabeledData#exampleShape()} gives it
     */
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

    /**
     * Some of these examples, by index, read through this source when a step reads them (in memory: a copy of the rows,
     * {@link LabeledData#rows}). The subset's example i is this source's example {@code indices[i]}; it stays usable while
     * this source is open.
     *
     * @param indices distinct indices in [0, n), in any order (for example a part of {@link Splits})
     * @return a source of {@code indices.length} examples
     * @throws IllegalArgumentException if an index is outside [0, n) or repeated
     */
    default ExampleSource subset(int[] indices) {
        return new ExampleSubset(this, indices);
    }

    /**
     * These examples followed by others, as one source: example i &lt; n is this source's, example n + j is {@code more}'s
     * j-th (for example an audit's canaries appended to the training data). {@code more}'s features are cast to this
     * source's data type and read in its layout.
     *
     * @param more examples of the same per-example size and classes
     * @return a source of n + more.size() examples
     * @throws IllegalArgumentException if the two differ in per-example size or classes, or either has masks
     */
    default ExampleSource followedBy(LabeledData more) {
        return new ConcatenatedExamples(this, more);
    }

    /**
     * This source with the examples it reads kept in memory, up to {@code maxBytes} of them (features and labels as read),
     * so that later reads of them, by later steps or epochs, neither decode nor read the disk again. The values read are
     * this source's, bit for bit. Closing the returned source drops what it keeps, not this source.
     *
     * @param maxBytes the bound, ≥ 0 (0 keeps nothing)
     * @return the caching source (data in memory return themselves)
     * @throws IllegalArgumentException if maxBytes &lt; 0; reads throw it for data with masks
     */
    default ExampleSource withCache(long maxBytes) {
        return new CachedExamples(this, maxBytes);
    }

    /**
     * Checks that the examples on disk are still those this source was opened on (for data in memory: nothing to check).
     * Runs call it before each checkpoint and before the release.
     *
     * @throws IllegalArgumentException naming the file that changed
     */
    default void checkUnchanged() {
    }

    /** Releases the files or mappings; in-memory data holds none. */
    @Override
    void close();
}
