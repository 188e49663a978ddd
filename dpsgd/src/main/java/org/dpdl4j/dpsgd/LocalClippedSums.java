package org.dpdl4j.dpsgd;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.ImageAugmentation;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.PackedExamples;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * Clipped sums on this JVM: the batch is split into one contiguous part per worker, each processed in physical chunks
 * into its own buffer, and the buffers are added. With W workers on the CPU each worker's OpenMP teams get
 * min(ND4J's op threads, cores/W) threads (the calling thread's setting is restored on close), and OpenBLAS's
 * process-wide thread count is set to that and left there.
 */
final class LocalClippedSums implements ClippedSums {
    static final LocalClippedSums INSTANCE = new LocalClippedSums(null, 1);
    /**
     * The least memory a run's precomputed fixed-prefix output may take (2 GiB); up to half of ND4J's off-heap limit
     * ({@code org.bytedeco.javacpp.maxbytes}) when that is larger, or the system property {@code dpdl4j.prefixCacheBytes}
     * when it is set. A larger one is written to a temporary file and read by index, as for data on disk.
     */
    static final long PREFIX_CACHE_BYTES = 1L << 31;

    /** The augmentation of the stored copies (null when k = 1). */
    private final ImageAugmentation augmentation;
    /** Copies per example k ≥ 1. */
    private final int copies;

    LocalClippedSums(ImageAugmentation augmentation, int copies) {
        if (copies < 1 || copies > 64 || copies > 1 && augmentation == null) {
            throw new IllegalArgumentException("augmentation multiplicity k must be in [1, 64] (with an augmentation when k > 1), got "
                    + copies);
        }
        this.augmentation = augmentation;
        this.copies = copies;
    }

    @Override
    public Session open(Model network, LabeledData train, DpSgdConfig config, PoissonBatchSampler sampler) {
        return new LocalSession(network, train, config, sampler, augmentation, copies);
    }

    /**
     * A session that reads each step's batch from {@code source} (only those rows) instead of holding the data.
     *
     * @throws IllegalArgumentException with augmentation multiplicity (its copies are drawn once over all the data)
     */
    @Override
    public Session open(Model network, ExampleSource source, DpSgdConfig config, PoissonBatchSampler sampler) {
        if (source instanceof LabeledData inMemory) {
            return open(network, inMemory, config, sampler);
        }
        if (copies > 1) {
            throw new IllegalArgumentException("augmentation multiplicity draws its copies once over data held in memory; "
                    + "train from a LabeledData, not " + source);
        }
        return new LocalSession(network, source, config, sampler);
    }

    /**
     * Whether a session over a source reads step t + 1's batch while step t computes: yes, unless
     * {@code -Ddpdl4j.readAhead=false} (to measure what the overlap saves; the batches and sums are the same either way).
     *
     * @throws IllegalArgumentException if the property is neither true nor false
     */
    static boolean readAhead() {
        String set = System.getProperty("dpdl4j.readAhead", "true").trim();
        if (!set.equals("true") && !set.equals("false")) {
            throw new IllegalArgumentException("-Ddpdl4j.readAhead must be true or false, got '" + set + "'");
        }
        return set.equals("true");
    }

    static long prefixCacheBytes() {
        String set = System.getProperty("dpdl4j.prefixCacheBytes");
        if (set == null) {
            return Math.max(PREFIX_CACHE_BYTES, org.bytedeco.javacpp.Pointer.maxBytes() / 2);
        }
        try {
            long bytes = Long.parseLong(set.trim());
            if (bytes >= 0) {
                return bytes;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw new IllegalArgumentException("-Ddpdl4j.prefixCacheBytes must be a whole number of bytes >= 0, got '" + set + "'");
    }

    static final class LocalSession implements Session {
        private final PerExampleGradients[] gradients;
        private INDArray features;
        private INDArray labels;
        private INDArray featureMask; // [n, T] or null
        private INDArray labelMask;
        private final double c;
        private final int physical;
        private final PoissonBatchSampler sampler;
        private final INDArray[] partial;
        private final ExecutorService pool;
        private final int callerNativeThreads;
        private boolean readsFixedPrefix;
        private final int copies;
        /**
         * Where each step reads its batch, or null when the data are in memory ({@link #features}): the given source, or the
         * fixed prefix's output for its examples written to a temporary file ({@link #prefixSpill}).
         */
        private ExampleSource source;
        /** The fixed prefix's output of a source's examples, on disk; deleted when the session closes (null: none). */
        private PackedExamples prefixSpill;
        private final DataType type;
        /** The run's last step: batches are read ahead up to it, not beyond. */
        private final long lastStep;
        /** Reads the next step's batch while this one computes (a source only). */
        private ExecutorService reader; // created on first use
        private Future<LabeledData> ahead;
        private long aheadStep;

        LocalSession(Model network, LabeledData train, DpSgdConfig config, PoissonBatchSampler sampler, ImageAugmentation augmentation,
                     int copies) {
            this(network, config, sampler, copies, null);
            int rank = gradients[0].inputRank();
            INDArray x = train.features().dataType() == type ? train.features() : train.features().castTo(type);
            if (copies > 1) { // drawn once per run, from the run's seed (a secure one when the run's randomness is)
                long seed = config.secureRandom() ? new java.security.SecureRandom().nextLong()
                        : DpSgdTrainer.derivedSeed("augmentation", config.seed(), 0);
                x = augmentation.copies(train.features(x, 2), copies, seed).castTo(type);
            }
            x = rank > 0 ? train.features(x, rank) : x; // the network's own shape: flat, images or sequences
            this.labels = train.labels().dataType() == type ? train.labels() : train.labels().castTo(type);
            if (train.hasMasks() && copies > 1) {
                throw new IllegalArgumentException("augmentation multiplicity is for images; this data has sequence masks");
            }
            this.featureMask = train.featureMask();
            this.labelMask = train.labelMask();
            // worth it when each example is expected to pass more than once (q·T ≥ 1): computing it costs one pass
            boolean precompute = gradients[0].hasFixedPrefix() && config.samplingRate() * config.steps() >= 1 && !train.hasMasks();
            this.features = precompute ? fixedPrefixOutput(x) : x;
            this.readsFixedPrefix = features != x;
            if (precompute && !readsFixedPrefix && copies == 1) { // too large to cache in memory: on disk, read by index
                readPrefixFromFile(train);
                this.features = null;
                this.labels = null;
            }
        }

        /**
         * A session over a source: nothing is held; each step reads its batch. A network with a fixed prefix whose examples
         * are each expected to pass more than once (q·T ≥ 1) reads the prefix's output instead, computed once for every
         * example and written to a temporary file (the in-memory cache's counterpart for data on disk).
         */
        LocalSession(Model network, ExampleSource source, DpSgdConfig config, PoissonBatchSampler sampler) {
            this(network, config, sampler, 1, source);
            this.features = null;
            this.labels = null;
            this.featureMask = null;
            this.labelMask = null;
            this.readsFixedPrefix = false;
            if (gradients[0].hasFixedPrefix() && config.samplingRate() * config.steps() >= 1 && source.size() > 0
                    && !source.read(new int[]{0}).hasMasks()) {
                readPrefixFromFile(source);
            }
        }

        /** Steps read the fixed prefix's output of {@code from}'s examples from a temporary file written now. */
        private void readPrefixFromFile(ExampleSource from) {
            try {
                prefixSpill = spillFixedPrefixOutput(from);
            } catch (RuntimeException e) {
                close();
                throw e;
            }
            this.source = prefixSpill;
            this.readsFixedPrefix = true;
        }

        /**
         * The fixed prefix's output for every example of the source, computed by the workers a block at a time and written
         * to a temporary file of records, with the labels; the workers then read prefix outputs.
         */
        private PackedExamples spillFixedPrefixOutput(ExampleSource from) {
            int n = from.size();
            int block = Math.max(physical, 4096);
            int rank = gradients[0].inputRank();
            org.nd4j.linalg.dataset.api.iterator.DataSetIterator blocks = new org.nd4j.linalg.dataset.api.iterator.BaseDatasetIterator(
                    block, n, null) {
                private int at;

                @Override
                public boolean hasNext() {
                    return at < n;
                }

                @Override
                public org.nd4j.linalg.dataset.DataSet next() {
                    int end = Math.min(n, at + block);
                    LabeledData b = from.read(java.util.stream.IntStream.range(at, end).toArray());
                    at = end;
                    INDArray x = b.features().dataType() == type ? b.features() : b.features().castTo(type);
                    x = rank > 0 ? b.features(x, rank) : x;
                    INDArray out = blockPrefixOutput(x);
                    return new org.nd4j.linalg.dataset.DataSet(out, b.labels().castTo(type));
                }

                @Override
                public boolean resetSupported() {
                    return false;
                }
            };
            PackedExamples spilled = PackedExamples.packToTemporaryFile(blocks);
            System.err.printf("dpdl4j: the fixed prefix's output for %d examples written once to %s (%.1f MB); each step reads "
                    + "its batch from there; the file is deleted when the run ends%n", n, spilled.file(), spilled.bytes() / 1e6);
            long[] shape = gradients[0].fixedPrefixShape();
            for (PerExampleGradients g : gradients) {
                g.readFixedPrefixOutput(true, shape);
            }
            return spilled;
        }

        private LocalSession(Model network, DpSgdConfig config, PoissonBatchSampler sampler, int copies, ExampleSource source) {
            this.copies = copies;
            this.source = source;
            int workers = config.workers();
            this.gradients = new PerExampleGradients[workers];
            for (int w = 0; w < workers; w++) {
                gradients[w] = PerExampleGradients.of(network);
            }
            this.type = network.params().dataType();
            this.c = config.clipNorm();
            this.lastStep = config.steps();
            this.physical = config.physicalBatchSize();
            this.sampler = sampler;
            this.partial = new INDArray[workers]; // worker 0 writes into the target itself
            INDArray flat = Networks.flattenedGradients(network);
            for (int w = 1; w < workers; w++) {
                partial[w] = Nd4j.zeros(flat.dataType(), flat.shape());
            }
            int nativeThreads = NativeThreads.perWorker(workers);
            this.pool = workers > 1 ? Executors.newFixedThreadPool(workers - 1, r -> {
                Thread th = new Thread(() -> {
                    NativeThreads.setForCallingThread(nativeThreads);
                    r.run();
                }, "dpdl4j-dpsgd-worker");
                th.setDaemon(true);
                return th;
            }) : null;
            NativeThreads.setBlasThreads(nativeThreads);
            this.callerNativeThreads = NativeThreads.setForCallingThread(nativeThreads);
        }

        /**
         * The fixed prefix's output for every training example, computed once by the workers (a prefix that changes
         * nothing trained, such as the scattering transform or a frozen feature extractor, would otherwise run again at
         * every step), when it takes at most {@link #prefixCacheBytes()}; else the inputs themselves (and the caller writes
         * it to a file instead).
         */
        private INDArray fixedPrefixOutput(INDArray x) {
            int n = (int) x.size(0);
            INDArray first = gradients[0].fixedPrefixOutput(x, 0, 1, 1);
            if ((double) n * first.length() * first.dataType().width() > prefixCacheBytes()) {
                return x;
            }
            INDArray out = blockPrefixOutput(x);
            long[] shape = gradients[0].fixedPrefixShape();
            for (PerExampleGradients g : gradients) {
                g.readFixedPrefixOutput(true, shape);
            }
            return out;
        }

        /** The prefix's output [n, d] for the examples x, each worker computing a contiguous part of the rows. */
        private INDArray blockPrefixOutput(INDArray x) {
            int n = (int) x.size(0);
            INDArray first = gradients[0].fixedPrefixOutput(x, 0, 1, 1);
            int workers = gradients.length;
            int per = (n + workers - 1) / workers;
            INDArray out = Nd4j.create(first.dataType(), n, first.size(1)); // each worker writes its rows into it
            List<Future<?>> parts = new ArrayList<>();
            for (int w = 1; w < workers; w++) {
                int from = Math.min(n, w * per);
                int to = Math.min(n, from + per);
                PerExampleGradients g = gradients[w];
                parts.add(pool.submit(() -> fillFixedPrefixOutput(g, x, from, to, out)));
            }
            fillFixedPrefixOutput(gradients[0], x, 0, Math.min(n, per), out);
            for (Future<?> part : parts) {
                await(part, "computing the fixed prefix");
            }
            return out;
        }

        /** Rows [from, to) of the prefix's output into {@code out}, a few thousand at a time (no second copy of the whole). */
        private Void fillFixedPrefixOutput(PerExampleGradients g, INDArray x, int from, int to, INDArray out) {
            int block = Math.max(physical, 4096);
            for (int at = from; at < to; at += block) {
                int end = Math.min(to, at + block);
                out.get(NDArrayIndex.interval(at, end)).assign(g.fixedPrefixOutput(x, at, end, physical));
            }
            return null;
        }

        /** The file holding the fixed prefix's output of a source's examples, or null (for tests). */
        Path prefixFile() {
            return prefixSpill == null ? null : prefixSpill.file();
        }

        /** Whether the run reads the precomputed output of the network's fixed prefix (for tests). */
        boolean readsFixedPrefix() {
            return readsFixedPrefix;
        }

        @Override
        public Sum step(long t, INDArray target) {
            int[] sampled = sampler.batch(t);
            INDArray x = features;
            INDArray y = labels;
            INDArray fm = featureMask;
            INDArray lm = labelMask;
            int[] batch = sampled;
            if (source != null) { // read the batch's rows only; the sums run over them as rows 0 … |B|−1, in the same order
                LabeledData b = batchRead(t, sampled);
                if (sampled.length == 0) {
                    target.assign(0);
                    return new Sum(0, 0);
                }
                int rank = gradients[0].inputRank();
                x = b.features().dataType() == type ? b.features() : b.features().castTo(type);
                // prefix outputs are rows [b, d] as they are; flat rows without an image shape (an iterator's [k, d]) are not
                // guessed into [b, 1, 1, d] for a network that reads images: the engine refuses them by rank instead
                boolean flatWithoutShape = x.rank() == 2 && b.channels() == 1 && b.height() == 1 && rank == 4;
                x = rank > 0 && !readsFixedPrefix && !flatWithoutShape ? b.features(x, rank) : x;
                y = b.labels().dataType() == type ? b.labels() : b.labels().castTo(type);
                fm = b.featureMask();
                lm = b.labelMask();
                batch = java.util.stream.IntStream.range(0, sampled.length).toArray();
            }
            INDArray[] data = {x, y, fm, lm};
            int[] rowsOfBatch = batch;
            int workers = gradients.length;
            int per = (batch.length + workers - 1) / workers;
            List<Future<Double>> futures = new ArrayList<>();
            for (int w = 1; w < workers; w++) {
                int from = Math.min(batch.length, w * per);
                int to = Math.min(batch.length, from + per);
                int worker = w;
                futures.add(pool.submit(() -> part(rowsOfBatch, from, to, gradients[worker], partial[worker], data)));
            }
            double loss = part(batch, 0, Math.min(batch.length, per), gradients[0], target, data);
            for (int w = 1; w < workers; w++) {
                loss += await(futures.get(w - 1), "computing a DP-SGD step");
                target.addi(partial[w]);
            }
            return new Sum(sampled.length, loss);
        }

        /** A worker's result; its failure as an IllegalStateException naming what it was doing. */
        private static <T> T await(Future<T> f, String what) {
            try {
                return f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while " + what, e);
            } catch (ExecutionException e) {
                throw new IllegalStateException("a DP-SGD worker failed " + what, e.getCause());
            }
        }

        /**
         * Step t's batch from the source: read ahead during step t − 1 when it could be, else now; then step t + 1's is
         * started (up to the run's last step), so that reading or decoding overlaps the sums.
         */
        private LabeledData batchRead(long t, int[] sampled) {
            LabeledData b;
            if (ahead != null && aheadStep == t) {
                try {
                    b = ahead.get();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while reading step " + t + "'s batch", e);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException r) {
                        throw r; // as the read itself would have thrown: nothing of step t is applied
                    }
                    throw new IllegalStateException("could not read step " + t + "'s batch", e.getCause());
                }
            } else {
                if (ahead != null) {
                    ahead.cancel(true);
                }
                b = sampled.length == 0 ? null : source.read(sampled);
            }
            ahead = null;
            if (t < lastStep && readAhead()) {
                int[] next = sampler.batch(t + 1);
                if (next.length > 0) {
                    aheadStep = t + 1;
                    if (reader == null) {
                        reader = Executors.newSingleThreadExecutor(r -> {
                            Thread th = new Thread(r, "dpdl4j-read-ahead");
                            th.setDaemon(true);
                            return th;
                        });
                    }
                    ExampleSource from = source;
                    ahead = reader.submit(() -> from.read(next));
                }
            }
            return b;
        }

        /** Rows [from, to) of the batch; {@code data} holds features, labels, feature mask and label mask. */
        private double part(int[] batch, int from, int to, PerExampleGradients g, INDArray into, INDArray[] data) {
            int[] rows = Arrays.copyOfRange(batch, from, to);
            return copies > 1 ? g.clippedSum(data[0], data[1], rows, c, physical, into, copies)
                    : g.clippedSum(data[0], data[1], data[2], data[3], rows, c, physical, into);
        }

        @Override
        public void close() {
            try {
                releaseScratch();
            } finally {
                if (pool != null) {
                    pool.shutdownNow();
                }
                if (reader != null) {
                    reader.shutdownNow();
                }
                if (prefixSpill != null) {
                    prefixSpill.close();
                }
                NativeThreads.setForCallingThread(callerNativeThreads);
            }
        }

        /** Frees the workers' scratch memory on every thread that used it. */
        void releaseScratch() {
            onEveryThread(g -> {
                g.releaseScratch();
                return false;
            });
        }

        /** Whether any thread of this session holds a worker's scratch memory (for tests). */
        boolean holdsScratch() {
            return onEveryThread(PerExampleGradients::holdsScratch);
        }

        /**
         * Applies {@code action} to every worker's engine on the calling thread and on each pool thread (one task per
         * pool thread, held at a barrier so that no thread takes two): ND4J's workspaces belong to a thread.
         *
         * @return whether the action returned true anywhere
         */
        private boolean onEveryThread(java.util.function.Predicate<PerExampleGradients> action) {
            boolean any = false;
            for (PerExampleGradients g : gradients) {
                any |= action.test(g);
            }
            if (pool == null) {
                return any;
            }
            int threads = gradients.length - 1;
            java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(threads);
            List<Future<Boolean>> tasks = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                tasks.add(pool.submit(() -> {
                    boolean found = false;
                    for (PerExampleGradients g : gradients) {
                        found |= action.test(g);
                    }
                    barrier.await();
                    return found;
                }));
            }
            for (Future<Boolean> f : tasks) {
                any |= await(f, "reaching the workers' threads");
            }
            return any;
        }
    }
}
