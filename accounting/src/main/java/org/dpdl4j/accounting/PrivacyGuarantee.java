package org.dpdl4j.accounting;

/**
 * An (ε, δ)-DP guarantee, and for an accountant that converts through Rényi DP the order at which the
 * conversion was tightest (an accountant that does not, such as a PLD accountant, reports NaN and false).
 *
 * @param epsilon        ε ≥ 0 (may be +∞ when no order gives a finite bound)
 * @param delta          δ ∈ (0, 1)
 * @param order          the minimising RDP order α (NaN when ε is +∞ at every order, or the accountant is not RDP;
 *                       +∞ for the pure-DP bounds {@link RdpAccountant#guarantee} may return, the limit α → ∞)
 * @param orderAtGridEdge true when the optimum is the smallest or largest order of the grid: a
 *                        wider grid might give a smaller ε (the reported ε is still valid)
 * @param accountant     a short name of the method that produced the number, for example "rdp" or "pld"; not null
 *                       for {@link #warning()}
 *
 * <p>The record does not check its components; the accountants create it with values in these ranges.
 */
public record PrivacyGuarantee(double epsilon, double delta, double order, boolean orderAtGridEdge,
                               String accountant) {

    /**
     * A human-readable warning: ε is infinite, or the optimal order is at the edge of the grid.
     *
     * @return the warning, or the empty string when there is nothing to warn about
     */
    public String warning() {
        if (Double.isInfinite(epsilon)) {
            return accountant.startsWith("rdp") ? "epsilon is infinite at every RDP order"
                    : "epsilon is infinite: the event has no finite (epsilon, delta) guarantee";
        }
        return orderAtGridEdge
                ? "optimal RDP order " + order + " is at the edge of the order grid; a wider grid may give a smaller epsilon"
                : "";
    }
}
