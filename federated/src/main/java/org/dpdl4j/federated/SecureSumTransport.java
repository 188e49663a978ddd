package org.dpdl4j.federated;

import org.dpdl4j.federated.Messages.Hello;
import org.dpdl4j.federated.Messages.KeyAdvertisement;
import org.dpdl4j.federated.Messages.MaskedInput;
import org.dpdl4j.federated.Messages.RoundKeys;
import org.dpdl4j.federated.Messages.RoundOutcome;
import org.dpdl4j.federated.Messages.SessionInfo;

/**
 * A client's connection to the coordinator. Calls block until the coordinator answers: {@link #advertise}
 * until the round's key phase closes, {@link #submit} until the round completes or aborts.
 * Implementations: {@link InProcessTransport}, and {@code org.dpdl4j.federated.grpc.GrpcTransport}.
 *
 * @see DpHypeCoordinator
 */
public interface SecureSumTransport extends AutoCloseable {
    /**
     * Makes a client's first contact.
     *
     * @param hello the client's id
     * @return the session id, the current round and the session's public parameters
     * @throws ProtocolException if the coordinator refuses the client (or, with {@code TRANSPORT}, if the transport
     *                           fails)
     */
    SessionInfo hello(Hello hello);

    /**
     * Sends a client's public key for a round and waits until the round's key phase closes.
     *
     * @param advertisement the session, round, client id and {@value org.dpdl4j.secagg.PairwiseMasks#PUBLIC_KEY_BYTES}-byte
     *                      X25519 public key
     * @return the round's participants and their public keys, in increasing id order
     * @throws ProtocolException if the coordinator refuses the key, or the session fails (or, with
     *                           {@code TRANSPORT}, if the transport fails)
     */
    RoundKeys advertise(KeyAdvertisement advertisement);

    /**
     * Sends a client's masked vector for a round and waits until the round completes or aborts.
     *
     * @param input the session, round, client id and masked vector of p entries
     * @return the round's outcome: the sum if it completed, else the round to retry in
     * @throws ProtocolException if the coordinator refuses the input, or the session fails (or, with
     *                           {@code TRANSPORT}, if the transport fails)
     */
    RoundOutcome submit(MaskedInput input);

    /** Releases the connection; the default does nothing. */
    @Override
    default void close() {
    }
}
