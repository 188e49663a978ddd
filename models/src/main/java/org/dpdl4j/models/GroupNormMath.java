package org.dpdl4j.models;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.ops.transforms.Transforms;

/**
 * The arithmetic of group normalisation (Y. Wu, K. He, "Group Normalization", ECCV 2018, arXiv:1803.08494, Eq. 1–3):
 * the C channels of each example are split into G groups of C/G consecutive channels, and each group is normalised by
 * its own mean and (biased) variance over its channels and positions, x̂ = (x − μ)/√(σ² + ε). It never mixes examples,
 * which is why DP-SGD can use it where batch normalisation cannot. Shared by the DL4J layer ({@link GroupNormalization})
 * and the DP-SGD engine's kernel, and checked against finite differences in the tests.
 *
 * <p>Arrays are C-ordered [B, C, S] (S = H·W positions, 1 for feed-forward activations).
 */
public final class GroupNormMath {
    private GroupNormMath() {
    }

    /**
     * Normalises each group of each example: x̂ = (x − μ)/√(σ² + ε) with μ and the biased σ² over the group's C/G·S
     * values. The input is not modified (the work is done on a copy); nothing is validated.
     *
     * @param x      [B, C, S], C-ordered
     * @param groups G, ≥ 1 and dividing C
     * @param eps    ε &gt; 0 added to the variance
     * @return {x̂ [B, C, S], 1/√(σ² + ε) [B·G, 1]}
     */
    public static INDArray[] normalise(INDArray x, int groups, double eps) {
        long b = x.size(0);
        long per = x.length() / (b * groups);
        INDArray rows = x.dup('c').reshape('c', b * groups, per); // becomes x̂ in place: the one array of this size
        rows.subiColumnVector(rows.mean(true, 1));
        INDArray norm = rows.norm2(true, 1); // √(Σ (x − μ)²), without a squared copy
        INDArray invStd = Transforms.pow(norm.muli(norm).divi(per).addi(eps), -0.5, false);
        return new INDArray[]{rows.muliColumnVector(invStd).reshape('c', x.shape()), invStd};
    }

    /**
     * dL/dx from dL/dx̂ (the chain rule through the group statistics):
     * dx = (dx̂ − mean_g(dx̂) − x̂·mean_g(dx̂ ∘ x̂)) / √(σ² + ε), means over each group's C/G·S values.
     *
     * @param gradXHat dL/dx̂ [B, C, S], C-ordered; may be overwritten (the result can share its memory)
     * @param xHat     x̂ of {@link #normalise}
     * @param invStd   1/√(σ² + ε) of {@link #normalise}, [B·G, 1]
     * @param groups   G, as given to {@link #normalise}; not read (the group size is derived from {@code invStd}'s length)
     * @return dL/dx [B, C, S], possibly sharing memory with {@code gradXHat}
     */
    public static INDArray inputGradient(INDArray gradXHat, INDArray xHat, INDArray invStd, int groups) {
        long rowsN = invStd.size(0);
        long per = xHat.length() / rowsN;
        INDArray g = gradXHat.reshape('c', rowsN, per); // a view where gradXHat is C-contiguous (then overwritten)
        INDArray h = xHat.reshape('c', rowsN, per);
        INDArray meanG = g.mean(true, 1);
        INDArray meanGH = g.mul(h).mean(true, 1);
        INDArray out = g.subiColumnVector(meanG).subi(h.mulColumnVector(meanGH)).muliColumnVector(invStd);
        return out.reshape('c', xHat.shape());
    }

    /**
     * y = γ_c·x̂ + β_c for x̂ [B, C, S] and γ, β with C values each (β may be null: no shift), as a new [B, C, S] array.
     * Computed on the [B·C, S] view with a per-row factor (a broadcast along dimension 1 of the 3-D array is a strided
     * loop in libnd4j, measured several times slower).
     *
     * @param xHat  x̂ [B, C, S], C-ordered
     * @param gamma γ, C values (any shape of length C), cast to x̂'s data type
     * @param beta  β, C values, cast to x̂'s data type; may be null (no shift)
     * @return y, a new [B, C, S] array of x̂'s data type
     */
    public static INDArray affine(INDArray xHat, INDArray gamma, INDArray beta) {
        long b = xHat.size(0);
        long c = xHat.size(1);
        INDArray rows = xHat.reshape('c', b * c, xHat.length() / (b * c));
        INDArray y = rows.mulColumnVector(perRow(gamma.castTo(xHat.dataType()), b));
        if (beta != null) {
            y.addiColumnVector(perRow(beta.castTo(xHat.dataType()), b));
        }
        return y.reshape('c', xHat.shape());
    }

    /** v's C values repeated for each of b examples: a column [b·C, 1] whose row i·C + c holds v_c. */
    private static INDArray perRow(INDArray v, long b) {
        return Nd4j.tile(v.reshape(1, v.length()), (int) b, 1).reshape('c', b * v.length(), 1);
    }

    /**
     * x as [B, C, S] (C-ordered, a view where x is C-contiguous): [B, C, H, W] or [B, C].
     *
     * @param x activations [B, C, H, W] or [B, C]
     * @return x reshaped to [B, C, S] with S = H·W (1 for [B, C])
     */
    public static INDArray asChannels(INDArray x) {
        return x.reshape('c', x.size(0), x.size(1), x.length() / (x.size(0) * x.size(1)));
    }
}
