package org.dpdl4j.federated;

import java.security.KeyPair;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.dpdl4j.federated.Messages.Hello;
import org.dpdl4j.federated.Messages.KeyAdvertisement;
import org.dpdl4j.federated.Messages.MaskedInput;
import org.dpdl4j.federated.Messages.PeerKey;
import org.dpdl4j.federated.Messages.RoundKeys;
import org.dpdl4j.federated.Messages.RoundOutcome;
import org.dpdl4j.federated.Messages.SessionInfo;
import org.dpdl4j.federated.ProtocolException.Reason;
import org.dpdl4j.secagg.DiscreteGaussian;
import org.dpdl4j.secagg.PairwiseMasks;
import org.dpdl4j.accounting.DpHypeVoting;

/**
 * One DP-HYPE party (Algorithm 1, client phase), for embedding in a JVM server: give it the loss of
 * every public candidate on this party's own data, and it votes through the coordinator's secure
 * summation and returns the outcome. Only a masked vector ever leaves this object.
 *
 * <p>The client checks that the coordinator's parameters equal its own before sending anything, so a
 * coordinator cannot lower the noise.
 */
public final class DpHypeClient {
    private final int clientId;
    private final DpHypeParameters parameters;
    private final SecureSumTransport transport;
    private final Random noise;

    /**
     * A party that votes through the given transport. Nothing is validated or sent until {@link #vote}.
     *
     * @param clientId   this party's id on the coordinator's roster
     * @param parameters the session parameters this party agrees to
     * @param transport  the connection to the coordinator
     * @param noise      the source of the discrete Gaussian noise; use {@link java.security.SecureRandom}
     *                   outside tests
     */
    public DpHypeClient(int clientId, DpHypeParameters parameters, SecureSumTransport transport, Random noise) {
        this.clientId = clientId;
        this.parameters = parameters;
        this.transport = transport;
        this.noise = noise;
    }

    /**
     * This party's noisy vote vector: s at its k smallest losses (ties to the lower index), 0 elsewhere,
     * plus N_Z(0, σ_c²) per coordinate, drawn from {@code random}.
     *
     * @param losses     the loss of each of the p candidates on this party's data (smaller is better), none NaN
     * @param parameters the session parameters: p, k, s and σ_c
     * @param random     the noise source; use {@link java.security.SecureRandom} outside tests
     * @return the noisy vote vector, p integers in grid units (a vote is s units)
     * @throws IllegalArgumentException if the number of losses is not p, or a loss is NaN
     */
    public static long[] encode(double[] losses, DpHypeParameters parameters, Random random) {
        if (losses.length != parameters.candidates()) {
            throw new IllegalArgumentException("losses must have one entry per candidate (p = " + parameters.candidates()
                    + "), got " + losses.length);
        }
        double[] top = DpHypeVoting.topK(losses, parameters.votes());
        DiscreteGaussian gaussian = new DiscreteGaussian(parameters.localSigma() * parameters.localSigma(), random);
        long[] v = new long[top.length];
        for (int j = 0; j < v.length; j++) {
            v[j] = (top[j] == 1 ? parameters.scale() : 0) + gaussian.sample();
        }
        return v;
    }

    /**
     * Votes: draws the noisy vector once, then takes part in rounds (fresh keys each) until one
     * completes, resubmitting the same vector.
     *
     * @param losses the loss of each candidate on this party's data (smaller is better)
     * @return the completed round's outcome: the exact integer sum, the participants and the winner
     * @throws ProtocolException         if the coordinator refuses this party or the session fails, or
     *                                   ({@code PARAMETER_MISMATCH}) if the coordinator's parameters differ from this
     *                                   party's or a round has fewer than n_min participants
     * @throws IllegalArgumentException  on bad losses, or a peer key that X25519 rejects
     */
    public RoundOutcome vote(double[] losses) {
        long[] vector = encode(losses, parameters, noise);
        SessionInfo info = transport.hello(new Hello(clientId));
        if (!info.parameters().equals(parameters)) {
            throw new ProtocolException(Reason.PARAMETER_MISMATCH, "coordinator parameters " + info.parameters()
                    + " differ from this client's " + parameters);
        }
        long round = info.round();
        while (true) {
            KeyPair keyPair = PairwiseMasks.newKeyPair();
            RoundKeys keys = transport.advertise(new KeyAdvertisement(info.session(), round, clientId,
                    PairwiseMasks.encodePublicKey(keyPair.getPublic())));
            if (keys.keys().size() < parameters.minClients()) {
                throw new ProtocolException(Reason.PARAMETER_MISMATCH, "round " + round + " has " + keys.keys().size()
                        + " participants, fewer than n_min = " + parameters.minClients());
            }
            Map<Integer, byte[]> peers = new HashMap<>();
            for (PeerKey k : keys.keys()) {
                peers.put(k.clientId(), k.publicKey());
            }
            long[] mask = PairwiseMasks.mask(clientId, keyPair.getPrivate(), peers, info.session().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    round, parameters.candidates());
            long[] masked = new long[vector.length];
            for (int j = 0; j < masked.length; j++) {
                masked[j] = vector[j] + mask[j];
            }
            RoundOutcome outcome = transport.submit(new MaskedInput(info.session(), round, clientId, masked));
            if (outcome.done()) {
                return outcome;
            }
            round = outcome.nextRound();
        }
    }
}
