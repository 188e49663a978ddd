package org.dpdl4j.federated.grpc;

import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.dpdl4j.federated.DpHypeCoordinator;
import org.dpdl4j.federated.ProtocolException;

/** Serves a {@link DpHypeCoordinator} over gRPC on a TCP address. Close it to stop the server. */
public final class GrpcCoordinatorServer implements AutoCloseable {
    private final Server server;

    private GrpcCoordinatorServer(Server server) {
        this.server = server;
    }

    /**
     * Starts serving.
     *
     * @param coordinator the session's coordinator
     * @param address     where to listen; port 0 picks a free port ({@link #port()})
     * @return the running server
     * @throws IOException if the address cannot be bound
     */
    public static GrpcCoordinatorServer start(DpHypeCoordinator coordinator, InetSocketAddress address) throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition.builder(DpHypeService.NAME)
                .addMethod(DpHypeService.HELLO, unary(coordinator::hello))
                .addMethod(DpHypeService.ADVERTISE, unary(coordinator::advertise))
                .addMethod(DpHypeService.SUBMIT, unary(coordinator::submit))
                .build();
        Server server = NettyServerBuilder.forAddress(address).addService(service).build().start();
        return new GrpcCoordinatorServer(server);
    }

    private static <Q, R> io.grpc.ServerCallHandler<Q, R> unary(Function<Q, R> call) {
        return ServerCalls.asyncUnaryCall((Q request, StreamObserver<R> response) -> {
            try {
                response.onNext(call.apply(request));
                response.onCompleted();
            } catch (ProtocolException e) {
                Status status = switch (e.reason()) {
                    case WRONG_LENGTH, WRONG_SESSION, UNKNOWN_CLIENT -> Status.INVALID_ARGUMENT;
                    default -> Status.FAILED_PRECONDITION;
                };
                response.onError(status.withDescription(e.getMessage()).asRuntimeException());
            } catch (RuntimeException e) {
                response.onError(Status.INVALID_ARGUMENT.withDescription("malformed message: " + e.getMessage()).asRuntimeException());
            }
        });
    }

    /**
     * The bound TCP port.
     *
     * @return the port the server listens on (the chosen one when the address had port 0)
     */
    public int port() {
        return server.getPort();
    }

    /**
     * Stops the server at once (cancelling calls in progress) and waits up to 10 seconds for it to terminate.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        server.awaitTermination(10, TimeUnit.SECONDS);
    }
}
