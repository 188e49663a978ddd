package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ForkJoinPool;
import org.apache.commons.math3.distribution.NormalDistribution;
import org.apache.commons.math3.stat.inference.KolmogorovSmirnovTest;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** The DP-SGD noise: its distribution against N(0, s²), and its dependence on the seed only. */
class GaussianNoiseTest {
    /**
     * 2^20 + 5 draws (17 blocks, the last partial) of N(0, 3²) on a target of 1s: the noise passes a Kolmogorov–Smirnov
     * test against the normal CDF (Commons Math), its variance and fourth moment are those of N(0, 9) within five
     * standard errors, and the mass beyond 4s is that of the normal within five standard errors.
     */
    @ParameterizedTest
    @EnumSource(value = DataType.class, names = {"FLOAT", "DOUBLE"})
    void theNoiseIsNormalWithTheStandardDeviationAsked(DataType type) {
        int n = (1 << 20) + 5;
        double s = 3.0;
        INDArray target = Nd4j.ones(type, 1, n);
        try (GaussianNoise noise = new GaussianNoise(11)) {
            noise.addTo(target, s);
        }
        double[] z = target.subi(1.0).castTo(DataType.DOUBLE).toDoubleVector();
        double p = new KolmogorovSmirnovTest().kolmogorovSmirnovTest(new NormalDistribution(null, 0, s), z);
        assertTrue(p > 1e-3, type + ": Kolmogorov-Smirnov p-value " + p);
        double m2 = 0;
        double m4 = 0;
        long tail = 0;
        for (double v : z) {
            m2 += v * v;
            m4 += v * v * v * v;
            tail += Math.abs(v) > 4 * s ? 1 : 0;
        }
        m2 /= n;
        m4 /= n;
        assertEquals(s * s, m2, 5 * s * s * Math.sqrt(2.0 / n), type + ": variance");
        assertEquals(3 * Math.pow(s, 4), m4, 5 * Math.pow(s, 4) * Math.sqrt(96.0 / n), type + ": fourth moment");
        double tailMass = 2 * new NormalDistribution(null, 0, 1).cumulativeProbability(-4);
        assertEquals(tailMass * n, tail, 5 * Math.sqrt(tailMass * n), type + ": draws beyond 4s");
    }

    /** The same seed gives the same noise on one thread and on four; the next call and another seed give other noise. */
    @Test
    void theNoiseDependsOnTheSeedAndTheCallsBeforeNotOnTheThreads() throws Exception {
        int n = 5 * GaussianNoise.BLOCK + 17;
        INDArray one = new ForkJoinPool(1).submit(() -> draw(7, n, 1)).get();
        INDArray four = new ForkJoinPool(4).submit(() -> draw(7, n, 1)).get();
        assertEquals(one, four);
        INDArray[] twice = new ForkJoinPool(4).submit(() -> {
            try (GaussianNoise noise = new GaussianNoise(7)) {
                INDArray a = Nd4j.zeros(DataType.FLOAT, n);
                INDArray b = Nd4j.zeros(DataType.FLOAT, n);
                noise.addTo(a, 1);
                noise.addTo(b, 1);
                return new INDArray[]{a, b};
            }
        }).get();
        assertEquals(one, twice[0]);
        assertNotEquals(twice[0], twice[1]);
        assertNotEquals(one, draw(8, n, 1));
        // consecutive calls and neighbouring blocks are uncorrelated (|r| within 5/√n of 0)
        double r = correlation(twice[0], twice[1]);
        assertTrue(Math.abs(r) < 5 / Math.sqrt(n), "correlation of consecutive calls " + r);
        INDArray first = one.get(org.nd4j.linalg.indexing.NDArrayIndex.interval(0, GaussianNoise.BLOCK));
        INDArray second = one.get(org.nd4j.linalg.indexing.NDArrayIndex.interval(GaussianNoise.BLOCK, 2 * GaussianNoise.BLOCK));
        r = correlation(first, second);
        assertTrue(Math.abs(r) < 5 / Math.sqrt(GaussianNoise.BLOCK), "correlation of neighbouring blocks " + r);
    }

    /**
     * A dense array takes the draws in place, a view through a separate noise array: for the same seed both add the same
     * noise, x + (float) draw, to the values already there.
     */
    @ParameterizedTest
    @EnumSource(value = DataType.class, names = {"FLOAT", "DOUBLE"})
    void theNoiseIsAddedToTheValuesThereWhetherTheArrayIsDenseOrAView(DataType type) {
        int n = 2 * GaussianNoise.BLOCK + 3;
        INDArray values = Nd4j.createFromArray(java.util.stream.IntStream.range(0, n).mapToDouble(i -> Math.sin(i)).toArray())
                .castTo(type);
        INDArray dense = values.dup();
        INDArray wide = Nd4j.zeros(type, 2, n);
        INDArray view = wide.getRow(1);
        view.assign(values);
        assertTrue(!dense.isView() && view.isView());
        try (GaussianNoise a = new GaussianNoise(3); GaussianNoise b = new GaussianNoise(3)) {
            a.addTo(dense, 2);
            b.addTo(view, 2);
        }
        assertEquals(dense, view);
        assertEquals(0.0, wide.getRow(0).sumNumber().doubleValue(), 0.0, "nothing outside the view is touched");
        INDArray noise = dense.sub(values);
        assertEquals(0.0, noise.meanNumber().doubleValue(), 5 * 2 / Math.sqrt(n));
        assertEquals(2.0, noise.stdNumber().doubleValue(), 0.05);
        INDArray onZeros = Nd4j.zeros(type, n);
        try (GaussianNoise c = new GaussianNoise(3)) {
            c.addTo(onZeros, 2);
        }
        assertEquals(values.add(onZeros), dense, "the same draws as on zeros, added");
    }

    @Test
    void aStandardDeviationOfZeroAddsNothingAndABadOneIsRefused() {
        INDArray target = Nd4j.linspace(DataType.FLOAT, 1, 10, 1);
        INDArray before = target.dup();
        try (GaussianNoise noise = new GaussianNoise(1)) {
            noise.addTo(target, 0);
            assertEquals(before, target);
            for (double bad : new double[]{-1, Double.NaN, Double.POSITIVE_INFINITY}) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> noise.addTo(target, bad));
                assertTrue(e.getMessage().contains("standard deviation"), e.getMessage());
            }
        }
    }

    private static INDArray draw(long seed, int n, double s) {
        try (GaussianNoise noise = new GaussianNoise(seed)) {
            INDArray a = Nd4j.zeros(DataType.FLOAT, n);
            noise.addTo(a, s);
            return a;
        }
    }

    private static double correlation(INDArray a, INDArray b) {
        double[] x = a.castTo(DataType.DOUBLE).toDoubleVector();
        double[] y = b.castTo(DataType.DOUBLE).toDoubleVector();
        return new org.apache.commons.math3.stat.correlation.PearsonsCorrelation().correlation(x, y);
    }
}
