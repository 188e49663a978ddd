package org.dpdl4j.benchmarks.jmh;

import java.util.concurrent.TimeUnit;
import org.dpdl4j.accounting.NoiseCalibration;
import org.dpdl4j.accounting.PldAccountant;
import org.dpdl4j.accounting.PrivacyGuarantee;
import org.dpdl4j.accounting.RdpAccountant;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One accountant call: (ε, δ) of 10,000 DP-SGD steps (q = 256/60000, σ = 1.1) by RDP on the 156-order grid and by
 * PLD at Δ = 10⁻⁴, and one σ calibration by each.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class AccountantBenchmark {
    private final RdpAccountant accountant = RdpAccountant.standard();
    private final PldAccountant pld = PldAccountant.standard();

    /**
     * The RDP accountant's guarantee at δ = 10⁻⁵ for 10,000 DP-SGD steps (q = 256/60000, σ = 1.1).
     *
     * @return the (ε, δ) guarantee, returned so that JMH does not eliminate the call
     */
    @Benchmark
    public PrivacyGuarantee dpSgdTenThousandSteps() {
        return accountant.guarantee(NoiseCalibration.dpSgd(256.0 / 60000, 1.1, 10_000), 1e-5);
    }

    /**
     * Calibrates σ by RDP so that 10,000 steps at q = 256/60000 meet ε = 3 at δ = 10⁻⁵ (tolerance 10⁻⁶).
     *
     * @return the calibrated noise multiplier σ
     */
    @Benchmark
    public double calibrateSigma() {
        return NoiseCalibration.noiseMultiplier(256.0 / 60000, 10_000, 3.0, 1e-5, accountant, 1e-6);
    }

    /**
     * The PLD accountant's guarantee at δ = 10⁻⁵ for 10,000 DP-SGD steps (q = 256/60000, σ = 1.1).
     *
     * @return the (ε, δ) guarantee, returned so that JMH does not eliminate the call
     */
    @Benchmark
    public PrivacyGuarantee pldDpSgdTenThousandSteps() {
        return pld.guarantee(NoiseCalibration.dpSgd(256.0 / 60000, 1.1, 10_000), 1e-5);
    }

    /**
     * Calibrates σ by PLD so that 10,000 steps at q = 256/60000 meet ε = 3 at δ = 10⁻⁵ (tolerance 10⁻⁶).
     *
     * @return the calibrated noise multiplier σ
     */
    @Benchmark
    public double pldCalibrateSigma() {
        return NoiseCalibration.noiseMultiplier(256.0 / 60000, 10_000, 3.0, 1e-5, pld, 1e-6);
    }
}
