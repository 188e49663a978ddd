package org.dpdl4j.federated;

import java.util.List;

/**
 * The protocol's messages. All fields are public values except {@link MaskedInput#maskedVector},
 * which is uniform on Z_{2^64}^p to the coordinator. Arrays are copied by every transport.
 */
public final class Messages {
    private Messages() {
    }

    /**
     * A client's first contact.
     *
     * @param clientId the client's id on the coordinator's roster
     */
    public record Hello(int clientId) {
    }

    /**
     * The session's public description, returned to {@link Hello}.
     *
     * @param session    the session id (random, hexadecimal, chosen by the coordinator)
     * @param round      the session's current round, ≥ 1
     * @param parameters the session's public parameters
     */
    public record SessionInfo(String session, long round, DpHypeParameters parameters) {
    }

    /**
     * A client's X25519 public key for one round.
     *
     * @param session   the session id of {@link SessionInfo}
     * @param round     the round the key is for, ≥ 1
     * @param clientId  the sending client's id
     * @param publicKey the raw key, {@value org.dpdl4j.secagg.PairwiseMasks#PUBLIC_KEY_BYTES} bytes (the coordinator
     *                  refuses any other length)
     */
    public record KeyAdvertisement(String session, long round, int clientId, byte[] publicKey) {
    }

    /**
     * One participant's public key.
     *
     * @param clientId  the participant's id
     * @param publicKey its raw X25519 key, {@value org.dpdl4j.secagg.PairwiseMasks#PUBLIC_KEY_BYTES} bytes
     */
    public record PeerKey(int clientId, byte[] publicKey) {
    }

    /**
     * The participants of a round and their keys, in increasing id order.
     *
     * @param session the session id
     * @param round   the round, ≥ 1
     * @param keys    one key per participant, at least n_min of them, in increasing id order
     */
    public record RoundKeys(String session, long round, List<PeerKey> keys) {
    }

    /**
     * A client's vector plus its pairwise mask, modulo 2^64.
     *
     * @param session      the session id
     * @param round        the round, ≥ 1
     * @param clientId     the sending client's id
     * @param maskedVector the masked vector, p entries (the coordinator refuses any other length)
     */
    public record MaskedInput(String session, long round, int clientId, long[] maskedVector) {
    }

    /**
     * How a round ended: {@code done} with the exact integer sum, its participants and the winning
     * index; or not done, in which case the client retries in {@code nextRound}.
     *
     * @param session      the session id
     * @param round        the round this outcome is of, ≥ 1
     * @param done         whether the round completed
     * @param nextRound    the round to retry in when not done ({@code round + 1}); {@code round} when done
     * @param sum          the exact integer sum modulo 2^64 of the participants' vectors, p entries (the summed votes
     *                     times s); null when not done
     * @param participants when done, the ids whose vectors were summed; when not done, the ids that submitted before
     *                     the abort; increasing order
     * @param winner       the index in [0, p) of the largest sum entry (the lowest index on ties); −1 when not done
     */
    public record RoundOutcome(String session, long round, boolean done, long nextRound, long[] sum, List<Integer> participants, int winner) {
    }
}
