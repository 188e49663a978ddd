package org.dpdl4j.cli;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.dpdl4j.release.LoadPolicy;
import org.dpdl4j.release.PrivacySidecar;
import org.dpdl4j.serving.ModelServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dpdl4j serve MODEL_DIR}: an HTTP server for a released model, loaded only through the verified sidecar. */
@Command(name = "serve", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Serve a released model over HTTP after checking its privacy sidecar.",
                "MODEL_DIR holds model.zip and privacy.json as train and tune write them. The server starts only when the sidecar "
                        + "matches the model's SHA-256, its epsilon is not below what its event costs (recomputed by the named "
                        + "accountant) and the policy options below hold. Endpoints: POST /predict (a JSON array of features, an "
                        + "array of such arrays, or raw 8-bit pixels as application/octet-stream), GET /privacy (the sidecar), "
                        + "GET /health. Ctrl-C stops it gracefully."})
final class ServeCommand implements Callable<Integer> {
    @Parameters(paramLabel = "MODEL_DIR", description = "A directory with model.zip and privacy.json (from train or tune).")
    Path dir;

    @Option(names = "--port", paramLabel = "PORT", description = "TCP port, 0 for any free one (default ${DEFAULT-VALUE}).")
    int port = 8080;

    @Option(names = "--host", paramLabel = "HOST", description = "Address to listen on (default ${DEFAULT-VALUE}: this machine only; "
            + "0.0.0.0 for every interface).")
    String host = "127.0.0.1";

    @Option(names = "--max-epsilon", paramLabel = "ε", description = "Refuse a model whose claimed epsilon is above this (default: any finite epsilon).")
    Double maxEpsilon;

    @Option(names = "--max-delta", paramLabel = "δ", description = "Refuse a model whose delta is above this (default: any delta < 1).")
    Double maxDelta;

    @Option(names = "--allow-non-private", description = "Also serve a model trained without privacy (non_private: true); refused otherwise.")
    boolean allowNonPrivate;

    @Option(names = "--threads", paramLabel = "N", description = {"Request threads, each with its own copy of the network (default: the number of cores).",
            "Requests are read without holding a thread (Jetty's selector), so stalled or slow clients hold none, and GET /health "
                    + "is answered while the copies are busy."})
    Integer threads;

    @Option(names = "--queue", paramLabel = "N", description = {"Whole requests that may wait for a copy of the network (default: "
            + ModelServer.QUEUE_PER_THREAD + " per request thread).", "Beyond it a request is answered at once with 503 and "
            + "Retry-After: " + ModelServer.RETRY_AFTER_SECONDS + ", never by closing its connection."})
    Integer queue;

    @Option(names = "--read-timeout", paramLabel = "SECONDS", description = "A request must arrive whole (headers and body) within "
            + "this time, else it is answered 408 or its connection closed; also a connection's idle timeout (default ${DEFAULT-VALUE}).")
    int readTimeout = ModelServer.DEFAULT_READ_TIMEOUT_SECONDS;

    @Option(names = "--max-body-mb", paramLabel = "MB", description = {"The largest request body, in MiB (default ${DEFAULT-VALUE}); "
            + "above it a 413, at once when its Content-Length says so.", "A request takes at most its body plus 4 bytes per "
            + "feature (float32; 4 per pixel byte) in memory while it waits, and its answer."})
    int maxBodyMb = ModelServer.MAX_BODY_BYTES >> 20;

    @Option(names = "--max-in-flight-mb", paramLabel = "MB", description = "Request bodies being read or waiting, in all, in MiB "
            + "(default ${DEFAULT-VALUE}); above it a 503 with Retry-After.")
    long maxInFlightMb = ModelServer.DEFAULT_MAX_IN_FLIGHT_BYTES >> 20;

    @Option(names = "--connections-per-address", paramLabel = "N", description = "Connections one client address may hold open "
            + "(default ${DEFAULT-VALUE}); beyond it new ones are closed. In all at most " + ModelServer.DEFAULT_MAX_CONNECTIONS
            + " are open; more wait to be accepted.")
    int connectionsPerAddress = ModelServer.DEFAULT_CONNECTIONS_PER_ADDRESS;

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--port must be in [0, 65535], got " + port);
        }
        int n = threads != null ? threads : Runtime.getRuntime().availableProcessors();
        if (n < 1) {
            throw new IllegalArgumentException("--threads must be >= 1, got " + n);
        }
        LoadPolicy policy = allowNonPrivate ? LoadPolicy.any() : LoadPolicy.privateOnly();
        if (maxEpsilon != null) {
            if (!(maxEpsilon > 0)) {
                throw new IllegalArgumentException("--max-epsilon must be > 0, got " + maxEpsilon);
            }
            policy = policy.withMaxEpsilon(maxEpsilon);
        }
        if (maxDelta != null) {
            if (!(maxDelta > 0 && maxDelta <= 1)) {
                throw new IllegalArgumentException("--max-delta must be in (0, 1], got " + maxDelta);
            }
            policy = policy.withMaxDelta(maxDelta);
        }
        if (readTimeout < 1 || readTimeout > 3600) {
            throw new IllegalArgumentException("--read-timeout must be in [1, 3600] seconds, got " + readTimeout);
        }
        if (maxBodyMb < 1 || maxBodyMb > 2047) {
            throw new IllegalArgumentException("--max-body-mb must be in [1, 2047], got " + maxBodyMb);
        }
        if (maxInFlightMb < maxBodyMb) {
            throw new IllegalArgumentException("--max-in-flight-mb must be at least --max-body-mb (" + maxBodyMb + "), got " + maxInFlightMb);
        }
        if (queue != null && queue < 0) {
            throw new IllegalArgumentException("--queue must be >= 0, got " + queue);
        }
        if (connectionsPerAddress < 1) {
            throw new IllegalArgumentException("--connections-per-address must be >= 1, got " + connectionsPerAddress);
        }
        ModelServer.Limits limits = new ModelServer.Limits(readTimeout, maxBodyMb << 20, queue != null ? queue
                : ModelServer.QUEUE_PER_THREAD * n, connectionsPerAddress, ModelServer.DEFAULT_MAX_CONNECTIONS, maxInFlightMb << 20,
                ModelServer.DEFAULT_MIN_BYTES_PER_SECOND);
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("--host " + host + " is not an address of this machine (cannot be resolved)");
        }
        if (!address.getAddress().isAnyLocalAddress() && java.net.NetworkInterface.getByInetAddress(address.getAddress()) == null) {
            throw new IllegalArgumentException("--host " + host + " is not an address of this machine (give one of its addresses, "
                    + "127.0.0.1 for this machine only, or 0.0.0.0 for every interface)");
        }
        ModelServer server;
        try {
            server = ModelServer.start(dir, policy, address, n, 10, limits);
        } catch (java.net.BindException e) {
            throw new IllegalArgumentException("--port " + port + " on --host " + host + " cannot be used: " + e.getMessage()
                    + " (another server? --port 0 takes any free port)");
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            server.close(); // requests in flight finish (up to 10 s)
            stopped.countDown();
        }, "dpdl4j-serve-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        PrivacySidecar s = server.model().sidecar();
        System.out.printf("serving %s (%s, %s) on http://%s:%d with %d thread(s): POST /predict, GET /privacy, GET /health; "
                        + "Ctrl-C stops%n", dir.resolve(s.modelFile()), s.nonPrivate() ? "NOT private" : String.format("epsilon %.4f at delta %s",
                        s.epsilon(), s.delta()), s.accountant(), host, server.port(), n);
        System.out.printf("limits: %d request(s) may wait, bodies up to %d MiB and %d MiB in all, %d connections per address, "
                + "requests whole within %d s%n", limits.queue(), maxBodyMb, maxInFlightMb, connectionsPerAddress, readTimeout);
        System.out.flush();
        stopped.await();
        return 0;
    }
}
