package org.dpdl4j.federated;

import java.util.List;

/**
 * The protocol's messages. All fields are public values except {@link MaskedInput#maskedVector},
 * which is uniform on Z_{2^64}^p to the coordinator. Arrays are copied by every transport.
 */
public final class Messages {
    private Messages() {
    }

    /** A client's first contact. */
    public record Hello(int clientId) {
    }

    /** The session's public description, returned to {@link Hello}. */
    public record SessionInfo(String session, long round, DpHypeParameters parameters) {
    }

    /** A client's X25519 public key for one round. */
    public record KeyAdvertisement(String session, long round, int clientId, byte[] publicKey) {
    }

    /** One participant's public key. */
    public record PeerKey(int clientId, byte[] publicKey) {
    }

    /** The participants of a round and their keys, in increasing id order. */
    public record RoundKeys(String session, long round, List<PeerKey> keys) {
    }

    /** A client's vector plus its pairwise mask, modulo 2^64. */
    public record MaskedInput(String session, long round, int clientId, long[] maskedVector) {
    }

    /**
     * How a round ended: {@code done} with the exact integer sum, its participants and the winning
     * index; or not done, in which case the client retries in {@code nextRound}.
     */
    public record RoundOutcome(String session, long round, boolean done, long nextRound, long[] sum, List<Integer> participants, int winner) {
    }
}
