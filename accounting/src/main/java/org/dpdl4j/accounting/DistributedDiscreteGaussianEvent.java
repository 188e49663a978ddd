package org.dpdl4j.accounting;

import java.util.Map;

/**
 * The distributed discrete Gaussian: each of n parties adds independent N_Z(0, σ²)^d noise to an
 * integer vector, and only the sum is revealed (secure summation), so the sum carries the sum of
 * n discrete Gaussians, which is close to, but not exactly, a discrete Gaussian of variance nσ²
 * (Kairouz, Liu &amp; Steinke, "The Distributed Discrete Gaussian Mechanism for Federated Learning
 * with Secure Aggregation", ICML 2021, Proposition 14 / eq. (17)).
 *
 * <p>The accountant bounds ε(α) by
 * min{ α/2·l₂² + τd, α/2·(l₂² + 2l₁τ + τ²d), α/2·(l₂ + τ√d)² } with l₂ = Δ₂/(√n σ),
 * l₁ = Δ₁/(√n σ) and τ = 10·Σ_{k=1}^{n−1} exp(−2π²σ²·k/(k+1)). When the number of parties whose
 * noise is in the sum is only known to lie in [n_min, n_max], l₂ and l₁ use n_min and τ uses n_max:
 * every term grows with l₂, l₁ and τ, so this bounds every n in the range.
 *
 * @param l2Sensitivity Δ₂ &gt; 0: the largest L2 change of the summed integer vector between neighbours
 * @param l1Sensitivity Δ₁ ≥ Δ₂: the largest L1 change
 * @param localSigma    σ ≥ 1/2 of each party's discrete Gaussian, in units of the integer grid
 * @param minClients    n_min ≥ 1: the fewest parties whose noise can be in a revealed sum
 * @param maxClients    n_max ≥ n_min: the most
 * @param dimension     d ≥ 1: the vector length
 */
public record DistributedDiscreteGaussianEvent(double l2Sensitivity, double l1Sensitivity, double localSigma,
                                               int minClients, int maxClients, int dimension) implements PrivacyEvent {
    /**
     * Creates the event after checking its parameters.
     *
     * @param l2Sensitivity Δ₂, the largest L2 change of the summed integer vector between neighbours, in grid units:
     *                      finite and &gt; 0
     * @param l1Sensitivity Δ₁, the largest L1 change, in grid units: finite and ≥ Δ₂
     * @param localSigma    σ, the standard deviation parameter of each party's discrete Gaussian, in grid units:
     *                      finite and ≥ 1/2
     * @param minClients    n_min, the fewest parties whose noise can be in a revealed sum: ≥ 1
     * @param maxClients    n_max, the most parties: ≥ n_min
     * @param dimension     d, the vector length: ≥ 1
     * @throws IllegalArgumentException on a parameter outside the ranges above
     */
    public DistributedDiscreteGaussianEvent {
        Checks.finitePositive("l2Sensitivity", l2Sensitivity);
        Checks.finitePositive("l1Sensitivity", l1Sensitivity);
        if (l1Sensitivity < l2Sensitivity) {
            throw new IllegalArgumentException("l1Sensitivity must be >= l2Sensitivity (" + l2Sensitivity + "), got " + l1Sensitivity);
        }
        Checks.finitePositive("local noise sigma_c", localSigma);
        if (localSigma < 0.5) {
            throw new IllegalArgumentException("localSigma must be >= 1/2 (Kairouz et al. 2021), got " + localSigma);
        }
        if (minClients < 1 || maxClients < minClients) {
            throw new IllegalArgumentException("clients must satisfy 1 <= minClients <= maxClients, got " + minClients + " and " + maxClients);
        }
        if (dimension < 1) {
            throw new IllegalArgumentException("dimension must be >= 1, got " + dimension);
        }
    }

    /**
     * τ = 10·Σ_{k=1}^{n_max−1} exp(−2π²σ²·k/(k+1)) (Kairouz et al. 2021, Theorem 1), the term by which the sum of
     * n_max discrete Gaussians may differ from one discrete Gaussian.
     *
     * @return τ ≥ 0 (0 when n_max = 1)
     */
    public double tau() {
        double sum = 0;
        for (int k = 1; k < maxClients; k++) {
            sum += Math.exp(-2 * Math.PI * Math.PI * localSigma * localSigma * k / (k + 1.0));
        }
        return 10 * sum;
    }

    @Override
    public Map<String, Object> toMap() {
        return PrivacyEvents.ordered("type", "distributed_discrete_gaussian", "l2_sensitivity", l2Sensitivity, "l1_sensitivity", l1Sensitivity,
                "local_sigma", localSigma, "min_clients", minClients, "max_clients", maxClients, "dimension", dimension);
    }
}
