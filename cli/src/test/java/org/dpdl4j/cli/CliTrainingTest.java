package org.dpdl4j.cli;

import org.dpdl4j.benchmarks.Reporting;
import static org.dpdl4j.cli.CliRunner.concat;
import static org.dpdl4j.cli.CliRunner.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyEvents;
import org.dpdl4j.accounting.RdpAccountant;
import org.junit.jupiter.api.Test;
import org.dpdl4j.cli.CliRunner.Run;
import org.junit.jupiter.api.io.TempDir;

/** The training and audit commands end to end (the slow half of {@link CliTest}, so that two test forks share the work). */
class CliTrainingTest {
    @TempDir
    Path tmp;

    /** train --accountant pld: σ calibrated by the PLD accountant, which privacy.json and the JSON line name; less noise than RDP. */
    @Test
    void trainWithThePldAccountant() throws Exception {
        Path out = tmp.resolve("pld-run");
        Run r = run("train", "--model", "mlp", "--epochs", "0.05", "--target-epsilon", "1", "--accountant", "pld", "--seed", "4",
                "--output", out.toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        assertEquals("pld", j.get("accountant").asText());
        JsonNode privacy = Reporting.JSON.readTree(out.resolve("privacy.json").toFile());
        assertEquals("pld", privacy.get("accountant").asText(), privacy.toString()); // the registry name, which the loader uses
        double sigma = j.get("noise_multiplier").asDouble();
        long steps = j.get("steps").asLong();
        var event = NoiseCalibration.dpSgd(256.0 / 60000, sigma, steps);
        double eps = org.dpdl4j.accounting.PldAccountant.standard().epsilon(event, 1e-5);
        assertEquals(eps, privacy.get("epsilon").asDouble(), 1e-12);
        assertTrue(eps <= 1.0, "calibrated to the target: " + eps);
        assertTrue(RdpAccountant.standard().epsilon(event, 1e-5) > 1.0, "RDP would charge the same run more than the target");
    }

    /**
     * train --augmult 3: each example's gradient is the mean of three augmented copies, clipped as a whole; the run's
     * event and ε are those of the same DP-SGD run without it, and k is recorded in the JSON line and the sidecar.
     */
    @Test
    void trainWithAugmentationMultiplicity() throws Exception {
        Path out = tmp.resolve("augmult-run");
        Run r = run("train", "--model", "mlp", "--augmult", "3", "--epochs", "0.02", "--noise-multiplier", "1", "--seed", "4",
                "--output", out.toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        assertEquals(3, j.get("augmult").asInt());
        long steps = j.get("steps").asLong();
        assertEquals((long) Math.ceil(0.02 * 60000 / 256.0), steps);
        double eps = org.dpdl4j.accounting.PldAccountant.standard().epsilon(NoiseCalibration.dpSgd(256.0 / 60000, 1.0, steps), 1e-5);
        assertEquals(eps, j.get("epsilon").asDouble(), 1e-12, "k does not change the event");
        JsonNode privacy = Reporting.JSON.readTree(out.resolve("privacy.json").toFile());
        assertEquals(3, privacy.get("configuration").get("augmult").asInt(), privacy.toString());
        assertTrue(j.get("test_accuracy").asDouble() > 0.15, "it trained (chance is 0.1): " + j);
    }

    /**
     * train --data-normalisation on a small image folder, killed after its charge (its step-0 checkpoint, which precedes
     * the release) and resumed: the statistics' release is charged once with the run (the ledger's one entry, the
     * sidecar's event and epsilon are the composition of two Gaussian mechanisms with the DP-SGD run, more than the run
     * alone), the model normalises by statistics released on resume, and the option is refused off a ScatterNet and
     * when its own cost exceeds the target.
     */
    @Test
    void trainWithThePrivateDataNormalisation() throws Exception {
        Path folder = tmp.resolve("digits");
        java.util.Random rng = new java.util.Random(5);
        for (String label : new String[]{"a", "b"}) {
            Files.createDirectories(folder.resolve(label));
            for (int i = 0; i < 150; i++) {
                var image = new java.awt.image.BufferedImage(28, 28, java.awt.image.BufferedImage.TYPE_BYTE_GRAY);
                for (int y = 0; y < 28; y++) {
                    for (int x = 0; x < 28; x++) {
                        int v = label.equals("a") ? (x < 14 ? 200 : 20) : (y < 14 ? 200 : 20);
                        image.getRaster().setSample(x, y, 0, Math.max(0, Math.min(255, v + rng.nextInt(40) - 20)));
                    }
                }
                javax.imageio.ImageIO.write(image, "png", folder.resolve(label).resolve(i + ".png").toFile());
            }
        }
        Path out = tmp.resolve("datanorm-run");
        Path ledgerFile = tmp.resolve("datanorm-ledger.jsonl");
        Path log = tmp.resolve("datanorm.log");
        // killed right after the charge and the release (the step-0 checkpoint), then resumed: one charge, one release
        Process p = CliRunner.startCli(log, "train", "--dataset", "folder:" + folder, "--model", "scatternet-linear",
                "--data-normalisation", "8", "--optimizer", "momentum", "--lr", "2", "--clip", "0.1", "--batch-size", "60",
                "--epochs", "50", "--seed", "3", "--ledger", ledgerFile.toString(), "--ledger-budget", "10", "--output", out.toString(),
                "--no-progress");
        Path checkpoint = out.resolve("operator").resolve("checkpoint");
        try {
            CliRunner.awaitFile(checkpoint.resolve("state.json"), p, log);
        } finally { // the child ends whatever happens
            p.destroyForcibly();
            assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
        }
        assertTrue(!Files.exists(out.resolve("model.zip")), "200 steps cannot be done already");
        try (var files = Files.list(checkpoint)) {
            Path step0 = files.filter(f -> f.getFileName().toString().startsWith("model-step-0")).findFirst().orElseThrow();
            assertNull(((org.dpdl4j.models.Scattering) ModelSerializer.restoreMultiLayerNetwork(step0.toFile()).getLayer(0).conf()
                    .getLayer()).getFeatureMean(), "the step-0 checkpoint, written right after the charge, precedes the release");
        }
        Run r = run("train", "--resume", out.toString(), "--no-progress", "--json");
        assertEquals(0, r.status(), r.err() + r.out());
        assertTrue(r.out().contains("data normalisation released: sigma_norm 8.0") && r.out().contains("examples clipped")
                && r.out().contains("[operator] data normalisation: "), "the resume released the statistics: " + r.out());
        JsonNode j = r.lastJson();
        assertEquals(8.0, j.get("data_normalisation").asDouble());
        assertEquals(org.dpdl4j.dpsgd.DpSgdConfig.stepsForEpochs(50, 60.0 / j.get("n").asInt()), j.get("steps").asLong()); // n ~ 240
        var expected = org.dpdl4j.accounting.ComposedEvent.of(org.dpdl4j.dpsgd.PrivateNormalisation.event(8),
                NoiseCalibration.dpSgd(j.get("sampling_rate").asDouble(), j.get("noise_multiplier").asDouble(), j.get("steps").asLong()));
        var pld = org.dpdl4j.accounting.PldAccountant.standard();
        assertEquals(pld.epsilon(expected, 1e-5), j.get("epsilon").asDouble(), 1e-12);
        assertTrue(j.get("epsilon").asDouble() <= 3.0, "calibrated for the total: " + j);
        assertTrue(pld.epsilon(NoiseCalibration.dpSgd(j.get("sampling_rate").asDouble(), j.get("noise_multiplier").asDouble(),
                j.get("steps").asLong()), 1e-5) < j.get("epsilon").asDouble() - 0.01, "the release costs something");
        JsonNode privacy = Reporting.JSON.readTree(out.resolve("privacy.json").toFile());
        assertEquals(expected, PrivacyEvents.fromMap(Reporting.JSON.convertValue(privacy.get("event"), java.util.Map.class)));
        try (var ledger = org.dpdl4j.release.PrivacyLedger.openExisting(ledgerFile)) {
            assertEquals(java.util.List.of(expected), ledger.entries().stream().filter(e -> e.charged()).map(e -> e.event()).toList(),
                    "charged once, with the release");
        }
        MultiLayerNetwork loaded = ModelSerializer.restoreMultiLayerNetwork(out.resolve("model.zip").toFile());
        var scattering = (org.dpdl4j.models.Scattering) loaded.getLayer(0).conf().getLayer();
        assertEquals(81, scattering.getFeatureMean().length, "released on --resume, under the one charge");
        assertTrue(scattering.getFeatureMean()[0] > 0.05, "the order-0 channel's mean, not the placeholder's 0: "
                + scattering.getFeatureMean()[0]);
        // a folder's test split is private: its exact accuracy is the operator's (console), not the release's (--json)
        assertTrue(j.get("test_accuracy").isNull(), "not released: " + j);
        java.util.regex.Matcher operatorAccuracy = java.util.regex.Pattern.compile("test accuracy ([0-9.]+) \\[operator: on a private "
                + "test split").matcher(r.out());
        assertTrue(operatorAccuracy.find() && Double.parseDouble(operatorAccuracy.group(1)) > 0.9, "two easy classes: " + r.out());

        // any MultiLayerNetwork model: its input standardised by a FeatureStandardization layer the run releases into
        Path mlpOut = tmp.resolve("datanorm-mlp");
        Run mlp = run("train", "--dataset", "folder:" + folder, "--model", "mlp", "--data-normalisation", "8", "--batch-size", "60",
                "--epochs", "2", "--noise-multiplier", "1", "--seed", "3", "--output", mlpOut.toString(), "--no-progress", "--json");
        assertEquals(0, mlp.status(), mlp.err() + mlp.out());
        JsonNode m = mlp.lastJson();
        assertEquals(org.dpdl4j.accounting.ComposedEvent.of(org.dpdl4j.dpsgd.PrivateNormalisation.event(8), NoiseCalibration.dpSgd(
                m.get("sampling_rate").asDouble(), 1, m.get("steps").asLong())), PrivacyEvents.fromMap(Reporting.JSON.convertValue(
                Reporting.JSON.readTree(mlpOut.resolve("privacy.json").toFile()).get("event"), java.util.Map.class)));
        assertEquals(1.0, m.get("data_normalisation_clip_mean").asDouble(), 0, "sqrt(1 channel)");
        var fs = (org.dpdl4j.models.FeatureStandardization) ModelSerializer.restoreMultiLayerNetwork(mlpOut.resolve("model.zip").toFile())
                .getLayer(0).conf().getLayer();
        assertEquals(1, fs.getFeatureMean().length);
        assertEquals(0.43, fs.getFeatureMean()[0], 0.1, "the images' mean pixel ((200 + 20) / 2 / 255), with noise 8/300");

        Run refused = run("train", "--model", "wrn-16-4", "--data-normalisation", "8", "--output", tmp.resolve("refused").toString());
        assertEquals(2, refused.status());
        assertTrue(refused.err().contains("not of the residual network wrn-16-4"), refused.err());
        Run tooCostly = run("train", "--dataset", "folder:" + folder, "--model", "scatternet-linear", "--data-normalisation", "2",
                "--target-epsilon", "1", "--batch-size", "60", "--output", tmp.resolve("refused2").toString());
        assertEquals(2, tooCostly.status());
        assertTrue(tooCostly.err().contains("--data-normalisation 2.0 alone costs epsilon"), tooCostly.err());

        // audit train takes the same option: the claim is the composition (more than DP-SGD alone), an honest run passes
        // and a noise-free one claiming 1 fails
        String[] audit = {"audit", "train", "--dataset", "folder:" + folder, "--model", "scatternet-linear", "--data-normalisation", "8",
                "--optimizer", "momentum", "--lr", "2", "--clip", "0.1", "--batch-size", "60", "--epochs", "20", "--canaries", "1000",
                "--seed", "3", "--no-progress", "--json"};
        Run honest = run(concat(audit, "--target-epsilon", "3"));
        assertEquals(0, honest.status(), honest.err() + honest.out());
        JsonNode h = honest.lastJson();
        assertEquals(8.0, h.get("data_normalisation").asDouble());
        var sgd = NoiseCalibration.dpSgd(h.get("sampling_rate").asDouble(), h.get("noise_multiplier").asDouble(), h.get("steps").asLong());
        assertEquals("pld", h.get("accountant").asText(), "the claim train publishes for the same run");
        var acc = org.dpdl4j.accounting.PldAccountant.standard();
        assertEquals(acc.epsilon(org.dpdl4j.accounting.ComposedEvent.of(org.dpdl4j.dpsgd.PrivateNormalisation.event(8), sgd), 1e-5),
                h.get("claimed_epsilon").asDouble(), 1e-12, "the claim is the statistics' release composed with DP-SGD");
        assertEquals(3.0, h.get("claimed_epsilon").asDouble(), 1e-3, "sigma calibrated for the composition");
        assertTrue(h.get("claimed_epsilon").asDouble() <= 3.0 && acc.epsilon(sgd, 1e-5) < h.get("claimed_epsilon").asDouble() - 0.01, h.toString());
        assertTrue(h.get("passed").asBoolean() && h.get("epsilon_lower_bound").asDouble() <= h.get("claimed_epsilon").asDouble(), h.toString());
        Run leaky = run(concat(audit, "--noise-multiplier", "0", "--allow-non-private", "--claimed-epsilon", "1"));
        assertEquals(4, leaky.status(), leaky.err() + leaky.out());
        assertTrue(leaky.lastJson().get("epsilon_lower_bound").asDouble() > 1, leaky.lastJson().toString());
        Run inputCanaries = run(concat(audit, "--canary-type", "input"));
        assertEquals(2, inputCanaries.status());
        assertTrue(inputCanaries.err().contains("--data-normalisation is audited with --canary-type gradient, not input"), inputCanaries.err());
    }

    /**
     * audit train: an honest run passes (exit 0, lower bound at most the accountant's ε); a noise-free run claiming
     * ε = 1 fails with exit status 4 and a lower bound above 1.
     */
    @Test
    void auditTrainPassesAnHonestRunAndFailsAnOverclaim() throws Exception {
        String[] base = {"audit", "train", "--model", "mlp", "--train-size", "2000", "--batch-size", "200", "--epochs", "6",
                "--canaries", "1000", "--seed", "3", "--no-progress", "--json"};
        Run honest = run(concat(base, "--target-epsilon", "2"));
        assertEquals(0, honest.status(), honest.err() + honest.out());
        JsonNode h = honest.lastJson();
        assertTrue(h.get("passed").asBoolean() && h.get("epsilon_lower_bound").asDouble() <= h.get("claimed_epsilon").asDouble(), h.toString());
        assertEquals(2.0, h.get("claimed_epsilon").asDouble(), 1e-3, "by default the claim is the accountant's epsilon");
        Run overclaim = run(concat(base, "--noise-multiplier", "0", "--allow-non-private", "--claimed-epsilon", "1"));
        assertEquals(4, overclaim.status(), overclaim.err() + overclaim.out());
        assertTrue(overclaim.lastJson().get("epsilon_lower_bound").asDouble() > 1, overclaim.lastJson().toString());
        // --ema audits the released average: an honest run still passes, a noise-free one still fails
        Run honestEma = run(concat(base, "--target-epsilon", "2", "--ema", "0.9"));
        assertEquals(0, honestEma.status(), honestEma.err() + honestEma.out());
        assertTrue(honestEma.lastJson().get("epsilon_lower_bound").asDouble() <= 2.0 + 1e-3, honestEma.lastJson().toString());
        Run overclaimEma = run(concat(base, "--noise-multiplier", "0", "--allow-non-private", "--claimed-epsilon", "1", "--ema", "0.9"));
        assertEquals(4, overclaimEma.status(), overclaimEma.err() + overclaimEma.out());
        for (String tuner : new String[]{"subsampled", "propose-test"}) { // trials without noise, claiming a tuning's epsilon of 2
            Run tune = run("audit", "tune", "--tuner", tuner, "--model", "mlp", "--train-size", "4000", "--batch-size", "32", "--epochs", "3",
                    "--repetitions", "fixed:2", "--space", "lr=cat:0.3,0.6", "--noise-multiplier", "0", "--allow-non-private",
                    "--claimed-epsilon", "2", "--seed", "3", "--no-progress", "--json");
            assertEquals(4, tune.status(), tuner + ": " + tune.err() + tune.out());
            assertTrue(tune.lastJson().get("epsilon_lower_bound").asDouble() > 2, tune.lastJson().toString());
        }
        Run badNoise = run("audit", "tune", "--score-noise", "0", "--no-progress");
        assertEquals(2, badNoise.status());
        assertTrue(badNoise.err().contains("--score-noise") && badNoise.err().contains("0.0"), badNoise.err());
        Run badSize = run("reproduce", "audit-table", "--audit-train-size", "10", "--output", tmp.resolve("at").toString());
        assertEquals(2, badSize.status());
        assertTrue(badSize.err().contains("--train-size must be") && badSize.err().contains("10"), badSize.err()); // its older name
        Run preset = run("reproduce", "dphypo-table1", "--paper-grid", "--runs", "3", "--output", tmp.resolve("pg").toString());
        assertEquals(2, preset.status());
        assertTrue(preset.err().contains("--paper-grid sets") && preset.err().contains("drop --runs"), preset.err());
        Run refused = run("audit", "train", "--noise-multiplier", "0", "--no-progress");
        assertEquals(2, refused.status());
        assertTrue(refused.err().contains("--allow-non-private"), refused.err());
    }

    /**
     * audit train --augmult: the audited run averages k augmented copies of every example, the input canaries too, and
     * each canary is scored on augmented copies of itself. An honest run passes; a noise-free run claiming ε = 1 fails
     * (scored on the canary alone, as before the copies were scored, the same noise-free run at k = 2 measured only 0.49
     * and passed), with input canaries and with gradient canaries, and in audit tune. Spark is refused before a cluster
     * starts.
     */
    @Test
    void auditTrainWithAugmentationMultiplicity() throws Exception {
        String[] base = {"audit", "train", "--model", "mlp", "--train-size", "200", "--batch-size", "100", "--epochs", "200",
                "--clip", "10", "--canaries", "400", "--canary-type", "input", "--augmult", "2", "--seed", "3", "--no-progress", "--json"};
        Run honest = run(concat(base, "--target-epsilon", "2"));
        assertEquals(0, honest.status(), honest.err() + honest.out());
        JsonNode h = honest.lastJson();
        assertEquals(2, h.get("augmult").asInt(), h.toString());
        assertTrue(h.get("design").asText().contains("32 augmented copies"), h.toString());
        assertTrue(h.get("passed").asBoolean() && h.get("epsilon_lower_bound").asDouble() <= h.get("claimed_epsilon").asDouble(), h.toString());
        Run overclaim = run(concat(base, "--noise-multiplier", "0", "--allow-non-private", "--claimed-epsilon", "1"));
        assertEquals(4, overclaim.status(), overclaim.err() + overclaim.out());
        assertTrue(overclaim.lastJson().get("epsilon_lower_bound").asDouble() > 1, overclaim.lastJson().toString());
        // gradient canaries sit on first-layer weights whose inputs no copy lights (CanaryAuditTest checks the set)
        String[] gradientBase = {"audit", "train", "--model", "mlp", "--train-size", "2000", "--batch-size", "200", "--epochs", "6",
                "--canaries", "1000", "--augmult", "2", "--seed", "3", "--no-progress", "--json"};
        Run gradient = run(concat(gradientBase, "--noise-multiplier", "0", "--allow-non-private", "--claimed-epsilon", "1"));
        assertEquals(4, gradient.status(), gradient.err() + gradient.out());
        JsonNode g = gradient.lastJson();
        assertTrue(g.get("design").asText().contains("inputs are 0 in all training data and its augmented copies"), g.toString());
        assertTrue(g.get("epsilon_lower_bound").asDouble() > 1, g.toString());
        Run gradientHonest = run(concat(gradientBase, "--target-epsilon", "2"));
        assertEquals(0, gradientHonest.status(), gradientHonest.err() + gradientHonest.out());
        assertTrue(gradientHonest.lastJson().get("epsilon_lower_bound").asDouble() <= 2.0 + 1e-3, gradientHonest.lastJson().toString());
        // audit tune --augmult: every trial averages the copies; noise-free trials claiming the tuning's epsilon of 2 are caught
        Run tune = run("audit", "tune", "--model", "mlp", "--train-size", "4000", "--batch-size", "32", "--epochs", "3",
                "--repetitions", "fixed:2", "--space", "lr=cat:0.3,0.6", "--augmult", "2", "--noise-multiplier", "0",
                "--allow-non-private", "--claimed-epsilon", "2", "--seed", "3", "--no-progress", "--json");
        assertEquals(4, tune.status(), tune.err() + tune.out());
        assertEquals(2, tune.lastJson().get("augmult").asInt(), tune.lastJson().toString());
        assertTrue(tune.lastJson().get("epsilon_lower_bound").asDouble() > 2, tune.lastJson().toString());
        Run spark = run("audit", "train", "--augmult", "2", "--executor", "spark", "--spark-master", "local[1]", "--no-progress");
        assertEquals(2, spark.status(), spark.err());
        assertTrue(spark.err().contains("--augmult 2 runs on this JVM only"), spark.err());
    }

    /**
     * honest-mnist at a tiny scale, with the ScatterNet recipe that releases its feature statistics: both rows are at
     * most the total epsilon; the tuned row's epsilon exceeds what the same subsampled tuning costs without its score
     * releases (account subsampled-tuning at the same sigma), so the scores are counted; the single run's epsilon is the
     * PLD epsilon of the statistics' release composed with its (q, sigma, T), more than that run alone, so the
     * statistics are counted; the release line holds no realised K or trial list; CSV and PNG are written; {@code
     * --tuned-only} reproduces the tunings exactly without the single runs.
     */
    @Test
    void reproduceHonestMnistCountsTheSearch(@TempDir Path dir) throws Exception {
        Run r = run("reproduce", "honest-mnist", "--recipe", "scatternet-datanorm", "--epochs", "0.5", "--train-size", "4500",
                "--test-size", "500", "--seeds", "1", "--json", "--output", dir.toString());
        assertEquals(0, r.status(), r.err());
        JsonNode j = r.lastJson();
        JsonNode tuning = j.get("tunings").get(0);
        double total = j.get("epsilon_total").asDouble();
        assertTrue(total <= 3.0 && total > 2.9, j.toString());
        assertEquals(4096, j.get("recipe").get("batch_size").asInt());
        assertTrue(j.get("recipe").get("normalisation").asText().startsWith("private data normalisation"), j.toString());
        assertTrue(j.get("recipe").get("search_grid_on_tuning_subset").asText().contains(":3]"), "the grid is recorded: " + j);
        double q = 4096.0 / 4500;
        long steps = org.dpdl4j.dpsgd.DpSgdConfig.stepsForEpochs(0.5, q);
        Run withoutScores = run("account", "subsampled-tuning", "--sampling-rate", String.valueOf(q), "--noise-multiplier",
                tuning.get("noise_multiplier").asText(), "--steps", String.valueOf(steps), "--repetitions", "poisson:2",
                "--tune-fraction", "0.1", "--variant", "1", "--json");
        assertEquals(0, withoutScores.status(), withoutScores.err());
        assertTrue(withoutScores.lastJson().get("epsilon").asDouble() < total, "the noisy scores must cost something");
        JsonNode single = j.get("single_run");
        double sigma = single.get("runs").get(0).get("noise_multiplier").asDouble();
        var pld = org.dpdl4j.accounting.PldAccountant.standard();
        assertEquals(pld.epsilon(org.dpdl4j.accounting.ComposedEvent.of(org.dpdl4j.dpsgd.PrivateNormalisation.event(8),
                NoiseCalibration.dpSgd(q, sigma, steps)), 1e-5), single.get("epsilon").asDouble(), 1e-12);
        assertTrue(pld.epsilon(NoiseCalibration.dpSgd(q, sigma, steps), 1e-5) < single.get("epsilon").asDouble() - 0.01,
                "the statistics' release must cost something");
        assertTrue(single.get("epsilon").asDouble() <= 3.0);
        double acc = j.get("test_accuracy").asDouble();
        assertTrue(acc >= 0 && acc <= 1, j.toString());
        assertEquals(1e-5, j.get("delta").asDouble(), 0.0);
        assertTrue(j.get("candidate").has("learning_rate"), j.toString());
        assertTrue(j.findValue("trials") == null && j.findValue("repetitions") == null && tuning.get("seconds") == null,
                "no realised K, nor the time that grows with it, in the release: " + j);
        List<String> csv = Files.readAllLines(dir.resolve("honest-mnist.csv"));
        assertEquals("series,repetition,test_accuracy,epsilon", csv.get(0));
        assertTrue(csv.stream().anyMatch(l -> l.startsWith("\"dpdl4j tuned")), csv.toString());
        byte[] png = Files.readAllBytes(dir.resolve("honest-mnist.png"));
        assertTrue(png.length > 1000 && png[1] == 'P' && png[2] == 'N' && png[3] == 'G');
        // --tuned-only skips the single runs and leaves the tunings exactly as they were
        Run tunedOnly = run("reproduce", "honest-mnist", "--recipe", "scatternet-datanorm", "--epochs", "0.5", "--train-size", "4500",
                "--test-size", "500", "--seeds", "1", "--json", "--tuned-only", "--output", dir.resolve("tuned-only").toString());
        assertEquals(0, tunedOnly.status(), tunedOnly.err());
        assertEquals(j.get("tunings"), tunedOnly.lastJson().get("tunings"));
        assertTrue(tunedOnly.lastJson().get("single_run") == null && !tunedOnly.out().contains("single run 1:"), tunedOnly.out());
        Run quickElsewhere = run("reproduce", "ps-figure6", "--quick", "--output", dir.toString());
        assertEquals(2, quickElsewhere.status());
        assertTrue(quickElsewhere.err().contains("Unknown option: '--quick'"), quickElsewhere.err());
        Run tunedOnlyElsewhere = run("reproduce", "ps-figure6", "--tuned-only", "--output", dir.resolve("elsewhere").toString());
        assertEquals(2, tunedOnlyElsewhere.status());
        assertTrue(tunedOnlyElsewhere.err().contains("Unknown option: '--tuned-only'"), tunedOnlyElsewhere.err());
        assertTrue(!Files.exists(dir.resolve("elsewhere")), "nothing written for a refused command");
        Run badRecipe = run("reproduce", "honest-mnist", "--recipe", "nope", "--output", dir.resolve("bad").toString());
        assertEquals(2, badRecipe.status());
        assertTrue(badRecipe.err().contains("--recipe must be one of [scatternet, scatternet-datanorm, standard-cnn], got 'nope'"),
                badRecipe.err());
        assertTrue(!Files.exists(dir.resolve("bad")), "nothing written for a refused command");
    }
}
