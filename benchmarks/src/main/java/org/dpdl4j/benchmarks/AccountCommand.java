package org.dpdl4j.benchmarks;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.RdpAccountant;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code dpdl4j account}: what a mechanism costs, without training anything. */
@Command(name = "account", mixinStandardHelpOptions = true,
        description = "Privacy accounting (RDP accountant, dp_accounting's default order grid).",
        subcommands = {AccountCommand.DpSgd.class, AccountCommand.Calibrate.class})
final class AccountCommand {

    /** {@code account dpsgd}: ε of DP-SGD. */
    @Command(name = "dpsgd", mixinStandardHelpOptions = true,
            description = "(epsilon, delta) of DP-SGD: T steps of the Poisson-subsampled Gaussian mechanism (q, sigma).")
    static final class DpSgd implements Callable<Integer> {
        @Mixin
        ScheduleOptions schedule;

        @Option(names = "--noise-multiplier", paramLabel = "σ", required = true, description = "Noise multiplier sigma >= 0.")
        double sigma;

        @Option(names = "--delta", paramLabel = "δ", defaultValue = "1e-5", description = "Target delta in (0, 1) (default ${DEFAULT-VALUE}).")
        double delta;

        @Option(names = "--json", description = "Print one JSON object as the last line.")
        boolean json;

        @Override
        public Integer call() {
            double[] qt = schedule.resolve();
            long steps = (long) qt[1];
            PrivacyEvent event = NoiseCalibration.dpSgd(qt[0], sigma, steps);
            PrivacyGuarantee g = RdpAccountant.standard().guarantee(event, delta);
            System.out.printf("DP-SGD  q=%s  sigma=%s  T=%d  ->  epsilon = %.6g at delta = %s (RDP order %s)%n",
                    qt[0], sigma, steps, g.epsilon(), delta, g.order());
            if (!g.warning().isEmpty()) {
                System.out.println("warning: " + g.warning());
            }
            if (json) {
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("epsilon", g.epsilon());
                out.put("delta", delta);
                out.put("order", g.order());
                out.put("sampling_rate", qt[0]);
                out.put("noise_multiplier", sigma);
                out.put("steps", steps);
                out.put("accountant", "rdp");
                out.put("warning", g.warning());
                Cli.printJsonLine(System.out, out);
            }
            return 0;
        }
    }

    /** {@code account calibrate}: the smallest σ for a target ε. */
    @Command(name = "calibrate", mixinStandardHelpOptions = true,
            description = "Smallest noise multiplier sigma such that DP-SGD with (q, T) is (epsilon, delta)-DP.")
    static final class Calibrate implements Callable<Integer> {
        @Mixin
        ScheduleOptions schedule;

        @Option(names = "--target-epsilon", paramLabel = "ε", required = true, description = "Target epsilon > 0.")
        double targetEpsilon;

        @Option(names = "--delta", paramLabel = "δ", defaultValue = "1e-5", description = "Target delta in (0, 1) (default ${DEFAULT-VALUE}).")
        double delta;

        @Option(names = "--tolerance", defaultValue = "1e-6", description = "Absolute tolerance on sigma (default ${DEFAULT-VALUE}); the result is rounded up.")
        double tolerance;

        @Option(names = "--json", description = "Print one JSON object as the last line.")
        boolean json;

        @Override
        public Integer call() {
            double[] qt = schedule.resolve();
            long steps = (long) qt[1];
            RdpAccountant acc = RdpAccountant.standard();
            double sigma = NoiseCalibration.noiseMultiplier(qt[0], steps, targetEpsilon, delta, acc, tolerance);
            PrivacyGuarantee g = acc.guarantee(NoiseCalibration.dpSgd(qt[0], sigma, steps), delta);
            System.out.printf("DP-SGD  q=%s  T=%d  target epsilon %s at delta %s  ->  sigma = %.6f (epsilon %.6g, RDP order %s)%n",
                    qt[0], steps, targetEpsilon, delta, sigma, g.epsilon(), g.order());
            if (json) {
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("noise_multiplier", sigma);
                out.put("epsilon", g.epsilon());
                out.put("delta", delta);
                out.put("order", g.order());
                out.put("sampling_rate", qt[0]);
                out.put("steps", steps);
                Cli.printJsonLine(System.out, out);
            }
            return 0;
        }
    }
}
