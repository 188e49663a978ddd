package org.dpdl4j.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.dpdl4j.spark.SparkCluster;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Where the work runs: {@code --executor local|spark} and the Spark options. For {@code tune} the work is the trials
 * (one Spark task each); for {@code train} it is each step's clipped sum (one Spark job per step over
 * {@code --spark-partitions} parts of the data).
 */
final class ExecutorOptions {
    @Option(names = "--executor", defaultValue = "local", paramLabel = "local|spark", description = {"Where the work runs: local (this JVM) or spark (--spark-master).",
                "tune: one Spark task per trial. train: each step's clipped sum as one Spark job over "
                        + "--spark-partitions parts of the data. Either way the driver draws the seeds and the noise, charges "
                        + "the ledger and writes the release; executors write nothing (default ${DEFAULT-VALUE})."})
    String executor;

    @Option(names = "--spark-master", paramLabel = "URL", description = {"local[N], local-cluster[WORKERS,CORES,MB] (worker processes on this machine), spark://HOST:PORT, "
                        + "yarn or k8s://URL (default: spark-submit's --master)."})
    String master;

    @Option(names = "--spark-data", defaultValue = "broadcast", paramLabel = "broadcast|cache", description = {"How executors get the private data: broadcast (the driver's verified arrays) or cache (each "
                        + "executor's $DPDL4J_DATA, checked against the driver's SHA-256) (default ${DEFAULT-VALUE}). train --dataset "
                        + "shards:PATH needs neither: each executor reads its part's shards at PATH (a path every executor can read), "
                        + "checked against the driver's manifest."})
    String data;

    @Option(names = "--spark-task-cpus", defaultValue = "1", paramLabel = "N", description = "Cores per Spark task (spark.task.cpus): per trial "
            + "(its DP-SGD workers unless --trial-workers is given) or per part of a step (its OpenMP threads) (default ${DEFAULT-VALUE}).")
    int taskCpus;

    @Option(names = "--spark-wait", defaultValue = "120", paramLabel = "SECONDS", description = "How long to wait for executors "
            + "to register before giving up, nothing charged (default ${DEFAULT-VALUE}).")
    int waitSeconds;

    @Option(names = "--spark-conf", paramLabel = "KEY=VALUE", description = "A further Spark setting, repeatable (e.g. spark.executor.memory=8g).")
    List<String> conf = new ArrayList<>();

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--spark-partitions", paramLabel = "P", description = {"train --executor spark: parts of the training data, one Spark task each per step, aligned to the "
                        + "sampler's blocks of 1024 examples (default: the cluster's cores / --spark-task-cpus)."})
    Integer partitions;

    /** True for --executor spark. */
    boolean spark() {
        return executor.equals("spark");
    }

    /**
     * The Spark settings, checked (before anything is charged or loaded), or null when no Spark is wanted.
     *
     * @param wanted    whether the command uses Spark (--executor spark, or tune's --train-executor spark)
     * @param enabledBy the options that use Spark, for the message when Spark options are given without them
     * @throws IllegalArgumentException naming the option at fault
     */
    SparkCluster.Settings settings(boolean wanted, String enabledBy) {
        if (!executor.equals("local") && !executor.equals("spark")) {
            throw new IllegalArgumentException("--executor must be local or spark, got '" + executor + "'");
        }
        if (!wanted) {
            for (String option : new String[]{"--spark-master", "--spark-conf", "--spark-partitions", "--spark-data", "--spark-task-cpus",
                    "--spark-wait"}) {
                if (mixee != null && mixee.commandLine().getParseResult().hasMatchedOption(option)) {
                    throw new IllegalArgumentException(option + " needs " + enabledBy);
                }
            }
            return null;
        }
        if (partitions != null && partitions < 1) {
            throw new IllegalArgumentException("--spark-partitions must be >= 1, got " + partitions);
        }
        SparkCluster.DataSource source = switch (data) {
            case "broadcast" -> SparkCluster.DataSource.BROADCAST;
            case "cache" -> SparkCluster.DataSource.CACHE;
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
            return new SparkCluster.Settings(master, source, taskCpus, waitSeconds, settings);
        } catch (IllegalArgumentException e) {
            String option = e.getMessage().contains("master") ? "--spark-master" : e.getMessage().contains("task.cpus")
                    ? "--spark-task-cpus" : "--spark-wait";
            throw new IllegalArgumentException(option + ": " + e.getMessage(), e);
        }
    }

    /**
     * With --spark-data cache, the executors load this training split from their own dataset cache (checked against the
     * driver's SHA-256); otherwise it is broadcast.
     */
    static void trainingSplitOn(SparkCluster cluster, TrainingOptions t, org.dpdl4j.datasets.TrainTest data) {
        if (data.train() == null) {
            return; // packed shards: the executors read them from their path
        }
        int[] hwc = TrainingOptions.parseImageSize(t.imageSize);
        cluster.trainingSplitOf(data.train(), t.dataset, hwc[0], hwc[1], hwc[2], t.weightSeed());
    }

    /** The executor's name as the reports write it. */
    String name() {
        return executor.toLowerCase(Locale.ROOT);
    }
}
