package org.dpdl4j.federated;

import org.dpdl4j.federated.Messages.Hello;
import org.dpdl4j.federated.Messages.KeyAdvertisement;
import org.dpdl4j.federated.Messages.MaskedInput;
import org.dpdl4j.federated.Messages.RoundKeys;
import org.dpdl4j.federated.Messages.RoundOutcome;
import org.dpdl4j.federated.Messages.SessionInfo;

/** Calls a coordinator in the same JVM; each client uses its own thread. The coordinator copies every array it keeps. */
public final class InProcessTransport implements SecureSumTransport {
    private final DpHypeCoordinator coordinator;

    /**
     * A transport that calls the given coordinator directly.
     *
     * @param coordinator the coordinator in this JVM
     */
    public InProcessTransport(DpHypeCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public SessionInfo hello(Hello hello) {
        return coordinator.hello(hello);
    }

    @Override
    public RoundKeys advertise(KeyAdvertisement advertisement) {
        return coordinator.advertise(advertisement);
    }

    @Override
    public RoundOutcome submit(MaskedInput input) {
        return coordinator.submit(input);
    }
}
