package org.dpdl4j.spark;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.tuning.TrainingMechanism;

/**
 * A connection to an Apache Spark cluster, for two kinds of work: the trials of a tuning ({@link #place}) and the steps
 * of one DP-SGD run ({@link #clippedSums}, see {@link SparkClippedSums}).
 *
 * <p>Trials: the driver (this JVM) does everything that touches privacy: the
 * tuner draws K, the candidates and every trial's seed, charges the ledger, selects and writes the release, exactly as
 * with local trials. {@link #place} hands the tuner a Q whose runs are Spark tasks: one task per run of Q, carrying Q's
 * settings, the candidate and the seed, and returning the trained model (parameters and updater state, bit for bit)
 * with its noisy score. A task that Spark re-runs after losing an executor recomputes the identical output from the
 * same seed, so a retry is never a second, differently-noised release; executors write nothing.
 *
 * <p>The private data reaches the executors as a broadcast of the verified arrays ({@link DataSource#BROADCAST}), or,
 * for the full training split of a dataset, from each executor's own dataset cache ({@link DataSource#CACHE}); either
 * way an executor uses data only if its SHA-256 equals the driver's.
 *
 * <p>Results are the same as with local trials, bit for bit, when each trial runs with the same number of DP-SGD
 * workers and of native threads: a run's last bits depend on its seed, on how its batch is split between workers, and on
 * how its matrix products are split between threads. Each task sets ND4J's threads per op to the driver's setting, and
 * executors run OpenMP with {@code spark.task.cpus} threads ({@code OMP_NUM_THREADS}; a
 * {@code spark.executorEnv.OMP_NUM_THREADS} setting overrides it): a local run computes the same bits with
 * {@code OMP_NUM_THREADS} set to that number. More OpenMP threads than a task's cores would oversubscribe them (the
 * threads spin): on two cores with two trials at once, two threads each made the trials about twice as slow.
 * Without a fixed seed the seeds are drawn from {@code SecureRandom} on the driver and travel with the tasks: the
 * cluster is then inside the trust boundary, as the driver is.
 */
public final class SparkCluster implements AutoCloseable {
    /** Where executors get the private data from. */
    public enum DataSource {
        /** A Spark broadcast of the driver's verified arrays (works on any cluster). */
        BROADCAST,
        /** Each executor's dataset cache, verified against the driver's SHA-256 (the cluster must have the files). */
        CACHE
    }

    /**
     * How to reach the cluster.
     *
     * @param master              a Spark master URL: {@code local[N]}, {@code local-cluster[N,cores,MB]} (a cluster of N
     *                            worker processes on this machine, for tests), {@code spark://HOST:PORT}, {@code yarn}
     *                            or {@code k8s://URL}; null to take {@code spark.master} from {@code spark-submit}
     * @param data                where executors get the data
     * @param taskCpus            cores per task ({@code spark.task.cpus}, ≥ 1): a trial's DP-SGD workers, or a step part's OpenMP threads
     * @param registrationSeconds how long to wait for executors before giving up, in seconds (≥ 1)
     * @param conf                further Spark settings (may be empty)
     */
    public record Settings(String master, DataSource data, int taskCpus, int registrationSeconds, Map<String, String> conf) {
        /**
         * Checks the settings and copies {@code conf}.
         *
         * @param master              a Spark master URL of a form {@link SparkCluster#checkMaster} accepts, or null to take
         *                            {@code spark.master} from {@code spark-submit}
         * @param data                where executors get the data, not null
         * @param taskCpus            cores per task ({@code spark.task.cpus}), ≥ 1
         * @param registrationSeconds how long to wait for executors before giving up, in seconds, ≥ 1
         * @param conf                further Spark settings, not null (may be empty); copied
         * @throws IllegalArgumentException if a setting is out of range or the master URL is malformed (the message names it)
         * @throws NullPointerException     if {@code data} or {@code conf} is null
         */
        public Settings {
            Objects.requireNonNull(data, "data");
            if (taskCpus < 1) {
                throw new IllegalArgumentException("spark.task.cpus must be >= 1, got " + taskCpus);
            }
            if (registrationSeconds < 1) {
                throw new IllegalArgumentException("the executor registration timeout must be >= 1 s, got " + registrationSeconds);
            }
            conf = Map.copyOf(conf);
            if (master != null) {
                checkMaster(master);
            }
        }
    }

    private static final Pattern LOCAL = Pattern.compile("local(\\[(\\*|[1-9][0-9]*)(,[0-9]+)?])?");
    private static final Pattern LOCAL_CLUSTER = Pattern.compile("local-cluster\\[\\s*([1-9][0-9]*)\\s*,\\s*([1-9][0-9]*)\\s*,\\s*([1-9][0-9]*)\\s*]");
    private static final Pattern STANDALONE = Pattern.compile("spark://([^,:/]+:[0-9]{1,5})(,[^,:/]+:[0-9]{1,5})*");

    private final JavaSparkContext sc;
    private final Settings settings;
    private final DataShipping shipping;
    private final int parallelism;
    private final AtomicLong tasks = new AtomicLong();
    private final AtomicLong failedAttempts = new AtomicLong();
    private final AtomicInteger lostExecutors = new AtomicInteger();
    private final List<String> failureReasons = java.util.Collections.synchronizedList(new ArrayList<>());
    private final List<Double> setupSeconds = new ArrayList<>();
    private java.nio.file.Path scratch;

    private SparkCluster(JavaSparkContext sc, Settings settings, int parallelism) {
        this.sc = sc;
        this.settings = settings;
        this.parallelism = parallelism;
        this.shipping = new DataShipping(p -> sc.broadcast(p));
        sc.sc().addSparkListener(new SparkListener() {
            @Override
            public void onTaskEnd(SparkListenerTaskEnd e) {
                if (e.taskInfo().successful()) {
                    tasks.incrementAndGet();
                } else {
                    failedAttempts.incrementAndGet();
                    failureReasons.add(String.valueOf(e.reason()));
                }
            }

            @Override
            public void onExecutorRemoved(SparkListenerExecutorRemoved e) {
                lostExecutors.incrementAndGet();
            }
        });
    }

    /**
     * Checks a master URL's form.
     *
     * @param master the URL: {@code local}, {@code local[N]}, {@code local[*]}, {@code local[N,F]},
     *               {@code local-cluster[N,cores,MB]}, {@code spark://HOST:PORT[,HOST:PORT…]}, {@code yarn} or
     *               {@code k8s://URL}
     * @throws IllegalArgumentException if it is not one of the forms {@link Settings#master} lists
     */
    public static void checkMaster(String master) {
        if (LOCAL.matcher(master).matches() || LOCAL_CLUSTER.matcher(master).matches() || STANDALONE.matcher(master).matches()
                || master.equals("yarn") || master.startsWith("k8s://") && master.length() > 6) {
            return;
        }
        throw new IllegalArgumentException("Spark master '" + master + "' is not a master URL: use local[N], "
                + "local-cluster[WORKERS,CORES,MB], spark://HOST:PORT, yarn or k8s://URL");
    }

    /**
     * Connects to the cluster and waits until its executors have registered (all N of {@code local-cluster}, at least
     * one elsewhere), so that a tuning starts, and is charged, only once it can run.
     *
     * @param settings how to reach the cluster
     * @return the connected cluster, which the caller closes
     * @throws IllegalArgumentException if the master URL is malformed, or none is given and {@code spark.master} is not set
     * @throws ClusterUnavailableException if a standalone master cannot be reached, or no executor registers in time
     *                                     (the context is stopped again)
     * @throws IllegalStateException       if interrupted while waiting for executors
     * @throws java.io.UncheckedIOException if a {@code local-cluster}'s temporary directory cannot be created
     */
    public static SparkCluster start(Settings settings) {
        String master = settings.master();
        if (master == null) {
            master = new SparkConf().get("spark.master", null);
            if (master == null) {
                throw new IllegalArgumentException("no Spark master given: name one (local[N], spark://HOST:PORT, ...) or run "
                        + "under spark-submit --master");
            }
            checkMaster(master);
        }
        Matcher standalone = STANDALONE.matcher(master);
        if (standalone.matches()) {
            checkReachable(master);
        }
        SparkConf conf = new SparkConf().setMaster(master).setAppName(new SparkConf().get("spark.app.name", "dpdl4j tune"))
                .set("spark.task.cpus", Integer.toString(settings.taskCpus()))
                .set("spark.executorEnv.OMP_NUM_THREADS", Integer.toString(settings.taskCpus()))
                .set("spark.speculation", "false");
        Matcher cluster = LOCAL_CLUSTER.matcher(master);
        int expected = 1;
        java.nio.file.Path scratch = null;
        if (cluster.matches()) {
            // worker processes launched from this JVM's classpath (Spark's test harness: no Spark distribution needed);
            // the workers keep the executors' logs under their "Spark home", a temporary directory deleted on close
            scratch = localClusterHome();
            expected = Integer.parseInt(cluster.group(1));
            conf.set("spark.executor.extraClassPath", System.getProperty("java.class.path"))
                    .set("spark.executorEnv.SPARK_TESTING", "1")
                    .set("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
                    .set("spark.executor.memory", cluster.group(3) + "m")
                    .set("spark.executor.extraJavaOptions", "-Dorg.bytedeco.javacpp.maxbytes=6G -Dorg.bytedeco.javacpp.maxphysicalbytes=8G")
                    .set("spark.ui.enabled", "false");
        } else if (LOCAL.matcher(master).matches()) {
            conf.set("spark.ui.enabled", "false");
        }
        settings.conf().forEach(conf::set);
        JavaSparkContext sc = new JavaSparkContext(conf);
        try {
            int parallelism;
            Matcher local = LOCAL.matcher(master);
            if (local.matches()) {
                String n = local.group(2);
                int cores = n == null ? 1 : n.equals("*") ? Runtime.getRuntime().availableProcessors() : Integer.parseInt(n);
                parallelism = Math.max(1, cores / settings.taskCpus());
            } else {
                waitForExecutors(sc, expected, settings.registrationSeconds(), master);
                parallelism = Math.max(1, sc.defaultParallelism() / settings.taskCpus());
                if (cluster.matches()) {
                    parallelism = Math.max(1, expected * Integer.parseInt(cluster.group(2)) / settings.taskCpus());
                }
            }
            SparkCluster trials = new SparkCluster(sc, settings, parallelism);
            trials.scratch = scratch;
            return trials;
        } catch (RuntimeException e) {
            sc.stop();
            deleteTree(scratch);
            throw e;
        }
    }

    /** The temporary "Spark home" of a local-cluster's workers (they would otherwise write ./work). */
    private static java.nio.file.Path localClusterHome() {
        try {
            java.nio.file.Path home = java.nio.file.Files.createTempDirectory("dpdl4j-spark-");
            // a local-cluster's workers take their home from these two properties (Spark's test harness)
            System.setProperty("spark.testing", "true");
            System.setProperty("spark.test.home", home.toString());
            return home;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot create a temporary directory for the local cluster's workers", e);
        }
    }

    private static void deleteTree(java.nio.file.Path dir) {
        if (dir == null) {
            return;
        }
        System.clearProperty("spark.testing"); // set for this local cluster only
        System.clearProperty("spark.test.home");
        try (java.util.stream.Stream<java.nio.file.Path> walk = java.nio.file.Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory: the OS cleans what is left
        }
    }

    private static void checkReachable(String master) {
        List<String> errors = new ArrayList<>();
        for (String hostPort : master.substring("spark://".length()).split(",")) {
            int colon = hostPort.lastIndexOf(':');
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1))), 5000);
                return; // one reachable master is enough (the others are standbys)
            } catch (IOException | IllegalArgumentException e) {
                errors.add(hostPort + ": " + e.getMessage());
            }
        }
        throw new ClusterUnavailableException("cannot reach the Spark master " + master + " (" + String.join("; ", errors)
                + "); nothing was charged or trained");
    }

    private static void waitForExecutors(JavaSparkContext sc, int expected, int seconds, String master) {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (true) {
            int registered = sc.sc().statusTracker().getExecutorInfos().length - 1; // the driver is listed too
            if (registered >= expected) {
                return;
            }
            if (System.nanoTime() > deadline || sc.sc().isStopped()) {
                throw new ClusterUnavailableException(registered + " of " + expected + " Spark executor(s) registered with " + master
                        + " within " + seconds + " s: check that the master is up and has workers with free cores (spark.task.cpus) "
                        + "and memory (spark.executor.memory); nothing was charged or trained");
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for Spark executors", e);
            }
        }
    }

    /**
     * Tasks that run at once (trials, or parts of a step): the cluster's cores over {@code spark.task.cpus}.
     *
     * @return the number of parallel tasks, ≥ 1
     */
    public int parallelism() {
        return parallelism;
    }

    /**
     * The settings this cluster was started with.
     *
     * @return the settings given to {@link #start}
     */
    public Settings settings() {
        return settings;
    }

    /**
     * Q with its runs on the cluster ({@link org.dpdl4j.tuning.RetrainableMechanism} if Q is, with its training calls on
     * the cluster too). Q is serialised once now, so a Q that cannot travel is refused before anything is charged.
     *
     * @param mechanism the base mechanism Q, not null
     * @return Q whose runs (and training calls) are Spark tasks
     * @throws NullPointerException     if mechanism is null
     * @throws IllegalArgumentException if Q (or something it holds) is not serializable
     */
    public TrainingMechanism place(TrainingMechanism mechanism) {
        return SparkMechanism.of(this, mechanism);
    }

    /** Q serialised for the executors, and the SHA-256 of those bytes (under which an executor keeps Q once read). */
    record Shipped(byte[] bytes, String key) implements java.io.Serializable {
    }

    /** @throws IllegalArgumentException if Q cannot be serialised */
    Shipped ship(TrainingMechanism mechanism) {
        byte[] bytes = shipping.serialize(mechanism);
        return new Shipped(bytes, org.dpdl4j.datasets.Sha256.hex(bytes));
    }

    /**
     * Executors take this data, the full training split of a dataset, from their own dataset cache
     * ({@link DataSource#CACHE}); elsewhere it is broadcast.
     *
     * @param data     the array the driver loaded (recognised by identity)
     * @param dataset  the dataset's name, as {@link org.dpdl4j.datasets.Datasets#load} takes it
     * @param height   image height in pixels, as given to the loader
     * @param width    image width in pixels, as given to the loader
     * @param channels image channels, as given to the loader
     * @param seed     the loader's seed (the test split of a {@code folder:} dataset)
     */
    public void trainingSplitOf(LabeledData data, String dataset, int height, int width, int channels, long seed) {
        if (settings.data() == DataSource.CACHE) {
            shipping.fromCache(data, new DataShipping.DatasetRecipe(dataset, height, width, channels, seed));
        }
    }

    /** One call as a one-task Spark job; Q's own failure comes back as an exception with its message. */
    RemoteCall.Outcome call(Shipped shipped, RemoteCall call, String description) {
        Task task = new Task(shipped, shipping.serialize(call), org.nd4j.linalg.factory.Nd4j.getEnvironment().maxMasterThreads());
        sc.setJobDescription("dpdl4j " + description);
        List<RemoteCall.Outcome> out = sc.parallelize(List.of(task), 1).map(Task::execute).collect();
        RemoteCall.Outcome o = out.get(0);
        synchronized (setupSeconds) {
            setupSeconds.add(Math.round(o.setupSeconds() * 1000) / 1000.0);
        }
        if (o.failure() != null) {
            throw new IllegalStateException(o.failure() + " (on Spark executor " + o.executor() + ")");
        }
        return o;
    }

    /** Mechanisms an executor JVM keeps, by the SHA-256 of their bytes (read once: reading one makes its splits). */
    private static final Map<String, TrainingMechanism> MECHANISMS = new LinkedHashMap<>(8, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, TrainingMechanism> eldest) {
            return size() > 4;
        }
    };

    private static TrainingMechanism mechanism(Shipped shipped) {
        synchronized (MECHANISMS) {
            TrainingMechanism known = MECHANISMS.get(shipped.key());
            if (known != null) {
                return known;
            }
        }
        TrainingMechanism read = (TrainingMechanism) DataShipping.deserialize(shipped.bytes());
        synchronized (MECHANISMS) {
            MECHANISMS.putIfAbsent(shipped.key(), read); // mechanisms are thread-safe: concurrent tasks share one
            return MECHANISMS.get(shipped.key());
        }
    }

    /**
     * A call with its mechanism and the driver's ND4J threads per op (a run's last bits depend on them, so the executor
     * uses the same number as the driver would).
     */
    private record Task(Shipped shipped, byte[] call, int ndThreads) implements java.io.Serializable {
        /** The task body: read the call (its data fetched and verified), run it, return its outcome. */
        RemoteCall.Outcome execute() {
            String executor = SparkEnv.get() != null ? SparkEnv.get().executorId() : "?";
            // ND4J 1.0.0-M2.1 reads the master threads (setMaxThreads alone changes nothing)
            if (org.nd4j.linalg.factory.Nd4j.getEnvironment().maxMasterThreads() != ndThreads) {
                org.nd4j.linalg.factory.Nd4j.getEnvironment().setMaxThreads(ndThreads);
                org.nd4j.linalg.factory.Nd4j.getEnvironment().setMaxMasterThreads(ndThreads);
            }
            long start = System.nanoTime();
            TrainingMechanism mechanism = mechanism(shipped);
            RemoteCall c = (RemoteCall) DataShipping.deserialize(call);
            double setup = (System.nanoTime() - start) / 1e9;
            try {
                return c.execute(mechanism).on(executor, setup);
            } catch (RuntimeException e) {
                return RemoteCall.Outcome.failed(e).on(executor, setup);
            }
        }
    }

    /**
     * What the cluster did, for the operator record (never released): tasks that finished, task attempts that failed
     * and were re-run (for example on a lost executor), executors lost.
     *
     * @return a new map with the keys {@code master}, {@code data}, {@code task_cpus}, {@code parallel_tasks},
     *         {@code tasks_succeeded}, {@code task_attempts_failed}, {@code executors_lost}, {@code failure_reasons} and
     *         {@code task_setup_seconds} (seconds each call took an executor to read, fetching its data the first time)
     */
    public Map<String, Object> operatorSummary() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("master", sc.master());
        m.put("data", settings.data().name().toLowerCase(java.util.Locale.ROOT));
        m.put("task_cpus", settings.taskCpus());
        m.put("parallel_tasks", parallelism);
        m.put("tasks_succeeded", tasks.get());
        m.put("task_attempts_failed", failedAttempts.get());
        m.put("executors_lost", lostExecutors.get());
        synchronized (failureReasons) {
            m.put("failure_reasons", List.copyOf(failureReasons));
        }
        synchronized (setupSeconds) {
            m.put("task_setup_seconds", List.copyOf(setupSeconds)); // reading each call, its data fetched and verified the first time
        }
        return m;
    }

    /**
     * Each step's clipped sum of a DP-SGD run as one Spark job over {@code partitions} parts of the training data; give
     * it to {@link org.dpdl4j.dpsgd.DpSgdTrainer#withClippedSums}. See {@link SparkClippedSums}.
     *
     * @param partitions parts of the data (≥ 1; fewer when the data has fewer sampling blocks); a task each per step
     * @return the clipped sums over this cluster
     * @throws IllegalArgumentException if partitions &lt; 1
     */
    public SparkClippedSums clippedSums(int partitions) {
        return new SparkClippedSums(this, partitions);
    }

    /** How data reaches this cluster's executors. */
    DataShipping shipping() {
        return shipping;
    }

    /** The Spark context (tests add listeners to it). */
    JavaSparkContext context() {
        return sc;
    }

    /** Stops the Spark context (and deletes a local cluster's temporary worker directories). */
    @Override
    public void close() {
        sc.stop();
        deleteTree(scratch);
    }
}
