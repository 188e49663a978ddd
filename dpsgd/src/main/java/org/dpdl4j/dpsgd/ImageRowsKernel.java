package org.dpdl4j.dpsgd;

import org.dpdl4j.models.ImageRowsPreProcessor;
import org.nd4j.linalg.api.ndarray.INDArray;

/** {@link ImageRowsPreProcessor}: flattened images [B, c·h·w] read as sequences of their rows [B, c·w, h]. */
final class ImageRowsKernel extends LayerKernel {
    private final ImageRowsPreProcessor rows;

    ImageRowsKernel(ImageRowsPreProcessor rows) {
        this.rows = rows;
    }

    @Override
    int inputRank() {
        return 2;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        return rows.rows(x);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        return needInputGradient ? rows.images(gradOutput) : null;
    }
}
