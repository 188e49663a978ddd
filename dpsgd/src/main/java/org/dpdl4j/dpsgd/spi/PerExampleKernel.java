package org.dpdl4j.dpsgd.spi;

import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The per-example gradient kernel of one layer, for a layer type of your own (as Opacus's
 * {@code register_grad_sampler} adds a grad sampler): what the DP-SGD engine runs in place of DL4J's layer when it trains
 * a network with per-example clipping. One instance per layer and per engine (per worker thread); never shared between
 * threads. Provide it through a {@link KernelFactory}.
 *
 * <p>The contract, per batch of B examples (row i of every array is example i; a layer that reads sequences sees
 * [B, f, T], images [B, c, h, w]):
 * <ol>
 *   <li>{@link #forward} computes the layer's output exactly as DL4J's layer does, keeping what the backward pass needs
 *       when {@code keep} is true;</li>
 *   <li>{@link #backward} receives dL/d(output), the gradient of the <em>sum</em> of the examples' losses (each
 *       example's own in its own row), computes and keeps each example's own parameter gradient g_i (or what gives it),
 *       and returns dL/d(input) when asked;</li>
 *   <li>{@link #addSquaredNorms} adds ‖g_i‖² over the layer's parameters to entry i of a float64 vector [B];</li>
 *   <li>{@link #addWeightedSum} adds Σ_i w_i·g_i into the layer's gradient views (DL4J's parameter names, e.g. "W",
 *       "b"; the shapes of the layer's {@code paramTable()}).</li>
 * </ol>
 * Example i's g_i must depend on example i alone: a layer that mixes the examples of a batch (batch normalisation)
 * cannot have a per-example kernel. Check a kernel with {@link org.dpdl4j.dpsgd.KernelChecks#assertExact}, which
 * compares it with DL4J's own gradient of each example alone.
 */
public interface PerExampleKernel {
    /**
     * The forward pass.
     *
     * @param input    [B, ...] in the shape the layer reads
     * @param training whether it is a training pass (dropout and the like apply)
     * @param keep     whether the backward pass follows (keep what it needs)
     * @return the layer's output [B, ...]
     */
    INDArray forward(INDArray input, boolean training, boolean keep);

    /**
     * The backward pass of the last kept forward pass.
     *
     * @param gradOutput        dL/d(output), [B, ...] like the output
     * @param needInputGradient whether dL/d(input) is needed (a trained layer comes before this one)
     * @return dL/d(input), or null when not needed
     */
    INDArray backward(INDArray gradOutput, boolean needInputGradient);

    /**
     * Adds each example's squared gradient norm over this layer's parameters.
     *
     * @param squaredNorms [B], float64; entry i += ‖g_i‖²
     */
    void addSquaredNorms(INDArray squaredNorms);

    /**
     * Adds Σ_i w_i·g_i into the layer's gradient views.
     *
     * @param weights       [B, 1], the weight of each example (its clip factor, or 1)
     * @param gradientViews parameter name → view of the network's gradient for that parameter (add into it)
     */
    void addWeightedSum(INDArray weights, Map<String, INDArray> gradientViews);

    /**
     * The rank of the input it reads (2, 3, 4), or 0 for any (the engine hands the network's input over as it comes).
     *
     * @return 2, 3 or 4, or 0 for any rank; 0 by default
     */
    default int inputRank() {
        return 0;
    }

    /** Drops what the last forward and backward pass kept. */
    default void clear() {
    }
}
