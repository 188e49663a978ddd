package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class AdvancedCompositionTest {
    /**
     * Against a value worked out by hand: T = 42, ε₀ = 0.1, δ′ = 5e-6 gives √(84·ln(2·10⁵))·0.1 + 42·0.1·(e^{0.1} − 1)
     * = 3.2021 + 0.4417; below basic composition (4.2) there.
     */
    @Test
    void matchesTheHandComputation() {
        assertEquals(3.2021 + 0.4417, AdvancedComposition.epsilon(42, 0.1, 5e-6), 2e-4);
        assertTrue(AdvancedComposition.epsilon(42, 0.1, 5e-6) < 42 * 0.1, "below basic composition here");
    }

    @Test
    void refusesValuesOutsideTheirRanges() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> AdvancedComposition.epsilon(0, 0.1, 1e-5))
                .getMessage().contains("steps"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> AdvancedComposition.epsilon(3, Double.NaN, 1e-5))
                .getMessage().contains("epsilon0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> AdvancedComposition.epsilon(3, 0.1, 1))
                .getMessage().contains("deltaPrime"));
    }
}
