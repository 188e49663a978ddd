package org.dpdl4j.dpsgd;

import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * A layer applied to every time step of a sequence: DL4J's {@code RnnToFeedForwardPreProcessor} turns [B, C, T] into
 * [B·T, C] (example i's steps in rows iT … iT + T − 1), the layer runs on those rows, and
 * {@code FeedForwardToRnnPreProcessor} turns them back. An example's gradient is then the sum of its T rows'
 * gradients, g_i = Σ_t x_itᵀδ_it for a dense layer, whose norm the layer's grouped norms give exactly
 * ({@link LayerKernel#addGroupSquaredNorms} with groups of T rows), and the clipped sum weights each of its rows by its
 * clip factor. When the rows are the examples themselves (the preprocessor had nothing to unfold), the layer is used
 * as it is.
 */
final class TimeDistributedKernel extends LayerKernel {
    private final LayerKernel inner;
    private final String where;
    private long rows;

    /**
     * @param inner a layer kernel with grouped norms ({@link LayerKernel#hasGroupSquaredNorms})
     * @throws IllegalArgumentException if a trained layer has none
     */
    TimeDistributedKernel(LayerKernel inner, boolean trained, String where) {
        if (trained && !inner.hasGroupSquaredNorms()) {
            throw new IllegalArgumentException(where + ": a layer applied to every time step of a sequence (after DL4J's "
                    + "RnnToFeedForwardPreProcessor) must be a dense layer, whose per-example gradient over the steps the "
                    + "engine sums exactly; use a DenseLayer, or an RnnOutputLayer");
        }
        this.inner = inner;
        this.where = where;
    }

    private void share() {
        passSettingsTo(inner);
        inner.mask = null; // the steps' rows carry no mask: what a padded step computes is masked where it is used
    }

    /** Rows per example (T), or 1 when the rows are the examples. */
    private long steps() {
        if (rows % examples != 0) {
            throw new IllegalStateException(where + ": " + rows + " rows for " + examples + " examples");
        }
        return rows / examples;
    }

    @Override
    int inputRank() {
        return inner.inputRank();
    }

    @Override
    boolean acceptsMask() {
        return true;
    }

    @Override
    boolean deterministic() {
        return inner.deterministic();
    }

    @Override
    boolean mayMixExamples() {
        return inner.mayMixExamples();
    }

    @Override
    boolean zeroesNonFinite() {
        return inner.zeroesNonFinite();
    }

    @Override
    boolean hasInputGradient() {
        return inner.hasInputGradient();
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        share();
        rows = x.size(0);
        return inner.forward(x, keep);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        share();
        return inner.backward(gradOutput, needInputGradient);
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        long t = steps();
        if (t == 1) {
            inner.addSquaredNorms(sq);
        } else {
            inner.addGroupSquaredNorms(sq, (int) t);
        }
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return inner.hasGroupSquaredNorms();
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) {
        inner.addGroupSquaredNorms(sq, (int) (k * steps()));
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> gradientViews) {
        long t = steps();
        inner.addWeightedSum(t == 1 ? w : w.reshape('c', w.length(), 1).repeat(1, t).reshape('c', w.length() * t, 1), gradientViews);
    }

    @Override
    void addSum(Map<String, INDArray> gradientViews) {
        inner.addSum(gradientViews);
    }

    @Override
    void zeroNonFinite() {
        inner.zeroNonFinite();
    }

    @Override
    void clear() {
        inner.clear();
    }
}
