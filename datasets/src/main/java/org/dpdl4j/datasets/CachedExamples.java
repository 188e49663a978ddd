package org.dpdl4j.datasets;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * A source whose examples, once read, are kept in memory up to a bound in bytes ({@link ExampleSource#withCache}): a
 * folder's images are decoded once, a cold shard's records are read from disk once. Examples are admitted as they are
 * first read until the bound is reached and then kept for the source's life; with Poisson batches every example is as
 * likely to be asked for again, so any admission rule serves the same expected share of reads from memory, the bound's
 * share of the data. Reads give the parent's values bit for bit, flattened to [k, d] with the parent's layout.
 * Serializable when its parent is, as the parent and the bound: a copy read back starts with an empty cache of its own.
 */
final class CachedExamples implements ExampleSource, java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final ExampleSource parent;
    private final long maxBytes;
    private final transient ConcurrentHashMap<Integer, INDArray[]> rows = new ConcurrentHashMap<>();
    private final transient AtomicLong bytes = new AtomicLong();
    private final transient AtomicLong readFromParent = new AtomicLong();

    /** A copy read back: the parent and the bound, with an empty cache. */
    private Object readResolve() {
        return new CachedExamples(parent, maxBytes);
    }

    CachedExamples(ExampleSource parent, long maxBytes) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("a cache's bound must be >= 0 bytes, got " + maxBytes);
        }
        this.parent = parent;
        this.maxBytes = maxBytes;
    }

    @Override
    public int size() {
        return parent.size();
    }

    @Override
    public int numClasses() {
        return parent.numClasses();
    }

    @Override
    public long[] exampleShape() {
        return parent.exampleShape();
    }

    @Override
    public LabeledData read(int[] sortedIndices) {
        Indices.checkAscending(sortedIndices, parent.size());
        int[] missing = java.util.Arrays.stream(sortedIndices).filter(i -> !rows.containsKey(i)).toArray();
        LabeledData fresh = parent.read(missing);
        if (fresh.hasMasks() || fresh.labels().rank() != 2) {
            throw new IllegalArgumentException("a cache of examples read by index takes data without masks and with one label "
                    + "row per example, not " + parent);
        }
        readFromParent.addAndGet(missing.length);
        INDArray freshFeatures = fresh.features(2);
        INDArray out = Nd4j.create(freshFeatures.dataType(), sortedIndices.length, freshFeatures.size(1));
        INDArray labels = Nd4j.create(fresh.labels().dataType(), sortedIndices.length, fresh.labels().size(1));
        int m = 0;
        for (int k = 0; k < sortedIndices.length; k++) {
            INDArray[] row = m < missing.length && missing[m] == sortedIndices[k] ? null : rows.get(sortedIndices[k]);
            if (row == null) {
                row = new INDArray[]{freshFeatures.getRow(m).dup(), fresh.labels().getRow(m).dup()};
                m++;
                long size = (row[0].length() * row[0].dataType().width()) + (row[1].length() * row[1].dataType().width());
                if (bytes.addAndGet(size) <= maxBytes) {
                    if (rows.putIfAbsent(sortedIndices[k], row) != null) {
                        bytes.addAndGet(-size); // another thread read it too
                    }
                } else {
                    bytes.addAndGet(-size); // full: not kept
                }
            }
            out.putRow(k, row[0]);
            labels.putRow(k, row[1]);
        }
        return new LabeledData(out, labels, fresh.channels(), fresh.height(), fresh.width());
    }

    /** Bytes of examples held now, at most the bound. */
    long cachedBytes() {
        return bytes.get();
    }

    /** Examples read from the parent so far (for tests). */
    long readFromParent() {
        return readFromParent.get();
    }

    /** Drops the kept examples; the parent stays open (its owner closes it). */
    @Override
    public void close() {
        rows.clear();
        bytes.set(0);
    }

    @Override
    public String toString() {
        return parent + ", up to " + maxBytes + " bytes of it kept in memory once read";
    }

    @Override
    public void checkUnchanged() {
        parent.checkUnchanged();
    }
}
