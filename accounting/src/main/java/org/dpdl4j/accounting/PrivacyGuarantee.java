package org.dpdl4j.accounting;

/**
 * An (ε, δ)-DP guarantee, with the RDP order at which the conversion was tightest.
 *
 * @param epsilon        ε ≥ 0 (may be +∞ when no order gives a finite bound)
 * @param delta          δ ∈ (0, 1)
 * @param order          the minimising RDP order α (NaN when ε is +∞ at every order)
 * @param orderAtGridEdge true when the optimum is the smallest or largest order of the grid: a
 *                        wider grid might give a smaller ε (the reported ε is still valid)
 * @param accountant     a short name of the method that produced the number
 */
public record PrivacyGuarantee(double epsilon, double delta, double order, boolean orderAtGridEdge,
                               String accountant) {

    /** A human-readable warning, or the empty string when there is nothing to warn about. */
    public String warning() {
        if (Double.isInfinite(epsilon)) {
            return "epsilon is infinite at every RDP order";
        }
        return orderAtGridEdge
                ? "optimal RDP order " + order + " is at the edge of the order grid; a wider grid may give a smaller epsilon"
                : "";
    }
}
