package org.dpdl4j.benchmarks.jmh;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.dpsgd.PerExampleGradients;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One batch of the standard MNIST CNN: the DP-SGD clipped sum (per-example gradients, norms, clip,
 * sum) against DL4J's non-private fit() on the same batch. Compare the two scores of one run.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class DpStepBenchmark {
    @Param({"256"})
    int batchSize;

    private INDArray features;
    private INDArray labels;
    private int[] rows;
    private INDArray target;
    private PerExampleGradients gradients;
    private MultiLayerNetwork plain;
    private DataSet batch;

    /**
     * Builds 4,096 random 784-pixel examples with random one-hot labels over 10 classes, a batch of
     * {@code batchSize} row indices drawn with replacement (seed 1), and two fresh standard CNNs
     * ({@link ModelOptions#mnist()}).
     */
    @Setup
    public void setUp() {
        SplittableRandom rng = new SplittableRandom(1);
        int n = 4096;
        features = Nd4j.rand(DataType.FLOAT, n, 784);
        labels = Nd4j.zeros(DataType.FLOAT, n, 10);
        for (int i = 0; i < n; i++) {
            labels.putScalar(i, rng.nextInt(10), 1f);
        }
        rows = rng.ints(batchSize, 0, n).sorted().toArray();
        MultiLayerNetwork net = Models.standardCnn(ModelOptions.mnist());
        gradients = new PerExampleGradients(net);
        target = Nd4j.zeros(DataType.FLOAT, 1, net.numParams());
        plain = Models.standardCnn(ModelOptions.mnist());
        batch = new DataSet(Nd4j.pullRows(features, 1, rows), Nd4j.pullRows(labels, 1, rows));
    }

    /**
     * Adds the batch's per-example gradients, each clipped to norm C = 1, into a running sum (not reset between
     * calls).
     *
     * @return the sum of the batch's per-example losses, returned so that JMH does not eliminate the call
     */
    @Benchmark
    public double dpClippedSum() {
        return gradients.addClippedSum(features, labels, rows, 1.0, target);
    }

    /**
     * One non-private DL4J {@code fit()} of the same batch.
     *
     * @return the network's score (loss) after the fit
     */
    @Benchmark
    public double nonPrivateDl4jFit() {
        plain.fit(batch);
        return plain.score();
    }
}
