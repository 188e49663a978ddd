package org.dpdl4j.dpsgd;

import java.util.HashMap;
import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * DL4J's {@code SeparableConvolution2D} (libnd4j's sconv2d): a depthwise convolution without bias or activation (its
 * window: kernel, stride, dilation, padding or Same mode) followed by a 1×1 convolution with the layer's bias and
 * activation. Two kernels in a row: the depthwise one on DL4J's "W" ({@link DepthwiseKernel}, behind
 * {@link SamePaddingKernel} in Same mode) and a {@link ConvKernel} on "pW" [nOut, iC·m, 1, 1] and "b". An example's
 * gradient is the two kernels' gradients side by side, so its squared norm is the sum of theirs.
 */
final class SeparableKernel extends LayerKernel {
    private final LayerKernel depthwise;
    private final ConvKernel pointwise;

    /**
     * @param depthwise the depthwise part (identity activation, no bias), on DL4J's "W"
     * @param pointwise the 1×1 convolution on DL4J's "pW" and "b", with the layer's activation
     */
    SeparableKernel(LayerKernel depthwise, ConvKernel pointwise) {
        this.depthwise = depthwise;
        this.pointwise = pointwise;
    }

    /** The depthwise part (tests reach into it). */
    LayerKernel depthwise() {
        return depthwise;
    }

    /** The pointwise part. */
    ConvKernel pointwise() {
        return pointwise;
    }

    /** {@inheritDoc} ([B, c, h, w]) */
    @Override
    int inputRank() {
        return 4;
    }

    private void share() {
        passSettingsTo(depthwise);
        passSettingsTo(pointwise);
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        share();
        return pointwise.forward(depthwise.forward(x, keep), keep);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        share();
        if (!trainable && !needInputGradient) {
            return null;
        }
        return depthwise.backward(pointwise.backward(gradOutput, true), needInputGradient);
    }

    /** DL4J's views of the depthwise part ("W") and of the pointwise part ("pW", "b" as the convolution's "W", "b"). */
    private static Map<String, INDArray> depthwiseViews(Map<String, INDArray> views) {
        Map<String, INDArray> m = new HashMap<>();
        m.put("W", views.get("W"));
        return m;
    }

    private static Map<String, INDArray> pointwiseViews(Map<String, INDArray> views) {
        Map<String, INDArray> m = new HashMap<>();
        m.put("W", views.get("pW"));
        m.put("b", views.get("b"));
        return m;
    }

    @Override
    void addSquaredNorms(INDArray sq) {
        depthwise.addSquaredNorms(sq);
        pointwise.addSquaredNorms(sq);
    }

    @Override
    boolean hasGroupSquaredNorms() {
        return depthwise.hasGroupSquaredNorms() && pointwise.hasGroupSquaredNorms();
    }

    @Override
    void addGroupSquaredNorms(INDArray sq, int k) {
        depthwise.addGroupSquaredNorms(sq, k);
        pointwise.addGroupSquaredNorms(sq, k);
    }

    @Override
    void addWeightedSum(INDArray w, Map<String, INDArray> views) {
        depthwise.addWeightedSum(w, depthwiseViews(views));
        pointwise.addWeightedSum(w, pointwiseViews(views));
    }

    @Override
    void addSum(Map<String, INDArray> views) {
        depthwise.addSum(depthwiseViews(views));
        pointwise.addSum(pointwiseViews(views));
    }

    @Override
    void zeroNonFinite() {
        depthwise.zeroNonFinite();
        pointwise.zeroNonFinite();
    }

    @Override
    void clear() {
        depthwise.clear();
        pointwise.clear();
    }
}
