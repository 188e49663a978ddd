package org.dpdl4j.dpsgd;

import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.api.buffer.DataType;

/**
 * How many rows DP-SGD pushes through a network at once: the physical batch size, capped so that DL4J's estimate of one
 * chunk's training memory stays under {@link #DP_CHUNK_BYTES} per worker. {@link PerExampleGradients} computes its
 * clipped sums in chunks of this many rows; splitting a batch changes only the order of the sum's additions.
 */
public final class ChunkRows {
    private ChunkRows() {
    }

    /**
     * DL4J's estimate of one chunk's training memory that DP-SGD stays under, per worker: 256 MiB. DP-SGD keeps
     * per-example state (deltas, im2col columns, per-example weight gradients) that the non-private mode does not, and
     * on convolution-heavy networks it ran as fast in small chunks as in large ones while its peak memory fell by
     * half or more (2 cores, batch 256 / 64, one run each: cifar-cnn 405 ex/s and 2.80 GB in chunks of 512 rows,
     * 395 ex/s and 1.34 GB in chunks of 39; wrn-16-4 36 ex/s and 6.82 GB in chunks of 32, 37 ex/s and 2.31 GB in 8).
     * Zoo ResNet50 (3×72×72, batch 32, 2 workers) is the exception: 21.3 / 23.9 / 23.9 ex/s in chunks of 10 rows
     * (128 MiB), 26.6 / 29.4 / 25.0 in chunks of 20 (256 MiB), peak RSS 5.1–5.5 and 5.1–6.1 GB: per-chunk costs (weight
     * reorders, primitive set-up, the weight-gradient pass) weigh more where an example holds little compute per weight.
     */
    public static final long DP_CHUNK_BYTES = 256L << 20;
    /**
     * The rows DP-SGD pushes through the network at once: the physical batch size, or fewer when DL4J's memory report of
     * the network ({@code getMemoryReport}, training mode, no cache) puts one chunk's memory above {@link #DP_CHUNK_BYTES}
     * per worker, i.e. ⌊{@code DP_CHUNK_BYTES} / m⌋ rows (at least 1), where m is the report's memory for two examples
     * minus that for one. Where the report cannot be formed from a flattened input of {@code inputWidth} values (e.g. a
     * first layer that needs the image's height and width and has no preprocessor), the physical batch size. The
     * non-private mode is not capped. Splitting a batch into chunks changes only the order of the sum's additions.
     *
     * @param network           the network (MultiLayerNetwork or ComputationGraph with one input)
     * @param inputWidth        values per example of the flattened input, ≥ 1
     * @param dataType          the parameters' data type (FLOAT or DOUBLE)
     * @param physicalBatchSize the largest chunk asked for, ≥ 1
     * @return the chunk's rows, in [1, physicalBatchSize]
     * @throws IllegalArgumentException if the network is neither kind, or inputWidth or physicalBatchSize is below 1
     */
    public static int of(Model network, long inputWidth, DataType dataType, int physicalBatchSize) {
        if (inputWidth < 1) {
            throw new IllegalArgumentException("inputWidth and physicalBatchSize must be >= 1, got inputWidth = " + inputWidth
                    + ", physicalBatchSize = " + physicalBatchSize);
        }
        return of(network, new long[]{inputWidth}, dataType, physicalBatchSize);
    }

    /**
     * {@link #of(Model, long, DataType, int)} for an input of any shape: one example's shape, [d], [f, T] or
     * [c, h, w] (DL4J's memory report is formed for the matching input type).
     *
     * @param network           the network (MultiLayerNetwork or ComputationGraph with one input)
     * @param exampleShape      one example's shape, without the batch dimension; its product ≥ 1
     * @param dataType          the parameters' data type (FLOAT or DOUBLE)
     * @param physicalBatchSize the largest chunk asked for, ≥ 1
     * @return the chunk's rows, in [1, physicalBatchSize]
     * @throws IllegalArgumentException if the network is neither kind, or the shape's product or physicalBatchSize is
     *                                  below 1
     */
    public static int of(Model network, long[] exampleShape, DataType dataType, int physicalBatchSize) {
        long inputWidth = java.util.Arrays.stream(exampleShape).reduce(1, (a, b) -> a * b);
        if (!(network instanceof MultiLayerNetwork || network instanceof ComputationGraph)) {
            throw new IllegalArgumentException("network must be a MultiLayerNetwork or ComputationGraph, got "
                    + (network == null ? "null" : network.getClass().getName()));
        }
        if (inputWidth < 1 || physicalBatchSize < 1) {
            throw new IllegalArgumentException("inputWidth and physicalBatchSize must be >= 1, got inputWidth = " + inputWidth
                    + ", physicalBatchSize = " + physicalBatchSize);
        }
        long perExample;
        try {
            var input = exampleShape.length == 3
                    ? org.deeplearning4j.nn.conf.inputs.InputType.convolutional(exampleShape[1], exampleShape[2], exampleShape[0])
                    : exampleShape.length == 2 ? org.deeplearning4j.nn.conf.inputs.InputType.recurrent(exampleShape[0], exampleShape[1])
                    : org.deeplearning4j.nn.conf.inputs.InputType.feedForward(inputWidth);
            var report = network instanceof MultiLayerNetwork m ? m.getLayerWiseConfigurations().getMemoryReport(input)
                    : ((ComputationGraph) network).getConfiguration().getMemoryReport(input);
            var mode = org.deeplearning4j.nn.conf.memory.MemoryUseMode.TRAINING;
            var cache = org.deeplearning4j.nn.conf.CacheMode.NONE;
            perExample = report.getTotalMemoryBytes(2, mode, cache, dataType) - report.getTotalMemoryBytes(1, mode, cache, dataType);
        } catch (RuntimeException e) { // a layer whose memory report needs more than a flat input: no estimate
            return physicalBatchSize;
        }
        return perExample <= 0 ? physicalBatchSize : (int) Math.max(1, Math.min(physicalBatchSize, DP_CHUNK_BYTES / perExample));
    }
}
