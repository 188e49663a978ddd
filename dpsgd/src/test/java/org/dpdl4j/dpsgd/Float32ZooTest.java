package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.layers.BaseLayer;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.zoo.ZooModel;
import org.deeplearning4j.zoo.model.AlexNet;
import org.deeplearning4j.zoo.model.Darknet19;
import org.deeplearning4j.zoo.model.LeNet;
import org.deeplearning4j.zoo.model.ResNet50;
import org.deeplearning4j.zoo.model.SimpleCNN;
import org.deeplearning4j.zoo.model.SqueezeNet;
import org.deeplearning4j.zoo.model.VGG16;
import org.deeplearning4j.zoo.model.VGG19;
import org.deeplearning4j.zoo.model.Xception;
import org.dpdl4j.datasets.LabeledData;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.nd4j.linalg.activations.impl.ActivationLReLU;
import org.nd4j.linalg.activations.impl.ActivationReLU;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The engine's float32 unclipped batch gradient (Σ_i g_i by its three routes: the per-example gradients summed, the
 * non-private batch gradient, and the clipped sum at a clipping norm out of reach) against DL4J's own float32 gradient,
 * on DL4J's zoo after {@link DpCompatibility#fix}: within 1e-4 relative.
 *
 * <p>The comparison is made at inputs where the engine's float32 forward pass and DL4J's put every ReLU (and leaky
 * ReLU) pre-activation on the same side of zero. Two float32 implementations (the engine's and DL4J's, or DL4J's
 * float32 and float64) round differently in the last bit, and ResNet50's forward pass has millions of pre-activations,
 * of which about one per batch lies within that rounding of zero: when one of them lands on different sides, the two
 * gradients are gradients of different pieces of a piecewise-linear function and differ by up to 1e-2 relative — and so
 * does DL4J's float32 gradient from its float64 one at those inputs (GUIDE, "float32 and ReLU kinks"). That is not an
 * error of either implementation, so such inputs are redrawn (a bounded number of times) and counted.
 *
 * <p>InceptionResNetV1 is left out: at the zoo test's 3×96×96 its float32 forward pass is chaotic in DL4J itself (as
 * shipped, with batch normalisation, DL4J's float32 activations of the last block are 15–55% from its float64 ones;
 * after {@code fix}, its float32 gradient is 0.95–2.7 relative from its float64 gradient), so no two float32
 * implementations of it agree to 1e-4; {@link ZooTest} checks it in float64.
 */
class Float32ZooTest {
    /**
     * ResNet50 (the network of the gap) and three small networks; {@code -Ddpdl4j.float32zoo=all} adds AlexNet, VGG16,
     * VGG19, Darknet19 and Xception (about five more minutes on two cores).
     */
    static Stream<Arguments> zoo() {
        Stream<Arguments> always = Stream.of(
                Arguments.of("ResNet50", ResNet50.builder().numClasses(3).inputShape(new int[]{3, 72, 72}).build(), 2),
                Arguments.of("LeNet", LeNet.builder().numClasses(3).inputShape(new int[]{1, 28, 28}).build(), 4),
                Arguments.of("SimpleCNN", SimpleCNN.builder().numClasses(3).inputShape(new int[]{3, 32, 32}).build(), 4),
                Arguments.of("SqueezeNet", SqueezeNet.builder().numClasses(3).inputShape(new int[]{3, 32, 32}).build(), 4));
        Stream<Arguments> more = Stream.of(
                Arguments.of("AlexNet", AlexNet.builder().numClasses(3).inputShape(new int[]{3, 64, 64}).build(), 4),
                Arguments.of("VGG16", VGG16.builder().numClasses(3).inputShape(new int[]{3, 32, 32}).build(), 4),
                Arguments.of("VGG19", VGG19.builder().numClasses(3).inputShape(new int[]{3, 32, 32}).build(), 4),
                Arguments.of("Darknet19", Darknet19.builder().numClasses(3).inputShape(new int[]{3, 32, 32}).build(), 4),
                Arguments.of("Xception", Xception.builder().numClasses(3).inputShape(new int[]{3, 32, 32}).build(), 4));
        return "all".equals(System.getProperty("dpdl4j.float32zoo")) ? Stream.concat(always, more) : always;
    }

    /** Inputs drawn at most this many times for one network before the test gives up. */
    static final int DRAWS = 8;

    @ParameterizedTest(name = "{0}")
    @MethodSource("zoo")
    void float32BatchGradientIsDl4jsOwn(String name, ZooModel<?> zoo, int batch) {
        long t0 = System.nanoTime();
        Model shipped = zoo.init();
        Model net = float32(ZooTest.asFloat64WithoutDropout(DpCompatibility.fix(shipped).network()));
        PerExampleGradients engine = PerExampleGradients.of(net);
        int[] shape = zoo.metaData().getInputShape()[0];
        for (int draw = 0; draw < DRAWS; draw++) {
            Nd4j.getRandom().setSeed(17 + draw);
            INDArray images = Nd4j.rand(DataType.FLOAT, batch, shape[0], shape[1], shape[2]);
            INDArray y = Nd4j.zeros(DataType.FLOAT, batch, 3);
            for (int i = 0; i < batch; i++) {
                y.putScalar(i, (i + draw) % 3, 1.0);
            }
            INDArray x = LabeledData.of(images, y).features(engine.inputRank()).castTo(DataType.FLOAT);
            int flips = reluSidesDiffering(net, x);
            INDArray dl4j = dl4jGradient(net, x, y);
            int[] rows = IntStream.range(0, batch).toArray();
            if (flips > 0) {
                INDArray there = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
                engine.addBatchGradient(x, y, rows, there);
                System.out.printf("float32 zoo %s: draw %d redrawn: %d ReLU pre-activation(s) on different sides of zero in the "
                        + "engine's and DL4J's float32 forward passes (the gradients there %.2e apart)%n", name, draw, flips, rel(dl4j, there));
                continue;
            }
            engine.compute(x, y);
            INDArray perExample = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
            engine.addWeightedSum(Nd4j.ones(DataType.FLOAT, batch), perExample);
            engine.clear();
            INDArray nonPrivate = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
            engine.addBatchGradient(x, y, rows, nonPrivate);
            INDArray unclipped = Nd4j.zeros(DataType.FLOAT, 1, net.numParams()); // the trainer's route, C out of reach
            engine.clippedSum(x, y, rows, 1e30, batch, unclipped);
            double e1 = rel(dl4j, perExample), e2 = rel(dl4j, nonPrivate), e3 = rel(dl4j, unclipped);
            System.out.printf("float32 zoo %s (batch %d, draw %d): relative distance to DL4J's float32 gradient: per-example sum %.2e, "
                    + "non-private %.2e, clipped sum at C = 1e30 %.2e | %.1f s%n", name, batch, draw, e1, e2, e3, (System.nanoTime() - t0) / 1e9);
            assertTrue(e1 <= 1e-4 && e2 <= 1e-4 && e3 <= 1e-4, name + ": " + e1 + ", " + e2 + ", " + e3);
            return;
        }
        fail(name + ": every one of " + DRAWS + " inputs put a ReLU pre-activation on different sides of zero in the two passes");
    }

    static Model float32(Model network) {
        return network instanceof MultiLayerNetwork m ? m.convertDataType(DataType.FLOAT)
                : ((ComputationGraph) network).convertDataType(DataType.FLOAT);
    }

    static INDArray dl4jGradient(Model network, INDArray x, INDArray y) {
        if (network instanceof MultiLayerNetwork m) {
            m.setInput(x);
            m.setLabels(y);
            m.computeGradientAndScore();
        } else {
            ComputationGraph g = (ComputationGraph) network;
            g.setInputs(x);
            g.setLabels(y);
            g.computeGradientAndScore();
        }
        return network.gradient().gradient().dup().reshape(1, network.numParams());
    }

    /**
     * The number of outputs of ReLU and leaky-ReLU steps (activation layers, and layers with such an activation) whose
     * sign differs between the engine's float32 forward pass and DL4J's on the same input.
     */
    static int reluSidesDiffering(Model network, INDArray x) {
        Map<String, INDArray> byVertex = null;
        List<INDArray> byLayer = null;
        if (network instanceof ComputationGraph g) {
            byVertex = g.feedForward(x, true);
        } else {
            byLayer = ((MultiLayerNetwork) network).feedForward(x, true); // [0] the input, [i + 1] layer i's output
        }
        NetworkPlan plan = NetworkPlan.of(network);
        INDArray[] outputs = new INDArray[plan.steps.size()];
        int flips = 0;
        for (int s = 0; s < plan.steps.size() - 1; s++) { // the output step needs labels, and its sign does not matter
            NetworkPlan.Step step = plan.steps.get(s);
            INDArray[] in = new INDArray[step.inputs().length];
            for (int j = 0; j < in.length; j++) {
                in[j] = step.inputs()[j] == NetworkPlan.NETWORK_INPUT ? x : outputs[step.inputs()[j]];
            }
            step.kernel().examples = x.size(0);
            outputs[s] = step.kernel().forward(in, false);
            if (step.layer() == null && !(step.kernel() instanceof ActivationKernel)) {
                continue; // a preprocessor, dropout, pooling or vertex step: no kink of its own
            }
            String where = step.where();
            INDArray theirs;
            org.deeplearning4j.nn.conf.layers.Layer conf;
            if (byVertex != null) {
                int a = where.indexOf('\''), b = where.indexOf('\'', a + 1);
                String name = where.substring(a + 1, b);
                theirs = byVertex.get(name);
                conf = ((ComputationGraph) network).getLayer(name).conf().getLayer();
            } else {
                int i = Integer.parseInt(where.substring("layer ".length()).split(" ")[0]);
                theirs = byLayer.get(i + 1);
                conf = ((MultiLayerNetwork) network).getLayer(i).conf().getLayer();
            }
            Object fn = conf instanceof BaseLayer b ? b.getActivationFn()
                    : conf instanceof org.deeplearning4j.nn.conf.layers.ActivationLayer a ? a.getActivationFn() : null;
            if (!(fn instanceof ActivationReLU || fn instanceof ActivationLReLU)) {
                continue;
            }
            INDArray ours = outputs[s];
            if (theirs == null || theirs.length() != ours.length()) {
                throw new IllegalStateException("no DL4J activation of the same shape for " + where);
            }
            flips += ours.reshape(theirs.shape()).gt(0).neq(theirs.gt(0)).castTo(DataType.INT).sumNumber().intValue();
        }
        return flips;
    }

    static double rel(INDArray reference, INDArray v) {
        return reference.distance2(v) / reference.norm2Number().doubleValue();
    }
}
