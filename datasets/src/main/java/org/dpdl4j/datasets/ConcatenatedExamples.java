package org.dpdl4j.datasets;

import java.util.Arrays;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * A source followed by examples in memory ({@link ExampleSource#followedBy}): an audit's canaries appended to training
 * data read by index, so that the canaries are the last indices of the run's data and the rest is read as a step needs it.
 */
final class ConcatenatedExamples implements ExampleSource {
    private final ExampleSource first;
    private final LabeledData more;

    ConcatenatedExamples(ExampleSource first, LabeledData more) {
        long d = Arrays.stream(first.exampleShape()).reduce(1, (a, b) -> a * b);
        if (more.features(2).size(1) != d || more.numClasses() != first.numClasses()) {
            throw new IllegalArgumentException("appended examples must have the source's " + d + " features and " + first.numClasses()
                    + " classes, got " + more.features(2).size(1) + " and " + more.numClasses());
        }
        if (more.hasMasks()) {
            throw new IllegalArgumentException("appended examples cannot carry masks");
        }
        this.first = first;
        this.more = more;
    }

    @Override
    public int size() {
        return first.size() + more.size();
    }

    @Override
    public int numClasses() {
        return first.numClasses();
    }

    @Override
    public long[] exampleShape() {
        return first.exampleShape();
    }

    @Override
    public LabeledData read(int[] sortedIndices) {
        Indices.checkAscending(sortedIndices, size());
        int n = first.size();
        int split = 0;
        while (split < sortedIndices.length && sortedIndices[split] < n) {
            split++;
        }
        int[] hi = new int[sortedIndices.length - split];
        for (int i = 0; i < hi.length; i++) {
            hi[i] = sortedIndices[split + i] - n;
        }
        LabeledData a = first.read(Arrays.copyOf(sortedIndices, split)); // rows of the source, possibly none
        if (hi.length == 0) {
            return a;
        }
        if (a.hasMasks()) {
            throw new IllegalArgumentException("examples cannot be appended to data with masks");
        }
        LabeledData b = more.rows(hi);
        INDArray features = b.features(a.features().rank()).castTo(a.features().dataType());
        INDArray labels = b.labels().castTo(a.labels().dataType());
        if (split > 0) {
            features = Nd4j.concat(0, a.features(), features);
            labels = Nd4j.concat(0, a.labels(), labels);
        }
        return new LabeledData(features, labels, a.channels(), a.height(), a.width());
    }

    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return first + " followed by " + more.size() + " examples in memory";
    }

    @Override
    public void checkUnchanged() {
        first.checkUnchanged();
    }
}
