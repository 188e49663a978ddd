package org.dpdl4j.accounting;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Every accountant either supports or explicitly refuses each kind of {@link PrivacyEvent}: the test walks the
 * sealed interface's permitted subclasses (Java 17 does not check an instanceof chain for exhaustiveness), so a new
 * event type without an example here fails it.
 */
class AccountantCoverageTest {
    private static final GaussianEvent G = new GaussianEvent(2);

    private static final List<PrivacyEvent> EXAMPLES = List.of(G, new LaplaceEvent(2), new PoissonSampledEvent(G, 0.1),
            new SelfComposedEvent(G, 3), new ComposedEvent(List.of(G, new LaplaceEvent(1))), new PureDpEvent(0.5),
            new ZcdpEvent(0.1), new NonPrivateEvent(), new NoOpEvent(), new RepeatAndSelectEvent(G, RepetitionDistribution.poisson(3)),
            new PointwiseMaxEvent(List.of(G, new GaussianEvent(3))),
            new SubsampledTuningEvent(new RepeatAndSelectEvent(G, RepetitionDistribution.poisson(3)), G, 0.1,
                    SubsampledTuningEvent.Variant.DISJOINT),
            new AdaptiveRepeatAndSelectEvent(G, RepetitionDistribution.pointMass(2), 0.75, 2),
            new DistributedDiscreteGaussianEvent(Math.sqrt(2), 2, 4, 5, 5, 10));

    /** Every registered accountant, so that a new one is checked as soon as it is registered. */
    private static final List<PrivacyAccountant> ACCOUNTANTS = Accountants.names().stream().map(Accountants::byName).toList();

    @Test
    void everyPermittedEventHasAnExample() {
        Set<Class<?>> permitted = Set.of(PrivacyEvent.class.getPermittedSubclasses());
        Set<Class<?>> covered = EXAMPLES.stream().map(Object::getClass).collect(Collectors.toSet());
        assertEquals(permitted, covered, "add an example of each new event type here");
    }

    @Test
    void everyAccountantSupportsOrRefusesEachEvent() {
        for (PrivacyAccountant acc : ACCOUNTANTS) {
            for (PrivacyEvent e : EXAMPLES) {
                if (acc.supports(e)) {
                    double eps = acc.epsilon(e, 1e-5);
                    assertTrue(eps >= 0, acc.name() + " " + e + ": " + eps);
                    assertTrue(acc.delta(e, Double.isInfinite(eps) ? 1 : eps + 1e-9) <= 1e-5 * (1 + 1e-6) || Double.isInfinite(eps),
                            acc.name() + " " + e + ": delta at its own epsilon");
                } else {
                    assertThrows(IllegalArgumentException.class, () -> acc.guarantee(e, 1e-5), acc.name() + " must refuse " + e);
                }
            }
        }
        Map<String, Double> zero = Map.of("noop", RdpAccountant.standard().epsilon(new NoOpEvent(), 1e-5));
        assertEquals(0.0, zero.get("noop"), 0.0, "doing nothing costs nothing");
        assertTrue(Double.isInfinite(RdpAccountant.standard().epsilon(new NonPrivateEvent(), 1e-5)));
    }

    @Test
    void theRegistryNamesEachAccountantByItsOwnNameAndRefusesUnknownOnes() {
        assertTrue(Accountants.names().contains(Accountants.DEFAULT));
        for (String name : Accountants.names()) {
            assertEquals(name, Accountants.byName(name).name());
        }
        assertSame(RdpAccountant.standard(), Accountants.standard());
        var e = assertThrows(IllegalArgumentException.class, () -> Accountants.byName("moments"));
        assertTrue(e.getMessage().contains("'moments'") && e.getMessage().contains("rdp"), e.getMessage());
    }
}
