package org.dpdl4j.spark;

import java.io.Serializable;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.dpsgd.Networks;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.PackedShards;
import org.dpdl4j.datasets.ShardStorage;
import org.dpdl4j.dpsgd.ClippedSums;
import org.dpdl4j.dpsgd.DpSgdConfig;
import org.dpdl4j.dpsgd.PerExampleGradients;
import org.dpdl4j.dpsgd.PoissonBatchSampler;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * Data-parallel DP-SGD on a Spark cluster: each step's clipped sum is one Spark job, the noise and the update stay on
 * the driver ({@link org.dpdl4j.dpsgd.DpSgdTrainer#withClippedSums}).
 *
 * <p>When a run opens, the training set is cut into P parts aligned to the sampler's blocks
 * ({@link PoissonBatchSampler#partitionBounds}); each part travels once, as a broadcast of its own rows (or, for the
 * full training split of a dataset with {@link SparkCluster.DataSource#CACHE}, from each executor's dataset cache), and
 * an executor uses it only if its SHA-256 equals the driver's. Each step's tasks carry the parameters; the task
 * of part p draws the part of step t's Poisson batch that lies in its rows ({@code sampler.batch(t, from, to)}: every
 * example independently with rate q, from streams seeded by (seed, t, block)), computes its clipped sum with the same
 * engine as a local run ({@link PerExampleGradients#clippedSum}), and the sums are tree-aggregated (in double) to the
 * driver. So the batch of every step is exactly the one a local run with the same sampling seed draws, and the run's
 * event is the local one, {@code SelfComposed(PoissonSampled(Gaussian(σ), q), T)}; only the summation order differs.
 *
 * <p>A task that Spark re-runs (a lost executor, a failed attempt) draws the same rows at the same parameters and
 * returns the same sum, and Spark counts one attempt's result per part. A step whose job cannot finish throws before the
 * trainer adds noise or updates anything, so no step is applied twice or half. Noise is never drawn on an executor; the
 * sampling seed travels with the tasks (the cluster sees which examples each step sampled: it is inside the trust
 * boundary), but the noise seed cannot be computed from it (both are one-way derivations of the run's seed).
 *
 * <p>Spark does not pin a part to an executor: an executor fetches and verifies each part it is given once per run and
 * keeps it, so over a long run one executor may come to hold several parts (at most the whole training set).
 */
public final class SparkClippedSums implements ClippedSums {
    private final SparkCluster cluster;
    private final int partitions;
    private final List<Double> stepSeconds = new ArrayList<>();
    private final List<Double> slowestTaskSeconds = new ArrayList<>();
    private final List<Double> betweenSeconds = new ArrayList<>();
    private int parts;
    private double openSeconds;

    SparkClippedSums(SparkCluster cluster, int partitions) {
        if (partitions < 1) {
            throw new IllegalArgumentException("the number of Spark partitions must be >= 1, got " + partitions);
        }
        this.cluster = cluster;
        this.partitions = partitions;
    }

    /**
     * Prepares a run over data in memory: cuts it into parts aligned to the sampler's blocks and ships each part once (a
     * broadcast of its rows, or the executors' dataset cache for a training split registered with
     * {@link SparkCluster#trainingSplitOf}).
     *
     * @param network the network being trained (its parameters change between steps)
     * @param train   the training data, n examples
     * @param config  the run's settings (C, the physical batch size)
     * @param sampler the run's Poisson sampler over [0, n)
     * @return the run's session, whose {@code step} runs one Spark job per step
     */
    @Override
    public Session open(Model network, LabeledData train, DpSgdConfig config, PoissonBatchSampler sampler) {
        long start = System.nanoTime();
        DataShipping shipping = cluster.shipping();
        int n = train.size();
        int[] bounds = PoissonBatchSampler.partitionBounds(n, partitions);
        boolean whole = shipping.fromCache(train); // executors load the whole split from their cache and cut their rows
        List<LabeledData> shipped = new ArrayList<>();
        List<Part> list = new ArrayList<>();
        for (int p = 0; p + 1 < bounds.length; p++) {
            LabeledData data = whole ? train : rows(train, bounds[p], bounds[p + 1]);
            shipped.add(data);
            list.add(new Part(p, bounds[p], bounds[p + 1], shipping.ship(data), whole, null, null));
        }
        return start(network, config, sampler, list, shipped, start);
    }

    /**
     * A run over packed shards on a path every executor can read (a shared file system, or a URI of a distributed one
     * such as {@code hdfs://}, read through {@link HadoopShardStorage}): nothing of the data travels
     * from the driver. Part p's task opens the shards that hold its rows [from, to) ({@link PackedShards#openPart},
     * verified against the driver's manifest SHA-256) once per run and executor, and at each step reads only the rows of
     * the batch that lie in its part. Data in memory go as {@link #open(Model, LabeledData, DpSgdConfig,
     * PoissonBatchSampler)} sends them. Another serializable source (such as a subset of packed shards, a trial's split)
     * is sent once as a broadcast, and each part's task reads the batch's rows of its part from it.
     *
     * @param network the network being trained (its parameters change between steps)
     * @param train   the training examples, n of them: in memory, {@link PackedShards}, or another serializable source
     * @param config  the run's settings (C, the physical batch size)
     * @param sampler the run's Poisson sampler over [0, n)
     * @return the run's session, whose {@code step} runs one Spark job per step
     * @throws IllegalArgumentException if {@code train} is neither in memory, {@link PackedShards} nor serializable
     */
    @Override
    public Session open(Model network, ExampleSource train, DpSgdConfig config, PoissonBatchSampler sampler) {
        if (train instanceof LabeledData inMemory) {
            return open(network, inMemory, config, sampler);
        }
        if (!(train instanceof PackedShards shards)) {
            if (!(train instanceof Serializable)) {
                throw new IllegalArgumentException("a Spark run reads data in memory, packed shards on a path every executor reads, "
                        + "or subsets of them, not " + train);
            }
            // a subset of packed shards (a trial's split): sent once per executor as a broadcast of its indices; an
            // executor opens the whole shard set (verified once per JVM) and reads the batch's rows of its part
            long start = System.nanoTime();
            Broadcast<ExampleSource> source = cluster.context().broadcast(train);
            int[] bounds = PoissonBatchSampler.partitionBounds(train.size(), partitions);
            List<Part> list = new ArrayList<>();
            for (int p = 0; p + 1 < bounds.length; p++) {
                list.add(new Part(p, bounds[p], bounds[p + 1], null, false, null, source));
            }
            return start(network, config, sampler, list, List.of(), start);
        }
        long start = System.nanoTime();
        int[] bounds = PoissonBatchSampler.partitionBounds(shards.size(), partitions);
        ShardStorage storage = shards.storage() instanceof HadoopShardStorage h
                ? h.with(cluster.context().hadoopConfiguration()) : shards.storage(); // spark.hadoop.* settings reach the executors
        ShardsPart where = new ShardsPart(storage, shards.manifestSha256());
        List<Part> list = new ArrayList<>();
        for (int p = 0; p + 1 < bounds.length; p++) {
            list.add(new Part(p, bounds[p], bounds[p + 1], null, false, where, null));
        }
        return start(network, config, sampler, list, List.of(), start);
    }

    private Session start(Model network, DpSgdConfig config, PoissonBatchSampler sampler, List<Part> list, List<LabeledData> shipped,
                          long start) {
        JavaSparkContext sc = cluster.context();
        String conf = Networks.configurationJson(network);
        Job job = new Job(UUID.randomUUID().toString(), sc.broadcast(conf), network.params().dataType().name(), sampler,
                config.clipNorm(), config.physicalBatchSize(), cluster.settings().taskCpus()); // a task's ops use its cores
        JavaRDD<Part> rdd = sc.parallelize(list, list.size());
        synchronized (this) {
            parts = list.size();
            openSeconds = (System.nanoTime() - start) / 1e9;
        }
        return new SparkSession(sc, network, rdd, job, shipped, list.isEmpty() ? null : list.get(0).source());
    }

    /** Rows [from, to) of the data, as their own arrays. */
    private static LabeledData rows(LabeledData d, int from, int to) {
        int[] range = java.util.stream.IntStream.range(from, to).toArray();
        return d.rows(range);
    }

    private final class SparkSession implements Session {
        private final JavaSparkContext sc;
        private final Model network;
        private final JavaRDD<Part> rdd;
        private final Job job;
        private final List<LabeledData> shipped;
        private final Broadcast<ExampleSource> source;
        private long lastEnd;

        SparkSession(JavaSparkContext sc, Model network, JavaRDD<Part> rdd, Job job, List<LabeledData> shipped,
                     Broadcast<ExampleSource> source) {
            this.source = source;
            this.sc = sc;
            this.network = network;
            this.rdd = rdd;
            this.job = job;
            this.shipped = shipped;
        }

        @Override
        public Sum step(long t, INDArray target) {
            long start = System.nanoTime();
            if (lastEnd != 0) {
                synchronized (SparkClippedSums.this) {
                    betweenSeconds.add((start - lastEnd) / 1e9);
                }
            }
            INDArray params = network.params();
            // the parameters travel in the task's closure, which Spark itself ships once per stage and executor (a
            // broadcast of our own per step measured slower: one more fetch from the driver)
            Step step = new Step(job, params.dataType() == DataType.DOUBLE ? params.data().asDouble() : params.data().asFloat(), t);
            Partial total;
            try {
                sc.setJobDescription("dpdl4j DP-SGD step " + t);
                total = rdd.map(step::compute).treeReduce(Partial::plus);
            } catch (Exception e) { // SparkException (a job Spark aborted) is a checked exception, thrown through Scala
                throw new IllegalStateException("step " + t + "'s clipped sum could not be computed on the Spark cluster ("
                        + e.getMessage() + "); nothing of step " + t + " was applied", e);
            }
            if (total.sum() == null) {
                target.assign(0);
            } else {
                target.assign(Nd4j.createFromArray(total.sum()).reshape(target.shape()).castTo(target.dataType()));
            }
            lastEnd = System.nanoTime();
            synchronized (SparkClippedSums.this) {
                stepSeconds.add((lastEnd - start) / 1e9);
                slowestTaskSeconds.add(total.slowestSeconds());
            }
            return new Sum(total.batchSize(), total.lossSum());
        }

        @Override
        public void close() {
            job.conf().destroy();
            if (source != null) {
                source.destroy();
            }
            for (LabeledData d : shipped) {
                cluster.shipping().forget(d);
            }
        }
    }

    /**
     * What the runs did, for the operator record (never released): the parts, the driver's set-up time, the first step's
     * wall time (it includes each executor's one-time start: fetching and verifying its parts, building the network),
     * and over the later steps the mean wall time on the driver, the mean compute time of each step's slowest task, and
     * their difference, the time spent outside the gradients (scheduling, shipping the parameters, aggregation); and
     * the mean time on the driver between two steps' jobs (the noise, the update, the moving average, checkpoints and
     * listeners: what a local run spends there too).
     *
     * @return a new map with the keys {@code partitions}, {@code open_seconds}, {@code steps}, {@code first_step_seconds},
     *         {@code mean_step_seconds}, {@code mean_slowest_task_seconds}, {@code mean_overhead_seconds} and
     *         {@code mean_driver_seconds_between_steps}; times in seconds, null where no step (or no later step) has run
     */
    public synchronized Map<String, Object> operatorSummary() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("partitions", parts);
        m.put("open_seconds", openSeconds);
        m.put("steps", stepSeconds.size());
        m.put("first_step_seconds", stepSeconds.isEmpty() ? null : stepSeconds.get(0));
        int later = stepSeconds.size() - 1;
        double wall = stepSeconds.stream().skip(1).mapToDouble(Double::doubleValue).sum();
        double slowest = slowestTaskSeconds.stream().skip(1).mapToDouble(Double::doubleValue).sum();
        m.put("mean_step_seconds", later < 1 ? null : wall / later);
        m.put("mean_slowest_task_seconds", later < 1 ? null : slowest / later);
        m.put("mean_overhead_seconds", later < 1 ? null : (wall - slowest) / later);
        m.put("mean_driver_seconds_between_steps", betweenSeconds.isEmpty() ? null
                : betweenSeconds.stream().mapToDouble(Double::doubleValue).sum() / betweenSeconds.size());
        return m;
    }

    /**
     * One part of the training data: rows [from, to), shipped as its own data or as the whole split, read from packed
     * shards ({@code shards} not null), or read from a serializable source such as a subset of packed shards
     * ({@code source} not null).
     */
    record Part(int index, int from, int to, DataShipping.Handle data, boolean whole, ShardsPart shards,
                Broadcast<ExampleSource> source) implements Serializable {
    }

    /** Packed shards every executor reads from {@code storage}, and the SHA-256 of the manifest the driver verified. */
    record ShardsPart(ShardStorage storage, String manifestSha256) implements Serializable {
    }

    /** What every task of a run needs besides the step: the network's configuration, the sampler, C. */
    record Job(String run, Broadcast<String> conf, String dataType, PoissonBatchSampler sampler, double clipNorm, int physical,
               int ndThreads) implements Serializable {
    }

    /** A part's clipped sum (in double), its batch size and loss, and the slowest task's compute seconds. */
    record Partial(double[] sum, int batchSize, double lossSum, double slowestSeconds) implements Serializable {
        static Partial plus(Partial a, Partial b) {
            double[] s = a.sum == null ? b.sum : a.sum;
            if (a.sum != null && b.sum != null) {
                for (int i = 0; i < s.length; i++) {
                    s[i] += b.sum[i];
                }
            }
            return new Partial(s, a.batchSize + b.batchSize, a.lossSum + b.lossSum, Math.max(a.slowestSeconds, b.slowestSeconds));
        }
    }

    /** Step t of a run at these parameters (float[] or double[], the network's type): the task body. */
    record Step(Job job, Object params, long t) implements Serializable {
        Partial compute(Part part) throws java.io.IOException {
            long start = System.nanoTime();
            if (Nd4j.getEnvironment().maxMasterThreads() != job.ndThreads()) { // ND4J 1.0.0-M2.1 reads the master threads
                Nd4j.getEnvironment().setMaxThreads(job.ndThreads());
                Nd4j.getEnvironment().setMaxMasterThreads(job.ndThreads());
            }
            int[] rows = job.sampler().batch(t, part.from(), part.to());
            if (rows.length == 0) {
                return new Partial(null, 0, 0, (System.nanoTime() - start) / 1e9);
            }
            LabeledData data;
            if (part.shards() != null || part.source() != null) { // only the batch's rows of this part, read now
                data = Executors.cast((part.shards() != null ? Executors.shards(job, part) : part.source().value()).read(rows), job);
                rows = java.util.stream.IntStream.range(0, rows.length).toArray();
            } else {
                data = Executors.data(job, part);
                for (int k = 0; k < rows.length; k++) {
                    rows[k] -= part.from();
                }
            }
            Executors.Engine e = Executors.engine(job);
            try {
                Object p = params;
                INDArray values = p instanceof double[] d ? Nd4j.createFromArray(d) : Nd4j.createFromArray((float[]) p);
                e.network().params().assign(values.reshape(e.network().params().shape()));
                int rank = e.gradients().inputRank(); // the network's own input shape: flat, images or sequences
                double loss = e.gradients().clippedSum(rank > 0 ? data.features(rank) : data.features(), data.labels(),
                        data.featureMask(), data.labelMask(), rows, job.clipNorm(), job.physical(), e.buffer());
                return new Partial(e.buffer().data().asDouble(), rows.length, loss, (System.nanoTime() - start) / 1e9);
            } finally {
                Executors.release(job, e);
            }
        }
    }

    /** What an executor JVM keeps for the run it is working on: its parts' data and idle engines (dropped for a new run). */
    static final class Executors {
        record Engine(Model network, PerExampleGradients gradients, INDArray buffer) {
        }

        private static String run;
        private static final Map<Integer, LabeledData> DATA = new HashMap<>();
        private static final Map<Integer, PackedShards> SHARDS = new HashMap<>();
        private static final ArrayDeque<Engine> IDLE = new ArrayDeque<>();

        private Executors() {
        }

        private static synchronized void enter(String r) {
            if (!r.equals(run)) {
                run = r;
                DATA.clear();
                SHARDS.values().forEach(PackedShards::close);
                SHARDS.clear();
                IDLE.clear();
            }
        }

        /** The part's shards, opened and verified once per run and executor. */
        static PackedShards shards(Job job, Part part) {
            synchronized (Executors.class) {
                enter(job.run());
                PackedShards known = SHARDS.get(part.index());
                if (known != null) {
                    return known;
                }
            }
            PackedShards opened = PackedShards.openPart(part.shards().storage(), part.shards().manifestSha256(), part.from(),
                    part.to());
            synchronized (Executors.class) {
                enter(job.run());
                PackedShards other = SHARDS.putIfAbsent(part.index(), opened);
                if (other != null) {
                    opened.close();
                    return other;
                }
                return opened;
            }
        }

        /** The data in the network's type, masks included. */
        static LabeledData cast(LabeledData d, Job job) {
            DataType type = DataType.valueOf(job.dataType());
            return d.features().dataType() == type && d.labels().dataType() == type ? d : d.castTo(type);
        }

        static LabeledData data(Job job, Part part) throws java.io.IOException {
            synchronized (Executors.class) {
                enter(job.run());
                LabeledData known = DATA.get(part.index());
                if (known != null) {
                    return known;
                }
            }
            LabeledData d = DataShipping.resolve(part.data()); // verified against the driver's SHA-256
            if (part.whole()) {
                d = rows(d, part.from(), part.to());
            }
            d = cast(d, job);
            synchronized (Executors.class) {
                enter(job.run());
                DATA.putIfAbsent(part.index(), d);
                return DATA.get(part.index());
            }
        }

        static Engine engine(Job job) {
            synchronized (Executors.class) {
                enter(job.run());
                Engine idle = IDLE.poll();
                if (idle != null) {
                    return idle;
                }
            }
            Model net;
            try {
                net = Networks.fromConfigurationJson(job.conf().value());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("cannot read the network configuration of a Spark job", e);
            }
            PerExampleGradients g = PerExampleGradients.of(net);
            return new Engine(net, g, Nd4j.zeros(net.params().dataType(), 1, net.numParams()));
        }

        static synchronized void release(Job job, Engine e) {
            if (job.run().equals(run)) {
                IDLE.push(e);
            }
        }

    }
}
