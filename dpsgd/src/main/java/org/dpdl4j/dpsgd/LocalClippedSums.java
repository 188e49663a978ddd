package org.dpdl4j.dpsgd;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.datasets.LabeledData;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Clipped sums on this JVM: the batch is split into one contiguous part per worker, each processed in physical chunks
 * into its own buffer, and the buffers are added. With W workers on the CPU each worker's OpenMP teams get
 * min(ND4J's op threads, cores/W) threads (the calling thread's setting is restored on close), and OpenBLAS's
 * process-wide thread count is set to that and left there.
 */
final class LocalClippedSums implements ClippedSums {
    static final LocalClippedSums INSTANCE = new LocalClippedSums();

    private LocalClippedSums() {
    }

    @Override
    public Session open(Model network, LabeledData train, DpSgdConfig config, PoissonBatchSampler sampler) {
        return new LocalSession(network, train, config, sampler);
    }

    private static final class LocalSession implements Session {
        private final PerExampleGradients[] gradients;
        private final INDArray features;
        private final INDArray labels;
        private final double c;
        private final int physical;
        private final PoissonBatchSampler sampler;
        private final INDArray[] partial;
        private final ExecutorService pool;
        private final int callerNativeThreads;

        LocalSession(Model network, LabeledData train, DpSgdConfig config, PoissonBatchSampler sampler) {
            int workers = config.workers();
            this.gradients = new PerExampleGradients[workers];
            for (int w = 0; w < workers; w++) {
                gradients[w] = PerExampleGradients.of(network);
            }
            DataType type = network.params().dataType();
            this.features = train.features().dataType() == type ? train.features() : train.features().castTo(type);
            this.labels = train.labels().dataType() == type ? train.labels() : train.labels().castTo(type);
            this.c = config.clipNorm();
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

        @Override
        public Sum step(long t, INDArray target) {
            int[] batch = sampler.batch(t);
            int workers = gradients.length;
            int per = (batch.length + workers - 1) / workers;
            List<Future<Double>> futures = new ArrayList<>();
            for (int w = 1; w < workers; w++) {
                int from = Math.min(batch.length, w * per);
                int to = Math.min(batch.length, from + per);
                int worker = w;
                futures.add(pool.submit(() -> part(batch, from, to, gradients[worker], partial[worker])));
            }
            double loss = part(batch, 0, Math.min(batch.length, per), gradients[0], target);
            try {
                for (int w = 1; w < workers; w++) {
                    loss += futures.get(w - 1).get();
                    target.addi(partial[w]);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while computing a DP-SGD step", e);
            } catch (ExecutionException e) {
                throw new IllegalStateException("a DP-SGD worker failed", e.getCause());
            }
            return new Sum(batch.length, loss);
        }

        private double part(int[] batch, int from, int to, PerExampleGradients g, INDArray into) {
            return g.clippedSum(features, labels, Arrays.copyOfRange(batch, from, to), c, physical, into);
        }

        @Override
        public void close() {
            if (pool != null) {
                pool.shutdownNow();
            }
            NativeThreads.setForCallingThread(callerNativeThreads);
        }
    }
}
