package org.dpdl4j.dpsgd;

import org.dpdl4j.models.TemperedSigmoid;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.activations.impl.ActivationIdentity;
import org.nd4j.linalg.activations.impl.ActivationReLU;
import org.nd4j.linalg.activations.impl.ActivationSigmoid;
import org.nd4j.linalg.activations.impl.ActivationTanH;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.DynamicCustomOp;
import org.nd4j.linalg.factory.Nd4j;

/**
 * dL/dz from dL/da for an activation a = φ(z). For ReLU, tanh, sigmoid, identity and the tempered
 * sigmoid the derivative is a function of the output a (so z need not be kept); any other DL4J
 * activation falls back to its own {@code backprop} on a kept copy of z.
 */
final class ActivationDerivative {
    private final IActivation activation;
    private final Kind kind;

    private enum Kind { RELU, TANH, SIGMOID, IDENTITY, TEMPERED, GENERIC }

    ActivationDerivative(IActivation activation) {
        this.activation = activation;
        if (activation instanceof ActivationReLU && activation.equals(new ActivationReLU())) {
            kind = Kind.RELU;
        } else if (activation instanceof ActivationTanH) {
            kind = Kind.TANH;
        } else if (activation instanceof ActivationSigmoid) {
            kind = Kind.SIGMOID;
        } else if (activation instanceof ActivationIdentity) {
            kind = Kind.IDENTITY;
        } else if (activation instanceof TemperedSigmoid) {
            kind = Kind.TEMPERED;
        } else {
            kind = Kind.GENERIC;
        }
    }

    /** Whether {@link #backprop} needs the pre-activation z (else it needs only the output a). */
    boolean needsPreActivation() {
        return kind == Kind.GENERIC;
    }

    /**
     * Applies φ to z (in place where possible).
     *
     * @return {a, kept}: the output and what {@link #backprop} needs (a, or a copy of z for generic
     *         activations); kept is null when {@code keep} is false
     */
    INDArray[] apply(INDArray z, boolean keep) {
        if (!keep) {
            return new INDArray[]{activate(z, false), null};
        }
        if (needsPreActivation()) {
            INDArray kept = z.dup();
            return new INDArray[]{activation.getActivation(z, true), kept};
        }
        INDArray a = activate(z, true);
        return new INDArray[]{a, a};
    }

    /** φ(z) in place; tanh through oneDNN's vectorised kernel where it serves (libnd4j's is ~20× slower). */
    private INDArray activate(INDArray z, boolean training) {
        if (kind == Kind.TANH && Dnnl.enabled(z) && HostKernels.isDense(z)) {
            return Dnnl.tanhInPlace(z);
        }
        return activation.getActivation(z, training);
    }

    /**
     * @param kept the output a, or z for generic activations (consumed)
     * @param grad dL/da
     * @return dL/dz
     */
    INDArray backprop(INDArray kept, INDArray grad) {
        return switch (kind) {
            case RELU -> {
                INDArray out = Nd4j.createUninitialized(grad.dataType(), grad.shape(), 'c');
                Nd4j.exec(DynamicCustomOp.builder("relu_bp").addInputs(kept, grad).addOutputs(out)
                        .addFloatingPointArguments(0.0).build());
                yield out;
            }
            case TANH -> Dnnl.enabled(kept, grad) ? Dnnl.tanhBackward(kept, grad) : kept.mul(kept).rsubi(1).muli(grad);
            case SIGMOID -> kept.rsub(1).muli(kept).muli(grad);
            case IDENTITY -> grad;
            case TEMPERED -> {
                TemperedSigmoid t = (TemperedSigmoid) activation;
                INDArray s = kept.add(t.getOffset()).divi(t.getScale()); // σ(Tz)
                yield s.rsub(1).muli(s).muli(t.getScale() * t.getTemperature()).muli(grad);
            }
            case GENERIC -> activation.backprop(kept, grad).getFirst();
        };
    }
}
