package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * A recurrent layer with input weights W [nIn, k·H], recurrent weights RW [H, k·H] and a bias b over a zero initial
 * state, input [B, nIn, T] and output [B, H, T] in NCW (DL4J's {@code LSTM}, k = 4, and {@code SimpleRnn}, k = 1).
 * Backpropagation through time gives every example's pre-activation delta δ_t [B, k·H] at each step (the examples are
 * independent in the recurrence), so example i's gradients are exactly G_W = Σ_t x_itᵀδ_it, G_RW = Σ_t h_i,t−1ᵀδ_it
 * and G_b = Σ_t δ_it: outer products summed over the T steps. Their squared norm is
 * Σ_{s,t} (x_s·x_t + h_{s−1}·h_{t−1} + 1)(δ_s·δ_t), from the steps' Gram matrices ({@link LayerKernel#groupGram}: one
 * batched product each, in float64) without forming any G; this is the ghost norm of sequence layers (X. Li, F. Tramèr,
 * P. Liang, T. Hashimoto, "Large Language Models Can Be Strong Differentially Private Learners", ICLR 2022,
 * arXiv:2110.05679, Section 4). The clip-weighted sum is one matrix product over all B·T rows.
 *
 * <p>A subclass computes the forward pass and the deltas; a batch it does not model (its feature mask) runs on the
 * exact fallback, DL4J's own layer one example at a time.
 */
abstract class RecurrentKernel extends LayerKernel {
    final INDArray w;  // [nIn, k·H]
    final INDArray rw; // [H, k·H]
    final INDArray b;  // [1, k·H] or [k·H]
    final long h;
    private final FallbackKernel fallback;
    private boolean onFallback;
    long batch;
    long steps;
    // kept by a training pass's forward, per step t: [T][B, ·]
    INDArray[] xs;
    INDArray[] hPrev;
    // after the backward pass: rows example-major [B·T, ·]
    private INDArray xRows;
    private INDArray hRows;
    private INDArray deltaRows;

    RecurrentKernel(INDArray w, INDArray rw, INDArray b, FallbackKernel fallback) {
        this.w = w;
        this.rw = rw;
        this.b = b;
        this.h = rw.size(0);
        this.fallback = fallback;
    }

    /** Whether the current batch (its {@link #mask}) runs on the fallback. */
    abstract boolean needsFallback();

    /**
     * The forward pass of [B, nIn, T] ({@link #batch} and {@link #steps} set); when {@code keep}, fills {@link #xs} and
     * {@link #hPrev} (allocated) and keeps what {@link #deltas} needs.
     */
    abstract INDArray forwardSteps(INDArray x, boolean keep);

    /** Backpropagation through time from dL/d(output) [B, H, T]: δ_t for each step, dL/dx_t written into dx unless null. */
    abstract INDArray[] deltas(INDArray gradOutput, INDArray dx);

    /** Drops what the subclass keeps. */
    abstract void clearSteps();

    @Override
    final int inputRank() {
        return 3;
    }

    @Override
    final boolean acceptsMask() {
        return true;
    }

    @Override
    final INDArray outputMask() {
        return onFallback ? fallback.outputMask() : mask;
    }

    private void share() {
        fallback.perExample = perExample;
        fallback.trainable = trainable;
        fallback.training = training;
        fallback.examples = examples;
        fallback.mask = mask;
    }

    @Override
    final INDArray forward(INDArray x, boolean keep) {
        onFallback = needsFallback();
        if (onFallback) {
            share();
            return fallback.forward(x, keep);
        }
        batch = x.size(0);
        steps = x.size(2);
        if (keep) {
            xs = new INDArray[(int) steps];
            hPrev = new INDArray[(int) steps];
        }
        return forwardSteps(x, keep);
    }

    @Override
    final INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        if (onFallback) {
            share();
            return fallback.backward(gradOutput, needInputGradient);
        }
        INDArray dx = needInputGradient ? Nd4j.create(gradOutput.dataType(), batch, w.size(0), steps) : null;
        deltaRows = exampleMajor(deltas(gradOutput, dx));
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
    final void addSquaredNorms(INDArray sq) {
        if (onFallback) {
            fallback.addSquaredNorms(sq);
            return;
        }
        addGroupSquaredNorms(sq, 1);
    }

    @Override
    final boolean hasGroupSquaredNorms() {
        return true;
    }

    @Override
    final void addGroupSquaredNorms(INDArray sq, int k) { // Σ_{s,t in group} (x_s·x_t + h_{s−1}·h_{t−1} + 1)(δ_s·δ_t)
        if (onFallback) {
            throw new IllegalStateException("grouped norms of a " + getClass().getSimpleName() + " batch on its fallback");
        }
        int group = (int) (k * steps);
        INDArray inputs = groupGram(xRows, group).addi(groupGram(hRows, group)).addi(1.0);
        sq.addi(inputs.muli(groupGram(deltaRows, group)).sum(1, 2));
    }

    @Override
    final void addWeightedSum(INDArray weights, Map<String, INDArray> views) {
        if (onFallback) {
            fallback.addWeightedSum(weights, views);
            return;
        }
        INDArray perRow = weights.reshape('c', weights.length(), 1).repeat(1, steps).reshape('c', weights.length() * steps, 1);
        add(deltaRows.mulColumnVector(perRow.castTo(deltaRows.dataType())), views);
    }

    @Override
    final void addSum(Map<String, INDArray> views) {
        if (onFallback) {
            fallback.addSum(views);
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
    final boolean addsFlatGradients() {
        return onFallback && fallback.addsFlatGradients();
    }

    @Override
    final void zeroNonFinite() {
        if (onFallback) {
            fallback.zeroNonFinite();
            return;
        }
        zeroNonFinite(deltaRows);
        zeroNonFinite(xRows);
        zeroNonFinite(hRows);
    }

    @Override
    final void clear() {
        fallback.clear();
        clearSteps();
        xs = null;
        hPrev = null;
        xRows = null;
        hRows = null;
        deltaRows = null;
    }
}
