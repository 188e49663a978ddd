package org.dpdl4j.models;

import org.deeplearning4j.nn.api.MaskState;
import org.deeplearning4j.nn.conf.InputPreProcessor;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.workspace.ArrayType;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.nd4j.common.primitives.Pair;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * An image read as a sequence of its rows: flattened NCHW images [B, c·h·w] (as {@code InputType.convolutionalFlat}
 * stores them) become sequences [B, c·w, h] in DL4J's NCW layout, one time step per row (the classic sequential-MNIST
 * task: 28 steps of 28 pixels). At step t the features are row t of every channel, channel-major. The backward pass is
 * the inverse permutation.
 */
public final class ImageRowsPreProcessor implements InputPreProcessor {
    private static final long serialVersionUID = 1L;
    private int channels;
    private int height;
    private int width;

    /** For DL4J's JSON reader. */
    public ImageRowsPreProcessor() {
    }

    /**
     * A preprocessor for images of the given shape.
     *
     * @param channels c ≥ 1
     * @param height   h ≥ 1 in pixels (the number of time steps)
     * @param width    w ≥ 1 in pixels
     * @throws IllegalArgumentException if any of them is &lt; 1
     */
    public ImageRowsPreProcessor(int channels, int height, int width) {
        if (channels < 1 || height < 1 || width < 1) {
            throw new IllegalArgumentException("channels, height and width must be >= 1, got " + channels + ", " + height + ", " + width);
        }
        this.channels = channels;
        this.height = height;
        this.width = width;
    }

    /**
     * The images' channel count c.
     *
     * @return c, ≥ 1 once set
     */
    public int getChannels() {
        return channels;
    }

    /**
     * The images' height h, the number of time steps.
     *
     * @return h in pixels, ≥ 1 once set
     */
    public int getHeight() {
        return height;
    }

    /**
     * The images' width w.
     *
     * @return w in pixels, ≥ 1 once set
     */
    public int getWidth() {
        return width;
    }

    /**
     * Sets c; for DL4J's JSON reader (not validated here).
     *
     * @param channels c, should be ≥ 1
     */
    public void setChannels(int channels) {
        this.channels = channels;
    }

    /**
     * Sets h; for DL4J's JSON reader (not validated here).
     *
     * @param height h in pixels, should be ≥ 1
     */
    public void setHeight(int height) {
        this.height = height;
    }

    /**
     * Sets w; for DL4J's JSON reader (not validated here).
     *
     * @param width w in pixels, should be ≥ 1
     */
    public void setWidth(int width) {
        this.width = width;
    }

    /**
     * Flattened images to row sequences: [B, c·h·w] → [B, c·w, h].
     *
     * @param flat flattened NCHW images [B, c·h·w], not modified
     * @return a new C-ordered array [B, c·w, h]
     */
    public INDArray rows(INDArray flat) {
        long b = flat.size(0);
        return flat.reshape('c', b, channels, height, width).permute(0, 1, 3, 2).dup('c').reshape('c', b, (long) channels * width, height);
    }

    /**
     * Row sequences back to flattened images: [B, c·w, h] → [B, c·h·w] (the inverse of {@link #rows}).
     *
     * @param sequences row sequences [B, c·w, h], not modified
     * @return a new C-ordered array [B, c·h·w]
     */
    public INDArray images(INDArray sequences) {
        long b = sequences.size(0);
        return sequences.dup('c').reshape('c', b, channels, width, height).permute(0, 1, 3, 2).dup('c')
                .reshape('c', b, (long) channels * height * width);
    }

    @Override
    public INDArray preProcess(INDArray input, int miniBatchSize, LayerWorkspaceMgr workspaceMgr) {
        return workspaceMgr.leverageTo(ArrayType.ACTIVATIONS, rows(input.rank() == 2 ? input : input.reshape('c', input.size(0), -1)));
    }

    @Override
    public INDArray backprop(INDArray output, int miniBatchSize, LayerWorkspaceMgr workspaceMgr) {
        return workspaceMgr.leverageTo(ArrayType.ACTIVATION_GRAD, images(output));
    }

    @Override
    public InputPreProcessor clone() {
        return new ImageRowsPreProcessor(channels, height, width);
    }

    @Override
    public InputType getOutputType(InputType inputType) {
        return InputType.recurrent((long) channels * width, height);
    }

    @Override
    public Pair<INDArray, MaskState> feedForwardMaskArray(INDArray maskArray, MaskState currentMaskState, int minibatchSize) {
        return new Pair<>(maskArray, currentMaskState);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ImageRowsPreProcessor p && p.channels == channels && p.height == height && p.width == width;
    }

    @Override
    public int hashCode() {
        return (channels * 31 + height) * 31 + width;
    }
}
