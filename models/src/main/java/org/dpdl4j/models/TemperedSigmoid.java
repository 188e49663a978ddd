package org.dpdl4j.models;

import org.nd4j.common.primitives.Pair;
import org.nd4j.linalg.activations.BaseActivationFunction;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.ops.transforms.Transforms;

/**
 * Tempered sigmoid activation φ(x) = s·σ(T·x) − o (Papernot, Thakurta, Song, Chien &amp; Erlingsson,
 * "Tempered Sigmoid Activations for Deep Learning with Differential Privacy", AAAI 2021, eq. 3):
 * scale s &gt; 0, inverse temperature T &gt; 0, offset o. s = 2, T = 2, o = 1 is tanh, the setting
 * the paper recommends for DP-SGD. Derivative φ'(x) = s·T·σ(Tx)(1 − σ(Tx)).
 */
public class TemperedSigmoid extends BaseActivationFunction {
    private static final long serialVersionUID = 1L;
    private double scale;
    private double temperature;
    private double offset;

    /** The tanh setting (s, T, o) = (2, 2, 1). */
    public TemperedSigmoid() {
        this(2, 2, 1);
    }

    /**
     * A tempered sigmoid with the given parameters.
     *
     * @param scale       s, finite and &gt; 0
     * @param temperature T, finite and &gt; 0 (the inverse temperature multiplying the input)
     * @param offset      o, any finite value
     * @throws IllegalArgumentException if s or T is not finite and positive, or o is not finite
     */
    public TemperedSigmoid(double scale, double temperature, double offset) {
        if (!(scale > 0) || Double.isInfinite(scale)) {
            throw new IllegalArgumentException("tempered sigmoid scale must be finite and > 0, got " + scale);
        }
        if (!(temperature > 0) || Double.isInfinite(temperature)) {
            throw new IllegalArgumentException("tempered sigmoid temperature must be finite and > 0, got " + temperature);
        }
        if (!Double.isFinite(offset)) {
            throw new IllegalArgumentException("tempered sigmoid offset must be finite, got " + offset);
        }
        this.scale = scale;
        this.temperature = temperature;
        this.offset = offset;
    }

    /**
     * The scale s.
     *
     * @return s, finite and &gt; 0
     */
    public double getScale() {
        return scale;
    }

    /**
     * The inverse temperature T multiplying the input.
     *
     * @return T, finite and &gt; 0
     */
    public double getTemperature() {
        return temperature;
    }

    /**
     * The offset o subtracted from s·σ(T·x).
     *
     * @return o, finite
     */
    public double getOffset() {
        return offset;
    }

    @Override
    public INDArray getActivation(INDArray in, boolean training) {
        INDArray s = Transforms.sigmoid(in.mul(temperature), false);
        return in.assign(s.muli(scale).subi(offset));
    }

    @Override
    public Pair<INDArray, INDArray> backprop(INDArray in, INDArray epsilon) {
        assertShape(in, epsilon);
        INDArray s = Transforms.sigmoid(in.mul(temperature), false);
        INDArray d = s.rsub(1.0).muli(s).muli(scale * temperature);
        return new Pair<>(in.assign(d.muli(epsilon)), null);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TemperedSigmoid t && t.scale == scale && t.temperature == temperature && t.offset == offset;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(scale, temperature, offset);
    }

    @Override
    public String toString() {
        return "temperedsigmoid(s=" + scale + ",T=" + temperature + ",o=" + offset + ")";
    }
}
