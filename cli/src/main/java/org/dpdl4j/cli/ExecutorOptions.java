package org.dpdl4j.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.dpdl4j.spark.SparkTrials;
import picocli.CommandLine.Option;

/** Where a tuning's trials run: {@code --executor local|spark} and the Spark options. */
final class ExecutorOptions {
    @Option(names = "--executor", defaultValue = "local", paramLabel = "local|spark", description = {"Where the trials run: local (this JVM, --threads at a time) or",
            "spark (one Spark task per trial on --spark-master; the driver draws K, candidates and seeds, charges the ledger and",
            "writes the release; executors write nothing) (default ${DEFAULT-VALUE})."})
    String executor;

    @Option(names = "--spark-master", paramLabel = "URL", description = {"local[N], local-cluster[WORKERS,CORES,MB] (worker processes on",
            "this machine), spark://HOST:PORT, yarn or k8s://URL (default: spark-submit's --master)."})
    String master;

    @Option(names = "--spark-data", defaultValue = "broadcast", paramLabel = "broadcast|cache", description = {"How executors get the private data: broadcast (the",
            "driver's verified arrays) or cache (each executor's $DPDL4J_DATA, checked against the driver's SHA-256) (default ${DEFAULT-VALUE})."})
    String data;

    @Option(names = "--spark-task-cpus", defaultValue = "1", paramLabel = "N", description = "Cores per trial (spark.task.cpus); "
            + "a trial's DP-SGD workers unless --trial-workers is given (default ${DEFAULT-VALUE}).")
    int taskCpus;

    @Option(names = "--spark-wait", defaultValue = "120", paramLabel = "SECONDS", description = "How long to wait for executors "
            + "to register before giving up, nothing charged (default ${DEFAULT-VALUE}).")
    int waitSeconds;

    @Option(names = "--spark-conf", paramLabel = "KEY=VALUE", description = "A further Spark setting, repeatable (e.g. spark.executor.memory=8g).")
    List<String> conf = new ArrayList<>();

    /** True for --executor spark. */
    boolean spark() {
        return executor.equals("spark");
    }

    /**
     * The settings of --executor spark, checked (before anything is charged or loaded).
     *
     * @throws IllegalArgumentException naming the option at fault
     */
    SparkTrials.Settings settings() {
        if (!executor.equals("local") && !executor.equals("spark")) {
            throw new IllegalArgumentException("--executor must be local or spark, got '" + executor + "'");
        }
        if (!spark()) {
            if (master != null || !conf.isEmpty()) {
                throw new IllegalArgumentException("--spark-master and --spark-conf need --executor spark");
            }
            return null;
        }
        SparkTrials.DataSource source = switch (data) {
            case "broadcast" -> SparkTrials.DataSource.BROADCAST;
            case "cache" -> SparkTrials.DataSource.CACHE;
            default -> throw new IllegalArgumentException("--spark-data must be broadcast or cache, got '" + data + "'");
        };
        Map<String, String> settings = new LinkedHashMap<>();
        for (String kv : conf) {
            int eq = kv.indexOf('=');
            if (eq < 1 || !kv.startsWith("spark.")) {
                throw new IllegalArgumentException("--spark-conf must be spark.KEY=VALUE, got '" + kv + "'");
            }
            settings.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        try {
            return new SparkTrials.Settings(master, source, taskCpus, waitSeconds, settings);
        } catch (IllegalArgumentException e) {
            String option = e.getMessage().contains("master") ? "--spark-master" : e.getMessage().contains("task.cpus")
                    ? "--spark-task-cpus" : "--spark-wait";
            throw new IllegalArgumentException(option + ": " + e.getMessage(), e);
        }
    }

    /** The executor's name as the reports write it. */
    String name() {
        return executor.toLowerCase(Locale.ROOT);
    }
}
