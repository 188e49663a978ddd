package org.dpdl4j.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.dpdl4j.release.InputSpec;
import org.dpdl4j.release.LoadPolicy;
import org.dpdl4j.release.PrivateModel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server under load and against stalled clients on loopback (issue 69, items 1, 2 and 8), each case bounded in
 * count and time, every server and client ended whatever happens: a burst of 50 large requests on 2 request threads is
 * answered, a full queue answers 503 with Retry-After and never closes a connection unanswered, stalled headers and
 * bodies leave /health and /predict answered at once and are closed after the read timeout, and a body announced
 * above the limit is refused at once.
 */
class ServeUnderLoadTest {
    @TempDir
    static Path dir;

    @BeforeAll
    static void release() throws Exception {
        PrivateModel model = PrivateModel.of(Models.mlp(ModelOptions.mnist().withSeed(3)), "training",
                NoiseCalibration.dpSgd(256.0 / 60000, 1.1, 234), "pld", 1e-5, new InputSpec(1, 28, 28, 255), null);
        model.save(dir);
    }

    private static ModelServer start(ModelServer.Limits limits) throws Exception {
        return ModelServer.start(dir, LoadPolicy.privateOnly(), new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 2, 5,
                limits);
    }

    private static ModelServer.Limits limits(int readTimeout, int queue, int perAddress) {
        ModelServer.Limits d = ModelServer.Limits.defaults(2);
        return new ModelServer.Limits(readTimeout, d.maxBodyBytes(), queue, perAddress, d.maxConnections(), d.maxInFlightBytes(),
                d.minBytesPerSecond());
    }

    /** 50 requests at once, of 64 or 256 images, each on its own connection: status -> count ("closed" for no answer). */
    private static Map<String, AtomicInteger> burst(ModelServer s, int requests) throws Exception {
        Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(requests);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int k = 0; k < requests; k++) {
                byte[] body = new byte[(k % 2 == 0 ? 64 : 256) * 784];
                done.add(pool.submit(() -> {
                    HttpClient own = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build(); // its own connection
                    String outcome;
                    try {
                        HttpResponse<String> r = own.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/predict"))
                                .timeout(Duration.ofSeconds(120)).header("Content-Type", "application/octet-stream")
                                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
                        outcome = r.statusCode() + (r.statusCode() == 503 && r.headers().firstValue("Retry-After").isPresent()
                                ? " retry-after" : "");
                    } catch (java.io.IOException e) {
                        outcome = "closed";
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        outcome = "interrupted";
                    }
                    outcomes.computeIfAbsent(outcome, x -> new AtomicInteger()).incrementAndGet();
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(180, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        return outcomes;
    }

    @Test
    void aBurstOfFiftyIsAnsweredAndAFullQueueSaysRetryAfter() throws Exception {
        try (ModelServer s = start(ModelServer.Limits.defaults(2))) {
            long t0 = System.nanoTime();
            Map<String, AtomicInteger> outcomes = burst(s, 50);
            System.out.printf("50 requests (64 and 256 images) on 2 threads, default limits: %s in %.1f s%n", outcomes,
                    (System.nanoTime() - t0) / 1e9);
            assertEquals(50, outcomes.getOrDefault("200", new AtomicInteger()).get(), "every request answered 200: " + outcomes);
        }
        try (ModelServer s = start(limits(30, 2, 64))) { // a queue of 2: most of the burst must be told to come back
            Map<String, AtomicInteger> outcomes = burst(s, 50);
            System.out.println("50 requests on 2 threads with a queue of 2: " + outcomes);
            int ok = outcomes.getOrDefault("200", new AtomicInteger()).get();
            int retry = outcomes.getOrDefault("503 retry-after", new AtomicInteger()).get();
            assertEquals(50, ok + retry, "each answered 200 or 503 with Retry-After, none closed unanswered: " + outcomes);
            assertTrue(ok >= 4 && retry > 0, outcomes.toString());
        }
    }

    @Test
    void stalledClientsLeaveHealthAndPredictAnswered() throws Exception {
        try (ModelServer s = start(limits(3, 128, 64))) {
            List<Socket> stalled = new ArrayList<>();
            try {
                for (int i = 0; i < 40; i++) { // half a header, or the headers and 10 of 784 body bytes, then nothing
                    Socket c = new Socket("127.0.0.1", s.port());
                    String text = i % 2 == 0 ? "POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty"
                            : "POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: 784"
                            + "\r\n\r\n0123456789";
                    c.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
                    c.getOutputStream().flush();
                    stalled.add(c);
                }
                HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
                int answered = 0;
                long worst = 0;
                for (int poll = 0; poll < 20; poll++) { // every 0.1 s for 2 s, while the 40 stall
                    long t = System.nanoTime();
                    var health = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/health"))
                            .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                    worst = Math.max(worst, System.nanoTime() - t);
                    answered += health.statusCode() == 200 ? 1 : 0;
                    Thread.sleep(100);
                }
                var predict = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/predict"))
                        .timeout(Duration.ofSeconds(5)).header("Content-Type", "application/octet-stream")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[784])).build(), HttpResponse.BodyHandlers.ofString());
                System.out.printf("40 stalled clients: %d of 20 health polls answered, the slowest in %.1f ms; predict %d%n", answered,
                        worst / 1e6, predict.statusCode());
                assertEquals(20, answered);
                assertEquals(200, predict.statusCode(), predict.body());
                long closedBy = System.nanoTime() + 15_000_000_000L;
                int closed = 0;
                for (Socket c : stalled) { // each is answered (408) or closed within the read timeout (3 s) and a margin
                    c.setSoTimeout((int) Math.max(1, (closedBy - System.nanoTime()) / 1_000_000));
                    try {
                        InputStream in = c.getInputStream();
                        while (in.read() >= 0) {
                            // an answer (408), then the end
                        }
                        closed++;
                    } catch (java.net.SocketTimeoutException e) {
                        // still open: counted below
                    } catch (java.io.IOException e) {
                        closed++; // reset
                    }
                }
                assertEquals(40, closed, "the stalled connections are ended after the read timeout");
            } finally {
                for (Socket c : stalled) {
                    c.close();
                }
            }
        }
    }

    @Test
    void anAnnouncedBodyAboveTheLimitIsRefusedAtOnceAndAddressesAreCapped() throws Exception {
        try (ModelServer s = start(limits(30, 8, 3))) {
            try (Socket c = new Socket("127.0.0.1", s.port())) {
                c.setSoTimeout(5000);
                long t = System.nanoTime();
                OutputStream out = c.getOutputStream();
                out.write(("POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                        + "Content-Length: 1000000000000\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                String status = new String(c.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
                System.out.printf("Content-Length 10^12: '%s' after %.0f ms%n", status, (System.nanoTime() - t) / 1e6);
                assertEquals("HTTP/1.1 413", status);
                assertTrue(System.nanoTime() - t < 2_000_000_000L, "at once");
            }
            Thread.sleep(500); // the server has seen the connection above end
            List<Socket> open = new ArrayList<>();
            try {
                for (int i = 0; i < 5; i++) {
                    open.add(new Socket("127.0.0.1", s.port()));
                }
                int ended = 0;
                for (Socket c : open) { // the 4th and 5th of one address are closed by the server
                    c.setSoTimeout(2000);
                    try {
                        ended += c.getInputStream().read() < 0 ? 1 : 0;
                    } catch (java.net.SocketTimeoutException e) {
                        // kept open
                    } catch (java.io.IOException e) {
                        ended++;
                    }
                }
                assertEquals(2, ended, "connections beyond 3 from one address are closed");
            } finally {
                for (Socket c : open) {
                    c.close();
                }
            }
        }
    }
}
