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
import org.dpdl4j.dpsgd.PerExampleGradients;
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
        subcommands = {BenchCommand.DpSgd.class, BenchDataCommand.class, BenchSequencesCommand.class, BenchCommand.Jmh.class})
final class BenchCommand {

    /** {@code bench dpsgd}: DP-SGD steps against DL4J's own non-private fit, same model and data. */
    @Command(name = "dpsgd", mixinStandardHelpOptions = true, sortOptions = false,
            description = {"Times DL4J's non-private fit(), the engine's own non-private mode (sigma = 0, no clipping, same "
                        + "kernels) and the DP-SGD trainer (1 worker, then one worker per core) on the same model and data, in "
                        + "one JVM, after warm-up; prints examples/second, their ratios and peak memory.",
                "MNIST for the MNIST models (lstm reads its rows as 28 steps); cifar-cnn and wrn-D-K (e.g. wrn-16-4) run on random "
                        + "CIFAR-10-shaped data, resnet50 (DL4J's zoo ResNet50, batch norm replaced by group norm) on random 3x72x72 "
                        + "images, the smallest it takes "
                        + "(speed does not depend on the pixel values)."})
    static final class DpSgd implements Callable<Integer> {
        @Option(names = "--model", defaultValue = "standard-cnn", description = "Model (default ${DEFAULT-VALUE}).")
        String model;

        @Option(names = "--batch-size", defaultValue = "256", description = "(Expected) batch size (default ${DEFAULT-VALUE}).")
        int batchSize;

        /** The largest --batch-size measured (a batch is pushed through the network at once in mode fit). */
        static final int MAX_BATCH = 65_536;

        @Option(names = "--steps", defaultValue = "60", description = "Measured steps per phase (default ${DEFAULT-VALUE}).")
        int steps;

        @Option(names = "--warmup", defaultValue = "150",
                description = "Warm-up steps per phase, untimed: the JIT, ND4J's workspaces and oneDNN's primitive cache settle "
                        + "(each new Poisson chunk size creates oneDNN primitives once, 9-13 ms on that step; a long run pays it "
                        + "once per size) (default ${DEFAULT-VALUE}).")
        int warmup;

        @Option(names = "--workers", description = "Workers of the parallel DP-SGD measurement (default: the number of cores).")
        Integer workers;

        @Option(names = "--json", description = "Print one JSON object as the last line.")
        boolean json;

        @Option(names = "--physical-batch-size", defaultValue = "512",
                description = {"Largest chunk pushed through the network at once (default ${DEFAULT-VALUE}); DP-SGD takes fewer rows "
                        + "where DL4J's memory report puts a chunk above 256 MiB per worker."})
        int physicalBatchSize;

        @Option(names = "--modes", split = ",", defaultValue = "fit,engine,dp1,dp",
                description = "Phases to time, comma-separated: fit (DL4J), engine (our non-private mode), dp1 (DP-SGD, 1 worker), "
                        + "dp (DP-SGD, a worker per core); default ${DEFAULT-VALUE}.")
        List<String> modes;

        @Option(names = "--feature-extractor", paramLabel = "VERTEX",
                description = "Freeze the network up to and including this vertex (a ComputationGraph's vertex name, e.g. g3b1 "
                        + "of wrn-16-4, or a MultiLayerNetwork's layer index), as DL4J's TransferLearning.setFeatureExtractor "
                        + "does, and time fine-tuning the rest (default: train everything).")
        String featureExtractor;

        /** One timed phase: examples/s and the memory seen while it ran. */
        private record Phase(double rate, MemoryProbe memory) {
        }

        private static void print(String what, Phase p) {
            if (p != null) {
                System.out.printf("%-42s %8.0f examples/s  peak heap %5.0f MiB  peak RSS %5.0f MiB%n", what + ":", p.rate,
                        p.memory.peakHeap / 1048576.0, p.memory.peakRss / 1048576.0);
            }
        }

        private String dataName() {
            return model.equals("resnet50") ? "random 3x72x72" : cifarShaped() ? "random CIFAR-10-shaped" : "MNIST";
        }

        /** DL4J's own fit() on fixed-size random batches, after warm-up. */
        private Phase fitPhase(LabeledData train, ModelOptions options) {
            org.deeplearning4j.nn.api.Model plain = network(options);
            SplittableRandom rng = new SplittableRandom(1);
            List<DataSet> batches = new ArrayList<>();
            for (int i = 0; i < warmup + steps; i++) {
                batches.add(train.rows(rng.ints(batchSize, 0, train.size()).toArray()).toDataSet());
            }
            for (int i = 0; i < warmup; i++) {
                fit(plain, batches.get(i));
            }
            MemoryProbe memory = MemoryProbe.start();
            long t0 = System.nanoTime();
            for (int i = warmup; i < warmup + steps; i++) {
                fit(plain, batches.get(i));
                memory.sample();
            }
            return new Phase((double) steps * batchSize / ((System.nanoTime() - t0) / 1e9), memory);
        }

        private static void fit(org.deeplearning4j.nn.api.Model network, DataSet batch) {
            if (network instanceof MultiLayerNetwork m) {
                m.fit(batch);
            } else {
                ((org.deeplearning4j.nn.graph.ComputationGraph) network).fit(batch);
            }
        }

        /**
         * The trainer with the given number of workers (ND4J op threads = cores/workers): DP-SGD with σ = 1.1 and
         * C = 1, or the engine's non-private mode (σ = 0, C = ∞).
         */
        private Phase trainerPhase(LabeledData train, ModelOptions options, int workers, boolean nonPrivate) {
            MemoryProbe memory = MemoryProbe.start();
            Reporting.configureWorkers(workers);
            org.deeplearning4j.nn.api.Model net = network(options);
            double q = Math.min(1.0, (double) batchSize / train.size());
            DpSgdTrainer trainer = new DpSgdTrainer();
            DpSgdConfig.Builder config = DpSgdConfig.builder().samplingRate(q).workers(workers).physicalBatchSize(physicalBatchSize);
            if (nonPrivate) {
                config.noiseMultiplier(0).nonPrivate(true).clipNorm(Double.POSITIVE_INFINITY);
            } else {
                config.noiseMultiplier(1.1);
            }
            // one run whose first --warmup steps are not timed: a second run would set up its scratch memory again in its
            // first timed step (ResNet50: about 1 GB allocated and zeroed per worker)
            long[] timedFrom = {System.nanoTime()};
            TrainingResult r = trainer.train(net, train, config.steps(warmup + steps).seed(3).build(), info -> {
                memory.sample();
                if (info.step() == warmup) {
                    timedFrom[0] = System.nanoTime();
                }
            });
            if (warmup == 0) {
                return new Phase(r.examplesPerSecond(), memory);
            }
            return new Phase(q * train.size() * steps / ((System.nanoTime() - timedFrom[0]) / 1e9), memory);
        }

        /** The model, frozen up to --feature-extractor when it is given (in the model's own data type). */
        private org.deeplearning4j.nn.api.Model network(ModelOptions options) {
            org.deeplearning4j.nn.api.Model net = Models.byName(model, options);
            if (featureExtractor == null) {
                return net;
            }
            if (net instanceof org.deeplearning4j.nn.graph.ComputationGraph g) {
                if (g.getConfiguration().getVertices().get(featureExtractor) == null) {
                    throw new IllegalArgumentException("--feature-extractor: model " + model + " has no vertex '" + featureExtractor
                            + "'; its vertices: " + String.join(", ", g.getConfiguration().getVertices().keySet()));
                }
                // TransferLearning rebuilds in ND4J's default data type: convert back to the model's own
                return new org.deeplearning4j.nn.transferlearning.TransferLearning.GraphBuilder(g).setFeatureExtractor(featureExtractor)
                        .build().convertDataType(g.params().dataType());
            }
            MultiLayerNetwork m = (MultiLayerNetwork) net;
            int last = m.getnLayers() - 2;
            int index;
            try {
                index = Integer.parseInt(featureExtractor);
            } catch (NumberFormatException e) {
                index = -1;
            }
            if (index < 0 || index > last) {
                throw new IllegalArgumentException("--feature-extractor: model " + model + " is a MultiLayerNetwork; give a layer "
                        + "index in [0, " + last + "] (the output layer stays trainable), got '" + featureExtractor + "'");
            }
            return new org.deeplearning4j.nn.transferlearning.TransferLearning.Builder(m).setFeatureExtractor(index).build()
                    .convertDataType(m.params().dataType());
        }

        /** Whether the model is timed on random colour images (cifar-cnn and the wide ResNets: CIFAR-10's shape; resnet50). */
        private boolean cifarShaped() {
            return model.equals("cifar-cnn") || model.startsWith("wrn-") || model.equals("resnet50");
        }

        /** The options of the model's data: MNIST, CIFAR-10, or 3×72×72 for resnet50. */
        private ModelOptions dataOptions() {
            return model.equals("resnet50") ? ModelOptions.cifar10().withInput(Models.RESNET50_MIN_SIDE, Models.RESNET50_MIN_SIDE, 3)
                    : cifarShaped() ? ModelOptions.cifar10() : ModelOptions.mnist();
        }

        /** The data the model is timed on: MNIST's training set, or random CIFAR-10-shaped data. */
        private LabeledData data(ModelOptions options) throws IOException {
            if (!cifarShaped()) {
                return Mnist.load(DatasetCache.root().resolve("mnist")).train();
            }
            int n = Math.max(4 * batchSize, model.equals("resnet50") ? 2_000 : 10_000);
            int side = options.height();
            SplittableRandom rng = new SplittableRandom(7);
            byte[] pixels = new byte[n * 3 * side * side];
            for (int i = 0; i < pixels.length; i++) {
                pixels[i] = (byte) rng.nextInt(256);
            }
            return LabeledData.fromBytes(pixels, rng.ints(n, 0, 10).toArray(), 10, 3, side, side);
        }

        @Override
        public Integer call() throws IOException {
            for (String m : modes) {
                if (!List.of("fit", "engine", "dp1", "dp").contains(m)) {
                    throw new IllegalArgumentException("--modes: unknown mode '" + m + "'; allowed: fit, engine, dp1, dp");
                }
            }
            if (batchSize < 1 || steps < 1 || warmup < 0 || physicalBatchSize < 1) {
                throw new IllegalArgumentException("--batch-size, --steps and --physical-batch-size must be >= 1 and --warmup >= 0, got "
                        + batchSize + ", " + steps + ", " + physicalBatchSize + ", " + warmup);
            }
            if (batchSize > MAX_BATCH) { // a batch of 10^8 images crashed the JVM in native code (mode fit)
                throw new IllegalArgumentException("--batch-size must be at most " + MAX_BATCH + ", got " + batchSize);
            }
            ModelOptions options = dataOptions();
            LabeledData train = data(options);
            int rank = PerExampleGradients.of(network(options)).inputRank(); // the network's own input shape, for DL4J's fit too
            if (rank > 0) {
                train = new LabeledData(train.features(rank), train.labels(), train.channels(), train.height(), train.width());
            }
            int threads = Nd4j.getEnvironment().maxMasterThreads(); // the op threads libnd4j uses (see Reporting)

            int cores = workers != null ? workers : Runtime.getRuntime().availableProcessors();
            Phase fit = modes.contains("fit") ? fitPhase(train, options) : null;
            // the real trainer (Poisson batches with expected size B), same model and data: the engine's non-private
            // mode with one worker per core, then DP-SGD with one worker and all cores for ND4J's ops, then one per core
            Phase engine = modes.contains("engine") ? trainerPhase(train, options, cores, true) : null;
            Phase dp1 = modes.contains("dp1") ? trainerPhase(train, options, 1, false) : null;
            Phase dp = modes.contains("dp") ? trainerPhase(train, options, cores, false) : null;
            Reporting.configureWorkers(1, threads, 1);
            // DP-SGD's chunk: the physical batch, capped by DL4J's memory estimate; with a frozen prefix the trainer may cache
            // the prefix's output, which is not capped, so the JSON leaves the field null there
            int chunk = org.dpdl4j.dpsgd.ChunkRows.of(network(options), train.exampleShape(), options.dataType(), physicalBatchSize);
            Integer dpChunk = featureExtractor == null ? chunk : null;

            System.out.printf("model %s%s (%s data), batch %d, physical batch %d (DP-SGD chunk %s), %d measured steps after %d warm-up, %d cores, backend %s%n",
                    model, featureExtractor == null ? "" : " frozen up to " + featureExtractor, dataName(), batchSize, physicalBatchSize,
                    featureExtractor == null ? chunk + " rows" : chunk + " rows, or the physical batch where the frozen prefix's output is cached",
                    steps, warmup, cores, Nd4j.getBackend().getClass().getSimpleName());
            print("DL4J fit (non-private), " + threads + " op threads", fit);
            print("dpdl4j non-private mode, " + cores + " workers", engine);
            print("dpdl4j DP-SGD, 1 worker x " + threads + " op threads", dp1);
            print("dpdl4j DP-SGD, " + cores + " workers x 1 op thread", dp);
            if (dp != null && fit != null && engine != null) {
                System.out.printf("ratio DP-SGD (%d workers) / DL4J fit: %.2f; / dpdl4j non-private mode: %.2f%n", cores,
                        dp.rate / fit.rate, dp.rate / engine.rate);
            }
            if (modes.size() > 1) {
                System.out.println("peak RSS is the process's and does not fall between phases: for memory, run one --modes at a time");
            }
            if (json) {
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("model", model);
                out.put("feature_extractor", featureExtractor);
                out.put("data", dataName());
                out.put("batch_size", batchSize);
                out.put("physical_batch_size", physicalBatchSize);
                out.put("dp_chunk_rows", dpChunk);
                out.put("steps", steps);
                out.put("threads", threads);
                out.put("dp_workers", cores);
                out.put("dp_examples_per_second", dp == null ? null : dp.rate);
                out.put("dp_one_worker_examples_per_second", dp1 == null ? null : dp1.rate);
                out.put("nonprivate_examples_per_second", fit == null ? null : fit.rate);
                out.put("engine_nonprivate_examples_per_second", engine == null ? null : engine.rate);
                out.put("ratio", dp == null || fit == null ? null : dp.rate / fit.rate);
                out.put("ratio_dp_to_engine_nonprivate", dp == null || engine == null ? null : dp.rate / engine.rate);
                out.put("dp_peak_heap_bytes", dp == null ? null : dp.memory.peakHeap);
                out.put("dp_peak_rss_bytes", dp == null ? null : dp.memory.peakRss);
                out.put("engine_nonprivate_peak_rss_bytes", engine == null ? null : engine.memory.peakRss);
                out.put("nonprivate_peak_heap_bytes", fit == null ? null : fit.memory.peakHeap);
                out.put("nonprivate_peak_rss_bytes", fit == null ? null : fit.memory.peakRss);
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
