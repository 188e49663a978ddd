package org.dpdl4j.cli;

import org.dpdl4j.benchmarks.Reporting;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.IntStream;
import me.tongfei.progressbar.ProgressBar;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.datasets.ClientPartition;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.datasets.TrainTest;
import org.dpdl4j.dpsgd.DpSgdTrainer;
import org.dpdl4j.federated.DpHypeClient;
import org.dpdl4j.federated.DpHypeCoordinator;
import org.dpdl4j.federated.DpHypeParameters;
import org.dpdl4j.federated.InProcessTransport;
import org.dpdl4j.federated.Messages.RoundOutcome;
import org.dpdl4j.federated.grpc.GrpcCoordinatorServer;
import org.dpdl4j.federated.grpc.GrpcTransport;
import org.dpdl4j.tuning.Candidate;
import org.dpdl4j.accounting.DpHypeVoting;
import org.dpdl4j.tuning.DpSgdMechanism;
import org.dpdl4j.tuning.HyperparameterSpace;
import org.dpdl4j.release.PrivacyLedger;
import org.dpdl4j.tuning.TuningListener;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tune dp-hype}: Liebenow, Peinemann &amp; Mohammadi's Algorithm 1 (DP-HYPE,
 * arXiv:2510.04902) with n simulated clients, each holding one shard
 * of the training data (iid or Dirichlet), training every candidate locally without privacy and voting
 * for its k best by local validation accuracy, through the secure summation of the {@code federated}
 * module, in this process or over gRPC with one client process each. The release is the winner, the noisy
 * vote sums and the guarantee. With {@code --evaluate}, for research only, every candidate is trained on all
 * the training data without privacy and tested, giving OPT (the best candidate's test accuracy) and
 * RANDGUESS (the mean over candidates) of Sec. VI: that goes to the operator record, labelled non-private
 * (the paper trains these global models with FedAvg, we train them centrally).
 */
@Command(name = "dp-hype", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"DP-HYPE (Liebenow et al. 2025): n clients each train every candidate locally and vote for their k "
                        + "best; the votes are summed securely with discrete Gaussian noise and the winner is released (default "
                        + "epsilon 1)."})
final class DpHypeCommand extends TuningCommand {
    @Option(names = "--clients", paramLabel = "n", defaultValue = "10", description = "dp-hype: clients n, each holding one shard (default ${DEFAULT-VALUE}).")
    int clients;

    @Option(names = "--votes", paramLabel = "k", defaultValue = "5", description = "dp-hype: votes per client k (default ${DEFAULT-VALUE}).")
    int votes;

    @Option(names = "--min-clients", paramLabel = "n_min", description = {"dp-hype: a round completes with at least n_min clients; the noise is sized for n_min, so n - n_min "
                        + "dropouts are tolerated (default n)."})
    Integer minClients;

    @Option(names = "--partition", defaultValue = "iid", description = "dp-hype: iid shards or dirichlet:ALPHA label skew (Liebenow et al. 2025, arXiv:2510.04902, Sec. VI.D) (default ${DEFAULT-VALUE}).")
    String partition;

    @Option(names = "--transport", defaultValue = "in-process", description = {"dp-hype: in-process (client threads) or grpc (coordinator on loopback, one client process each) "
                        + "(default ${DEFAULT-VALUE})."})
    String transport;

    @Option(names = "--coordinator-port", defaultValue = "0", description = "dp-hype, grpc: port of the coordinator (0: any free port).")
    int coordinatorPort;

    @Option(names = "--phase-timeout", paramLabel = "SECONDS", defaultValue = "900", description = {"dp-hype: how long a protocol phase waits for missing clients after its first message (local training "
                        + "happens before) (default ${DEFAULT-VALUE})."})
    double phaseTimeout;

    @Option(names = "--vote-scale", paramLabel = "s", defaultValue = "65536", description = {"dp-hype: a vote is encoded as the integer s; discrete Gaussian noise on that grid (default "
                        + "${DEFAULT-VALUE} = 2^16)."})
    long voteScale;

    @Option(names = "--evaluate", description = {"dp-hype: also train every candidate on all the training data, non-privately, for OPT and RANDGUESS "
                        + "(a research yardstick, written to the operator record only, not covered by epsilon)."})
    boolean evaluate;

    @Option(names = "--no-evaluate", hidden = true, description = "dp-hype: the default; kept for old command lines.")
    boolean noEvaluate;

    @Option(names = "--join", paramLabel = "HOST:PORT", hidden = true, description = "dp-hype: run as a client process of a coordinator.")
    String join;

    @Option(names = "--client-id", hidden = true, defaultValue = "0", description = "dp-hype: this client process's id in [1, n].")
    int clientId;


    @Override
    boolean writesOutput() {
        return join == null && !dryRun;
    }

    @Override
    boolean calibratesItsOwnNoise() {
        return true;
    }

    @Override
    String sparkUnavailable() {
        return "dp-hype's parties each hold their own shard and train where they are (threads or, with --transport grpc, "
                + "processes); only their vote travels, so there are no trials for a Spark cluster to run";
    }

    @Override
    Integer run(HyperparameterSpace space, DpSgdMechanism.Scoring scoring, boolean sigmaAxis) throws Exception {
        this.space = space;
        try {
            return runTuning();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("dp-hype: " + e.getMessage(), e);
        }
    }

    private HyperparameterSpace space;


    private Integer runTuning() throws Exception {
        if (noiseMultiplier != null || candidateEpsilon != null || revealTrialScores || threads != 1) {
            throw new IllegalArgumentException("--tuner dp-hype calibrates its own noise from --target-epsilon: "
                    + "--noise-multiplier, --candidate-epsilon, --reveal-trials and --threads do not apply");
        }
        if (clients < 2) {
            throw new IllegalArgumentException("--clients must be >= 2, got " + clients);
        }
        int minClients = this.minClients == null ? clients : this.minClients;
        if (!transport.equals("in-process") && !transport.equals("grpc")) {
            throw new IllegalArgumentException("--transport must be in-process or grpc, got '" + transport + "'");
        }
        if (!(phaseTimeout > 0)) {
            throw new IllegalArgumentException("--phase-timeout must be > 0 seconds, got " + phaseTimeout);
        }
        List<Candidate> candidates = space.candidates();
        double epsilon = targetEpsilon != null ? targetEpsilon : 1.0;
        DpHypeParameters params;
        try {
            params = DpHypeParameters.calibrate(candidates.size(), votes, clients, minClients, voteScale, epsilon, t.delta);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--votes/--clients/--min-clients/--vote-scale/--target-epsilon: " + e.getMessage());
        }
        if (coordinatorPort < 0 || coordinatorPort > 65535) {
            throw new IllegalArgumentException("--coordinator-port must be in [0, 65535], got " + coordinatorPort);
        }
        Double alpha = dirichletAlpha(); // checks --partition before the data is loaded
        TrainTest data = t.dataset.startsWith("shards:") ? t.loadReadByIndex() : t.load(); // shards: each client's part by index
        dataDigest = data.digest(); // checked on --resume
        long seed = t.seed != null ? t.seed : 2026;
        int[][] parts = alpha == null ? ClientPartition.iid(data.trainExamples().size(), clients, seed)
                : ClientPartition.dirichlet(org.dpdl4j.datasets.Splits.classIndices(data.trainExamples()), clients, alpha, seed);
        if (join != null) {
            return client(params, data, parts, seed);
        }

        PrivacyAccountant acc = DpHypeVoting.accountant();
        PrivacyGuarantee guarantee = acc.guarantee(params.event(), t.delta);
        System.out.printf("dpdl4j %s | DP-HYPE on %s: n = %d clients (%s, rounds need >= %d), p = %d candidates %s, k = %d votes%n",
                Cli.version(), t.dataset, clients, partition, minClients, candidates.size(), space, votes);
        System.out.printf("noise: each client N_Z(0, %.2f^2) on votes encoded as %d (summed noise %.4f votes; continuous Thm IV.1 "
                + "would need %.4f) -> epsilon %.4f at delta %s; transport %s%n", params.localSigma(), params.scale(),
                params.summedNoiseInVotes(), DpHypeVoting.noiseMultiplier(votes, epsilon, t.delta), guarantee.epsilon(),
                t.delta, transport);
        if (dryRun) {
            System.out.println("dry run: nothing was trained or charged");
            return 0;
        }
        Path out = t.outputDirectory("tune");
        try (PrivacyLedger ledger = openLedger()) { // on --resume the vote is taken again under the same charge: an
            // interrupted vote revealed nothing (the coordinator learns only a completed round's sum)
            chargeOnce(ledger, "dp-hype vote: n=" + clients + " k=" + votes + " p=" + candidates.size(), params::event, out);
        }
        Files.createDirectories(TuningOutput.operatorDirectory(out));
        DpHypeCoordinator coordinator = new DpHypeCoordinator(params, IntStream.rangeClosed(1, clients).boxed().toList(),
                Duration.ofMillis((long) (phaseTimeout * 1000)), 3);
        long start = System.nanoTime();
        DpHypeCoordinator.Result result;
        if (transport.equals("grpc")) {
            result = overGrpc(coordinator, TuningOutput.operatorDirectory(out));
        } else {
            result = inProcess(coordinator, params, data, parts, seed);
        }
        double voteSeconds = (System.nanoTime() - start) / 1e9;
        Candidate winner = candidates.get(result.winner());
        System.out.printf("winner: %s with %.2f noisy votes%n", winner, result.votes()[result.winner()]);
        System.out.printf("[operator] %d participants, %d round(s), %.1f s%n", result.participants().size(), result.rounds(),
                voteSeconds);

        TuningReports.DpHype report = new TuningReports.DpHype("dp-hype", winner.toMap(), result.winner(), result.votes(),
                guarantee.epsilon(), t.delta, guarantee.order(), clients, minClients, votes, candidates.size(), partition, transport,
                params.localSigma(), params.scale(), params.summedNoiseInVotes(),
                provenance(space, data.trainExamples().size(), null, params.event()));
        Map<String, Object> operator = new LinkedHashMap<>();
        operator.put("participants", result.participants());
        operator.put("rounds", result.rounds());
        operator.put("vote_seconds", voteSeconds);
        if (evaluate) {
            double[] accuracy = evaluate(candidates, data, seed);
            double opt = java.util.Arrays.stream(accuracy).max().orElse(Double.NaN);
            double randGuess = java.util.Arrays.stream(accuracy).average().orElse(Double.NaN);
            Map<String, Object> evaluation = new LinkedHashMap<>();
            evaluation.put("non_private", "every candidate trained WITHOUT privacy on all the training data: research only, "
                    + "not covered by epsilon_total");
            evaluation.put("winner_test_accuracy", accuracy[result.winner()]);
            evaluation.put("opt_accuracy", opt);
            evaluation.put("randguess_accuracy", randGuess);
            evaluation.put("candidate_test_accuracies", accuracy);
            operator.put("evaluation", evaluation);
            System.out.printf("[operator] NON-PRIVATE evaluation (each candidate trained without privacy on all training data, "
                    + "research only): DP-HYPE %.4f | OPT %.4f | RANDGUESS %.4f%n", accuracy[result.winner()], opt, randGuess);
        }
        release(out, null, report, null, operator, params.event());
        System.out.printf("epsilon at delta %s: %.4f (client level, remove-then-add; RDP order %s)%n", t.delta,
                guarantee.epsilon(), guarantee.order());
        printEnd(out, List.of(), false, false, report);
        return 0;
    }

    /** null for iid shards, else the Dirichlet concentration α of --partition dirichlet:α. */
    private Double dirichletAlpha() {
        if (partition.equals("iid")) {
            return null;
        }
        try {
            if (partition.startsWith("dirichlet:")) {
                double alpha = Double.parseDouble(partition.substring("dirichlet:".length()));
                if (alpha > 0 && Double.isFinite(alpha)) {
                    return alpha;
                }
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--partition must be iid or dirichlet:ALPHA with ALPHA finite and > 0, got '"
                + partition + "'");
    }

    /** The non-private local trainer: each candidate on the given data, scored on a 10% local split. */
    private DpSgdMechanism localMechanism(TrainTest data, ExampleSource shard, long seed, int workers) {
        TrainTest local = (shard instanceof LabeledData inMemory ? new TrainTest(t.dataset, inMemory, data.test())
                : new TrainTest(t.dataset, null, data.test(), null, shard)).withPublicTest(data.publicTest());
        return mechanism(local, DpSgdMechanism.Scoring.PUBLIC_HOLDOUT).noiseMultiplier(0).nonPrivate(true)
                .validation(validationFraction, seed).workers(workers).build();
    }

    /** Client i's examples: its part of the training data (read by index from shards). */
    private static ExampleSource clientData(TrainTest data, int[] part) {
        return data.train() != null ? data.train().rows(part) : data.trainSource().subset(part);
    }

    /** Client i's loss per candidate: 1 − local validation accuracy (the paper votes for the k most accurate). */
    private double[] localLosses(TrainTest data, ExampleSource shard, long seed, int workers, ProgressBar bar) {
        DpSgdMechanism m = localMechanism(data, shard, seed, workers);
        List<Candidate> candidates = space.candidates();
        double[] losses = new double[candidates.size()];
        for (int j = 0; j < losses.length; j++) {
            losses[j] = 1 - m.run(candidates.get(j), seed + j, TuningListener.NONE, j).score();
            if (bar != null) {
                bar.step();
            }
        }
        return losses;
    }

    private Random noise(int client, long seed) {
        return t.seed != null && !t.secureNoise ? new Random(seed * 1_000_003L + client) : new SecureRandom();
    }

    private Integer client(DpHypeParameters params, TrainTest data, int[][] parts, long seed) {
        if (clientId < 1 || clientId > clients) {
            throw new IllegalArgumentException("--client-id must be in [1, " + clients + "], got " + clientId);
        }
        String[] hostPort = join.split(":");
        if (hostPort.length != 2) {
            throw new IllegalArgumentException("--join must be HOST:PORT, got '" + join + "'");
        }
        ExampleSource shard = clientData(data, parts[clientId - 1]);
        long t0 = System.nanoTime();
        Reporting.configureWorkers(1);
        double[] losses = localLosses(data, shard, seed + clientId, 1, null);
        System.out.printf("client %d: %d examples, local losses %s (%.1f s)%n", clientId, shard.size(),
                java.util.Arrays.toString(losses), (System.nanoTime() - t0) / 1e9);
        try (GrpcTransport transport = new GrpcTransport(hostPort[0], Integer.parseInt(hostPort[1]),
                Duration.ofMillis((long) (phaseTimeout * 2000) + 60_000))) {
            RoundOutcome o = new DpHypeClient(clientId, params, transport, noise(clientId, seed)).vote(losses);
            System.out.printf("client %d: round %d done, winner %d%n", clientId, o.round(), o.winner());
        }
        return 0;
    }

    private DpHypeCoordinator.Result inProcess(DpHypeCoordinator coordinator, DpHypeParameters params, TrainTest data,
                                               int[][] parts, long seed) throws Exception {
        List<double[]> losses = new ArrayList<>();
        int workers = Reporting.configureWorkers(null);
        try (ProgressBar bar = bar("local training", (long) clients * space.candidates().size())) {
            for (int i = 1; i <= clients; i++) {
                losses.add(localLosses(data, clientData(data, parts[i - 1]), seed + i, workers, bar));
            }
        }
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            for (int i = 1; i <= clients; i++) {
                int id = i;
                pool.submit(() -> new DpHypeClient(id, params, new InProcessTransport(coordinator), noise(id, seed)).vote(losses.get(id - 1)));
            }
            return coordinator.awaitResult(Duration.ofMillis((long) (phaseTimeout * 4000)));
        } finally {
            pool.shutdownNow();
        }
    }

    /** Serves the coordinator on loopback and starts one client process per client (the same command, with --join). */
    private DpHypeCoordinator.Result overGrpc(DpHypeCoordinator coordinator, Path out) throws Exception {
        try (GrpcCoordinatorServer server = GrpcCoordinatorServer.start(coordinator, new InetSocketAddress("127.0.0.1", coordinatorPort))) {
            List<String> original = spec.commandLine().getParseResult().originalArgs(); // from "tune" on
            String javaBinary = ProcessHandle.current().info().command().orElse("java");
            List<Process> processes = new ArrayList<>();
            for (int i = 1; i <= clients; i++) {
                List<String> cmd = new ArrayList<>(List.of(javaBinary));
                cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
                cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
                cmd.addAll(original);
                cmd.addAll(List.of("--join", "127.0.0.1:" + server.port(), "--client-id", Integer.toString(i)));
                if (!original.contains("--no-progress")) {
                    cmd.add("--no-progress");
                }
                ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.resolve("client-" + i + ".log").toFile());
                pb.environment().put("OMP_NUM_THREADS", "1");
                processes.add(pb.start());
            }
            System.out.printf("coordinator on 127.0.0.1:%d; %d client processes started (logs in %s)%n", server.port(), clients, out);
            try {
                long end = System.nanoTime() + (long) (phaseTimeout * 4e9);
                while (true) {
                    try {
                        return coordinator.awaitResult(Duration.ofSeconds(2));
                    } catch (org.dpdl4j.federated.ProtocolException e) {
                        if (e.reason() != org.dpdl4j.federated.ProtocolException.Reason.TRANSPORT || System.nanoTime() > end) {
                            throw e;
                        }
                    }
                    long failed = processes.stream().filter(p -> !p.isAlive() && p.exitValue() != 0).count();
                    if (failed > clients - coordinator.parameters().minClients()) {
                        throw new org.dpdl4j.federated.ProtocolException(org.dpdl4j.federated.ProtocolException.Reason.SESSION_FAILED,
                                failed + " client processes failed, more than the n - n_min = "
                                + (clients - coordinator.parameters().minClients()) + " dropouts the noise allows; see "
                                + out.resolve("client-*.log"));
                    }
                }
            } finally {
                for (int i = 0; i < processes.size(); i++) {
                    Process p = processes.get(i);
                    if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                    }
                    if (p.exitValue() != 0) {
                        System.err.printf("client %d exited with status %d (see client-%d.log)%n", i + 1, p.exitValue(), i + 1);
                    }
                }
            }
        }
    }

    /** Test accuracy of every candidate trained (non-privately) on all the training data. */
    private double[] evaluate(List<Candidate> candidates, TrainTest data, long seed) {
        DpSgdMechanism m = localMechanism(data, data.trainExamples(), seed, Reporting.configureWorkers(null));
        double[] accuracy = new double[candidates.size()];
        try (ProgressBar bar = bar("OPT/RANDGUESS evaluation", candidates.size())) {
            for (int j = 0; j < accuracy.length; j++) {
                accuracy[j] = DpSgdTrainer.accuracy(m.train(candidates.get(j), data.trainExamples(), seed + j, null, info -> { }).network(),
                        data.test());
                if (bar != null) {
                    bar.step();
                }
            }
        }
        return accuracy;
    }

    private ProgressBar bar(String task, long max) {
        return Reporting.progressBar(task, max, t.noProgress);
    }
}
