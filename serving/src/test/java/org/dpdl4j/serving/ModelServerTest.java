package org.dpdl4j.serving;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.dpdl4j.release.InputSpec;
import org.dpdl4j.release.LoadPolicy;
import org.dpdl4j.release.PrivateModel;
import org.dpdl4j.release.UnverifiedModelException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** The server through a real HTTP client on loopback: answers equal the model's own outputs; bad requests get a 400. */
class ModelServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    static Path dir;
    private static PrivateModel model;
    private static ModelServer server;

    @BeforeAll
    static void start() throws Exception {
        MultiLayerNetwork net = Models.standardCnn(ModelOptions.mnist().withSeed(3));
        model = PrivateModel.of(net, "training", NoiseCalibration.dpSgd(256.0 / 60000, 1.1, 234), "pld", 1e-5,
                new InputSpec(1, 28, 28, 255), null);
        model.save(dir);
        server = ModelServer.start(dir, LoadPolicy.privateOnly().withMaxEpsilon(10), new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4, 5);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.port() + path);
    }

    private static HttpResponse<String> post(String type, HttpRequest.BodyPublisher body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(uri("/predict")).header("Content-Type", type).POST(body).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static float[][] probabilities(JsonNode answer) {
        JsonNode p = answer.get("probabilities");
        float[][] out = new float[p.size()][];
        for (int i = 0; i < p.size(); i++) {
            out[i] = new float[p.get(i).size()];
            for (int j = 0; j < out[i].length; j++) {
                out[i][j] = p.get(i).get(j).floatValue();
            }
        }
        return out;
    }

    @Test
    void healthAndPrivacy() throws Exception {
        var health = HTTP.send(HttpRequest.newBuilder(uri("/health")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, health.statusCode());
        assertEquals("ok", JSON.readTree(health.body()).get("status").asText());
        var privacy = HTTP.send(HttpRequest.newBuilder(uri("/privacy")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, privacy.statusCode());
        assertEquals(JSON.readTree(Files.readString(dir.resolve("privacy.json"))), JSON.readTree(privacy.body()));
        var wrong = HTTP.send(HttpRequest.newBuilder(uri("/privacy")).POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(405, wrong.statusCode());
        for (String path : List.of("/nothing", "/healthz", "/predictions", "/privacy/x", "/")) { // contexts match exactly
            var missing = HTTP.send(HttpRequest.newBuilder(uri(path)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(404, missing.statusCode(), path);
            assertTrue(missing.body().contains("no such endpoint"), missing.body());
        }
    }

    /** A JSON batch and the same images as raw bytes give the model's own outputs (float32, so to 1e-6). */
    @Test
    void predictionsEqualTheModelsOutputs() throws Exception {
        Random r = new Random(5);
        byte[] pixels = new byte[3 * 784];
        r.nextBytes(pixels);
        float[] f = new float[pixels.length];
        for (int i = 0; i < f.length; i++) {
            f[i] = (pixels[i] & 0xFF) / 255f;
        }
        INDArray x = Nd4j.create(f, new long[]{3, 784}, 'c');
        INDArray expected = model.copy().output(x);
        List<List<Float>> rows = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            List<Float> row = new ArrayList<>();
            for (int j = 0; j < 784; j++) {
                row.add(f[i * 784 + j]);
            }
            rows.add(row);
        }
        var viaJson = post("application/json", HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(rows)));
        assertEquals(200, viaJson.statusCode(), viaJson.body());
        var viaBytes = post("application/octet-stream", HttpRequest.BodyPublishers.ofByteArray(pixels));
        assertEquals(200, viaBytes.statusCode(), viaBytes.body());
        for (var answer : List.of(JSON.readTree(viaJson.body()), JSON.readTree(viaBytes.body()))) {
            float[][] p = probabilities(answer);
            for (int i = 0; i < 3; i++) {
                assertArrayEquals(expected.getRow(i).toFloatVector(), p[i], 1e-6f);
                assertEquals(expected.getRow(i).argMax().getInt(0), answer.get("classes").get(i).asInt());
            }
        }
        var single = post("application/json", HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(rows.get(1))));
        assertEquals(200, single.statusCode());
        assertArrayEquals(expected.getRow(1).toFloatVector(), probabilities(JSON.readTree(single.body()))[0], 1e-6f);
    }

    /** Concurrent clients get their own answers (each request thread has its own copy of the network). */
    @Test
    void concurrentRequestsGetTheirOwnAnswers() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Boolean>> done = new ArrayList<>();
            for (int k = 0; k < 32; k++) {
                byte[] pixels = new byte[784];
                new Random(k).nextBytes(pixels);
                float[] f = new float[784];
                for (int i = 0; i < 784; i++) {
                    f[i] = (pixels[i] & 0xFF) / 255f;
                }
                INDArray expected = model.copy().output(Nd4j.create(f, new long[]{1, 784}, 'c'));
                done.add(pool.submit(() -> {
                    var a = post("application/octet-stream", HttpRequest.BodyPublishers.ofByteArray(pixels));
                    float[] p = probabilities(JSON.readTree(a.body()))[0];
                    float[] e = expected.toFloatVector();
                    for (int j = 0; j < e.length; j++) {
                        if (Math.abs(p[j] - e[j]) > 1e-6f) {
                            return false;
                        }
                    }
                    return a.statusCode() == 200;
                }));
            }
            for (Future<Boolean> d : done) {
                assertTrue(d.get());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void badRequestsAreExplained() throws Exception {
        String[][] cases = {
                {"application/json", "[1, 2, 3]", "784 features"},
                {"application/json", "{\"x\": 1}", "JSON array"},
                {"application/json", "[[", "not valid JSON"},
                {"application/json", "[\"a\"]", "784 features"},
                {"application/octet-stream", "abc", "784 bytes each"},
        };
        for (String[] c : cases) {
            var a = post(c[0], HttpRequest.BodyPublishers.ofString(c[1]));
            assertEquals(400, a.statusCode(), c[1]);
            assertTrue(JSON.readTree(a.body()).get("error").asText().contains(c[2]), a.body());
        }
        StringBuilder ragged = new StringBuilder("[[");
        for (int j = 0; j < 784; j++) {
            ragged.append(j == 0 ? "" : ",").append(j == 5 ? "\"x\"" : "0");
        }
        ragged.append("]]");
        var a = post("application/json", HttpRequest.BodyPublishers.ofString(ragged.toString()));
        assertEquals(400, a.statusCode());
        assertTrue(a.body().contains("feature 5 of example 0"), a.body());
        var type = post("text/plain", HttpRequest.BodyPublishers.ofString("1"));
        assertEquals(415, type.statusCode());
        var get = HTTP.send(HttpRequest.newBuilder(uri("/predict")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(405, get.statusCode());
    }

    /** The server refuses to start on a tampered or policy-breaking directory; a closed server refuses connections. */
    @Test
    void startsOnlyOnVerifiedModelsAndStops(@TempDir Path other) throws Exception {
        Files.copy(dir.resolve("model.zip"), other.resolve("model.zip"));
        Files.writeString(other.resolve("privacy.json"), Files.readString(dir.resolve("privacy.json")).replace("\"pld\"", "\"none\""));
        InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        assertThrows(UnverifiedModelException.class, () -> ModelServer.start(other, LoadPolicy.any(), loopback, 1, 0));
        assertThrows(UnverifiedModelException.class, () -> ModelServer.start(dir, LoadPolicy.any().withMaxEpsilon(0.01), loopback, 1, 0));
        ModelServer s = ModelServer.start(dir, LoadPolicy.any(), loopback, 1, 0);
        URI health = URI.create("http://127.0.0.1:" + s.port() + "/health");
        try {
            assertEquals(200, HTTP.send(HttpRequest.newBuilder(health).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
        } finally {
            s.close();
        }
        assertThrows(ConnectException.class, () -> HttpClient.newHttpClient().send(HttpRequest.newBuilder(health).build(),
                HttpResponse.BodyHandlers.ofString()));
    }
}
