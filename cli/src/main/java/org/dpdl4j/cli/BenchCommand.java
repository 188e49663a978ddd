package org.dpdl4j.cli;

import org.dpdl4j.benchmarks.Reporting;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import org.bytedeco.javacpp.Pointer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.Mnist;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.dpsgd.TrainingResult;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code dpdl4j bench}: speed, measured as ratios against a baseline run in the same JVM. */
@Command(name = "bench", mixinStandardHelpOptions = true, description = "Throughput benchmarks.",
        subcommands = {BenchCommand.DpSgd.class, BenchCommand.Jmh.class})
final class BenchCommand {

    /** {@code bench dpsgd}: DP-SGD steps against DL4J's own non-private fit, same model and data. */
    @Command(name = "dpsgd", mixinStandardHelpOptions = true, sortOptions = false,
            description = {"Times DL4J's non-private fit() and the DP-SGD trainer (1 worker, then one worker per core) on the",
                    "same model and MNIST data, in one JVM, after warm-up; prints examples/second, their ratio and peak memory."})
    static final class DpSgd implements Callable<Integer> {
        @Option(names = "--model", defaultValue = "standard-cnn", description = "Model (default ${DEFAULT-VALUE}).")
        String model;

        @Option(names = "--batch-size", defaultValue = "256", description = "(Expected) batch size (default ${DEFAULT-VALUE}).")
        int batchSize;

        @Option(names = "--steps", defaultValue = "60", description = "Measured steps per phase (default ${DEFAULT-VALUE}).")
        int steps;

        @Option(names = "--warmup", defaultValue = "15", description = "Warm-up steps per phase (default ${DEFAULT-VALUE}).")
        int warmup;

        @Option(names = "--workers", description = "Workers of the parallel DP-SGD measurement (default: the number of cores).")
        Integer workers;

        @Option(names = "--json", description = "Print one JSON object as the last line.")
        boolean json;

        /** Examples/s of the DP-SGD trainer with the given number of workers (ND4J op threads = cores/workers). */
        private double dpRate(LabeledData train, ModelOptions options, int workers, MemoryProbe memory) {
            Reporting.configureWorkers(workers);
            MultiLayerNetwork dp = Models.byName(model, options);
            double q = (double) batchSize / train.size();
            DpSgdTrainer trainer = new DpSgdTrainer();
            if (warmup > 0) {
                trainer.train(dp, train, DpSgdConfig.builder().samplingRate(q).noiseMultiplier(1.1).steps(warmup).seed(2)
                        .workers(workers).build());
            }
            TrainingResult r = trainer.train(dp, train, DpSgdConfig.builder().samplingRate(q).noiseMultiplier(1.1)
                    .steps(steps).seed(3).workers(workers).build(), info -> memory.sample());
            return r.examplesPerSecond();
        }

        @Override
        public Integer call() throws IOException {
            if (batchSize < 1 || steps < 1 || warmup < 0) {
                throw new IllegalArgumentException("--batch-size and --steps must be >= 1 and --warmup >= 0, got "
                        + batchSize + ", " + steps + ", " + warmup);
            }
            LabeledData train = Mnist.load(DatasetCache.root().resolve("mnist")).train();
            ModelOptions options = ModelOptions.mnist();
            int threads = Nd4j.getEnvironment().maxThreads();

            // baseline: DL4J fit() on fixed-size random batches
            MultiLayerNetwork plain = Models.byName(model, options);
            SplittableRandom rng = new SplittableRandom(1);
            List<DataSet> batches = new ArrayList<>();
            for (int i = 0; i < warmup + steps; i++) {
                batches.add(train.rows(rng.ints(batchSize, 0, train.size()).toArray()).toDataSet());
            }
            for (int i = 0; i < warmup; i++) {
                plain.fit(batches.get(i));
            }
            MemoryProbe memPlain = MemoryProbe.start();
            long t0 = System.nanoTime();
            for (int i = warmup; i < warmup + steps; i++) {
                plain.fit(batches.get(i));
                memPlain.sample();
            }
            double plainSeconds = (System.nanoTime() - t0) / 1e9;
            double plainRate = (double) steps * batchSize / plainSeconds;

            // DP-SGD: the real trainer (Poisson batches with expected size B), same model and data,
            // first with one worker and all cores for ND4J's ops, then with one worker per core
            MemoryProbe memDp1 = MemoryProbe.start();
            double dpOneWorker = dpRate(train, options, 1, memDp1);
            int cores = workers != null ? workers : Runtime.getRuntime().availableProcessors();
            MemoryProbe memDp = MemoryProbe.start();
            double dpRate = dpRate(train, options, cores, memDp);
            Nd4j.getEnvironment().setMaxThreads(threads);

            System.out.printf("model %s, batch %d, %d measured steps after %d warm-up, %d cores, backend %s%n",
                    model, batchSize, steps, warmup, cores, Nd4j.getBackend().getClass().getSimpleName());
            System.out.printf("DL4J fit (non-private), %d op threads:     %8.0f examples/s  peak heap %5.0f MiB  peak RSS %5.0f MiB%n",
                    threads, plainRate, memPlain.peakHeap / 1048576.0, memPlain.peakRss / 1048576.0);
            System.out.printf("dpdl4j DP-SGD, 1 worker x %d op threads:  %8.0f examples/s  peak heap %5.0f MiB  peak RSS %5.0f MiB%n",
                    threads, dpOneWorker, memDp1.peakHeap / 1048576.0, memDp1.peakRss / 1048576.0);
            System.out.printf("dpdl4j DP-SGD, %d workers x 1 op thread:  %8.0f examples/s  peak heap %5.0f MiB  peak RSS %5.0f MiB%n",
                    cores, dpRate, memDp.peakHeap / 1048576.0, memDp.peakRss / 1048576.0);
            System.out.printf("ratio DP-SGD (%d workers) / DL4J fit: %.2f%n", cores, dpRate / plainRate);
            if (json) {
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("model", model);
                out.put("batch_size", batchSize);
                out.put("steps", steps);
                out.put("threads", threads);
                out.put("dp_examples_per_second", dpRate);
                out.put("dp_workers", cores);
                out.put("dp_one_worker_examples_per_second", dpOneWorker);
                out.put("nonprivate_examples_per_second", plainRate);
                out.put("ratio", dpRate / plainRate);
                out.put("peak_heap_bytes", Math.max(Math.max(memDp.peakHeap, memDp1.peakHeap), memPlain.peakHeap));
                out.put("dp_peak_heap_bytes", memDp.peakHeap);
                out.put("nonprivate_peak_heap_bytes", memPlain.peakHeap);
                out.put("dp_peak_rss_bytes", memDp.peakRss);
                out.put("nonprivate_peak_rss_bytes", memPlain.peakRss);
                Cli.printJsonLine(System.out, out);
            }
            return 0;
        }
    }

    /** Peak heap (JVM pools, reset at start) and peak resident set size (sampled; ND4J's arrays live off-heap). */
    static final class MemoryProbe {
        long peakHeap;
        long peakRss;

        static MemoryProbe start() {
            for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
                if (p.getType() == MemoryType.HEAP) {
                    p.resetPeakUsage();
                }
            }
            return new MemoryProbe();
        }

        void sample() {
            long heap = 0;
            for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
                if (p.getType() == MemoryType.HEAP) {
                    heap += p.getPeakUsage().getUsed();
                }
            }
            peakHeap = Math.max(peakHeap, heap);
            peakRss = Math.max(peakRss, Pointer.physicalBytes());
        }
    }

    /** {@code bench jmh}: the JMH benchmark of one DP-SGD clipped-sum step. */
    @Command(name = "jmh", mixinStandardHelpOptions = true,
            description = "Runs the JMH benchmarks in org.dpdl4j.benchmarks.jmh (DP step vs DL4J step; accountant calls).")
    static final class Jmh implements Callable<Integer> {
        @Option(names = "--include", defaultValue = "org.dpdl4j.benchmarks.jmh.*",
                description = "Regular expression of benchmarks to run (default ${DEFAULT-VALUE}).")
        String include;

        @Option(names = "--forks", defaultValue = "1", description = "JMH forks (default ${DEFAULT-VALUE}).")
        int forks;

        @Option(names = "--iterations", defaultValue = "5", description = "Measurement iterations (default ${DEFAULT-VALUE}).")
        int iterations;

        @Override
        public Integer call() throws RunnerException {
            if (forks < 0 || iterations < 1) {
                throw new IllegalArgumentException("--forks must be >= 0 and --iterations >= 1, got " + forks + " and " + iterations);
            }
            new Runner(new OptionsBuilder().include(include).forks(forks).warmupIterations(3)
                    .measurementIterations(iterations).build()).run();
            return 0;
        }
    }
}
