package org.dpdl4j.cli;

import org.dpdl4j.datasets.ImageAugmentation;
import picocli.CommandLine.Option;

/**
 * {@code --augmult k}, shared by {@code train}, {@code tune}, {@code audit train} and {@code audit tune}: augmentation multiplicity (De et al. 2022,
 * arXiv:2204.13650, Sec. 3.2; {@link org.dpdl4j.dpsgd.ClippedSums#augmented}).
 */
final class AugmultOption {
    @Option(names = "--augmult", paramLabel = "k", defaultValue = "1", description = {"Augmentation multiplicity (De et al. 2022, "
            + "arXiv:2204.13650, Sec. 3.2): each sampled example's gradient is the mean over k augmented copies, clipped to C as a "
            + "whole, so the privacy cost does not change with k. The copies (shifts of up to 2 pixels for mnist and "
            + "fashion-mnist; up to 4 pixels and mirrored for cifar10) are drawn once when training starts and kept; a "
            + "ScatterNet's transform of them is stored too (k times the memory). k in [1, 64] (default ${DEFAULT-VALUE}: none)."})
    int k;

    /**
     * Checks k: in [1, 64]; above 1 only on this JVM and on a data set whose augmentation is known.
     *
     * @param onSpark whether the runs' clipped sums would be computed on a Spark cluster
     * @throws IllegalArgumentException naming --augmult, its value and what is allowed
     */
    void check(String dataset, boolean onSpark) {
        if (k < 1 || k > 64) {
            throw new IllegalArgumentException("--augmult must be in [1, 64] (1: no augmentation), got " + k);
        }
        if (k > 1 && onSpark) {
            throw new IllegalArgumentException("--augmult " + k + " runs on this JVM only, not on Spark (--executor spark, "
                    + "--train-executor spark)");
        }
        if (k > 1 && !java.util.List.of("mnist", "fashion-mnist", "cifar10").contains(dataset)) {
            throw new IllegalArgumentException("--augmult " + k + " needs mnist, fashion-mnist or cifar10 (whose augmentation "
                    + "is known), got --dataset " + dataset);
        }
    }

    /** Where a run's clipped sums are computed on this JVM: over k augmented copies of each example when k &gt; 1. */
    org.dpdl4j.dpsgd.ClippedSums clippedSums(String dataset) {
        return k > 1 ? org.dpdl4j.dpsgd.ClippedSums.augmented(augmentation(dataset), k) : org.dpdl4j.dpsgd.ClippedSums.local();
    }

    /** The data set's augmentation when k &gt; 1, else null. */
    ImageAugmentation augmentation(String dataset) {
        return k > 1 ? ImageAugmentation.forDataset(dataset) : null;
    }
}
