package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.ops.transforms.Transforms;

/**
 * DL4J's {@code LSTM} layer (no peepholes; tanh on the block input and the cell, sigmoid gates; input [B, nIn, T],
 * output [B, H, T], zero initial state), as DL4J's {@code LSTMHelpers} computes it: with a_t = x_t·W + h_{t−1}·RW + b
 * split into four blocks of H columns, z = tanh(a⁰), f = σ(a¹), o = σ(a²), g = σ(a³), c_t = f ⊙ c_{t−1} + g ⊙ z and
 * h_t = o ⊙ tanh(c_t). The forward pass keeps the gates; backpropagation through time gives every example's
 * pre-activation delta δ_t [B, 4H] at each step, whose gradients and norms {@link RecurrentKernel} forms.
 *
 * <p>A feature mask passes through unused, as in DL4J 1.0.0-M2.1: its {@code LSTM.feedForwardMaskArray} keeps the
 * mask for the layers after it without giving it to the layer, so the recurrence runs over padded steps as over any
 * other and the masking happens downstream (pooling, {@code LastTimeStep}, the loss). Padding after an example's steps
 * therefore changes nothing it is scored on; the engine stores each sequence with its own steps and pads at the end.
 */
final class LstmKernel extends RecurrentKernel {
    // kept by a training pass, per step t: [T][B, H]
    private INDArray[] cPrev;
    private INDArray[] z;
    private INDArray[] f;
    private INDArray[] o;
    private INDArray[] g;
    private INDArray[] tanhC;

    LstmKernel(INDArray w, INDArray rw, INDArray b, FallbackKernel fallback) {
        super(w, rw, b, fallback);
    }

    @Override
    boolean needsFallback() {
        return false; // the mask is DL4J's business downstream (see above)
    }

    @Override
    INDArray forwardSteps(INDArray inputTerms, boolean keep) {
        INDArray out = Nd4j.create(inputTerms.dataType(), batch, h, steps);
        if (keep) {
            cPrev = new INDArray[(int) steps];
            z = new INDArray[(int) steps];
            f = new INDArray[(int) steps];
            o = new INDArray[(int) steps];
            g = new INDArray[(int) steps];
            tanhC = new INDArray[(int) steps];
        }
        INDArray hT = Nd4j.zeros(inputTerms.dataType(), batch, h);
        INDArray cT = Nd4j.zeros(inputTerms.dataType(), batch, h);
        for (int t = 0; t < steps; t++) {
            INDArray a = inputTerms.get(NDArrayIndex.all(), NDArrayIndex.point(t), NDArrayIndex.all()).dup('c').addi(hT.mmul(rw));
            INDArray zt = Transforms.tanh(a.get(NDArrayIndex.all(), NDArrayIndex.interval(0, h)), true);
            INDArray ft = Transforms.sigmoid(a.get(NDArrayIndex.all(), NDArrayIndex.interval(h, 2 * h)), true);
            INDArray ot = Transforms.sigmoid(a.get(NDArrayIndex.all(), NDArrayIndex.interval(2 * h, 3 * h)), true);
            INDArray gt = Transforms.sigmoid(a.get(NDArrayIndex.all(), NDArrayIndex.interval(3 * h, 4 * h)), true);
            INDArray ct = ft.mul(cT).addi(gt.mul(zt));
            INDArray tc = Transforms.tanh(ct, true);
            INDArray ht = ot.mul(tc);
            if (keep) {
                hPrev[t] = hT;
                cPrev[t] = cT;
                z[t] = zt;
                f[t] = ft;
                o[t] = ot;
                g[t] = gt;
                tanhC[t] = tc;
            }
            out.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.point(t)).assign(ht);
            hT = ht;
            cT = ct;
        }
        return out;
    }

    @Override
    INDArray[] deltas(INDArray gradOutput) {
        INDArray[] deltas = new INDArray[(int) steps];
        INDArray dhNext = Nd4j.zeros(gradOutput.dataType(), batch, h);
        INDArray dcNext = Nd4j.zeros(gradOutput.dataType(), batch, h);
        for (int t = (int) steps - 1; t >= 0; t--) {
            INDArray dh = gradOutput.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.point(t)).dup('c').addi(dhNext);
            INDArray dOut = dh.mul(tanhC[t]).muli(o[t].rsub(1.0).muli(o[t]));                     // dL/d(a²)
            INDArray dc = dh.mul(o[t]).muli(tanhC[t].mul(tanhC[t]).rsubi(1.0)).addi(dcNext);      // dL/dc_t
            INDArray dForget = dc.mul(cPrev[t]).muli(f[t].rsub(1.0).muli(f[t]));                  // dL/d(a¹)
            INDArray dGate = dc.mul(z[t]).muli(g[t].rsub(1.0).muli(g[t]));                        // dL/d(a³)
            INDArray dBlock = dc.mul(g[t]).muli(z[t].mul(z[t]).rsubi(1.0));                       // dL/d(a⁰)
            INDArray delta = Nd4j.hstack(dBlock, dForget, dOut, dGate);                          // [B, 4H]
            deltas[t] = delta;
            dcNext = dc.muli(f[t]);
            dhNext = delta.mmul(rw.transpose());
        }
        return deltas;
    }

    @Override
    void clearSteps() {
        cPrev = null;
        z = null;
        f = null;
        o = null;
        g = null;
        tanhC = null;
    }
}
