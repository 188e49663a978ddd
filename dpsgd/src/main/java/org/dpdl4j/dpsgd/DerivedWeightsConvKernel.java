package org.dpdl4j.dpsgd;

import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * A {@link ConvKernel} run on weights derived from the layer's weight parameter at every forward pass (written into a
 * buffer outside any workspace, which the convolution reads), whose per-example gradients with respect to those weights
 * are mapped to gradients with respect to the parameter ({@link ConvKernel#weightGradientMap}, the chain rule, linear
 * per example) before norms and sums are taken. The subclasses say how: {@link WsConvKernel} standardises the weights,
 * {@link DepthwiseKernel} reorders DL4J's depthwise weights into the grouped convolution's.
 */
abstract class DerivedWeightsConvKernel extends WrappingKernel {
    /** {@inheritDoc} ([B, c, h, w]) */
    @Override
    int inputRank() {
        return 4;
    }

    /** The layer's weight parameter (read). */
    final INDArray parameter;
    private final INDArray derived; // the buffer the convolution reads (outside any workspace)
    private final ConvKernel conv;

    /**
     * @param parameter    the layer's weight parameter
     * @param derivedShape the convolution's weight shape, [oC, iC/groups, kH, kW]
     * @param groups       the convolution's groups ({@link ConvKernel})
     */
    DerivedWeightsConvKernel(INDArray parameter, long[] derivedShape, INDArray bias, IActivation activation, Ops.Window window,
                             int groups) {
        this.parameter = parameter;
        try (var outside = Nd4j.getWorkspaceManager().scopeOutOfWorkspaces()) {
            this.derived = Nd4j.createUninitializedDetached(parameter.dataType(), derivedShape);
        }
        this.conv = new ConvKernel(derived, bias, activation, window, groups);
        this.conv.weightGradientMap = this::parameterGradient;
        this.conv.weightGradientMapPermutes = permutes();
    }

    /**
     * Whether {@link #parameterGradient} only reorders the entries (then norms are unchanged, and the convolution may take
     * ghost norms of the derived weights' gradients).
     */
    boolean permutes() {
        return false;
    }

    /** Writes the convolution's weights, derived from {@link #parameter}, into {@code into} [oC, iC/groups, kH, kW]. */
    abstract void derive(INDArray into);

    /**
     * dL/d(parameter) from dL/d(derived weights) stacked [N, oC, K] (one per example, or the batch sum as N = 1): N
     * gradients with the parameter's elements in its 'c' order, shaped [N, ·, ·].
     */
    abstract INDArray parameterGradient(INDArray derivedGradients);

    /** The convolution this kernel runs on the derived weights (tests put it on either per-example path). */
    ConvKernel convolution() {
        return conv;
    }

    @Override
    LayerKernel current() {
        return conv;
    }

    @Override
    INDArray forward(INDArray x, boolean keep) {
        derive(derived);
        passSettingsTo(conv);
        return conv.forward(x, keep);
    }

    @Override
    INDArray backward(INDArray gradOutput, boolean needInputGradient) {
        passSettingsTo(conv);
        return conv.backward(gradOutput, needInputGradient);
    }
}
