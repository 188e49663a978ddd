package org.dpdl4j.dpsgd;

import java.util.Collection;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.dpdl4j.accounting.PrivacyEvent;

/**
 * The privacy claim a network's weights carry: the event of every private release they went through, kept on the
 * network itself as a listener that does nothing (DL4J keeps a network's listeners with it, and a network's weights
 * carry the cost of every run that trained them). {@link org.dpdl4j.release.PrivateModel} records it on the network of
 * every model it makes or loads, and refuses a claim that does not include the one recorded; {@link PrivateTraining}
 * composes it into the next run's claim, so that a network trained again (an epoch loop, early stopping) claims every
 * run's cost, and refuses a network trained outside it (DL4J's iteration count advanced beyond the recorded one, or
 * above 0 with no record) unless its earlier claim is given or its other training declared public.
 *
 * @param event      what the network's release cost so far
 * @param iterations DL4J's iteration count of the network when the claim was recorded (each DP-SGD step advances it by
 *                   one, as {@code fit} does)
 */
public record PrivateHistory(PrivacyEvent event, long iterations) {
    /**
     * The claim recorded on a network, whether or not the network was trained since ({@link #current}).
     *
     * @param network a {@link MultiLayerNetwork} or {@link ComputationGraph}
     * @return the recorded claim, or null when none is recorded
     */
    public static PrivateHistory of(Model network) {
        for (TrainingListener l : listeners(network)) {
            if (l instanceof Marker m) {
                return m.history;
            }
        }
        return null;
    }

    /**
     * Whether the record is still the network's whole history: its iteration count has not moved since.
     *
     * @param network the network it was read from
     * @return true if the network took no optimiser step since the claim was recorded
     */
    public boolean current(Model network) {
        return iterations == iterationCount(network);
    }

    /**
     * Whether a claim covers an earlier one: it is that claim, or a composition that starts with it (as the claim of a
     * network trained again is {@code ComposedEvent(earlier, this run)}).
     *
     * @param claim   the later claim
     * @param earlier the earlier claim
     * @return true if {@code claim} includes {@code earlier}
     */
    public static boolean covers(PrivacyEvent claim, PrivacyEvent earlier) {
        if (claim.equals(earlier)) {
            return true;
        }
        if (claim instanceof org.dpdl4j.accounting.ComposedEvent c && !c.events().isEmpty()) {
            java.util.List<PrivacyEvent> parts = earlier instanceof org.dpdl4j.accounting.ComposedEvent e ? e.events()
                    : java.util.List.of(earlier);
            return covers(c.events().get(0), earlier)
                    || c.events().size() >= parts.size() && c.events().subList(0, parts.size()).equals(parts);
        }
        return false;
    }

    /**
     * Records a claim on a network, at its current iteration count. A claim recorded before must be covered by the new
     * one ({@link #covers}): the weights carry it, so a release that leaves it out would claim less than they cost.
     *
     * @param network a {@link MultiLayerNetwork} or {@link ComputationGraph}
     * @param event   what the network's release cost in all, not null
     * @throws IllegalArgumentException if the network carries a claim that {@code event} does not include
     */
    public static void record(Model network, PrivacyEvent event) {
        PrivateHistory before = of(network);
        if (before != null && !covers(java.util.Objects.requireNonNull(event, "event"), before.event)) {
            throw new IllegalArgumentException("network: it carries the privacy claim of an earlier release (" + before.event
                    + "), which the new claim " + event + " does not include: its weights carry every run that trained them. "
                    + "Claim ComposedEvent.of(earlier, new), or train it with PrivateTraining, which composes it");
        }
        java.util.List<TrainingListener> kept = new java.util.ArrayList<>();
        for (TrainingListener l : listeners(network)) {
            if (!(l instanceof Marker)) {
                kept.add(l);
            }
        }
        kept.add(new Marker(new PrivateHistory(java.util.Objects.requireNonNull(event, "event"), iterationCount(network))));
        network.setListeners(kept);
    }

    /**
     * DL4J's iteration count of a network: the optimiser steps it has taken (by {@code fit}, or by DP-SGD), as its
     * configuration keeps it (saved with the model).
     *
     * @param network a {@link MultiLayerNetwork} or {@link ComputationGraph}
     * @return the count, ≥ 0
     * @throws IllegalArgumentException for another network type
     */
    public static long iterationCount(Model network) {
        if (network instanceof MultiLayerNetwork m) {
            return m.getLayerWiseConfigurations().getIterationCount();
        }
        if (network instanceof ComputationGraph g) {
            return g.getConfiguration().getIterationCount();
        }
        throw new IllegalArgumentException("network must be a MultiLayerNetwork or a ComputationGraph, got " + network.getClass().getName());
    }

    private static Collection<TrainingListener> listeners(Model network) {
        Collection<TrainingListener> l = network instanceof MultiLayerNetwork m ? m.getListeners()
                : network instanceof ComputationGraph g ? g.getListeners() : null;
        return l == null ? java.util.List.of() : l;
    }

    /** The listener that holds the claim; it listens to nothing. */
    private static final class Marker extends BaseTrainingListener {
        private final PrivateHistory history;

        Marker(PrivateHistory history) {
            this.history = history;
        }

        @Override
        public String toString() {
            return "dpdl4j privacy claim " + history;
        }
    }
}
