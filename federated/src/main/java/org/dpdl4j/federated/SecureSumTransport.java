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
    /** @throws ProtocolException if the coordinator refuses the client */
    SessionInfo hello(Hello hello);

    /** @throws ProtocolException if the coordinator refuses the key */
    RoundKeys advertise(KeyAdvertisement advertisement);

    /** @throws ProtocolException if the coordinator refuses the input */
    RoundOutcome submit(MaskedInput input);

    @Override
    default void close() {
    }
}
