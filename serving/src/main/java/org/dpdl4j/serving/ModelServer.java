package org.dpdl4j.serving;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.dpdl4j.release.InputSpec;
import org.dpdl4j.release.LoadPolicy;
import org.dpdl4j.release.PrivacySidecar;
import org.dpdl4j.release.PrivateModel;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * An HTTP server for one released model, loaded only through {@link PrivateModel#load} (the sidecar is checked, and
 * the caller's {@link LoadPolicy} enforced, before the first request is taken).
 *
 * <ul>
 *   <li>{@code POST /predict} with {@code Content-Type: application/json}: one example as an array of features, or a
 *       batch as an array of such arrays (features already scaled as the model expects); with
 *       {@code application/octet-stream}: raw unsigned 8-bit pixels, a whole number of images of the sidecar's
 *       {@code input} shape (scaled by its {@code pixel_scale}). Answers
 *       {@code {"classes": [k, …], "probabilities": [[p, …], …]}}; a malformed body or a shape that does not fit is a
 *       400 with {@code {"error": "…"}}.</li>
 *   <li>{@code GET /privacy}: the verified sidecar ({@code privacy.json}).</li>
 *   <li>{@code GET /health}: {@code {"status": "ok"}}.</li>
 * </ul>
 *
 * <p>Eclipse Jetty serves the requests. Reading and computing are kept apart, so that no client can take the server
 * from the others ({@link Limits}):
 * <ul>
 *   <li>Jetty reads headers and bodies without blocking a thread (its selector; a body is read as it arrives), so stalled
 *       or slow clients hold no thread: {@code GET /health} and {@code GET /privacy} are answered at once whatever they
 *       do. A request must arrive whole within the read timeout (headers and body), and a body slower than
 *       {@link Limits#minBytesPerSecond} is cut off (Jetty's minimum request data rate), else its connection is closed.</li>
 *   <li>Connections are capped per client address and in all (Jetty's {@code NetworkConnectionLimit}: beyond it new
 *       connections wait in the accept queue).</li>
 *   <li>A whole request waits in a bounded queue for one of the {@code threads} copies of the network (DL4J networks
 *       are not thread-safe); a full queue, or memory above {@link Limits#maxInFlightBytes}, is answered at once with
 *       503 and {@code Retry-After}, never by closing the connection. A body above {@link Limits#maxBodyBytes} is a 413
 *       before it is read (by its {@code Content-Length}) or as soon as it is.</li>
 * </ul>
 * A request takes at most its body and its features as float32 (4 bytes per value; 4 per pixel byte) in memory while it
 * waits, and the answer; {@link #close()} stops accepting connections and lets requests in flight finish (up to
 * {@code gracePeriodSeconds}).
 */
public final class ModelServer implements AutoCloseable {
    /** The largest request body accepted by default, in bytes (a 413 above it). */
    public static final int MAX_BODY_BYTES = 32 << 20;
    /** The largest batch accepted in one request (a 400 above it). */
    public static final int MAX_BATCH = 4096;
    /** How long a request may take to arrive whole by default, in seconds. */
    public static final int DEFAULT_READ_TIMEOUT_SECONDS = 30;
    /** Requests that may wait for a copy of the network by default, per request thread. */
    public static final int QUEUE_PER_THREAD = 64;
    /** Connections one client address may hold open by default. */
    public static final int DEFAULT_CONNECTIONS_PER_ADDRESS = 64;
    /** Connections in all by default (beyond: they wait to be accepted). */
    public static final int DEFAULT_MAX_CONNECTIONS = 1024;
    /** Bytes of request bodies being read or waiting, in all, by default (a 503 above it). */
    public static final long DEFAULT_MAX_IN_FLIGHT_BYTES = 512L << 20;
    /** The slowest a body may arrive by default, in bytes per second, once it has begun. */
    public static final long DEFAULT_MIN_BYTES_PER_SECOND = 1024;
    /** Seconds a client is told to wait (Retry-After) after a 503 for a full queue. */
    public static final int RETRY_AFTER_SECONDS = 1;

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The server's bounds on what clients may take.
     *
     * @param readTimeoutSeconds     seconds a request may take to arrive whole (headers and body), in [1, 3600]; also the
     *                               idle timeout of a connection
     * @param maxBodyBytes           the largest body, in bytes, in [1, 2^31 − 1]
     * @param queue                  requests that may wait for a copy of the network, ≥ 0
     * @param connectionsPerAddress  connections one client address may hold open, ≥ 1
     * @param maxConnections         connections in all, ≥ 1 (beyond: they wait in the accept queue)
     * @param maxInFlightBytes       bytes of bodies being read or waiting, in all, ≥ maxBodyBytes
     * @param minBytesPerSecond      the slowest a body may arrive, ≥ 0 (0: no minimum)
     */
    public record Limits(int readTimeoutSeconds, int maxBodyBytes, int queue, int connectionsPerAddress, int maxConnections,
                         long maxInFlightBytes, long minBytesPerSecond) {
        /**
         * Checks the bounds.
         *
         * @param readTimeoutSeconds    seconds a request may take to arrive whole, in [1, 3600]
         * @param maxBodyBytes          the largest body, in bytes, ≥ 1
         * @param queue                 requests that may wait for a copy of the network, ≥ 0
         * @param connectionsPerAddress connections one client address may hold open, ≥ 1
         * @param maxConnections        connections in all, ≥ 1
         * @param maxInFlightBytes      bytes of bodies being read or waiting, in all, ≥ maxBodyBytes
         * @param minBytesPerSecond     the slowest a body may arrive, ≥ 0
         * @throws IllegalArgumentException naming the bound out of range
         */
        public Limits {
            check(readTimeoutSeconds >= 1 && readTimeoutSeconds <= 3600, "readTimeoutSeconds", readTimeoutSeconds, "[1, 3600]");
            check(maxBodyBytes >= 1, "maxBodyBytes", maxBodyBytes, ">= 1");
            check(queue >= 0, "queue", queue, ">= 0");
            check(connectionsPerAddress >= 1, "connectionsPerAddress", connectionsPerAddress, ">= 1");
            check(maxConnections >= 1, "maxConnections", maxConnections, ">= 1");
            check(maxInFlightBytes >= maxBodyBytes, "maxInFlightBytes", maxInFlightBytes, ">= maxBodyBytes (" + maxBodyBytes + ")");
            check(minBytesPerSecond >= 0, "minBytesPerSecond", minBytesPerSecond, ">= 0");
        }

        private static void check(boolean ok, String name, Object value, String allowed) {
            if (!ok) {
                throw new IllegalArgumentException(name + " must be " + allowed + ", got " + value);
            }
        }

        /**
         * The defaults for {@code threads} request threads: a 30 s read timeout, 32 MiB bodies, a queue of
         * {@value #QUEUE_PER_THREAD} per thread, 64 connections per address and 1,024 in all, 512 MiB in flight, 1 KiB/s.
         *
         * @param threads request threads ≥ 1
         * @return the default limits
         */
        public static Limits defaults(int threads) {
            return new Limits(DEFAULT_READ_TIMEOUT_SECONDS, MAX_BODY_BYTES, QUEUE_PER_THREAD * Math.max(1, threads),
                    DEFAULT_CONNECTIONS_PER_ADDRESS, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_IN_FLIGHT_BYTES, DEFAULT_MIN_BYTES_PER_SECOND);
        }
    }

    private final Server server;
    private final ServerConnector connector;
    private final ThreadPoolExecutor workers;
    private final java.util.concurrent.ScheduledExecutorService timer;
    private final PrivateModel model;
    private final byte[] sidecar;
    private final java.util.concurrent.BlockingQueue<PrivateModel> copies; // one per request thread
    private final int gracePeriodSeconds;
    private final Limits limits;
    private final AtomicLong inFlight = new AtomicLong();
    private final Map<String, AtomicInteger> perAddress = new ConcurrentHashMap<>();

    private ModelServer(PrivateModel model, int threads, int gracePeriodSeconds, Limits limits, InetSocketAddress address) {
        this.model = model;
        this.sidecar = model.sidecar().toJson();
        this.copies = new java.util.concurrent.ArrayBlockingQueue<>(threads);
        for (int i = 0; i < threads; i++) {
            copies.add(model.copy());
        }
        this.gracePeriodSeconds = gracePeriodSeconds;
        this.limits = limits;
        AtomicInteger count = new AtomicInteger();
        this.workers = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
                limits.queue() == 0 ? new java.util.concurrent.SynchronousQueue<>() : new java.util.concurrent.ArrayBlockingQueue<>(limits.queue()),
                r -> {
                    Thread t = new Thread(r, "dpdl4j-serve-" + count.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                }, new ThreadPoolExecutor.AbortPolicy());
        this.timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "dpdl4j-serve-deadlines");
            t.setDaemon(true);
            return t;
        });
        QueuedThreadPool io = new QueuedThreadPool(16, 4);
        io.setName("dpdl4j-serve-io");
        io.setDaemon(true);
        this.server = new Server(io);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setIdleTimeout(limits.readTimeoutSeconds() * 1000L);
        http.setMinRequestDataRate(limits.minBytesPerSecond());
        this.connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
        connector.setHost(address.getHostString());
        connector.setPort(address.getPort());
        connector.setIdleTimeout(limits.readTimeoutSeconds() * 1000L);
        connector.addEventListener(new PerAddressLimit());
        server.addBean(new NetworkConnectionLimit(limits.maxConnections(), connector));
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                route(request, response, callback);
                return true;
            }
        });
        server.setStopTimeout(gracePeriodSeconds * 1000L);
    }

    /**
     * Verifies and loads {@code modelDir}, then starts serving it with the default {@link Limits} for {@code threads}.
     *
     * @param modelDir           a release directory ({@code model.zip} and {@code privacy.json})
     * @param policy             what the loader accepts (passed to {@link PrivateModel#load})
     * @param address            where to listen (port 0: any free port; see {@link #port()})
     * @param threads            request threads ≥ 1: copies of the network computing answers at once
     * @param gracePeriodSeconds how long {@link #close()} waits for requests in flight, ≥ 0
     * @return the running server
     * @throws org.dpdl4j.release.UnverifiedModelException if the loader refuses the directory (nothing is served)
     * @throws IOException              if the files cannot be read or the address cannot be bound
     * @throws IllegalArgumentException if threads &lt; 1 or gracePeriodSeconds &lt; 0
     */
    public static ModelServer start(Path modelDir, LoadPolicy policy, InetSocketAddress address, int threads, int gracePeriodSeconds)
            throws IOException {
        return start(modelDir, policy, address, threads, gracePeriodSeconds, Limits.defaults(threads));
    }

    /**
     * Verifies and loads {@code modelDir}, then starts serving it.
     *
     * @param modelDir           a release directory ({@code model.zip} and {@code privacy.json})
     * @param policy             what the loader accepts (passed to {@link PrivateModel#load})
     * @param address            where to listen (port 0: any free port; see {@link #port()})
     * @param threads            request threads ≥ 1: copies of the network computing answers at once
     * @param gracePeriodSeconds how long {@link #close()} waits for requests in flight, ≥ 0
     * @param limits             what clients may take, not null
     * @return the running server
     * @throws org.dpdl4j.release.UnverifiedModelException if the loader refuses the directory (nothing is served)
     * @throws IOException              if the files cannot be read or the address cannot be bound
     *                                  ({@link java.net.BindException} when the port is taken)
     * @throws IllegalArgumentException if threads &lt; 1 or gracePeriodSeconds &lt; 0
     */
    public static ModelServer start(Path modelDir, LoadPolicy policy, InetSocketAddress address, int threads, int gracePeriodSeconds,
                                    Limits limits) throws IOException {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        if (gracePeriodSeconds < 0) {
            throw new IllegalArgumentException("gracePeriodSeconds must be >= 0, got " + gracePeriodSeconds);
        }
        java.util.Objects.requireNonNull(limits, "limits");
        PrivateModel model = PrivateModel.load(modelDir, policy);
        ModelServer s = new ModelServer(model, threads, gracePeriodSeconds, limits, address);
        try {
            s.server.start();
        } catch (IOException e) {
            s.close();
            throw bindFailure(e);
        } catch (Exception e) {
            s.close();
            throw e.getCause() instanceof IOException io ? bindFailure(io) : new IOException("the server could not start: " + e, e);
        }
        return s;
    }

    /** Jetty's "Failed to bind" as the {@link java.net.BindException} it wraps (a port in use). */
    private static IOException bindFailure(IOException e) {
        return e instanceof java.net.BindException || !(e.getCause() instanceof java.net.BindException b) ? e : b;
    }

    /**
     * The port the server listens on.
     *
     * @return the bound port, in [1, 65535] (the port chosen by the system when port 0 was asked for)
     */
    public int port() {
        return connector.getLocalPort();
    }

    /**
     * The model being served (its claim; use {@link PrivateModel#copy()} before calling its network from another thread).
     *
     * @return the verified model loaded at start (not one of the request threads' copies)
     */
    public PrivateModel model() {
        return model;
    }

    /**
     * The bounds this server keeps.
     *
     * @return its limits
     */
    public Limits limits() {
        return limits;
    }

    /** Stops accepting connections, waits up to the grace period for requests in flight, then releases the threads. */
    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            // stopping: what could not stop gracefully is stopped below
        }
        workers.shutdown();
        try {
            workers.awaitTermination(gracePeriodSeconds + 1L, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        workers.shutdownNow();
        timer.shutdownNow();
    }

    /** Closes a connection beyond {@link Limits#connectionsPerAddress} of its client address. */
    private final class PerAddressLimit implements Connection.Listener {
        /** Each open connection's address, taken when it opened (a closed end point may no longer know it). */
        private final Map<Connection, String> addresses = new ConcurrentHashMap<>();

        @Override
        public void onOpened(Connection connection) {
            String address = addressOf(connection);
            addresses.put(connection, address);
            if (perAddress.computeIfAbsent(address, a -> new AtomicInteger()).incrementAndGet() > limits.connectionsPerAddress()) {
                connection.getEndPoint().close();
            }
        }

        @Override
        public void onClosed(Connection connection) {
            String address = addresses.remove(connection);
            AtomicInteger n = address == null ? null : perAddress.get(address);
            if (n != null && n.decrementAndGet() <= 0) {
                perAddress.remove(address, n);
            }
        }

        private String addressOf(Connection connection) {
            return connection.getEndPoint().getRemoteSocketAddress() instanceof InetSocketAddress a && a.getAddress() != null
                    ? a.getAddress().getHostAddress() : String.valueOf(connection.getEndPoint().getRemoteSocketAddress());
        }
    }

    /** Answers a request: exactly /predict, /privacy or /health (404 otherwise); an unexpected failure is a 500. */
    private void route(Request request, Response response, Callback callback) {
        try {
            String path = request.getHttpURI().getPath();
            switch (path == null ? "" : path) {
                case "/predict" -> predict(request, response, callback);
                case "/privacy" -> get(request, response, callback, sidecar);
                case "/health" -> get(request, response, callback, "{\"status\":\"ok\"}\n".getBytes(StandardCharsets.UTF_8));
                default -> send(response, callback, 404, error("no such endpoint: " + path + " (POST /predict, GET /privacy, GET /health)"));
            }
        } catch (RuntimeException | OutOfMemoryError ex) {
            send(response, callback, 500, error("internal error: " + ex));
        }
    }

    private void get(Request request, Response response, Callback callback, byte[] body) {
        String method = request.getMethod();
        if (!method.equals("GET") && !method.equals("HEAD")) {
            response.getHeaders().put(HttpHeader.ALLOW, "GET");
            send(response, callback, 405, error(method + " is not allowed on " + request.getHttpURI().getPath() + ": use GET"));
            return;
        }
        if (method.equals("HEAD")) {
            response.setStatus(200);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
            response.write(true, null, callback);
            return;
        }
        send(response, callback, 200, body);
    }

    /**
     * /predict: the body read without holding a thread, within the deadline and the memory bound, then queued for a copy
     * of the network (a 503 with Retry-After when the queue is full).
     */
    private void predict(Request request, Response response, Callback callback) {
        if (!request.getMethod().equals("POST")) {
            response.getHeaders().put(HttpHeader.ALLOW, "POST");
            send(response, callback, 405, error(request.getMethod() + " is not allowed on /predict: use POST"));
            return;
        }
        long declared = request.getLength();
        if (declared > limits.maxBodyBytes()) {
            send(response, callback, 413, error("the request body is " + declared + " bytes, more than the " + limits.maxBodyBytes()
                    + " this server takes"));
            return;
        }
        long reserved = declared >= 0 ? declared : limits.maxBodyBytes();
        if (inFlight.addAndGet(reserved) > limits.maxInFlightBytes()) {
            inFlight.addAndGet(-reserved);
            busy(response, callback, "the server holds " + limits.maxInFlightBytes() + " bytes of requests already");
            return;
        }
        AtomicBoolean done = new AtomicBoolean();
        Callback release = Callback.from(() -> {
            inFlight.addAndGet(-reserved);
            callback.succeeded();
        }, x -> {
            inFlight.addAndGet(-reserved);
            callback.failed(x);
        });
        long left = limits.readTimeoutSeconds() * 1_000_000_000L - (System.nanoTime() - request.getHeadersNanoTime());
        java.util.concurrent.ScheduledFuture<?> deadline = timer.schedule(() -> {
            if (done.compareAndSet(false, true)) { // the body did not arrive in time: answered, and the connection closed
                response.getHeaders().put(HttpHeader.CONNECTION, "close");
                send(response, release, 408, error("the request did not arrive whole within " + limits.readTimeoutSeconds() + " s"));
            }
        }, Math.max(0, left), TimeUnit.NANOSECONDS);
        Content.Source.asByteArrayAsync(request, limits.maxBodyBytes()).whenComplete((body, failure) -> {
            deadline.cancel(false);
            if (!done.compareAndSet(false, true)) {
                return;
            }
            if (failure != null) {
                boolean tooLarge = String.valueOf(failure.getMessage()).toLowerCase(Locale.ROOT).contains("max");
                if (tooLarge) {
                    send(response, release, 413, error("the request body is larger than " + limits.maxBodyBytes() + " bytes"));
                } else { // too slow (the idle timeout, the minimum data rate), or gone: answered if it still listens, and closed
                    response.getHeaders().put(HttpHeader.CONNECTION, "close");
                    send(response, release, 408, error("the request did not arrive whole in time (" + limits.readTimeoutSeconds()
                            + " s, at least " + limits.minBytesPerSecond() + " bytes/s)"));
                }
                return;
            }
            answer(request, response, release, body);
        });
    }

    /** Parses a whole body and queues it for a copy of the network. */
    private void answer(Request request, Response response, Callback callback, byte[] body) {
        INDArray features;
        try {
            String type = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
            type = type == null ? "application/json" : type.toLowerCase(Locale.ROOT);
            if (type.startsWith("application/octet-stream")) {
                features = fromPixels(body);
            } else if (type.startsWith("application/json")) {
                features = fromJson(body);
            } else {
                send(response, callback, 415, error("Content-Type must be application/json or application/octet-stream, got " + type));
                return;
            }
        } catch (BadRequest ex) {
            send(response, callback, 400, error(ex.getMessage()));
            return;
        }
        INDArray x = features;
        try {
            workers.execute(() -> {
                PrivateModel mine = copies.poll(); // one per worker thread: always one free here
                try {
                    INDArray out;
                    try {
                        out = mine.output(x);
                    } catch (RuntimeException ex) { // DL4J's shape checks: the input does not fit the network
                        send(response, callback, 400, error("the input does not fit the model: " + ex.getMessage()));
                        return;
                    }
                    send(response, callback, 200, answerOf(out));
                } catch (RuntimeException | IOException | OutOfMemoryError ex) {
                    send(response, callback, 500, error("internal error: " + ex));
                } finally {
                    copies.add(mine);
                }
            });
        } catch (RejectedExecutionException full) {
            busy(response, callback, "every copy of the network is busy and " + limits.queue() + " requests wait already");
        }
    }

    /** A 503 with Retry-After: the server is full now, and says when to come back. */
    private void busy(Response response, Callback callback, String why) {
        response.getHeaders().put(HttpHeader.RETRY_AFTER, RETRY_AFTER_SECONDS);
        send(response, callback, 503, error(why + ": retry after " + RETRY_AFTER_SECONDS + " s"));
    }

    private INDArray fromPixels(byte[] body) {
        InputSpec in = model.input();
        if (in == null) {
            throw new BadRequest("this model's sidecar gives no input shape: send JSON features instead of raw pixels");
        }
        int d = in.features();
        if (body.length == 0 || body.length % d != 0) {
            throw new BadRequest("raw pixels must be a whole number of " + in.channels() + "x" + in.height() + "x" + in.width()
                    + " images (" + d + " bytes each), got " + body.length + " bytes");
        }
        int batch = body.length / d;
        checkBatch(batch);
        float[] f = new float[body.length];
        float scale = (float) in.scale();
        for (int i = 0; i < f.length; i++) {
            f[i] = (body[i] & 0xFF) / scale;
        }
        return Nd4j.create(f, new long[]{batch, d}, 'c');
    }

    private INDArray fromJson(byte[] body) {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (IOException ex) {
            throw new BadRequest("the body is not valid JSON: " + ex.getMessage().lines().findFirst().orElse(""));
        }
        if (root == null || !root.isArray() || root.isEmpty()) {
            throw new BadRequest("the body must be a JSON array of features, or an array of such arrays (a batch)");
        }
        boolean batch = root.get(0).isArray();
        List<JsonNode> rows = new ArrayList<>();
        if (batch) {
            root.forEach(rows::add);
        } else {
            rows.add(root);
        }
        checkBatch(rows.size());
        int d = rows.get(0).size();
        InputSpec in = model.input();
        if (in != null && d != in.features()) {
            throw new BadRequest("each example must have " + in.features() + " features (" + in.channels() + "x" + in.height() + "x"
                    + in.width() + ", " + InputSpec.LAYOUT + "), got " + d);
        }
        float[] f = new float[rows.size() * d];
        for (int r = 0; r < rows.size(); r++) {
            JsonNode row = rows.get(r);
            if (!row.isArray() || row.size() != d) {
                throw new BadRequest("example " + r + " must be an array of " + d + " numbers, like example 0");
            }
            for (int j = 0; j < d; j++) {
                JsonNode x = row.get(j);
                if (!x.isNumber() || !Double.isFinite(x.asDouble())) {
                    throw new BadRequest("feature " + j + " of example " + r + " must be a finite number, got " + x);
                }
                f[r * d + j] = x.floatValue();
            }
        }
        return Nd4j.create(f, new long[]{rows.size(), d}, 'c').castTo(DataType.FLOAT);
    }

    private static void checkBatch(int batch) {
        if (batch > MAX_BATCH) {
            throw new BadRequest("a request holds at most " + MAX_BATCH + " examples, got " + batch);
        }
    }

    private static byte[] answerOf(INDArray out) throws IOException {
        int batch = (int) out.size(0);
        List<Integer> classes = new ArrayList<>(batch);
        List<float[]> probabilities = new ArrayList<>(batch);
        for (int i = 0; i < batch; i++) {
            INDArray row = out.getRow(i);
            classes.add(row.argMax().getInt(0));
            probabilities.add(row.toFloatVector());
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("classes", classes);
        m.put("probabilities", probabilities);
        return JSON.writeValueAsBytes(m);
    }

    private static byte[] error(String message) {
        try {
            return JSON.writeValueAsBytes(Map.of("error", message));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }


    private static void send(Response response, Callback callback, int status, byte[] body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, ByteBuffer.wrap(body), callback);
    }

    /** A request the server cannot answer as sent: a 400 with this message. */
    private static final class BadRequest extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadRequest(String message) {
            super(message);
        }
    }
}
