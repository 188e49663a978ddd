package org.dpdl4j.spark;

/**
 * The Spark cluster cannot be used: its master cannot be reached, or no executor registered in time. An operational
 * failure (nothing was charged or trained), not a bug: the message says what was tried and what to check.
 */
public final class ClusterUnavailableException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with the given message.
     *
     * @param message what was tried, what failed and what to check
     */
    public ClusterUnavailableException(String message) {
        super(message);
    }
}
