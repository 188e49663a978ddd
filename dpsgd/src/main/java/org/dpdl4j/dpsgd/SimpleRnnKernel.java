package org.dpdl4j.dpsgd;

import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * DL4J's {@code SimpleRnn} without layer normalisation (input [B, nIn, T], output [B, H, T] in NCW, zero initial
 * state), as DL4J computes it: z_t = x_t·W + h_{t−1}·RW + b, h_t = φ(z_t)·m_t, with m_t the feature mask's step t (1
 * without a mask; a masked step outputs 0 and passes 0 to the next step). Backpropagation through time gives each
 * example's pre-activation delta δ_t = m_t·φ'(z_t)·(dL/dh_t + δ_{t+1}·RWᵀ) [B, H] at every step, whose gradients and
 * norms {@link RecurrentKernel} forms.
 *
 * <p>A batch whose feature mask holds values other than 0 and 1 runs on the exact fallback (DL4J masks the output a
 * second time after its recurrence, which a fractional mask makes differ from the chain rule of the recurrence).
 */
final class SimpleRnnKernel extends RecurrentKernel {
    private final ActivationDerivative derivative;
    // kept by a training pass, per step t: [T][B, ·]
    private INDArray[] kept;        // what the activation's derivative reads
    private INDArray[] maskColumns; // m_t [B, 1], or null without a mask

    SimpleRnnKernel(INDArray w, INDArray rw, INDArray b, IActivation activation, FallbackKernel fractional) {
        super(w, rw, b, fractional);
        this.derivative = new ActivationDerivative(activation);
    }

    /** Whether the mask holds a value other than 0 and 1. */
    @Override
    boolean needsFallback() {
        return mask != null && mask.mul(mask).subi(mask).amaxNumber().doubleValue() != 0;
    }

    @Override
    INDArray forwardSteps(INDArray inputTerms, boolean keep) {
        INDArray m = mask == null ? null : mask.castTo(inputTerms.dataType());
        INDArray out = Nd4j.create(inputTerms.dataType(), batch, h, steps);
        if (keep) {
            kept = new INDArray[(int) steps];
            maskColumns = m == null ? null : new INDArray[(int) steps];
        }
        INDArray hT = Nd4j.zeros(inputTerms.dataType(), batch, h);
        for (int t = 0; t < steps; t++) {
            INDArray z = inputTerms.get(NDArrayIndex.all(), NDArrayIndex.point(t), NDArrayIndex.all()).dup('c');
            if (t > 0) { // h_{−1} = 0
                z.addi(hT.mmul(rw));
            }
            INDArray[] a = derivative.apply(z, keep);
            INDArray ht = a[0];
            INDArray mt = null;
            if (m != null) {
                mt = m.get(NDArrayIndex.all(), NDArrayIndex.point(t)).dup('c').reshape(batch, 1);
                ht = ht.mulColumnVector(mt); // a new array: the derivative reads the unmasked output
            }
            if (keep) {
                hPrev[t] = hT;
                kept[t] = a[1];
                if (maskColumns != null) {
                    maskColumns[t] = mt;
                }
            }
            out.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.point(t)).assign(ht);
            hT = ht;
        }
        return out;
    }

    @Override
    INDArray[] deltas(INDArray gradOutput) {
        INDArray[] deltas = new INDArray[(int) steps];
        INDArray next = null; // δ_{t+1}
        for (int t = (int) steps - 1; t >= 0; t--) {
            INDArray dh = gradOutput.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.point(t)).dup('c');
            if (next != null) {
                dh.addi(next.mmul(rw.transpose()));
            }
            INDArray delta = derivative.backprop(kept[t], dh);
            if (maskColumns != null) {
                delta.muliColumnVector(maskColumns[t]);
            }
            kept[t] = null;
            deltas[t] = delta;
            next = delta;
        }
        return deltas;
    }

    @Override
    void clearSteps() {
        kept = null;
        maskColumns = null;
    }
}
