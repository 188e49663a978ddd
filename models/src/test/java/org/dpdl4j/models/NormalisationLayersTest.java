package org.dpdl4j.models;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import org.deeplearning4j.gradientcheck.GradientCheckUtil;
import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.deeplearning4j.util.ModelSerializer;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.NoOp;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * GroupNormalization and WeightStandardizedConvolution: outputs against the formulas computed element by element, DL4J's
 * gradients against central finite differences (float64), and a save/load round trip through ModelSerializer.
 */
class NormalisationLayersTest {
    private static MultiLayerNetwork net(boolean ws, int groups) {
        var conv = ws ? new WeightStandardizedConvolution.Builder(3, 3).padding(1, 1).nOut(8).activation(Activation.IDENTITY).build()
                : new org.deeplearning4j.nn.conf.layers.ConvolutionLayer.Builder(3, 3).padding(1, 1).nOut(8)
                .activation(Activation.IDENTITY).build();
        var conf = new NeuralNetConfiguration.Builder().seed(7).dataType(DataType.DOUBLE).updater(new NoOp())
                .weightInit(WeightInit.XAVIER).convolutionMode(ConvolutionMode.Truncate).list()
                .layer(conv)
                .layer(new GroupNormalization.Builder().groups(groups).activation(Activation.TANH).build())
                .layer(new DenseLayer.Builder().nOut(6).activation(Activation.TANH).build())
                .layer(new GroupNormalization.Builder().groups(2).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(5, 5, 2)).build();
        MultiLayerNetwork n = new MultiLayerNetwork(conf);
        n.init();
        // γ and β away from 1 and 0, so that their gradients are exercised
        for (int layer : new int[]{1, 3}) {
            n.getLayer(layer).getParam("gamma").assign(Nd4j.rand(DataType.DOUBLE, n.getLayer(layer).getParam("gamma").shape()).addi(0.5));
            n.getLayer(layer).getParam("beta").assign(Nd4j.randn(DataType.DOUBLE, n.getLayer(layer).getParam("beta").shape()).muli(0.3));
        }
        return n;
    }

    private static INDArray[] data(int b) {
        Nd4j.getRandom().setSeed(11);
        INDArray x = Nd4j.randn(DataType.DOUBLE, b, 50);
        INDArray y = Nd4j.zeros(DataType.DOUBLE, b, 3);
        for (int i = 0; i < b; i++) {
            y.putScalar(i, i % 3, 1.0);
        }
        return new INDArray[]{x, y};
    }

    @Test
    void gradientsMatchFiniteDifferences() {
        DataType previous = Nd4j.dataType();
        Nd4j.setDefaultDataTypes(DataType.DOUBLE, DataType.DOUBLE); // GradientCheckUtil insists
        try {
            checkAll();
        } finally {
            Nd4j.setDefaultDataTypes(previous, previous);
        }
    }

    private static void checkAll() {
        for (boolean ws : new boolean[]{false, true}) {
            for (int groups : new int[]{1, 4, 8}) {
                MultiLayerNetwork n = net(ws, groups);
                INDArray[] xy = data(4);
                boolean ok = GradientCheckUtil.checkGradients(new GradientCheckUtil.MLNConfig().net(n).input(xy[0]).labels(xy[1])
                        .epsilon(1e-6).maxRelError(1e-5).minAbsoluteError(1e-9)
                        .subset(true).maxPerParam(40)); // 40 random entries of each parameter array (all of γ, β and the biases)
                assertTrue(ok, "gradient check, ws = " + ws + ", groups = " + groups);
            }
        }
    }

    /** y = γ_c·(x − μ_g)/√(σ²_g + ε) + β_c, with μ and σ² summed element by element over each example's group. */
    @Test
    void groupNormOutputIsTheFormula() {
        double eps = 1e-5;
        int b = 2, c = 4, h = 3, w = 3, groups = 2;
        INDArray x = Nd4j.randn(DataType.DOUBLE, b, c, h, w);
        INDArray gamma = Nd4j.createFromArray(0.5, 1.5, -1.0, 2.0).reshape(1, c);
        INDArray beta = Nd4j.createFromArray(0.1, -0.2, 0.3, 0.0).reshape(1, c);
        INDArray y = GroupNormMath.affine(GroupNormMath.normalise(GroupNormMath.asChannels(x), groups, eps)[0], gamma, beta)
                .reshape(b, c, h, w);
        int per = c / groups;
        for (int i = 0; i < b; i++) {
            for (int g = 0; g < groups; g++) {
                double sum = 0, sq = 0;
                int count = per * h * w;
                for (int ch = g * per; ch < (g + 1) * per; ch++) {
                    for (int r = 0; r < h; r++) {
                        for (int s = 0; s < w; s++) {
                            sum += x.getDouble(i, ch, r, s);
                        }
                    }
                }
                double mean = sum / count;
                for (int ch = g * per; ch < (g + 1) * per; ch++) {
                    for (int r = 0; r < h; r++) {
                        for (int s = 0; s < w; s++) {
                            double d = x.getDouble(i, ch, r, s) - mean;
                            sq += d * d;
                        }
                    }
                }
                double sd = Math.sqrt(sq / count + eps);
                for (int ch = g * per; ch < (g + 1) * per; ch++) {
                    double expected = gamma.getDouble(0, ch) * (x.getDouble(i, ch, 1, 2) - mean) / sd + beta.getDouble(0, ch);
                    assertEquals(expected, y.getDouble(i, ch, 1, 2), 1e-12);
                }
            }
        }
    }

    /** Each output channel of Ŵ has mean 0 and variance var/(var + ε), computed element by element. */
    @Test
    void standardisedWeightsHaveZeroMeanAndUnitVariance() {
        INDArray w = Nd4j.randn(DataType.DOUBLE, 5, 3, 3, 3).muli(0.2).addi(0.05);
        INDArray wHat = WeightStandardization.standardise(w, 1e-5)[0];
        for (int o = 0; o < 5; o++) {
            double mean = 0, var = 0, m0 = 0, v0 = 0;
            double[] row = wHat.getRow(o).toDoubleVector();
            double[] raw = w.get(org.nd4j.linalg.indexing.NDArrayIndex.point(o)).dup().reshape(27).toDoubleVector();
            for (int k = 0; k < 27; k++) {
                mean += row[k] / 27;
                m0 += raw[k] / 27;
            }
            for (int k = 0; k < 27; k++) {
                var += (row[k] - mean) * (row[k] - mean) / 27;
                v0 += (raw[k] - m0) * (raw[k] - m0) / 27;
            }
            assertEquals(0, mean, 1e-12);
            assertEquals(v0 / (v0 + 1e-5), var, 1e-12);
        }
    }

    @Test
    void layersSurviveModelSerializer() throws Exception {
        MultiLayerNetwork n = net(true, 4);
        INDArray x = data(3)[0];
        INDArray before = n.output(x);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ModelSerializer.writeModel(n, bytes, true);
        MultiLayerNetwork back = ModelSerializer.restoreMultiLayerNetwork(new ByteArrayInputStream(bytes.toByteArray()), true);
        assertInstanceOf(WeightStandardizedConvolution.class, back.getLayer(0).conf().getLayer());
        GroupNormalization gn = assertInstanceOf(GroupNormalization.class, back.getLayer(1).conf().getLayer());
        assertEquals(4, gn.getGroups());
        assertArrayEquals(before.data().asDouble(), back.output(x).data().asDouble(), 0.0);
    }

    @Test
    void groupsMustDivideTheChannels() {
        var e = assertThrows(IllegalArgumentException.class, () -> net(false, 3));
        assertTrue(e.getMessage().contains("groups (3) must divide the number of channels (8)"), e.getMessage());
    }
}
