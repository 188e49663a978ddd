package org.dpdl4j.cli;

import static org.dpdl4j.cli.CliRunner.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.benchmarks.Reporting;
import org.dpdl4j.cli.CliRunner.Run;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.dpdl4j.release.InputSpec;
import org.dpdl4j.release.PrivateModel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code dpdl4j serve}: refuses what the verified loader refuses; serves over HTTP; stops gracefully on SIGTERM. */
class ServeTest {
    @TempDir
    Path tmp;

    private Path release(String name, double sigma) throws Exception {
        Path dir = tmp.resolve(name);
        PrivateModel.of(Models.mlp(ModelOptions.mnist()), "training", NoiseCalibration.dpSgd(0.01, sigma, 100), "rdp", 1e-5,
                new InputSpec(1, 28, 28, 255), null).save(dir);
        return dir;
    }

    @Test
    void refusesUnverifiedModelsWithOneLine() throws Exception {
        Path dir = release("m", 1.0);
        Files.delete(dir.resolve("privacy.json"));
        Run r = run("serve", dir.toString(), "--port", "0");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("privacy.json is missing") && r.err().strip().lines().count() == 1, r.err());
        Path np = tmp.resolve("np");
        PrivateModel.of(Models.mlp(ModelOptions.mnist()), "training", new org.dpdl4j.accounting.NonPrivateEvent(), "rdp", 1e-5, null, null)
                .save(np);
        Run refused = run("serve", np.toString(), "--port", "0");
        assertEquals(2, refused.status());
        assertTrue(refused.err().contains("non_private"), refused.err());
        Run strict = run("serve", release("strict", 0.6).toString(), "--port", "0", "--max-epsilon", "1");
        assertEquals(2, strict.status());
        assertTrue(strict.err().contains("above the policy's maximum 1.0"), strict.err());
        Run badPort = run("serve", dir.toString(), "--port", "70000");
        assertEquals(2, badPort.status());
        assertTrue(badPort.err().contains("--port"), badPort.err());
        Path ok = release("ok", 1.0);
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            Run busy = run("serve", ok.toString(), "--port", String.valueOf(taken.getLocalPort()));
            assertEquals(2, busy.status());
            assertTrue(busy.err().contains("--port " + taken.getLocalPort()) && busy.err().strip().lines().count() == 1, busy.err());
        }
        Run badHost = run("serve", ok.toString(), "--port", "0", "--host", "no-such-host.invalid");
        assertEquals(2, badHost.status());
        assertTrue(badHost.err().contains("--host no-such-host.invalid"), badHost.err());
        Run notHere = run("serve", ok.toString(), "--port", "0", "--host", "192.0.2.1"); // TEST-NET-1: no machine's address
        assertEquals(2, notHere.status());
        assertTrue(notHere.err().contains("--host 192.0.2.1 is not an address of this machine") && !notHere.err().contains("--port"),
                notHere.err());
    }

    @Test
    void servesUntilTerminated() throws Exception {
        Path dir = release("served", 1.0);
        Path log = tmp.resolve("serve.log");
        Process p = CliRunner.startCli(log, "serve", dir.toString(), "--port", "0", "--threads", "2", "--read-timeout", "3");
        try {
            Pattern listening = Pattern.compile("on http://127\\.0\\.0\\.1:(\\d+)");
            long end = System.nanoTime() + 120_000_000_000L;
            Matcher m;
            while (!(m = listening.matcher(Files.exists(log) ? Files.readString(log) : "")).find()) {
                if (!p.isAlive() || System.nanoTime() > end) {
                    throw new AssertionError("serve never listened; log:\n" + Files.readString(log));
                }
                Thread.sleep(50);
            }
            String base = "http://127.0.0.1:" + m.group(1);
            HttpClient http = HttpClient.newHttpClient();
            var privacy = http.send(HttpRequest.newBuilder(URI.create(base + "/privacy")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, privacy.statusCode());
            assertEquals(Reporting.JSON.readTree(dir.resolve("privacy.json").toFile()), Reporting.JSON.readTree(privacy.body()));
            var predict = http.send(HttpRequest.newBuilder(URI.create(base + "/predict")).header("Content-Type", "application/octet-stream")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[2 * 784])).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, predict.statusCode(), predict.body());
            assertEquals(2, Reporting.JSON.readTree(predict.body()).get("classes").size());
            stalledClientsDoNotFreezeTheServer(Integer.parseInt(m.group(1)), http, base);
            p.destroy(); // SIGTERM: the shutdown hook stops the server gracefully
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "serve did not stop on SIGTERM");
        } finally {
            p.destroyForcibly();
        }
    }

    /**
     * The stalled clients (item 6), more of them than request threads: each sends the headers of a 3,200-byte
     * POST and 2 bytes of it, then nothing. /health and /predict are still answered at once, and the server answers the
     * stalled requests 408 and closes their connections after its read timeout (3 s here).
     */
    private static void stalledClientsDoNotFreezeTheServer(int port, HttpClient http, String base) throws Exception {
        List<java.net.Socket> stalled = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                java.net.Socket s = new java.net.Socket("127.0.0.1", port);
                s.getOutputStream().write(("POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                        + "Content-Length: 3200\r\n\r\n\0\0").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                stalled.add(s);
            }
            Thread.sleep(200); // the server has taken them up
            long start = System.nanoTime();
            var health = http.send(HttpRequest.newBuilder(URI.create(base + "/health")).timeout(java.time.Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode());
            var predict = http.send(HttpRequest.newBuilder(URI.create(base + "/predict")).timeout(java.time.Duration.ofSeconds(2))
                    .header("Content-Type", "application/octet-stream").POST(HttpRequest.BodyPublishers.ofByteArray(new byte[784]))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, predict.statusCode(), predict.body());
            assertTrue(System.nanoTime() - start < 2_000_000_000L, "answered while the stalled clients wait");
            for (java.net.Socket s : stalled) {
                s.setSoTimeout(15_000);
                String answer;
                try {
                    answer = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII); // to the end
                } catch (java.net.SocketException e) {
                    answer = ""; // reset: closed too
                }
                assertTrue(answer.isEmpty() || answer.startsWith("HTTP/1.1 408"), "the server answers 408 and closes a connection "
                        + "whose request does not arrive in time: " + answer);
            }
        } finally {
            for (java.net.Socket s : stalled) {
                s.close();
            }
        }
    }
}
