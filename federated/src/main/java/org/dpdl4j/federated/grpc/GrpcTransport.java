package org.dpdl4j.federated.grpc;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.dpdl4j.federated.Messages.Hello;
import org.dpdl4j.federated.Messages.KeyAdvertisement;
import org.dpdl4j.federated.Messages.MaskedInput;
import org.dpdl4j.federated.Messages.RoundKeys;
import org.dpdl4j.federated.Messages.RoundOutcome;
import org.dpdl4j.federated.Messages.SessionInfo;
import org.dpdl4j.federated.ProtocolException;
import org.dpdl4j.federated.ProtocolException.Reason;
import org.dpdl4j.federated.SecureSumTransport;

/** A client's gRPC connection to a {@link GrpcCoordinatorServer} (plaintext; see the package note). */
public final class GrpcTransport implements SecureSumTransport {
    private final ManagedChannel channel;
    private final Duration callTimeout;

    /**
     * A plaintext channel to the coordinator; it connects lazily, on the first call.
     *
     * @param host        the coordinator's host name or address
     * @param port        its TCP port, in [1, 65535]
     * @param callTimeout the deadline of each call; blocking calls wait for a whole phase, so it must
     *                    exceed the coordinator's phase timeout (&gt; 0; a call that exceeds it fails with a
     *                    {@link ProtocolException} of reason {@code TRANSPORT})
     */
    public GrpcTransport(String host, int port, Duration callTimeout) {
        this.channel = NettyChannelBuilder.forAddress(host, port).usePlaintext().build();
        this.callTimeout = callTimeout;
    }

    @Override
    public SessionInfo hello(Hello hello) {
        return call(DpHypeService.HELLO, hello);
    }

    @Override
    public RoundKeys advertise(KeyAdvertisement advertisement) {
        return call(DpHypeService.ADVERTISE, advertisement);
    }

    @Override
    public RoundOutcome submit(MaskedInput input) {
        return call(DpHypeService.SUBMIT, input);
    }

    private <Q, R> R call(MethodDescriptor<Q, R> method, Q request) {
        try {
            return ClientCalls.blockingUnaryCall(channel, method,
                    CallOptions.DEFAULT.withDeadlineAfter(callTimeout.toMillis(), TimeUnit.MILLISECONDS), request);
        } catch (StatusRuntimeException e) {
            String description = e.getStatus().getDescription() == null ? "" : e.getStatus().getDescription();
            for (Reason r : Reason.values()) {
                if (description.startsWith(r + ": ")) {
                    throw new ProtocolException(r, description.substring(r.toString().length() + 2), e);
                }
            }
            throw new ProtocolException(Reason.TRANSPORT, method.getBareMethodName() + " failed: " + e.getStatus(), e);
        }
    }

    /** Shuts the channel down at once and waits up to 5 seconds for it to terminate (an interrupt ends the wait). */
    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
