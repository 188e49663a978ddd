package org.dpdl4j.federated.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.dpdl4j.federated.DpHypeClient;
import org.dpdl4j.federated.DpHypeCoordinator;
import org.dpdl4j.federated.DpHypeParameters;
import org.dpdl4j.federated.Messages.Hello;
import org.dpdl4j.federated.Messages.KeyAdvertisement;
import org.dpdl4j.federated.Messages.MaskedInput;
import org.dpdl4j.federated.Messages.RoundOutcome;
import org.dpdl4j.federated.Messages.SessionInfo;
import org.dpdl4j.federated.ProtocolException;
import org.dpdl4j.federated.ProtocolException.Reason;
import org.junit.jupiter.api.Test;

/** The coordinator over gRPC on loopback, with each client in its own JVM process. */
class GrpcLoopbackTest {
    private static final int P = 10;
    private static final int CLIENTS = 3;

    static DpHypeParameters parameters() {
        return DpHypeParameters.calibrate(P, 2, CLIENTS, CLIENTS, DpHypeParameters.DEFAULT_SCALE, 1, 1e-5);
    }

    static double[] losses(int client) {
        Random r = new Random(500 + client);
        double[] l = new double[P];
        for (int j = 0; j < P; j++) {
            l[j] = r.nextDouble();
        }
        return l;
    }

    /** A client process: args host, port, client id; prints the outcome's sum. */
    public static final class Client {
        public static void main(String[] args) {
            int id = Integer.parseInt(args[2]);
            try (GrpcTransport transport = new GrpcTransport(args[0], Integer.parseInt(args[1]), Duration.ofSeconds(60))) {
                RoundOutcome o = new DpHypeClient(id, parameters(), transport, new Random(id)).vote(losses(id));
                System.out.println("SUM " + Arrays.toString(o.sum()) + " WINNER " + o.winner());
            }
        }
    }

    @Test
    void clientProcessesVoteOverLoopbackAndTheSumIsExact() throws Exception {
        DpHypeParameters params = parameters();
        DpHypeCoordinator coordinator = new DpHypeCoordinator(params, List.of(1, 2, 3), Duration.ofSeconds(60), 2);
        try (GrpcCoordinatorServer server = GrpcCoordinatorServer.start(coordinator, new InetSocketAddress("127.0.0.1", 0))) {
            String java = ProcessHandle.current().info().command().orElse("java");
            List<Process> processes = new ArrayList<>();
            for (int id = 1; id <= CLIENTS; id++) {
                processes.add(new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), Client.class.getName(),
                        "127.0.0.1", Integer.toString(server.port()), Integer.toString(id)).redirectErrorStream(true).start());
            }
            DpHypeCoordinator.Result result = coordinator.awaitResult(Duration.ofSeconds(120));
            long[] expected = new long[P];
            for (int id = 1; id <= CLIENTS; id++) {
                long[] v = DpHypeClient.encode(losses(id), params, new Random(id));
                for (int j = 0; j < P; j++) {
                    expected[j] += v[j];
                }
            }
            assertArrayEquals(expected, result.sum());
            for (Process p : processes) {
                assertTrue(p.waitFor(60, TimeUnit.SECONDS), "client process did not end");
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertEquals(0, p.exitValue(), out);
                assertTrue(out.contains("SUM " + Arrays.toString(expected) + " WINNER " + result.winner()), out);
            }
        }
    }

    @Test
    void refusalsCrossTheWireWithTheirReason() throws Exception {
        DpHypeParameters params = parameters();
        DpHypeCoordinator coordinator = new DpHypeCoordinator(params, List.of(1, 2, 3), Duration.ofSeconds(5), 1);
        try (GrpcCoordinatorServer server = GrpcCoordinatorServer.start(coordinator, new InetSocketAddress("127.0.0.1", 0));
             GrpcTransport transport = new GrpcTransport("127.0.0.1", server.port(), Duration.ofSeconds(10))) {
            SessionInfo info = transport.hello(new Hello(1));
            assertEquals(params, info.parameters());
            assertEquals(Reason.UNKNOWN_CLIENT, assertThrows(ProtocolException.class, () -> transport.hello(new Hello(7))).reason());
            ProtocolException e = assertThrows(ProtocolException.class,
                    () -> transport.advertise(new KeyAdvertisement(info.session(), 1, 1, new byte[5])));
            assertEquals(Reason.WRONG_LENGTH, e.reason());
            assertTrue(e.getMessage().contains("got 5"), e.getMessage());
            assertEquals(Reason.OUT_OF_ORDER, assertThrows(ProtocolException.class,
                    () -> transport.submit(new MaskedInput(info.session(), 1, 1, new long[P]))).reason());
        }
        try (GrpcTransport dead = new GrpcTransport("127.0.0.1", 1, Duration.ofSeconds(5))) {
            assertEquals(Reason.TRANSPORT, assertThrows(ProtocolException.class, () -> dead.hello(new Hello(1))).reason());
        }
    }
}
