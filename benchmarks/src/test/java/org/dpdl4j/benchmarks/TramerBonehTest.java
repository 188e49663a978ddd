package org.dpdl4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PldAccountant;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.PrivateNormalisation;
import org.dpdl4j.models.Scattering;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** The data normalisation's release is charged: the row's total ε exceeds that of its DP-SGD run alone. */
class TramerBonehTest {
    private static LabeledData images(int n) {
        java.util.Random rng = new java.util.Random(11);
        float[] pixels = new float[n * 784];
        for (int i = 0; i < pixels.length; i++) {
            pixels[i] = rng.nextFloat();
        }
        INDArray y = Nd4j.zeros(DataType.FLOAT, n, 10);
        for (int i = 0; i < n; i++) {
            y.putScalar(i, rng.nextInt(10), 1);
        }
        return new LabeledData(Nd4j.create(pixels, new long[]{n, 784}, 'c'), y, 1, 28, 28);
    }

    /**
     * A row with the data normalisation: total ε = 3 (calibrated), strictly more than the PLD ε of the same DP-SGD run
     * (q, σ, T) without the statistics' release, and exactly the PLD ε of both composed, computed here anew; the model
     * normalises by the released statistics and has no GroupNorm.
     */
    @Test
    void theDataNormalisationIsChargedToTheTotal() {
        LabeledData train = images(500);
        PldAccountant pld = PldAccountant.standard();
        TramerBoneh.Row row = new TramerBoneh.Row("mnist", "scatternet-linear", 50, 8, 1, 0.987, true);
        TramerBoneh.Run r = TramerBoneh.train(row, 1, train, 3, 2, pld, 3);
        double q = 50.0 / 500;
        long steps = DpSgdConfig.stepsForEpochs(1, q);
        double alone = pld.epsilon(NoiseCalibration.dpSgd(q, r.sigma(), steps), 1e-5);
        assertTrue(r.epsilon() <= 3 && r.epsilon() > 2.99, "calibrated total " + r.epsilon());
        assertTrue(alone < r.epsilon() - 0.01, "DP-SGD alone " + alone + " must be below the total " + r.epsilon());
        double composed = pld.epsilon(org.dpdl4j.accounting.ComposedEvent.of(PrivateNormalisation.event(TramerBoneh.SIGMA_NORM),
                NoiseCalibration.dpSgd(q, r.sigma(), steps)), 1e-5);
        assertEquals(composed, r.epsilon(), 1e-12);
        MultiLayerNetwork net = (MultiLayerNetwork) r.model();
        assertNotNull(((Scattering) net.getLayer(0).conf().getLayer()).getFeatureMean(), "the released statistics are in the model");
        assertEquals(2, net.getnLayers(), "no GroupNorm");
    }

    /**
     * The ablation's other ε: a GroupNorm row trained at total ε = 1 has exactly the PLD ε of its own DP-SGD run,
     * computed here anew, within the calibration's tolerance below 1, and more noise than the same row at ε = 3.
     */
    @Test
    void aRowTrainsAtTheEpsilonAsked() {
        LabeledData train = images(500);
        PldAccountant pld = PldAccountant.standard();
        TramerBoneh.Row row = new TramerBoneh.Row("mnist", "scatternet-linear", 50, 8, 1, 0.987, false);
        TramerBoneh.Run one = TramerBoneh.train(row, 1, train, 3, 2, pld, 1);
        TramerBoneh.Run three = TramerBoneh.train(row, 1, train, 3, 2, pld, 3);
        double q = 50.0 / 500;
        long steps = DpSgdConfig.stepsForEpochs(1, q);
        // 1e-8: the row composes its run with a no-op event, which shifts the PLD's grid by ~1e-9 in epsilon
        assertEquals(pld.epsilon(NoiseCalibration.dpSgd(q, one.sigma(), steps), 1e-5), one.epsilon(), 1e-8);
        assertTrue(one.epsilon() <= 1 && one.epsilon() > 0.99, "calibrated total " + one.epsilon());
        assertTrue(one.sigma() > three.sigma() + 0.1, "sigma at epsilon 1 " + one.sigma() + " vs at 3 " + three.sigma());
        assertEquals(3, ((MultiLayerNetwork) one.model()).getnLayers(), "GroupNorm between the features and the head");
    }

    /** The ablation's learning-rate schedule falls linearly to 0 over the run (DL4J's PolySchedule would grow). */
    @Test
    void theLinearScheduleFallsToZeroOverTheRun() {
        LinearDecay decay = new LinearDecay(8, 40);
        assertEquals(8, decay.valueAt(0, 0), 0.0);
        assertEquals(4, decay.valueAt(20, 0), 1e-12);
        assertEquals(0.2, decay.valueAt(39, 0), 1e-12);
        assertEquals(0, decay.valueAt(40, 3), 0.0);
        assertEquals(0, decay.valueAt(41, 3), 0.0);
        assertEquals(decay, decay.clone());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> new LinearDecay(8, 0));
    }

    /** The ablation's levers are refused by name before anything trains. */
    @Test
    void badLeversAreRefused() {
        var empty = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> new TramerBoneh.Levers(
                java.util.List.of(false), java.util.List.of(1.0), java.util.List.of(1), java.util.List.of(1.0), java.util.List.of()));
        assertTrue(empty.getMessage().contains("lr schedules must each name at least one"), empty.getMessage());
        var k = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> new TramerBoneh.Levers(
                java.util.List.of(false), java.util.List.of(1.0), java.util.List.of(0), java.util.List.of(1.0), java.util.List.of(false)));
        assertTrue(k.getMessage().contains("augmults must each be in [1, 64]") && k.getMessage().contains("got 0"), k.getMessage());
    }
}
