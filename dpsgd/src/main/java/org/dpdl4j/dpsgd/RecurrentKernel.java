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
 * arXiv:2110.05679, Section 4). The clip-weighted sum is one matrix product over all B·T rows, and so are the input
 * terms x_t·W + b of every step and the input gradient δ_t·Wᵀ (only the recurrence runs step by step).
 *
 * <p>A subclass computes the forward pass and the deltas, masked steps included; a batch it does not model (for a
 * SimpleRnn, a mask of values other than 0 and 1) runs on the exact fallback, DL4J's own layer one example at a time.
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
    // kept by a training pass's forward: the previous outputs per step t, [T][B, H]
    INDArray[] hPrev;
    // rows example-major [B·T, ·]: the input (forward), the previous outputs and deltas (backward)
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
     * The recurrence from the input terms x_t·W + b [B, T, k·H] ({@link #batch} and {@link #steps} set): the output
     * [B, H, T]; when {@code keep}, fills {@link #hPrev} (allocated) and keeps what {@link #deltas} needs.
     */
    abstract INDArray forwardSteps(INDArray inputTerms, boolean keep);

    /** Backpropagation through time from dL/d(output) [B, H, T]: δ_t [B, k·H] for each step. */
    abstract INDArray[] deltas(INDArray gradOutput);

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
        passSettingsTo(fallback);
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
        INDArray rows = x.permute(0, 2, 1).dup('c').reshape('c', batch * steps, x.size(1)); // [B·T, nIn]
        INDArray inputTerms = rows.mmul(w).addiRowVector(b.reshape(1, b.length())).reshape('c', batch, steps, w.size(1));
        if (keep) {
            xRows = rows;
            hPrev = new INDArray[(int) steps];
        }
        return forwardSteps(inputTerms, keep);
    }

    @Override
    final INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        if (onFallback) {
            share();
            return fallback.backward(gradOutput, needInputGradient);
        }
        deltaRows = exampleMajor(deltas(gradOutput));
        if (trainable) {
            hRows = exampleMajor(hPrev);
        }
        return needInputGradient // dL/dx_t = δ_t·Wᵀ, [B·T, nIn] → [B, nIn, T]
                ? deltaRows.mmul(w.transpose()).reshape('c', batch, steps, w.size(0)).permute(0, 2, 1).dup('c') : null;
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
        hPrev = null;
        xRows = null;
        hRows = null;
        deltaRows = null;
    }
}
