package org.dpdl4j.datasets;

/** The one check every {@link ExampleSource#read} makes of the indices it is given. */
final class Indices {
    private Indices() {
    }

    /**
     * @param sortedIndices the indices a read was given
     * @param n             the source's size
     * @throws IllegalArgumentException naming the first index that is outside [0, n) or not above the one before, and
     *                                  its position
     */
    static void checkAscending(int[] sortedIndices, int n) {
        for (int k = 0; k < sortedIndices.length; k++) {
            int i = sortedIndices[k];
            if (i < 0 || i >= n || k > 0 && i <= sortedIndices[k - 1]) {
                throw new IllegalArgumentException("indices must be distinct, ascending and in [0, " + n + "), got " + i
                        + " at position " + k);
            }
        }
    }
}
