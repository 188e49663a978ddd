package org.dpdl4j.release;

import java.io.IOException;

/**
 * A model directory that the verified loader refuses: the sidecar is missing, unparsable, of an unknown
 * schema version, does not match the model's bytes, claims an ε below what its event costs, or breaks the
 * caller's {@link LoadPolicy}. The message names the file and the check that failed.
 */
public class UnverifiedModelException extends IOException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message and no cause.
     *
     * @param message what failed, naming the file and the value
     */
    public UnverifiedModelException(String message) {
        super(message);
    }

    /**
     * An exception with a message and the error that caused it.
     *
     * @param message what failed, naming the file and the value
     * @param cause   the underlying error, may be null
     */
    public UnverifiedModelException(String message, Throwable cause) {
        super(message, cause);
    }
}
