package org.dpdl4j.release;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.commons.math3.distribution.NormalDistribution;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.NonPrivateEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** The sidecar written with a model, and the loader's checks: each tampering is refused, with the reason named. */
class PrivateModelTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final PrivacyEvent DPSGD = NoiseCalibration.dpSgd(0.01, 1.1, 500);

    @TempDir
    Path tmp;

    private static PrivateModel model(PrivacyEvent event, String accountant) {
        MultiLayerNetwork net = Models.mlp(ModelOptions.mnist().withSeed(7));
        return PrivateModel.of(net, "training", event, accountant, 1e-5, new InputSpec(1, 28, 28, 255), Map.of("noise_multiplier", 1.1));
    }

    /** Saved and loaded: the same outputs bit for bit, the same claim, and the sidecar names the model's SHA-256. */
    @Test
    void roundTripKeepsOutputsAndClaim() throws Exception {
        PrivateModel m = model(DPSGD, "pld");
        INDArray x = Nd4j.rand(DataType.FLOAT, 5, 784);
        INDArray before = m.output(x);
        PrivacySidecar written = m.save(tmp, Map.of("tuning.json", "{\"best\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        assertEquals(List.of("model.zip", "privacy.json", "tuning.json"), written.released());
        assertEquals("{\"best\":1}", Files.readString(tmp.resolve("tuning.json")), "a file the sidecar lists is written");
        var bad = assertThrows(IllegalArgumentException.class, () -> m.save(tmp.resolve("x"), Map.of("../up.json", new byte[0])));
        assertTrue(bad.getMessage().contains("'../up.json'"), bad.getMessage());
        assertFalse(Files.exists(tmp.resolve("x")), "nothing is written for a refused name");
        assertEquals(org.dpdl4j.datasets.Sha256.hex(Files.readAllBytes(tmp.resolve("model.zip"))), written.modelSha256());
        PrivateModel loaded = PrivateModel.load(tmp, LoadPolicy.privateOnly());
        assertArrayEquals(before.ravel().toFloatVector(), loaded.output(x).ravel().toFloatVector(), 0f);
        assertEquals(m.guarantee().epsilon(), loaded.guarantee().epsilon(), 0.0);
        assertEquals(DPSGD, loaded.event());
        assertEquals(new InputSpec(1, 28, 28, 255), loaded.input());
        assertEquals("pld", loaded.accountant());
        Map<?, ?> json = JSON.readValue(tmp.resolve("privacy.json").toFile(), Map.class);
        assertEquals(1, json.get("schema_version"));
        assertEquals("pld", json.get("accountant"));
        assertEquals(false, json.get("non_private"));
        assertFalse(PrivacySidecar.currentLibraryVersion().contains("${"), "the version is filtered in at build time");
    }

    /**
     * The claimed ε of one Gaussian mechanism against its exact privacy profile (Balle &amp; Wang 2018, arXiv:1805.06530,
     * Theorem 8): δ(ε) = Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ). The claim must not be below the true ε, so δ(claimed ε) ≤ δ.
     */
    @Test
    void claimedEpsilonIsNotBelowTheExactGaussianEpsilon() throws Exception {
        double sigma = 2.0;
        for (String accountant : List.of("rdp", "pld")) {
            PrivacySidecar s = model(new GaussianEvent(sigma), accountant).save(tmp.resolve(accountant));
            double eps = s.epsilon();
            NormalDistribution phi = new NormalDistribution();
            double exactDelta = phi.cumulativeProbability(1 / (2 * sigma) - eps * sigma)
                    - Math.exp(eps) * phi.cumulativeProbability(-1 / (2 * sigma) - eps * sigma);
            assertTrue(exactDelta <= 1e-5, accountant + ": delta(" + eps + ") = " + exactDelta + " exceeds 1e-5");
            assertTrue(exactDelta > 1e-7, accountant + " is not wildly loose: delta(" + eps + ") = " + exactDelta);
        }
    }

    @Test
    void missingSidecarIsRefused() throws Exception {
        model(DPSGD, "rdp").save(tmp);
        Files.delete(tmp.resolve("privacy.json"));
        var e = assertThrows(UnverifiedModelException.class, () -> PrivateModel.load(tmp, LoadPolicy.any()));
        assertTrue(e.getMessage().contains("privacy.json is missing"), e.getMessage());
    }

    @Test
    void anotherModelIsRefused() throws Exception {
        model(DPSGD, "rdp").save(tmp);
        byte[] bytes = Files.readAllBytes(tmp.resolve("model.zip"));
        Path other = tmp.resolve("other");
        MultiLayerNetwork net = Models.mlp(ModelOptions.mnist().withSeed(8));
        PrivateModel.of(net, "training", DPSGD, "rdp", 1e-5, null, null).save(other);
        Files.copy(other.resolve("model.zip"), tmp.resolve("model.zip"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        var e = assertThrows(UnverifiedModelException.class, () -> PrivateModel.load(tmp, LoadPolicy.any()));
        assertTrue(e.getMessage().contains("SHA-256") && e.getMessage().contains("not the one"), e.getMessage());
        Files.write(tmp.resolve("model.zip"), bytes);
        PrivateModel.load(tmp, LoadPolicy.any()); // the original bytes pass again
    }

    /** A sidecar whose ε is below what its event costs, by the smallest step, is refused; the same file with ε raised is not. */
    @Test
    void understatedEpsilonIsRefused() throws Exception {
        double eps = model(DPSGD, "rdp").save(tmp).epsilon();
        rewrite(tmp, "\"epsilon\" : " + eps, "\"epsilon\" : " + Math.nextDown(eps));
        var e = assertThrows(UnverifiedModelException.class, () -> PrivateModel.load(tmp, LoadPolicy.any()));
        assertTrue(e.getMessage().contains("below the"), e.getMessage());
        rewrite(tmp, "\"epsilon\" : " + Math.nextDown(eps), "\"epsilon\" : " + (eps + 1));
        assertEquals(eps + 1, PrivateModel.load(tmp, LoadPolicy.any()).guarantee().epsilon(), 0.0, "an overstated claim is kept");
    }

    @Test
    void malformedSidecarsAreRefusedByField() throws Exception {
        model(DPSGD, "rdp").save(tmp);
        String good = Files.readString(tmp.resolve("privacy.json"));
        Map<String, String> cases = Map.of(
                "\"accountant\" : \"rdp\"", "\"accountant\" : \"moments\"",
                "\"schema_version\" : 1", "\"schema_version\" : 2",
                "\"non_private\" : false", "\"non_private\" : \"no\"",
                "\"delta\" : 1.0E-5", "\"delta\" : 1.5");
        for (var c : cases.entrySet()) {
            assertTrue(good.contains(c.getKey()), c.getKey());
            Files.writeString(tmp.resolve("privacy.json"), good.replace(c.getKey(), c.getValue()));
            var e = assertThrows(UnverifiedModelException.class, () -> PrivateModel.load(tmp, LoadPolicy.any()), c.getValue());
            String field = c.getKey().substring(1, c.getKey().indexOf('"', 1));
            assertTrue(e.getMessage().contains(field) || e.getMessage().contains("moments"), e.getMessage());
        }
        Files.writeString(tmp.resolve("privacy.json"), good.substring(0, good.length() / 2));
        var e = assertThrows(UnverifiedModelException.class, () -> PrivateModel.load(tmp, LoadPolicy.any()));
        assertTrue(e.getMessage().contains("not valid JSON"), e.getMessage());
    }

    /** A model without a guarantee: ε null and non_private true; loaded only when the policy allows it. */
    @Test
    void nonPrivateModelsNeedThePolicysConsent() throws Exception {
        PrivacySidecar s = model(new NonPrivateEvent(), "rdp").save(tmp);
        assertTrue(s.nonPrivate());
        assertNull(s.epsilon());
        Map<?, ?> json = JSON.readValue(tmp.resolve("privacy.json").toFile(), Map.class);
        assertTrue(json.containsKey("epsilon") && json.get("epsilon") == null);
        var e = assertThrows(UnverifiedModelException.class, () -> PrivateModel.load(tmp, LoadPolicy.privateOnly()));
        assertTrue(e.getMessage().contains("non_private"), e.getMessage());
        assertTrue(PrivateModel.load(tmp, LoadPolicy.any()).nonPrivate());
        // a non-private event dressed up as private is refused whatever the policy
        rewrite(tmp, "\"non_private\" : true", "\"non_private\" : false");
        rewrite(tmp, "\"epsilon\" : null", "\"epsilon\" : 1.0");
        var dressed = assertThrows(UnverifiedModelException.class, () -> PrivateModel.load(tmp, LoadPolicy.any()));
        assertTrue(dressed.getMessage().contains("no finite epsilon"), dressed.getMessage());
    }

    /** A private event whose sidecar says non_private is taken at its word: infinite ε, and the policy's consent needed. */
    @Test
    void aSidecarThatDisclaimsPrivacyLoadsAsNonPrivate() throws Exception {
        double eps = model(DPSGD, "rdp").save(tmp).epsilon();
        rewrite(tmp, "\"non_private\" : false", "\"non_private\" : true");
        rewrite(tmp, "\"epsilon\" : " + eps, "\"epsilon\" : null");
        assertThrows(UnverifiedModelException.class, () -> PrivateModel.load(tmp, LoadPolicy.privateOnly()));
        PrivateModel m = PrivateModel.load(tmp, LoadPolicy.any().withMaxEpsilon(1));
        assertTrue(m.nonPrivate() && Double.isInfinite(m.guarantee().epsilon()), m.guarantee().toString());
    }

    @Test
    void policyCeilingsAreEnforced() throws Exception {
        double eps = model(DPSGD, "pld").save(tmp).epsilon();
        var e = assertThrows(UnverifiedModelException.class, () -> PrivateModel.load(tmp, LoadPolicy.privateOnly().withMaxEpsilon(eps / 2)));
        assertTrue(e.getMessage().contains("above the policy's maximum"), e.getMessage());
        assertThrows(UnverifiedModelException.class, () -> PrivateModel.load(tmp, LoadPolicy.privateOnly().withMaxDelta(1e-6)));
        PrivateModel.load(tmp, LoadPolicy.privateOnly().withMaxEpsilon(eps).withMaxDelta(1e-5));
        assertThrows(IllegalArgumentException.class, () -> LoadPolicy.any().withMaxEpsilon(0));
        assertThrows(IllegalArgumentException.class, () -> LoadPolicy.any().withMaxDelta(0));
    }

    @Test
    void badArgumentsNameTheParameter() {
        MultiLayerNetwork net = Models.mlp(ModelOptions.mnist());
        var a = assertThrows(IllegalArgumentException.class, () -> PrivateModel.of(net, "training", DPSGD, "moments", 1e-5, null, null));
        assertTrue(a.getMessage().contains("accountant"), a.getMessage());
        var k = assertThrows(IllegalArgumentException.class, () -> PrivateModel.of(net, "audit", DPSGD, "rdp", 1e-5, null, null));
        assertTrue(k.getMessage().contains("kind"), k.getMessage());
        var i = assertThrows(IllegalArgumentException.class, () -> new InputSpec(0, 28, 28, 255));
        assertTrue(i.getMessage().contains("channels"), i.getMessage());
    }

    private static void rewrite(Path dir, String from, String to) throws Exception {
        Path p = dir.resolve("privacy.json");
        String s = Files.readString(p, StandardCharsets.UTF_8);
        assertTrue(s.contains(from), "privacy.json lacks " + from + ":\n" + s);
        Files.writeString(p, s.replace(from, to));
    }
}
