package org.dpdl4j.federated;

/** A message the coordinator (or a client) refused, with the reason; the round's state is unchanged by it. */
public final class ProtocolException extends RuntimeException {
    /** Why a message was refused. */
    public enum Reason {
        /** The client id is not on the session's roster. */
        UNKNOWN_CLIENT,
        /** The message names another session. */
        WRONG_SESSION,
        /** The vector or key has the wrong length. */
        WRONG_LENGTH,
        /** The message was already received, or belongs to a round that is over. */
        REPLAY,
        /** The client is on the roster but not part of this round (joined after its key phase closed, or dropped earlier). */
        LATE_JOINER,
        /** The message belongs to a later round or another phase. */
        OUT_OF_ORDER,
        /** The client's and the coordinator's public parameters differ. */
        PARAMETER_MISMATCH,
        /** Fewer than n_min clients remained, or the last allowed round aborted. */
        SESSION_FAILED,
        /** The transport failed (connection lost, deadline exceeded). */
        TRANSPORT
    }

    private final Reason reason;

    /**
     * A refusal; the exception's message is {@code reason + ": " + message}.
     *
     * @param reason  why the message was refused
     * @param message a description of the refusal
     */
    public ProtocolException(Reason reason, String message) {
        super(reason + ": " + message);
        this.reason = reason;
    }

    /**
     * A refusal caused by another exception (typically a transport failure); the exception's message is
     * {@code reason + ": " + message}.
     *
     * @param reason  why the message was refused
     * @param message a description of the refusal
     * @param cause   the underlying exception; may be null
     */
    public ProtocolException(Reason reason, String message, Throwable cause) {
        super(reason + ": " + message, cause);
        this.reason = reason;
    }

    /**
     * Why the message was refused.
     *
     * @return the reason given at construction
     */
    public Reason reason() {
        return reason;
    }
}
