package org.dpdl4j.serving;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.dpdl4j.release.InputSpec;
import org.dpdl4j.release.LoadPolicy;
import org.dpdl4j.release.PrivacySidecar;
import org.dpdl4j.release.PrivateModel;
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
 * <p>The JDK's own {@code jdk.httpserver} serves the requests (no dependency to keep up to date). Reading requests and
 * computing answers are kept apart, so that slow or stalled clients cannot take the server down: connections are read
 * and answered by a bounded pool of {@link #connectionThreads} I/O threads ({@value #CONNECTIONS_PER_THREAD} per request
 * thread, at least {@value #MIN_CONNECTION_THREADS}; connections beyond them and a short queue are closed at once), a
 * request must arrive whole within the read timeout (the JDK's {@code sun.net.httpserver.maxReqTime}, which this class
 * sets to {@value #DEFAULT_READ_TIMEOUT_SECONDS} s unless the application set it; the JDK reads it once per JVM, before
 * its first server starts) or its connection is closed, and only a complete request waits for one of the
 * {@code threads} copies of the network (DL4J networks are not thread-safe). {@code GET /health} needs no network, so
 * it is answered while every copy is busy. {@link #close()} stops accepting connections and lets requests in flight
 * finish (up to {@code gracePeriodSeconds}).
 */
public final class ModelServer implements AutoCloseable {
    /** The largest request body accepted, in bytes (a 413 above it). */
    public static final int MAX_BODY_BYTES = 64 << 20;
    /** The largest batch accepted in one request (a 400 above it). */
    public static final int MAX_BATCH = 4096;
    /** How long a request may take to arrive whole unless the JVM was told otherwise ({@code sun.net.httpserver.maxReqTime}). */
    public static final int DEFAULT_READ_TIMEOUT_SECONDS = 30;
    /** I/O threads per request thread. */
    public static final int CONNECTIONS_PER_THREAD = 4;
    /** The fewest I/O threads. */
    public static final int MIN_CONNECTION_THREADS = 8;
    /** The JDK's system property for the read timeout, in seconds. */
    public static final String READ_TIMEOUT_PROPERTY = "sun.net.httpserver.maxReqTime";

    private static final ObjectMapper JSON = new ObjectMapper();

    static {
        // jdk.httpserver writes a response's headers and body separately; without TCP_NODELAY, Nagle's algorithm and the
        // client's delayed ACK hold each small answer ~40 ms (measured: 48 ms median at 1 client, 2.7 ms with it). The
        // property is read once, when the JDK's server first starts, and concerns only its sockets; a value the
        // application set itself is kept.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
        // without it a client that stalls half-way through its request holds an I/O thread for ever
        if (System.getProperty(READ_TIMEOUT_PROPERTY) == null) {
            System.setProperty(READ_TIMEOUT_PROPERTY, Integer.toString(DEFAULT_READ_TIMEOUT_SECONDS));
        }
    }

    private final HttpServer server;
    private final ExecutorService executor;
    private final PrivateModel model;
    private final byte[] sidecar;
    private final java.util.concurrent.BlockingQueue<PrivateModel> copies; // one per request thread
    private final int gracePeriodSeconds;

    private ModelServer(HttpServer server, ExecutorService executor, PrivateModel model, PrivacySidecar sidecar, int threads,
                        int gracePeriodSeconds) {
        this.server = server;
        this.executor = executor;
        this.model = model;
        this.sidecar = sidecar.toJson();
        this.copies = new java.util.concurrent.ArrayBlockingQueue<>(threads);
        for (int i = 0; i < threads; i++) {
            copies.add(model.copy());
        }
        this.gracePeriodSeconds = gracePeriodSeconds;
    }

    /**
     * The I/O threads that read and answer connections for {@code threads} request threads.
     *
     * @param threads the number of request threads (copies of the network), ≥ 1 (not checked here)
     * @return max({@value #MIN_CONNECTION_THREADS}, {@value #CONNECTIONS_PER_THREAD} · threads)
     */
    public static int connectionThreads(int threads) {
        return Math.max(MIN_CONNECTION_THREADS, CONNECTIONS_PER_THREAD * threads);
    }

    /**
     * Verifies and loads {@code modelDir}, then starts serving it.
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
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        if (gracePeriodSeconds < 0) {
            throw new IllegalArgumentException("gracePeriodSeconds must be >= 0, got " + gracePeriodSeconds);
        }
        PrivateModel model = PrivateModel.load(modelDir, policy);
        HttpServer server = HttpServer.create(address, 0);
        AtomicInteger count = new AtomicInteger();
        int io = connectionThreads(threads);
        // a full pool and queue refuse a connection (the JDK then closes it) rather than queue it behind stalled ones
        ExecutorService executor = new java.util.concurrent.ThreadPoolExecutor(io, io, 60, TimeUnit.SECONDS,
                new java.util.concurrent.ArrayBlockingQueue<>(io), r -> {
            Thread t = new Thread(r, "dpdl4j-serve-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        }, new java.util.concurrent.ThreadPoolExecutor.AbortPolicy());
        ModelServer s = new ModelServer(server, executor, model, model.sidecar(), threads, gracePeriodSeconds);
        server.createContext("/predict", e -> s.exactly("/predict", e, s::predict));
        server.createContext("/privacy", e -> s.exactly("/privacy", e, x -> s.get(x, s.sidecar)));
        server.createContext("/health", e -> s.exactly("/health", e,
                x -> s.get(x, "{\"status\":\"ok\"}\n".getBytes(StandardCharsets.UTF_8))));
        server.createContext("/", e -> s.exactly(null, e, x -> { })); // any other path: a 404
        server.setExecutor(executor);
        server.start();
        return s;
    }

    /**
     * The port the server listens on.
     *
     * @return the bound port, in [1, 65535] (the port chosen by the system when port 0 was asked for)
     */
    public int port() {
        return server.getAddress().getPort();
    }

    /**
     * The model being served (its claim; use {@link PrivateModel#copy()} before calling its network from another thread).
     *
     * @return the verified model loaded at start (not one of the request threads' copies)
     */
    public PrivateModel model() {
        return model;
    }

    /** Stops accepting connections, waits up to the grace period for requests in flight, then releases the threads. */
    @Override
    public void close() {
        server.stop(gracePeriodSeconds);
        executor.shutdown();
        try {
            executor.awaitTermination(gracePeriodSeconds + 1L, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Runs {@code handler} only for exactly {@code path} (the JDK matches contexts by prefix: /healthz would reach
     * /health), a 404 otherwise (always for a null path); an unexpected failure is a 500 with its message, never a dropped connection.
     */
    private void exactly(String path, HttpExchange e, com.sun.net.httpserver.HttpHandler handler) throws IOException {
        try {
            if (path == null || !e.getRequestURI().getPath().equals(path)) {
                send(e, 404, error("no such endpoint: " + e.getRequestURI().getPath() + " (POST /predict, GET /privacy, GET /health)"));
                return;
            }
            handler.handle(e);
        } catch (RuntimeException | OutOfMemoryError ex) {
            send(e, 500, error("internal error: " + ex));
        }
    }

    private void get(HttpExchange e, byte[] body) throws IOException {
        if (!e.getRequestMethod().equals("GET") && !e.getRequestMethod().equals("HEAD")) {
            e.getResponseHeaders().set("Allow", "GET");
            send(e, 405, error(e.getRequestMethod() + " is not allowed on " + e.getRequestURI().getPath() + ": use GET"));
            return;
        }
        send(e, 200, body);
    }

    private void predict(HttpExchange e) throws IOException {
        try {
            if (!e.getRequestMethod().equals("POST")) {
                e.getResponseHeaders().set("Allow", "POST");
                send(e, 405, error(e.getRequestMethod() + " is not allowed on /predict: use POST"));
                return;
            }
            byte[] body = readBody(e.getRequestBody());
            if (body == null) {
                send(e, 413, error("the request body is larger than " + MAX_BODY_BYTES + " bytes"));
                return;
            }
            String type = e.getRequestHeaders().getFirst("Content-Type");
            type = type == null ? "application/json" : type.toLowerCase(Locale.ROOT);
            INDArray features;
            if (type.startsWith("application/octet-stream")) {
                features = fromPixels(body);
            } else if (type.startsWith("application/json")) {
                features = fromJson(body);
            } else {
                send(e, 415, error("Content-Type must be application/json or application/octet-stream, got " + type));
                return;
            }
            PrivateModel mine;
            try {
                mine = copies.take(); // the request is whole: wait for a free copy of the network
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                send(e, 503, error("the server is stopping"));
                return;
            }
            INDArray out;
            try {
                out = mine.output(features);
            } catch (RuntimeException ex) { // DL4J's shape checks: the input does not fit the network
                throw new BadRequest("the input does not fit the model: " + ex.getMessage());
            } finally {
                copies.add(mine);
            }
            send(e, 200, answer(out));
        } catch (BadRequest ex) {
            send(e, 400, error(ex.getMessage()));
        }
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

    private static byte[] answer(INDArray out) throws IOException {
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

    private static byte[] readBody(InputStream in) throws IOException {
        byte[] bytes = in.readNBytes(MAX_BODY_BYTES + 1);
        return bytes.length > MAX_BODY_BYTES ? null : bytes;
    }

    private static byte[] error(String message) {
        try {
            return JSON.writeValueAsBytes(Map.of("error", message));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private void send(HttpExchange e, int status, byte[] body) throws IOException {
        e.getResponseHeaders().set("Content-Type", "application/json");
        boolean head = e.getRequestMethod().equals("HEAD");
        e.sendResponseHeaders(status, head ? -1 : body.length);
        if (!head) {
            try (OutputStream out = e.getResponseBody()) {
                out.write(body);
            }
        }
        e.close();
    }

    /** A request the server cannot answer as sent: a 400 with this message. */
    private static final class BadRequest extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadRequest(String message) {
            super(message);
        }
    }
}
