package org.dpdl4j.datasets;

import java.io.IOException;

/** A dataset file is missing, truncated, corrupt, or not the file it claims to be. */
public class InvalidDatasetException extends IOException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with the given message.
     *
     * @param message names the file and what was expected
     */
    public InvalidDatasetException(String message) {
        super(message);
    }
}
