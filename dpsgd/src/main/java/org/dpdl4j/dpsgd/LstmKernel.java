package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.ops.transforms.Transforms;

/**
 * DL4J's {@code LSTM} layer (no peepholes; tanh on the block input and the cell, sigmoid gates; input [B, nIn, T],
 * output [B, H, T], zero initial state), as DL4J's {@code LSTMHelpers} computes it: with a_t = x_t·W + h_{t−1}·RW + b
 * split into four blocks of H columns, z = tanh(a⁰), f = σ(a¹), o = σ(a²), g = σ(a³), c_t = f ⊙ c_{t−1} + g ⊙ z and
 * h_t = o ⊙ tanh(c_t). The forward pass keeps the gates; backpropagation through time gives every example's pre-activation
 * delta δ_t [B, 4H] at each step (the examples are independent in the recurrence), so example i's gradients are
 * exactly G_W = Σ_t x_itᵀδ_it, G_RW = Σ_t h_i,t−1ᵀδ_it and G_b = Σ_t δ_it: outer products summed over the T steps, whose
 * squared norms the steps' Gram matrices give (Σ_{s,t} (x_s·x_t)(δ_s·δ_t), {@link LayerKernel#groupGram}) without
 * forming any G, and whose clip-weighted sum is one matrix product over all B·T rows.
 *
 * <p>A batch with a feature mask runs on the exact fallback (DL4J's own layer, one example at a time).
 */
final class LstmKernel extends LayerKernel {
    private final INDArray w;   // [nIn, 4H]
    private final INDArray rw;  // [H, 4H]
    private final INDArray b;   // [1, 4H] or [4H]
    private final FallbackKernel masked; // for batches with a feature mask
    private final long h;
    private boolean onFallback;
    private long batch;
    private long steps;
    // kept by a training pass, per step t: [T][B, ·]
    private INDArray[] xs;
    private INDArray[] hPrev;
    private INDArray[] cPrev;
    private INDArray[] z;
    private INDArray[] f;
    private INDArray[] o;
    private INDArray[] g;
    private INDArray[] tanhC;
    // after the backward pass: rows example-major [B·T, ·]
    private INDArray xRows;
    private INDArray hRows;
    private INDArray deltaRows;

    LstmKernel(INDArray w, INDArray rw, INDArray b, FallbackKernel masked) {
        this.w = w;
        this.rw = rw;
        this.b = b;
        this.masked = masked;
        this.h = rw.size(0);
    }

    @Override
    int inputRank() {
        return 3;
    }

    @Override
    boolean acceptsMask() {
        return true;
    }

    @Override
    INDArray outputMask() {
        return onFallback ? masked.outputMask() : mask;
    }

    private void share() {
        masked.perExample = perExample;
        masked.trainable = trainable;
        masked.training = training;
        masked.examples = examples;
        masked.mask = mask;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        onFallback = mask != null;
        if (onFallback) {
            share();
            return masked.forward(x, keep);
        }
        batch = x.size(0);
        steps = x.size(2);
        INDArray out = Nd4j.create(x.dataType(), batch, h, steps);
        if (keep) {
            xs = new INDArray[(int) steps];
            hPrev = new INDArray[(int) steps];
            cPrev = new INDArray[(int) steps];
            z = new INDArray[(int) steps];
            f = new INDArray[(int) steps];
            o = new INDArray[(int) steps];
            g = new INDArray[(int) steps];
            tanhC = new INDArray[(int) steps];
        }
        INDArray hT = Nd4j.zeros(x.dataType(), batch, h);
        INDArray cT = Nd4j.zeros(x.dataType(), batch, h);
        INDArray bias = b.reshape(1, 4 * h);
        for (int t = 0; t < steps; t++) {
            INDArray xt = x.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.point(t)).dup('c');
            INDArray a = xt.mmul(w).addi(hT.mmul(rw)).addiRowVector(bias);
            INDArray zt = Transforms.tanh(a.get(NDArrayIndex.all(), NDArrayIndex.interval(0, h)), true);
            INDArray ft = Transforms.sigmoid(a.get(NDArrayIndex.all(), NDArrayIndex.interval(h, 2 * h)), true);
            INDArray ot = Transforms.sigmoid(a.get(NDArrayIndex.all(), NDArrayIndex.interval(2 * h, 3 * h)), true);
            INDArray gt = Transforms.sigmoid(a.get(NDArrayIndex.all(), NDArrayIndex.interval(3 * h, 4 * h)), true);
            INDArray ct = ft.mul(cT).addi(gt.mul(zt));
            INDArray tc = Transforms.tanh(ct, true);
            INDArray ht = ot.mul(tc);
            if (keep) {
                xs[t] = xt;
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
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        if (onFallback) {
            share();
            return masked.backward(gradOutput, needInputGradient);
        }
        long in = w.size(0);
        INDArray dx = needInputGradient ? Nd4j.create(gradOutput.dataType(), batch, in, steps) : null;
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
            if (dx != null) {
                dx.get(NDArrayIndex.all(), NDArrayIndex.all(), NDArrayIndex.point(t)).assign(delta.mmul(w.transpose()));
            }
        }
        deltaRows = exampleMajor(deltas);
        if (trainable) {
            xRows = exampleMajor(xs);
            hRows = exampleMajor(hPrev);
        }
        return dx;
    }

    /** [T][B, d] → [B·T, d], example i's steps in rows iT … iT + T − 1. */
    private static INDArray exampleMajor(INDArray[] perStep) {
        INDArray stacked = Nd4j.stack(1, perStep); // [B, T, d]
        return stacked.reshape('c', stacked.size(0) * stacked.size(1), stacked.size(2));
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        if (onFallback) {
            masked.addSquaredNorms(sq);
            return;
        }
        addGroupSquaredNorms(sq, 1);
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return true;
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) { // ‖Σ_{t in group} x_tᵀδ_t‖² = Σ_{s,t} (x_s·x_t)(δ_s·δ_t), and likewise for RW, b
        if (onFallback) {
            throw new IllegalStateException("grouped norms of an LSTM with a feature mask");
        }
        int group = (int) (k * steps);
        INDArray deltaGram = LayerKernel.groupGram(deltaRows, group);
        sq.addi(LayerKernel.groupGram(xRows, group).muli(deltaGram).sum(1, 2));
        sq.addi(LayerKernel.groupGram(hRows, group).muli(deltaGram).sum(1, 2));
        sq.addi(deltaGram.sum(1, 2));
    }

    @Override
    void addWeightedSum(INDArray weights, Map<String, INDArray> views) {
        if (onFallback) {
            masked.addWeightedSum(weights, views);
            return;
        }
        INDArray perRow = weights.reshape('c', weights.length(), 1).repeat(1, steps).reshape('c', weights.length() * steps, 1);
        add(deltaRows.mulColumnVector(perRow.castTo(deltaRows.dataType())), views);
    }

    @Override
    void addSum(Map<String, INDArray> views) {
        if (onFallback) {
            masked.addSum(views);
            return;
        }
        add(deltaRows, views);
    }

    private void add(INDArray weightedDelta, Map<String, INDArray> views) {
        addInto(views.get("W"), xRows.transpose().mmul(weightedDelta));
        addInto(views.get("RW"), hRows.transpose().mmul(weightedDelta));
        addInto(views.get("b"), weightedDelta.sum(true, 0));
    }

    @Override
    boolean addsFlatGradients() {
        return onFallback && masked.addsFlatGradients();
    }

    @Override
    void zeroNonFinite() {
        if (onFallback) {
            masked.zeroNonFinite();
            return;
        }
        LayerKernel.zeroNonFinite(deltaRows);
        LayerKernel.zeroNonFinite(xRows);
        LayerKernel.zeroNonFinite(hRows);
    }

    @Override
    void clear() {
        masked.clear();
        xs = null;
        hPrev = null;
        cPrev = null;
        z = null;
        f = null;
        o = null;
        g = null;
        tanhC = null;
        xRows = null;
        hRows = null;
        deltaRows = null;
    }
}
