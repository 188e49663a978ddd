package org.dpdl4j.dpsgd;

import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.Layer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.RnnOutputLayer;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.rng.Random;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.INDArrayIndex;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * The exactness check the engine's kernels are held to, public so that the kernel of a user's own layer is checked the
 * same way: the engine's per-example gradients of a network ({@link PerExampleGradients}) against DL4J's own gradient
 * of each example alone (an independent implementation: DL4J's layers and backpropagation, one example per pass), the
 * engine's per-example norms against those gradients' norms, the unclipped sum against DL4J's batch gradient, and
 * every clipped gradient's norm against C(1 + 10⁻⁶).
 *
 * <p>Use a network without dropout or other random layers (their draws differ between the two computations), in
 * float64 for a tolerance of 10⁻¹⁰; float32 agrees to about 10⁻⁵ relative.
 */
public final class KernelChecks {
    private KernelChecks() {
    }

    /**
     * What {@link #compare} measured.
     *
     * @param gradientError    the largest difference of an example's gradient from DL4J's, relative to the largest
     *                         entry of DL4J's gradient of that example
     * @param normError        the largest relative difference of an example's norm ‖g_i‖ from the norm of DL4J's g_i
     * @param sumError         the unclipped sum's largest difference from DL4J's batch gradient, relative to its largest
     *                         entry
     * @param largestClipRatio the largest ‖min(1, C/‖g_i‖)·g_i‖ / C over the examples, at C = the median norm
     */
    public record Result(double gradientError, double normError, double sumError, double largestClipRatio) {
        /**
         * The largest of the three relative errors.
         *
         * @return max(gradientError, normError, sumError), &gt;= 0 (NaN if one of them is NaN)
         */
        public double worst() {
            return Math.max(gradientError, Math.max(normError, sumError));
        }
    }

    /**
     * Compares the engine with DL4J on one batch (see the class comment).
     *
     * @param network  an initialised {@link MultiLayerNetwork} or {@link ComputationGraph} the engine accepts
     * @param features a batch in the shape the network reads ([B, d], [B, f, T] or [B, c, h, w]), B ≥ 1
     * @param labels   its labels, [B, outputs]
     * @return the errors measured
     * @throws IllegalArgumentException if the engine refuses the network, or the shapes disagree
     */
    public static Result compare(Model network, INDArray features, INDArray labels) {
        return compare(network, features, labels, null, null);
    }

    /**
     * {@link #compare(Model, INDArray, INDArray)} for sequences with masks ([B, T] feature mask; [B, T] or [B, 1] label
     * mask; either may be null).
     *
     * @param network     an initialised {@link MultiLayerNetwork} or {@link ComputationGraph} the engine accepts
     * @param features    a batch in the shape the network reads ([B, d], [B, f, T] or [B, c, h, w]), B ≥ 1
     * @param labels      its labels, [B, outputs] or [B, outputs, T]
     * @param featureMask [B, T] (1: a step of the example, 0: padding), or null
     * @param labelMask   [B, T] or [B, 1], or null
     * @return the errors measured
     * @throws IllegalArgumentException if the engine refuses the network, or the shapes disagree
     */
    public static Result compare(Model network, INDArray features, INDArray labels, INDArray featureMask, INDArray labelMask) {
        PerExampleGradients engine = PerExampleGradients.of(network);
        try {
            return compare(engine, network, features, labels, featureMask, labelMask);
        } finally {
            engine.releaseScratch();
        }
    }

    /**
     * {@link #compare} on a given engine (tests put its kernels on particular paths first), against DL4J's gradients of
     * {@code network}: the engine's network, or a copy of it in another data type (a float64 oracle of a float32 engine;
     * the batch is cast to the copy's type).
     */
    static Result compare(PerExampleGradients engine, Model network, INDArray features, INDArray labels, INDArray featureMask,
                          INDArray labelMask) {
        int b = (int) features.size(0);
        engine.compute(features, labels, featureMask, labelMask);
        double[] norms = engine.squaredNorms().toDoubleVector();
        long p = network.numParams();
        DataType type = engine.network().params().dataType();
        DataType oracle = network.params().dataType();
        if (oracle != type) {
            features = features.castTo(oracle);
            labels = labels.castTo(oracle);
            featureMask = featureMask == null ? null : featureMask.castTo(oracle);
            labelMask = labelMask == null ? null : labelMask.castTo(oracle);
        }
        INDArray sumOfSingles = Nd4j.zeros(DataType.DOUBLE, p);
        double gradientError = 0;
        double normError = 0;
        for (int i = 0; i < b; i++) {
            INDArray reference = dl4jGradient(network, row(features, i), row(labels, i), row(featureMask, i), row(labelMask, i))
                    .castTo(DataType.DOUBLE);
            sumOfSingles.addi(reference);
            INDArray ours = Nd4j.zeros(type, 1, p);
            INDArray oneHot = Nd4j.zeros(type, b);
            oneHot.putScalar(i, 1.0);
            engine.addWeightedSum(oneHot, ours);
            gradientError = Math.max(gradientError, relative(reference, ours.castTo(DataType.DOUBLE).reshape(p)));
            double refNorm = reference.norm2Number().doubleValue();
            normError = Math.max(normError, Math.abs(Math.sqrt(norms[i]) - refNorm) / Math.max(refNorm, 1e-300));
        }
        INDArray batch = dl4jGradient(network, features, labels, featureMask, labelMask).castTo(DataType.DOUBLE);
        INDArray unclipped = Nd4j.zeros(type, 1, p);
        engine.addWeightedSum(Nd4j.ones(type, b), unclipped);
        double sumError = Math.max(relative(batch, unclipped.castTo(DataType.DOUBLE).reshape(p)), relative(batch, sumOfSingles));
        double[] sorted = norms.clone();
        java.util.Arrays.sort(sorted);
        double c = Math.max(Math.sqrt(sorted[sorted.length / 2]), 1e-12);
        double[] factors = engine.clipFactors(c).toDoubleVector();
        double largest = 0;
        for (int i = 0; i < b; i++) {
            largest = Math.max(largest, factors[i] * Math.sqrt(norms[i]) / c);
        }
        engine.clear();
        return new Result(gradientError, normError, sumError, largest);
    }

    /**
     * {@link #compare}, failing unless every relative error is at most {@code tolerance} and every clipped norm at most
     * C(1 + 10⁻⁶).
     *
     * @param network   an initialised {@link MultiLayerNetwork} or {@link ComputationGraph} the engine accepts
     * @param features  a batch in the shape the network reads ([B, d], [B, f, T] or [B, c, h, w]), B ≥ 1
     * @param labels    its labels, [B, outputs]
     * @param tolerance the largest relative error allowed, &gt;= 0: e.g. 1e-10 in float64, 1e-4 in float32
     * @return the errors measured, when within the tolerance
     * @throws AssertionError naming what differs, and by how much
     * @throws IllegalArgumentException if the engine refuses the network, or the shapes disagree
     */
    public static Result assertExact(Model network, INDArray features, INDArray labels, double tolerance) {
        return assertExact(network, features, labels, null, null, tolerance);
    }

    /**
     * {@link #assertExact(Model, INDArray, INDArray, double)} with masks (either may be null).
     *
     * @param network     an initialised {@link MultiLayerNetwork} or {@link ComputationGraph} the engine accepts
     * @param features    a batch in the shape the network reads ([B, d], [B, f, T] or [B, c, h, w]), B ≥ 1
     * @param labels      its labels, [B, outputs] or [B, outputs, T]
     * @param featureMask [B, T] (1: a step of the example, 0: padding), or null
     * @param labelMask   [B, T] or [B, 1], or null
     * @param tolerance   the largest relative error allowed, &gt;= 0: e.g. 1e-10 in float64, 1e-4 in float32
     * @return the errors measured, when within the tolerance
     * @throws AssertionError           naming what differs, and by how much
     * @throws IllegalArgumentException if the engine refuses the network, or the shapes disagree
     */
    public static Result assertExact(Model network, INDArray features, INDArray labels, INDArray featureMask, INDArray labelMask,
                                     double tolerance) {
        return assertExact(compare(network, features, labels, featureMask, labelMask), tolerance);
    }

    /**
     * {@link #assertExact(Model, INDArray, INDArray, double)} on a given engine, against DL4J's gradients of
     * {@code network} (the engine's network or a copy in another data type, see
     * {@link #compare(PerExampleGradients, Model, INDArray, INDArray, INDArray, INDArray)}).
     */
    static Result assertExact(Model network, INDArray features, INDArray labels, double tolerance, PerExampleGradients engine) {
        return assertExact(compare(engine, network, features, labels, null, null), tolerance);
    }

    private static Result assertExact(Result r, double tolerance) {
        if (!(r.worst() <= tolerance)) {
            throw new AssertionError("the engine's per-example gradients differ from DL4J's: gradients " + r.gradientError()
                    + ", norms " + r.normError() + ", batch sum " + r.sumError() + " (relative; allowed " + tolerance + ")");
        }
        if (!(r.largestClipRatio() <= 1 + 1e-6)) {
            throw new AssertionError("a clipped gradient has norm " + r.largestClipRatio() + "·C, above C(1 + 1e-6)");
        }
        return r;
    }

    /**
     * Checks one layer configuration: a float64 network of that layer and a softmax output layer (MCXENT, 3 classes) on
     * this input type, at random parameters, against DL4J on a random batch of 4 (the layer's own kernel if it has one,
     * a registered one of yours, or the fallback).
     *
     * @param layer a layer configuration (nOut set; nIn is set from the input type)
     * @param input the input type, e.g. {@code InputType.feedForward(5)}, {@code recurrent(4, 6)},
     *              {@code convolutional(7, 6, 2)}
     * @return the errors measured, when within a tolerance of 10⁻¹⁰
     * @throws AssertionError           naming what differs
     * @throws IllegalArgumentException if the engine refuses the layer
     */
    public static Result assertExact(Layer layer, InputType input) {
        boolean sequence = input.getType() == InputType.Type.RNN;
        MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(11)
                .dataType(DataType.DOUBLE).list().layer(layer.clone())
                .layer(sequence ? new RnnOutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3)
                        .activation(Activation.SOFTMAX).build()
                        : new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3)
                        .activation(Activation.SOFTMAX).build())
                .setInputType(input).build());
        net.init();
        long[] shape = input.getShape(true);
        shape[0] = 4;
        Random rng = Nd4j.getRandomFactory().getNewRandomInstance(17);
        INDArray x = Nd4j.rand(rng, shape).castTo(DataType.DOUBLE).subi(0.5);
        long steps = sequence ? shape[2] : 1;
        INDArray y = sequence ? Nd4j.zeros(DataType.DOUBLE, 4, 3, steps) : Nd4j.zeros(DataType.DOUBLE, 4, 3);
        for (int i = 0; i < 4; i++) {
            for (int t = 0; t < steps; t++) {
                if (sequence) {
                    y.putScalar(new int[]{i, (i + t) % 3, t}, 1.0);
                } else {
                    y.putScalar(i, i % 3, 1.0);
                }
            }
        }
        return assertExact(net, x, y, 1e-10);
    }

    /**
     * DL4J's gradient of the summed loss of a batch, flattened [numParams]. ND4J's default floating type is the
     * network's for the call (and restored after): DL4J creates some arrays in the default type whatever the network's
     * (LastTimeStep's masked output, in {@code TimeSeriesUtils.pullLastTimeSteps}), which would round a float64 oracle to
     * float32.
     */
    static INDArray dl4jGradient(Model network, INDArray x, INDArray y, INDArray featureMask, INDArray labelMask) {
        DataType defaultType = Nd4j.dataType();
        DataType defaultFloat = Nd4j.defaultFloatingPointType();
        Nd4j.setDefaultDataTypes(network.params().dataType(), network.params().dataType());
        try {
            return dl4jGradientInDefaultType(network, x, y, featureMask, labelMask);
        } finally {
            Nd4j.setDefaultDataTypes(defaultType, defaultFloat);
        }
    }

    private static INDArray dl4jGradientInDefaultType(Model network, INDArray x, INDArray y, INDArray featureMask,
                                                      INDArray labelMask) {
        if (network instanceof MultiLayerNetwork m) {
            m.setInput(x);
            m.setLabels(y);
            m.setLayerMaskArrays(featureMask, labelMask);
            m.computeGradientAndScore();
            m.clearLayerMaskArrays();
        } else {
            ComputationGraph g = (ComputationGraph) network;
            g.setInputs(x);
            g.setLabels(y);
            g.setLayerMaskArrays(featureMask == null ? null : new INDArray[]{featureMask},
                    labelMask == null ? null : new INDArray[]{labelMask});
            g.computeGradientAndScore();
            g.clearLayerMaskArrays();
        }
        return network.gradient().gradient().dup().reshape(network.numParams());
    }

    private static INDArray row(INDArray a, int i) {
        if (a == null) {
            return null;
        }
        INDArrayIndex[] index = NDArrayIndex.allFor(a);
        index[0] = NDArrayIndex.interval(i, i + 1);
        return a.get(index).dup('c');
    }

    private static double relative(INDArray expected, INDArray actual) {
        double scale = Math.max(expected.amaxNumber().doubleValue(), 1e-300);
        return expected.sub(actual).amaxNumber().doubleValue() / scale;
    }
}
