package org.dpdl4j.federated;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.dpdl4j.federated.Messages.Hello;
import org.dpdl4j.federated.Messages.KeyAdvertisement;
import org.dpdl4j.federated.Messages.MaskedInput;
import org.dpdl4j.federated.Messages.PeerKey;
import org.dpdl4j.federated.Messages.RoundKeys;
import org.dpdl4j.federated.Messages.RoundOutcome;
import org.dpdl4j.federated.Messages.SessionInfo;
import org.dpdl4j.federated.ProtocolException.Reason;
import org.dpdl4j.secagg.PairwiseMasks;

/**
 * The DP-HYPE server for one session (Algorithm 1, server phase, with the secure summation of
 * {@link org.dpdl4j.federated}): it collects round keys and masked inputs, adds the inputs modulo
 * 2^64 once every participant of a round has submitted, and outputs the argmax. It only ever holds
 * masked vectors and the sum. Thread-safe: transports call it from one thread per client, and calls
 * block until their phase ends.
 *
 * <p>Every refused message ({@link ProtocolException}) leaves the state as it was: a wrong length,
 * an unknown client, a replay of a received message or of a finished round, a late joiner, a
 * message from another session or for a later round.
 */
public final class DpHypeCoordinator {
    private enum Phase { KEYS, INPUTS, DONE, FAILED }

    /**
     * The session's result: the exact integer sum, the votes Σ/s, the winning index, the participants and the rounds used.
     *
     * @param sum          the exact integer sum modulo 2^64 of the participants' noisy vote vectors, p entries
     * @param votes        Σ/s per candidate, in votes, p entries
     * @param winner       the index in [0, p) of the largest sum entry (the lowest index on ties)
     * @param participants the ids whose vectors were summed, in increasing order, at least n_min of them
     * @param rounds       the number of the round that completed, ≥ 1 (so the rounds used, aborted ones included)
     */
    public record Result(long[] sum, double[] votes, int winner, List<Integer> participants, long rounds) {
    }

    private final DpHypeParameters parameters;
    private final String session;
    private final Set<Integer> roster;
    private final long phaseTimeoutNanos;
    private final int maxRounds;

    private long round = 1;
    private Phase phase = Phase.KEYS;
    private Set<Integer> active;
    private final TreeMap<Integer, byte[]> keys = new TreeMap<>();
    private final TreeMap<Integer, long[]> inputs = new TreeMap<>();
    private long deadline;
    private boolean deadlineSet;
    private RoundKeys roundKeys;
    private final Map<Long, RoundOutcome> outcomes = new HashMap<>();
    private Result result;
    private String failure;

    /**
     * A coordinator for a new session, in round 1's key phase, with a fresh random session id.
     *
     * @param parameters   the session's public parameters (roster size n = maxClients)
     * @param clientIds    the roster: exactly n distinct ids
     * @param phaseTimeout how long a phase waits for missing clients after its first message (&gt; 0); the input
     *                     phase's clock starts when the key phase closes
     * @param maxRounds    how many rounds may be started before the session fails (≥ 1)
     * @throws IllegalArgumentException if the roster size is not n, or a limit is out of range
     */
    public DpHypeCoordinator(DpHypeParameters parameters, Collection<Integer> clientIds, Duration phaseTimeout, int maxRounds) {
        this.parameters = parameters;
        this.roster = Set.copyOf(new TreeSet<>(clientIds));
        if (roster.size() != clientIds.size() || roster.size() != parameters.maxClients()) {
            throw new IllegalArgumentException("the roster must hold exactly maxClients = " + parameters.maxClients()
                    + " distinct client ids, got " + clientIds);
        }
        if (phaseTimeout.isNegative() || phaseTimeout.isZero()) {
            throw new IllegalArgumentException("phase timeout must be > 0, got " + phaseTimeout);
        }
        if (maxRounds < 1) {
            throw new IllegalArgumentException("maxRounds must be >= 1, got " + maxRounds);
        }
        this.phaseTimeoutNanos = phaseTimeout.toNanos();
        this.maxRounds = maxRounds;
        this.active = new TreeSet<>(roster);
        byte[] id = new byte[16];
        new SecureRandom().nextBytes(id);
        this.session = HexFormat.of().formatHex(id);
    }

    /**
     * The session's public parameters.
     *
     * @return the parameters given at construction
     */
    public DpHypeParameters parameters() {
        return parameters;
    }

    /**
     * A client's first contact: the session id, the current round and the parameters. Does not block.
     *
     * @param hello the client's id
     * @return the session id, the current round and the parameters
     * @throws ProtocolException ({@code UNKNOWN_CLIENT}) if the client is not on the roster
     */
    public synchronized SessionInfo hello(Hello hello) {
        checkRoster(hello.clientId());
        return new SessionInfo(session, round, parameters);
    }

    /**
     * Records a round key and blocks until the key phase closes; returns the round's participants and keys. The phase
     * closes when every active client has sent a key, or at the phase timeout (counted from the round's first key)
     * with those present; the session fails if fewer than n_min sent one.
     *
     * @param a the session, round, client id and {@value PairwiseMasks#PUBLIC_KEY_BYTES}-byte X25519 public key
     * @return the round's participants and their keys, in increasing id order
     * @throws ProtocolException {@code WRONG_SESSION}, {@code UNKNOWN_CLIENT}, {@code REPLAY} (key already sent, or
     *                           round over), {@code OUT_OF_ORDER} (a later round), {@code LATE_JOINER} (key phase
     *                           closed, or the client dropped out earlier), {@code WRONG_LENGTH} (key not
     *                           {@value PairwiseMasks#PUBLIC_KEY_BYTES} bytes), {@code SESSION_FAILED} (the session
     *                           failed, or the round ended before its key phase closed) or {@code TRANSPORT}
     *                           (interrupted while waiting)
     */
    public synchronized RoundKeys advertise(KeyAdvertisement a) {
        checkSession(a.session());
        checkRoster(a.clientId());
        long r = a.round();
        checkRound(r);
        int id = a.clientId();
        if (phase != Phase.KEYS) {
            throw keys.containsKey(id) ? new ProtocolException(Reason.REPLAY, "client " + id + " already sent its key for round " + r)
                    : new ProtocolException(Reason.LATE_JOINER, "the key phase of round " + r + " has closed");
        }
        if (!active.contains(id)) {
            throw new ProtocolException(Reason.LATE_JOINER, "client " + id + " dropped out in an earlier round of this session");
        }
        if (keys.containsKey(id)) {
            throw new ProtocolException(Reason.REPLAY, "client " + id + " already sent its key for round " + r);
        }
        if (a.publicKey() == null || a.publicKey().length != PairwiseMasks.PUBLIC_KEY_BYTES) {
            throw new ProtocolException(Reason.WRONG_LENGTH, "an X25519 public key has " + PairwiseMasks.PUBLIC_KEY_BYTES
                    + " bytes, got " + (a.publicKey() == null ? "none" : a.publicKey().length));
        }
        startClock();
        keys.put(id, a.publicKey().clone());
        if (keys.size() == active.size()) {
            closeKeys();
        }
        while (round == r && phase == Phase.KEYS) {
            if (!awaitDeadline()) {
                closeKeys();
            }
        }
        if (round == r && roundKeys != null && roundKeys.round() == r) {
            return roundKeys;
        }
        throw new ProtocolException(Reason.SESSION_FAILED, failure == null ? "round " + r + " ended before its key phase closed" : failure);
    }

    /**
     * Records a masked input and blocks until the round completes (the sum) or aborts (retry in the next round). The
     * round completes when every key holder has submitted, and aborts at the phase timeout otherwise.
     *
     * @param m the session, round, client id and masked vector of p entries
     * @return the round's outcome: done with the sum, participants and winner, or not done with the next round
     * @throws ProtocolException {@code WRONG_SESSION}, {@code UNKNOWN_CLIENT}, {@code REPLAY} (already submitted, or
     *                           round over), {@code OUT_OF_ORDER} (a later round, or the key phase still open),
     *                           {@code LATE_JOINER} (no key sent in this round), {@code WRONG_LENGTH} (not p
     *                           entries), {@code SESSION_FAILED} (the session failed) or {@code TRANSPORT}
     *                           (interrupted while waiting)
     */
    public synchronized RoundOutcome submit(MaskedInput m) {
        checkSession(m.session());
        checkRoster(m.clientId());
        long r = m.round();
        checkRound(r);
        int id = m.clientId();
        if (phase == Phase.KEYS) {
            throw new ProtocolException(Reason.OUT_OF_ORDER, "the key phase of round " + r + " is still open");
        }
        if (phase == Phase.DONE || inputs.containsKey(id)) {
            throw new ProtocolException(Reason.REPLAY, "client " + id + " already submitted in round " + r);
        }
        if (!roundKeys.keys().stream().anyMatch(k -> k.clientId() == id)) {
            throw new ProtocolException(Reason.LATE_JOINER, "client " + id + " sent no key in round " + r);
        }
        if (m.maskedVector() == null || m.maskedVector().length != parameters.candidates()) {
            throw new ProtocolException(Reason.WRONG_LENGTH, "the vector must have p = " + parameters.candidates()
                    + " entries, got " + (m.maskedVector() == null ? "none" : m.maskedVector().length));
        }
        inputs.put(id, m.maskedVector().clone());
        if (inputs.size() == roundKeys.keys().size()) {
            finish();
        }
        while (!outcomes.containsKey(r) && phase != Phase.FAILED) {
            if (!awaitDeadline()) {
                abortRound();
            }
        }
        RoundOutcome o = outcomes.get(r);
        if (o == null || (!o.done() && phase == Phase.FAILED)) {
            throw new ProtocolException(Reason.SESSION_FAILED, failure);
        }
        return o;
    }

    /**
     * Blocks until the session ends.
     *
     * @param timeout how long to wait at most; a zero or negative duration fails at once unless the session has
     *                already ended
     * @return the result
     * @throws ProtocolException (SESSION_FAILED) if the session failed, or (TRANSPORT) if the wait timed out
     * @throws InterruptedException if interrupted while waiting
     */
    public synchronized Result awaitResult(Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (phase != Phase.DONE && phase != Phase.FAILED) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                throw new ProtocolException(Reason.TRANSPORT, "no result within " + timeout + " (round " + round + ", phase " + phase + ")");
            }
            wait(Math.max(1, left / 1_000_000));
            if ((phase == Phase.KEYS || phase == Phase.INPUTS) && deadlineSet && System.nanoTime() > deadline) {
                if (phase == Phase.KEYS) {
                    closeKeys();
                } else {
                    abortRound();
                }
            }
        }
        if (phase == Phase.FAILED) {
            throw new ProtocolException(Reason.SESSION_FAILED, failure);
        }
        return result;
    }

    private void checkSession(String s) {
        if (!session.equals(s)) {
            throw new ProtocolException(Reason.WRONG_SESSION, "session " + s + " is not this coordinator's session " + session);
        }
    }

    private void checkRoster(int id) {
        if (!roster.contains(id)) {
            throw new ProtocolException(Reason.UNKNOWN_CLIENT, "client " + id + " is not on the roster " + new TreeSet<>(roster));
        }
    }

    private void checkRound(long r) {
        if (phase == Phase.FAILED) {
            throw new ProtocolException(Reason.SESSION_FAILED, failure);
        }
        if (r < round) {
            throw new ProtocolException(Reason.REPLAY, "round " + r + " is over; the session is in round " + round);
        }
        if (r > round) {
            throw new ProtocolException(Reason.OUT_OF_ORDER, "round " + r + " has not started; the session is in round " + round);
        }
    }

    private void startClock() {
        if (!deadlineSet) {
            deadline = System.nanoTime() + phaseTimeoutNanos;
            deadlineSet = true;
        }
    }

    /** Waits for a change; false once the phase deadline has passed. */
    private boolean awaitDeadline() {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        try {
            wait(Math.max(1, left / 1_000_000), 0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ProtocolException(Reason.TRANSPORT, "interrupted while waiting for round " + round);
        }
        return true;
    }

    private void closeKeys() {
        if (keys.size() < parameters.minClients()) {
            fail("only " + keys.size() + " clients sent keys in round " + round + "; at least n_min = " + parameters.minClients() + " are needed");
            return;
        }
        List<PeerKey> list = new ArrayList<>();
        keys.forEach((id, key) -> list.add(new PeerKey(id, key.clone())));
        roundKeys = new RoundKeys(session, round, List.copyOf(list));
        phase = Phase.INPUTS;
        deadline = System.nanoTime() + phaseTimeoutNanos;
        notifyAll();
    }

    private void finish() {
        long[] sum = new long[parameters.candidates()];
        for (long[] v : inputs.values()) {
            for (int j = 0; j < sum.length; j++) {
                sum[j] += v[j]; // modulo 2^64: the pairwise masks cancel here
            }
        }
        int winner = 0;
        double[] votes = new double[sum.length];
        for (int j = 0; j < sum.length; j++) {
            votes[j] = (double) sum[j] / parameters.scale();
            if (sum[j] > sum[winner]) {
                winner = j;
            }
        }
        List<Integer> participants = List.copyOf(inputs.keySet());
        inputs.clear();
        result = new Result(sum, votes, winner, participants, round);
        outcomes.put(round, new RoundOutcome(session, round, true, round, sum.clone(), participants, winner));
        phase = Phase.DONE;
        notifyAll();
    }

    /** A participant did not submit in time: its masks cannot cancel, so the round is dropped and the submitters retry. */
    private void abortRound() {
        long r = round;
        Set<Integer> survivors = new TreeSet<>(inputs.keySet());
        outcomes.put(r, new RoundOutcome(session, r, false, r + 1, null, List.copyOf(survivors), -1));
        inputs.clear();
        keys.clear();
        roundKeys = null;
        deadlineSet = false;
        if (r >= maxRounds) {
            fail("round " + r + " aborted (a participant did not submit) and it was the last of maxRounds = " + maxRounds);
        } else if (survivors.size() < parameters.minClients()) {
            fail("round " + r + " aborted with " + survivors.size() + " clients left; at least n_min = " + parameters.minClients() + " are needed");
        } else {
            active = survivors;
            round = r + 1;
            phase = Phase.KEYS;
        }
        notifyAll();
    }

    private void fail(String why) {
        failure = why;
        phase = Phase.FAILED;
        notifyAll();
    }
}
