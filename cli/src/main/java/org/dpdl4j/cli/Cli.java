package org.dpdl4j.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.dpdl4j.benchmarks.Reporting;
import picocli.CommandLine;

/** Shared helpers of the command line: the library version, the JSON line, error handling, the ledger, interrupts. */
final class Cli {

    private Cli() {
    }

    /** The library version from the build. */
    static String version() {
        return org.dpdl4j.release.PrivacySidecar.currentLibraryVersion();
    }

    /**
     * A model's exact accuracy on a data set's test split, and whether it may be released: only when the test split is
     * public ({@link org.dpdl4j.datasets.TrainTest#publicTest}: a named public data set, or declared by
     * {@code --public-test}). On a folder's, shards' or other private test split the exact accuracy is a statistic of
     * private examples that no ε covers: it goes to the operator (console, operator record), never to the release.
     *
     * @param exact    the accuracy, a fraction in [0, 1]
     * @param released whether the test split is public
     */
    record TestAccuracy(double exact, boolean released) {
        static TestAccuracy of(org.deeplearning4j.nn.api.Model model, org.dpdl4j.datasets.TrainTest data) {
            return new TestAccuracy(org.dpdl4j.dpsgd.DpSgdTrainer.accuracy(model, data.test()), data.publicTest());
        }

        /** The value for the release: the exact accuracy on a public test split, else null. */
        Double release() {
            return released ? exact : null;
        }

        /** The console's text: the accuracy, marked as the operator's when it is not released. */
        String console() {
            return released ? String.format("%.4f", exact) : String.format("%.4f [operator: on a private test split, not released; "
                    + "--public-test declares the split public]", exact);
        }

        /** Adds the exact accuracy to an operator record when the release does not hold it. */
        void addTo(java.util.Map<String, Object> operator) {
            if (!released) {
                operator.put("test_accuracy", exact);
            }
        }
    }

    /** Prints one JSON object as the last line of stdout. */
    static void printJsonLine(PrintStream out, Object object) {
        try {
            out.println(Reporting.JSON.writeValueAsString(object));
        } catch (IOException e) {
            throw new IllegalStateException("could not serialise " + object, e);
        }
    }





    /**
     * Turns every failure into one line on stderr with its own exit status: bad input or missing files 2, an
     * exhausted privacy budget 3, a failed DP-HYPE session 4, an unusable ledger (corrupt, locked, not a ledger) 5,
     * anything unexpected 1 (with the stack trace when the environment sets DPDL4J_VERBOSE=1).
     */
    /** Output directories this command created, outermost first: removed again if they are still empty when it fails. */
    private static final java.util.List<Path> CREATED = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** {@link Files#createDirectories}, remembering which directories it made (see {@link #removeEmptyCreated}). */
    static void createOutputDirectories(Path dir) throws IOException {
        java.util.List<Path> missing = new java.util.ArrayList<>();
        for (Path p = dir.toAbsolutePath().normalize(); p != null && !Files.exists(p); p = p.getParent()) {
            missing.add(0, p);
        }
        Files.createDirectories(dir);
        CREATED.addAll(missing);
    }

    /** Deletes a directory if it exists and is empty; one with files in it is kept. */
    static void deleteIfEmpty(Path dir) throws IOException {
        try {
            Files.deleteIfExists(dir);
        } catch (java.nio.file.DirectoryNotEmptyException e) {
            // other files stay
        }
    }

    /** After a command: if it failed, the output directories it created and left empty are removed, innermost first. */
    static void removeEmptyCreated(boolean failed) {
        for (int i = CREATED.size() - 1; failed && i >= 0; i--) {
            try {
                Files.deleteIfExists(CREATED.get(i)); // refuses (and so keeps) a directory that is not empty
            } catch (IOException e) {
                // not empty, or not ours to remove: kept
            }
        }
        CREATED.clear();
    }

    static CommandLine.IExecutionExceptionHandler errorHandler() {
        return (ex, cmd, parseResult) -> {
            if (ex instanceof IllegalArgumentException || ex instanceof IOException || ex instanceof java.io.UncheckedIOException) {
                cmd.getErr().println("error: " + oneLine(ex.getMessage()));
                return 2;
            }
            if (ex instanceof org.dpdl4j.release.PrivacyLedger.BudgetExceededException
                    || ex instanceof org.dpdl4j.release.PrivacyLedger.AlreadyReleasedException) {
                cmd.getErr().println("refused: " + oneLine(ex.getMessage()));
                return 3;
            }
            if (ex instanceof org.dpdl4j.federated.ProtocolException) {
                cmd.getErr().println("failed: " + oneLine(ex.getMessage()));
                return 4;
            }
            if (ex instanceof org.dpdl4j.spark.ClusterUnavailableException) {
                cmd.getErr().println("unavailable: " + oneLine(ex.getMessage()));
                return 6;
            }
            if (ex instanceof org.dpdl4j.release.PrivacyLedger.LedgerException) {
                cmd.getErr().println("ledger: " + oneLine(ex.getMessage()));
                return 5;
            }
            cmd.getErr().println("internal error: " + ex.getClass().getSimpleName() + ": " + oneLine(String.valueOf(ex.getMessage()))
                    + (verbose() ? "" : " (set DPDL4J_VERBOSE=1 for the stack trace)"));
            if (verbose()) {
                ex.printStackTrace(cmd.getErr());
            }
            return 1;
        };
    }

    private static boolean verbose() {
        return "1".equals(System.getenv("DPDL4J_VERBOSE"));
    }

    /** What went wrong with a file, in words (no exception class names): "no such file or directory: /x" and the like. */
    static String why(Exception e) {
        return org.dpdl4j.release.AtomicFiles.why(e);
    }

    static String oneLine(String message) {
        return message == null ? "" : message.replaceAll("\\s*\\R\\s*", " ");
    }


    /**
     * Opens --ledger FILE: an existing ledger with its own budget, or a new one with --ledger-budget (unlimited
     * when absent) at δ. Prints what opening repaired and what was spent.
     *
     * @throws IllegalArgumentException naming --ledger when the path is a directory
     */
    static org.dpdl4j.release.PrivacyLedger openLedger(Path file, Double budget, String dataset, double delta) throws IOException {
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException("--ledger " + file + " is a directory; give a file");
        }
        org.dpdl4j.release.PrivacyLedger l;
        Path headFile = file.resolveSibling(file.getFileName() + ".head");
        boolean headMissing = Files.exists(file) && Files.size(file) > 0 && !Files.exists(headFile);
        try {
            l = budget == null && Files.exists(file) && Files.size(file) > 0
                    ? org.dpdl4j.release.PrivacyLedger.open(file, dataset)
                    : org.dpdl4j.release.PrivacyLedger.open(file, dataset, budget != null ? budget : Double.POSITIVE_INFINITY, delta);
        } catch (IOException e) {
            throw new IllegalArgumentException("--ledger " + file + " cannot be opened (" + why(e) + ")");
        }
        for (String repair : l.repairs()) {
            System.out.println("repaired: " + repair);
        }
        if (headMissing) { // opening it to write has written a new one, which names the end as it is now
            System.out.println("warning: ledger " + file + " had no head file " + headFile + ": lines removed from its end before "
                    + "now could not be detected; a new head file names its end as it is");
        }
        System.out.printf("ledger %s: spent epsilon %.4f of %s at delta %s%n", file, l.spent().epsilon(), l.epsilonBudget(), l.delta());
        return l;
    }

    /**
     * Seconds one DP-SGD step of this configuration takes here, measured on two steps over random inputs of the
     * data's shape on a copy of the network (the private data is not touched).
     */
    static double estimateSecondsPerStep(org.deeplearning4j.nn.api.Model net, org.dpdl4j.datasets.ExampleSource data,
                                         org.dpdl4j.dpsgd.DpSgdConfig config) {
        return estimateSecondsPerStep(net, data, config, data.size());
    }

    /** As above for n training examples of {@code data}'s shape (data read by index: the test part gives the shape). */
    static double estimateSecondsPerStep(org.deeplearning4j.nn.api.Model net, org.dpdl4j.datasets.ExampleSource examples,
                                         org.dpdl4j.dpsgd.DpSgdConfig config, int n) {
        org.dpdl4j.datasets.LabeledData data = examples.read(new int[]{0}); // the shape and types of one example
        int rows = (int) Math.min(n, Math.max(1, Math.round(config.samplingRate() * n)) * 2L);
        org.nd4j.linalg.api.ndarray.INDArray x = org.nd4j.linalg.factory.Nd4j.rand(data.features().dataType(),
                rows, data.features(2).size(1));
        org.nd4j.linalg.api.ndarray.INDArray y = org.nd4j.linalg.factory.Nd4j.zeros(data.labels().dataType(), rows,
                data.labels().size(1));
        y.getColumn(0).assign(1);
        org.dpdl4j.datasets.LabeledData random = new org.dpdl4j.datasets.LabeledData(x, y, data.channels(), data.height(), data.width());
        org.dpdl4j.dpsgd.DpSgdConfig two = org.dpdl4j.dpsgd.DpSgdConfig.builder().samplingRate(0.5).nonPrivate(true)
                .noiseMultiplier(Math.max(config.noiseMultiplier(), 1)).clipNorm(config.clipNorm()).steps(3)
                .physicalBatchSize(config.physicalBatchSize()).workers(config.workers()).build();
        org.dpdl4j.dpsgd.TrainingResult warm = new org.dpdl4j.dpsgd.DpSgdTrainer().train(org.dpdl4j.dpsgd.Networks.copy(net), random, two);
        double perExample = warm.seconds() / Math.max(1, warm.expectedExamples());
        return perExample * config.samplingRate() * n;
    }

    /** Prints a one-line notice if the JVM is stopped (Ctrl-C, SIGTERM) before {@link #remove()} is called. */
    static final class InterruptNotice {
        private final Thread hook;

        private InterruptNotice(Thread hook) {
            this.hook = hook;
        }

        static InterruptNotice install(String message) {
            Thread hook = new Thread(() -> System.err.println(message), "dpdl4j-interrupt-notice");
            Runtime.getRuntime().addShutdownHook(hook);
            return new InterruptNotice(hook);
        }

        void remove() {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is already shutting down: the notice prints
            }
        }
    }

}
