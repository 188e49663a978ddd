package org.dpdl4j.dpsgd;

import java.util.ArrayList;
import java.util.List;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.datasets.LabeledData;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Clipped sums over examples read from a {@link DataSetIterator}: for step t the iterator is read from the start and only
 * the rows in {@code sampler.batch(t)} are kept (by their position in the pass). See
 * {@link DpSgdTrainer#train(Model, DataSetIterator, DpSgdConfig, TrainingListener...)} for the cost.
 */
final class StreamedClippedSums implements ClippedSums {
    private final DataSetIterator data;
    private final int n;

    /** Reads the iterator once to count its examples. */
    StreamedClippedSums(DataSetIterator data) {
        this.data = java.util.Objects.requireNonNull(data, "data");
        if (!data.resetSupported()) {
            throw new IllegalArgumentException("the DataSetIterator must support reset(): each step reads it from the start");
        }
        long count = 0;
        data.reset();
        while (data.hasNext()) {
            DataSet ds = data.next();
            count += ds.numExamples();
        }
        if (count == 0 || count > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("the DataSetIterator must hold between 1 and " + Integer.MAX_VALUE + " examples, got " + count);
        }
        this.n = (int) count;
    }

    int count() {
        return n;
    }

    /** The masks of the batch's parts stacked, or null when none has one (all or none must). */
    private static INDArray stack(List<INDArray> masks, String what) {
        long present = masks.stream().filter(java.util.Objects::nonNull).count();
        if (present == 0) {
            return null;
        }
        if (present != masks.size()) {
            throw new IllegalArgumentException("some DataSets of the iterator have a " + what + " mask and some do not");
        }
        return masks.size() == 1 ? masks.get(0) : Nd4j.vstack(masks.toArray(INDArray[]::new));
    }

    @Override
    public Session open(Model network, LabeledData train, DpSgdConfig config, PoissonBatchSampler sampler) {
        PerExampleGradients gradients = PerExampleGradients.of(network);
        DataType type = network.params().dataType();
        double c = config.clipNorm();
        int physical = config.physicalBatchSize();
        return new Session() {
            @Override
            public Sum step(long t, INDArray target) {
                int[] batch = sampler.batch(t); // sorted
                List<INDArray> xs = new ArrayList<>();
                List<INDArray> ys = new ArrayList<>();
                List<INDArray> fms = new ArrayList<>();
                List<INDArray> lms = new ArrayList<>();
                long offset = 0;
                int next = 0;
                data.reset();
                while (data.hasNext()) {
                    DataSet ds = data.next();
                    int k = ds.numExamples();
                    int from = next;
                    while (next < batch.length && batch[next] < offset + k) {
                        next++;
                    }
                    if (next > from) {
                        int[] rows = new int[next - from];
                        for (int i = 0; i < rows.length; i++) {
                            rows[i] = (int) (batch[from + i] - offset);
                        }
                        INDArray f = LabeledData.gatherRows(ds.getFeatures(), rows); // [rows, ...] in the data's own shape
                        if (gradients.inputRank() == 2 && f.rank() > 2) { // a network that reads flattened examples
                            f = f.reshape('c', f.size(0), f.length() / f.size(0));
                        }
                        xs.add(f.castTo(type));
                        ys.add(LabeledData.gatherRows(ds.getLabels(), rows).castTo(type));
                        fms.add(ds.getFeaturesMaskArray() == null ? null : LabeledData.gatherRows(ds.getFeaturesMaskArray(), rows));
                        lms.add(ds.getLabelsMaskArray() == null ? null : LabeledData.gatherRows(ds.getLabelsMaskArray(), rows));
                    }
                    offset += k;
                }
                if (offset != n) {
                    throw new IllegalStateException("the DataSetIterator gave " + offset + " examples at step " + t + ", " + n
                            + " at the start: every pass must give the same examples; nothing of step " + t + " was applied");
                }
                if (batch.length == 0) {
                    target.assign(0);
                    return new Sum(0, 0);
                }
                INDArray features = xs.size() == 1 ? xs.get(0) : Nd4j.vstack(xs.toArray(INDArray[]::new));
                INDArray labels = ys.size() == 1 ? ys.get(0) : Nd4j.vstack(ys.toArray(INDArray[]::new));
                int[] all = new int[batch.length];
                for (int i = 0; i < all.length; i++) {
                    all[i] = i;
                }
                double loss = gradients.clippedSum(features, labels, stack(fms, "feature"), stack(lms, "label"), all, c, physical,
                        target);
                return new Sum(batch.length, loss);
            }

            @Override
            public void close() {
                gradients.releaseScratch();
            }
        };
    }
}
