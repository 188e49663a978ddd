package org.dpdl4j.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.dpdl4j.accounting.AdaptiveRepeatAndSelectEvent;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.accounting.PrivacyAccountant;
import org.dpdl4j.accounting.RepeatAndSelectEvent;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.SelfComposedEvent;
import org.dpdl4j.accounting.SubsampledTuningEvent;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code dpdl4j account}: what a mechanism costs, without training anything. */
@Command(name = "account", mixinStandardHelpOptions = true,
        description = "Privacy accounting (RDP accountant on dp_accounting's default order grid; dpsgd and calibrate also take --accountant pld).",
        subcommands = {AccountCommand.DpSgd.class, AccountCommand.Calibrate.class, AccountCommand.Tuning.class,
                AccountCommand.SubsampledTuning.class,
                AccountCommand.DpHype.class})
final class AccountCommand {

    /** Options every accounting command takes, and how it reports. */
    static final class Report {
        @Option(names = "--delta", paramLabel = "δ", defaultValue = "1e-5", description = "Target delta in (0, 1) (default ${DEFAULT-VALUE}).")
        double delta;

        @Option(names = "--json", description = "Print one JSON object as the last line.")
        boolean json;

        /** @throws IllegalArgumentException naming --delta when it is outside (0, 1) */
        void check() {
            if (!(delta > 0 && delta < 1)) {
                throw new IllegalArgumentException("--delta must be in (0, 1), got " + delta);
            }
        }

        /** The DP-SGD schedule every accounting command reports: q, σ and T. */
        static Map<String, Object> schedule(double samplingRate, double sigma, long steps) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("sampling_rate", samplingRate);
            m.put("noise_multiplier", sigma);
            m.put("steps", steps);
            return m;
        }

        /** Prints the human line, a warning if any, and the JSON line when asked. */
        void print(String line, PrivacyGuarantee g, Map<String, Object> extra) {
            System.out.println(line);
            if (!g.warning().isEmpty()) {
                System.out.println("warning: " + g.warning());
            }
            if (json) {
                Map<String, Object> j = new LinkedHashMap<>(extra);
                j.put("epsilon", g.epsilon());
                j.put("delta", delta);
                j.put("order", Double.isNaN(g.order()) ? null : g.order());
                j.put("accountant", g.accountant());
                j.put("warning", g.warning());
                Cli.printJsonLine(System.out, j);
            }
        }
    }

    /** {@code --accountant}: which registered accountant bounds one DP-SGD run. */
    static final class AccountantOption {
        @Option(names = "--accountant", paramLabel = "NAME", description = {
                "rdp (Renyi DP, dp_accounting's 156 orders) or pld (privacy loss distribution, value discretisation 1e-4: "
                        + "tighter; Doroshenko et al. 2022, arXiv:2207.04380) (default: pld for train and audit train, the tighter for one run; "
                        + "rdp for account)."})
        String name;

        /** The accountant's name: --accountant, else {@code rdp} (train and audit train set pld first). */
        String name() {
            return name != null ? name : "rdp";
        }

        PrivacyAccountant accountant() {
            if (!Accountants.names().contains(name())) {
                throw new IllegalArgumentException("--accountant must be one of " + String.join(", ", Accountants.names()) + ", got '"
                        + name + "'");
            }
            return Accountants.byName(name());
        }

        /** How the conversion is described in the human line: the RDP order, or the PLD's grid. */
        static String how(PrivacyGuarantee g) {
            return Double.isNaN(g.order()) ? g.accountant().toUpperCase(java.util.Locale.ROOT) : "RDP order " + g.order();
        }
    }

    /** The options of a search over DP-SGD runs: schedule, report, σ and the distribution of K. */
    static final class SearchOptions {
        @ArgGroup(exclusive = true, multiplicity = "1")
        ScheduleOptions schedule;

        @Mixin
        Report report;

        @Option(names = "--noise-multiplier", paramLabel = "σ", required = true, description = "Noise multiplier sigma of every run.")
        double sigma;

        @Option(names = "--repetitions", required = true, paramLabel = "SPEC", description = "Distribution of K: " + RepetitionSpec.FORMS + ".")
        String repetitions;

        @Option(names = "--max-repetitions", paramLabel = "m", description = "Truncate K at m runs (Papernot & Steinke 2022, arXiv:2110.03620, Lemma 22).")
        Long maxRepetitions;

        RepetitionDistribution repetitions() {
            return RepetitionSpec.parse(repetitions, maxRepetitions);
        }
    }

    /** {@code account dpsgd}: ε of DP-SGD. */
    @Command(name = "dpsgd", mixinStandardHelpOptions = true,
            description = "(epsilon, delta) of DP-SGD: T steps of the Poisson-subsampled Gaussian mechanism (q, sigma).")
    static final class DpSgd implements Callable<Integer> {
        @ArgGroup(exclusive = true, multiplicity = "1")
        ScheduleOptions schedule;

        @Mixin
        Report report;

        @Option(names = "--noise-multiplier", paramLabel = "σ", required = true, description = "Noise multiplier sigma >= 0.")
        double sigma;

        @Mixin
        AccountantOption accountant;

        @Override
        public Integer call() {
            report.check();
            TrainingOptions.checkNoiseMultiplier(sigma);
            double[] qt = schedule.resolve();
            long steps = (long) qt[1];
            PrivacyGuarantee g = accountant.accountant().guarantee(NoiseCalibration.dpSgd(qt[0], sigma, steps), report.delta);
            Map<String, Object> extra = Report.schedule(qt[0], sigma, steps);
            report.print(String.format("DP-SGD  q=%s  sigma=%s  T=%d  ->  epsilon = %.6g at delta = %s (%s)",
                    qt[0], sigma, steps, g.epsilon(), report.delta, AccountantOption.how(g)), g, extra);
            return 0;
        }
    }

    /** {@code account tuning}: ε of Papernot–Steinke random search over whole DP-SGD runs. */
    @Command(name = "tuning", mixinStandardHelpOptions = true,
            description = {"(epsilon, delta) of random search that runs DP-SGD K times, K random (Papernot & Steinke 2022, "
                        + "arXiv:2110.03620, Theorems 2 and 6), and releases only the best run; with --density-bounds c:C, of "
                        + "DP-HyPO's adaptive search (Wang et al. 2023, arXiv:2306.05734, Theorem 1).",
                "Also prints one run's epsilon and naive composition over E[K] runs."})
    static final class Tuning implements Callable<Integer> {
        @Mixin
        SearchOptions search;

        @Mixin
        DensityBoundsOption density;

        @Override
        public Integer call() {
            double[] qt = search.schedule.resolve();
            long steps = (long) qt[1];
            RepetitionDistribution k = search.repetitions();
            double[] bounds = density.bounds(null);
            PrivacyAccountant acc = Accountants.standard();
            var base = NoiseCalibration.dpSgd(qt[0], search.sigma, steps);
            PrivacyGuarantee single = acc.guarantee(base, search.report.delta);
            PrivacyGuarantee naive = acc.guarantee(new SelfComposedEvent(base, (long) Math.ceil(k.mean())), search.report.delta);
            PrivacyGuarantee random = acc.guarantee(new RepeatAndSelectEvent(base, k), search.report.delta);
            PrivacyGuarantee g = bounds == null ? random
                    : acc.guarantee(new AdaptiveRepeatAndSelectEvent(base, k, bounds[0], bounds[1]), search.report.delta);
            Map<String, Object> extra = Report.schedule(qt[0], search.sigma, steps);
            extra.put("repetitions", search.repetitions);
            extra.put("distribution", k.describe());
            extra.put("expected_runs", k.mean());
            extra.put("epsilon_single_run", single.epsilon());
            extra.put("epsilon_naive_composition", naive.epsilon());
            if (bounds != null) {
                extra.put("density_bounds", java.util.List.of(bounds[0], bounds[1]));
                extra.put("epsilon_random_search", random.epsilon());
                extra.put("adaptivity_cost", g.epsilon() - random.epsilon());
            }
            search.report.print(String.format("%s with K ~ %s (E[K] = %.4g): epsilon = %.6g at delta = %s (RDP order %s); "
                            + "one run %.6g; naive composition over %d runs %.6g%s",
                    bounds == null ? "random search" : "DP-HyPO (densities in [" + bounds[0] + ", " + bounds[1] + "] x prior, Wang et al. 2023, arXiv:2306.05734)",
                    k.describe(), k.mean(), g.epsilon(), search.report.delta, g.order(), single.epsilon(),
                    (long) Math.ceil(k.mean()), naive.epsilon(),
                    bounds == null ? "" : String.format("; random search %.6g (adaptivity costs %.6g)", random.epsilon(),
                            g.epsilon() - random.epsilon())), g, extra);
            return 0;
        }
    }

    /** {@code account subsampled-tuning}: ε of tuning on a Poisson subset plus the final run (Koskela &amp; Kulkarni 2023, arXiv:2301.11989). */
    @Command(name = "subsampled-tuning", mixinStandardHelpOptions = true,
            description = {"(epsilon, delta) of random search (Poisson K) on a Poisson subset X1 of rate q_tune, plus the final "
                        + "DP-SGD run on X \\ X1 (variant 1, Koskela & Kulkarni 2023, arXiv:2301.11989, Theorem 6) or on X "
                        + "(variant 2, Theorem 4 + composition); the same search on all the data followed by nothing else "
                        + "(Papernot & Steinke 2022, arXiv:2110.03620) is the baseline."})
    static final class SubsampledTuning implements Callable<Integer> {
        @Mixin
        SearchOptions search;

        @Mixin
        SubsampleOptions subsample;

        @Override
        public Integer call() {
            double tuneFraction = subsample.tuneFraction(true); // as tune: something is tuned and something trained
            SubsampledTuningEvent.Variant v = subsample.variant();
            double[] qt = search.schedule.resolve();
            long steps = (long) qt[1];
            RepetitionDistribution k = search.repetitions();
            PrivacyAccountant acc = Accountants.standard();
            var run = NoiseCalibration.dpSgd(qt[0], search.sigma, steps);
            var randomSearch = new RepeatAndSelectEvent(run, k);
            PrivacyGuarantee g = acc.guarantee(new SubsampledTuningEvent(randomSearch, run, tuneFraction, v), search.report.delta);
            PrivacyGuarantee baseline = acc.guarantee(randomSearch, search.report.delta);
            PrivacyGuarantee single = acc.guarantee(run, search.report.delta);
            Map<String, Object> extra = Report.schedule(qt[0], search.sigma, steps);
            extra.put("repetitions", search.repetitions);
            extra.put("distribution", k.describe());
            extra.put("tune_fraction", tuneFraction);
            extra.put("variant", v.number());
            extra.put("baseline_epsilon", baseline.epsilon());
            extra.put("epsilon_single_run", single.epsilon());
            search.report.print(String.format("variant %d, q_tune = %s, K ~ %s: epsilon = %.6g at delta = %s (RDP order %s); "
                            + "baseline (same search on all data, Papernot & Steinke 2022, arXiv:2110.03620) %.6g; one run %.6g",
                    v.number(), tuneFraction, k.describe(), g.epsilon(), search.report.delta, g.order(), baseline.epsilon(),
                    single.epsilon()), g, extra);
            return 0;
        }
    }

    /** {@code account dp-hype}: σ of DP-HYPE's noisy vote for a target (ε, δ). */
    @Command(name = "dp-hype", mixinStandardHelpOptions = true,
            description = {"Noise sigma of DP-HYPE's vote (Liebenow et al. 2025, arXiv:2510.04902): clients vote for their k "
                        + "best candidates and add N(0, sigma^2/n); the sum is (alpha, alpha k / sigma^2)-RDP (Theorem IV.1), "
                        + "converted by Theorem II.1."})
    static final class DpHype implements Callable<Integer> {
        @Mixin
        Report report;

        @Option(names = "--votes", paramLabel = "k", defaultValue = "5", description = "Votes per client k >= 1 (default ${DEFAULT-VALUE}).")
        int votes;

        @Option(names = "--target-epsilon", paramLabel = "ε", required = true, description = "Target epsilon > 0.")
        double targetEpsilon;

        @Override
        public Integer call() {
            if (votes < 1) {
                throw new IllegalArgumentException("--votes must be >= 1, got " + votes);
            }
            double sigma = org.dpdl4j.accounting.DpHypeVoting.noiseMultiplier(votes, targetEpsilon, report.delta);
            PrivacyGuarantee g = org.dpdl4j.accounting.DpHypeVoting.accountant().guarantee(org.dpdl4j.accounting.DpHypeVoting.event(votes, sigma),
                    report.delta);
            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put("votes", votes);
            extra.put("noise_multiplier", sigma);
            report.print(String.format("DP-HYPE  k=%d  target epsilon %s at delta %s  ->  sigma = %.4f (epsilon %.6g, RDP order %s)",
                    votes, targetEpsilon, report.delta, sigma, g.epsilon(), g.order()), g, extra);
            return 0;
        }
    }

    /** {@code account calibrate}: the smallest σ for a target ε. */
    @Command(name = "calibrate", mixinStandardHelpOptions = true,
            description = "Smallest noise multiplier sigma such that DP-SGD with (q, T) is (epsilon, delta)-DP.")
    static final class Calibrate implements Callable<Integer> {
        @ArgGroup(exclusive = true, multiplicity = "1")
        ScheduleOptions schedule;

        @Mixin
        Report report;

        @Option(names = "--target-epsilon", paramLabel = "ε", required = true, description = "Target epsilon > 0.")
        double targetEpsilon;

        @Option(names = "--tolerance", defaultValue = "1e-6", description = "Absolute tolerance on sigma (default ${DEFAULT-VALUE}); the result is rounded up.")
        double tolerance;

        @Mixin
        AccountantOption accountant;

        @Override
        public Integer call() {
            report.check();
            if (!(targetEpsilon > 0) || Double.isInfinite(targetEpsilon)) {
                throw new IllegalArgumentException("--target-epsilon must be finite and > 0, got " + targetEpsilon);
            }
            if (!(tolerance > 0) || Double.isInfinite(tolerance)) {
                throw new IllegalArgumentException("--tolerance must be finite and > 0, got " + tolerance);
            }
            double[] qt = schedule.resolve();
            long steps = (long) qt[1];
            PrivacyAccountant acc = accountant.accountant();
            double sigma = NoiseCalibration.noiseMultiplier(qt[0], steps, targetEpsilon, report.delta, acc, tolerance);
            PrivacyGuarantee g = acc.guarantee(NoiseCalibration.dpSgd(qt[0], sigma, steps), report.delta);
            Map<String, Object> extra = Report.schedule(qt[0], sigma, steps);
            report.print(String.format("DP-SGD  q=%s  T=%d  target epsilon %s at delta %s  ->  sigma = %.6f (epsilon %.6g, %s)",
                    qt[0], steps, targetEpsilon, report.delta, sigma, g.epsilon(), AccountantOption.how(g)), g, extra);
            return 0;
        }
    }
}
