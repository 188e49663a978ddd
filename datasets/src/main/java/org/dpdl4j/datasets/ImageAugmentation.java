package org.dpdl4j.datasets;

import java.util.SplittableRandom;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * A random, data-independent transformation of images: a shift of up to {@code maxShift} pixels in each direction (the
 * image padded with zeros and cropped back to its size at a uniformly drawn offset), and, if {@code flips}, a horizontal
 * mirror with probability 1/2. Each image's draw depends only on the seed and the image's row, never on the data, so
 * the augmented copies of an example are a function of that example alone (what augmentation multiplicity needs: De et
 * al., "Unlocking High-Accuracy Differentially Private Image Classification through Scale", arXiv:2204.13650,
 * Sec. 3.2). The zero fill is the background of pixels scaled to [0, 1] ({@link LabeledData}).
 *
 * @param channels c ≥ 1
 * @param height   h ≥ 1 pixels
 * @param width    w ≥ 1 pixels
 * @param maxShift the largest shift in pixels, in [0, min(h, w))
 * @param flips    whether images are also mirrored left-right (not for digits)
 */
public record ImageAugmentation(int channels, int height, int width, int maxShift, boolean flips) implements java.io.Serializable {

    /**
     * Checks the image size and the shift.
     *
     * @param channels c ≥ 1
     * @param height   h ≥ 1 pixels
     * @param width    w ≥ 1 pixels
     * @param maxShift the largest shift in pixels, in [0, min(h, w))
     * @param flips    whether images are also mirrored left-right (not for digits)
     * @throws IllegalArgumentException if a size is below 1 or the shift is outside [0, min(h, w))
     */
    public ImageAugmentation {
        if (channels < 1 || height < 1 || width < 1) {
            throw new IllegalArgumentException("channels, height and width must be >= 1, got " + channels + ", " + height + ", " + width);
        }
        if (maxShift < 0 || maxShift >= Math.min(height, width)) {
            throw new IllegalArgumentException("maxShift must be in [0, " + Math.min(height, width) + "), got " + maxShift);
        }
    }

    /**
     * The augmentation for a data set of {@link Datasets}: shifts of up to 2 pixels for MNIST (digits are not mirrored)
     * and Fashion-MNIST (whose shoes all face left: mirrored copies cost 0.9 points of validation accuracy against
     * shifts alone in a ScatterNet study, docs/RESULTS.md), shifts of up to 4 pixels and flips for CIFAR-10 (De et al.'s
     * crops of a 4-pixel padding).
     *
     * @param dataset the data set's name: {@code mnist}, {@code fashion-mnist} or {@code cifar10}
     * @return its augmentation
     * @throws IllegalArgumentException for another data set
     */
    public static ImageAugmentation forDataset(String dataset) {
        return switch (dataset) {
            case "mnist" -> new ImageAugmentation(1, 28, 28, 2, false);
            case "fashion-mnist" -> new ImageAugmentation(1, 28, 28, 2, false); // its shoes all face one way
            case "cifar10" -> new ImageAugmentation(3, 32, 32, 4, true);
            default -> throw new IllegalArgumentException("augmentation is defined for mnist, fashion-mnist and cifar10 only, got '"
                    + dataset + "'");
        };
    }

    /**
     * Augmented copies of the rows: copy j ∈ [0, k) of row i is at row i·k + j, drawn from (seed, i, j).
     *
     * @param features images [n, c·h·w] (flattened NCHW, C order)
     * @param k        copies per image, ≥ 1
     * @param seed     the seed of the draws; any value (the same seed gives the same copies)
     * @return [n·k, c·h·w], float32
     * @throws IllegalArgumentException if a row is not c·h·w values or k &lt; 1
     */
    public INDArray copies(INDArray features, int k, long seed) {
        int d = channels * height * width;
        if (features.rank() != 2 || features.size(1) != d) {
            throw new IllegalArgumentException("features must be [n, " + d + "] for " + channels + "x" + height + "x" + width
                    + " images, got " + java.util.Arrays.toString(features.shape()));
        }
        if (k < 1) {
            throw new IllegalArgumentException("copies k must be >= 1, got " + k);
        }
        int n = (int) features.size(0);
        INDArray out = Nd4j.createUninitialized(DataType.FLOAT, (long) n * k, d);
        int block = Math.max(1, (1 << 20) / (k * d)); // images per block: about 4 MB of copies on the Java heap at a time
        for (int first = 0; first < n; first += block) {
            int count = Math.min(block, n - first);
            int base = first;
            float[] in = features.get(NDArrayIndex.interval(first, first + count)).castTo(DataType.FLOAT).dup('c').data().asFloat();
            float[] copies = new float[count * k * d];
            java.util.stream.IntStream.range(0, count).parallel().forEach(i -> {
                SplittableRandom random = new SplittableRandom(seed ^ (0x9E3779B97F4A7C15L * (base + i + 1L)));
                for (int j = 0; j < k; j++) {
                    int dy = random.nextInt(-maxShift, maxShift + 1);
                    int dx = random.nextInt(-maxShift, maxShift + 1);
                    boolean mirror = flips && random.nextBoolean();
                    transform(in, i * d, copies, (i * k + j) * d, dy, dx, mirror);
                }
            });
            out.get(NDArrayIndex.interval((long) first * k, (long) (first + count) * k))
                    .assign(Nd4j.createFromArray(copies).reshape('c', (long) count * k, d));
        }
        return out;
    }

    /** out(y, x) = in(y + dy, x' + dx) with x' = w − 1 − x when mirrored, 0 outside the image; per channel. */
    void transform(float[] in, int from, float[] out, int to, int dy, int dx, boolean mirror) {
        for (int ch = 0; ch < channels; ch++) {
            int plane = ch * height * width;
            for (int y = 0; y < height; y++) {
                int sy = y + dy;
                for (int x = 0; x < width; x++) {
                    int sx = (mirror ? width - 1 - x : x) + dx;
                    out[to + plane + y * width + x] = sy < 0 || sy >= height || sx < 0 || sx >= width ? 0f
                            : in[from + plane + sy * width + sx];
                }
            }
        }
    }
}
