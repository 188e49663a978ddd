package org.dpdl4j.secagg;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.interfaces.XECPublicKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPublicKeySpec;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Pairwise additive masks for secure summation (Bonawitz et al. 2017, Section 4, "masking with
 * one-time pads" with pairwise seeds from a key agreement).
 *
 * <p>For one round, each party u holds an ephemeral X25519 key pair. For every other party v the
 * parties agree on s_uv = X25519(sk_u, pk_v) = X25519(sk_v, pk_u), derive an AES-256 key and
 * counter block from it with {@link Hkdf} bound to (session, round, min(u, v), max(u, v), d), and
 * expand it with AES-CTR to d words p_uv ∈ Z_{2^64}^d. Party u adds p_uv for every v &gt; u and
 * subtracts it for every v &lt; u, so Σ_u mask_u = 0 (mod 2^64) exactly and the masked inputs sum to
 * the plain sum. To anyone who does not know s_uv for some v ≠ u, party u's masked vector is
 * computationally indistinguishable from uniform on Z_{2^64}^d.
 *
 * <p>Keys must be fresh every round: reusing a round's masks on a second vector would reveal the
 * difference of the two vectors.
 */
public final class PairwiseMasks {
    /** Raw X25519 public keys are 32 bytes (RFC 7748 §5). */
    public static final int PUBLIC_KEY_BYTES = 32;
    private static final byte[] LABEL = "dpdl4j secagg v1 pairwise mask".getBytes(StandardCharsets.US_ASCII);

    private PairwiseMasks() {
    }

    /**
     * A fresh X25519 key pair from the platform's {@link SecureRandom}.
     *
     * @return a new key pair, to be used for one round only
     * @throws IllegalStateException if the platform has no X25519 (XDH) provider
     */
    public static KeyPair newKeyPair() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("XDH");
            g.initialize(NamedParameterSpec.X25519, new SecureRandom());
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("X25519 (XDH) is required by Java SE 11+", e);
        }
    }

    /**
     * The raw 32-byte little-endian u-coordinate of an X25519 public key (RFC 7748 §5).
     *
     * @param key an X25519 public key (an {@link XECPublicKey}, e.g. of {@link #newKeyPair}); another key type fails
     *            with a {@link ClassCastException}
     * @return a new array of {@value #PUBLIC_KEY_BYTES} bytes
     */
    public static byte[] encodePublicKey(PublicKey key) {
        BigInteger u = ((XECPublicKey) key).getU();
        byte[] be = u.toByteArray();
        byte[] le = new byte[PUBLIC_KEY_BYTES];
        for (int i = 0; i < PUBLIC_KEY_BYTES && i < be.length; i++) {
            le[i] = be[be.length - 1 - i];
        }
        return le;
    }

    /**
     * Decodes a raw X25519 public key (the most significant bit of the last byte is ignored, RFC 7748 §5).
     *
     * @param raw the little-endian u-coordinate, {@value #PUBLIC_KEY_BYTES} bytes; not modified
     * @return the public key
     * @throws IllegalArgumentException if the key is null or not exactly 32 bytes, or the platform rejects it
     */
    public static PublicKey decodePublicKey(byte[] raw) {
        if (raw == null || raw.length != PUBLIC_KEY_BYTES) {
            throw new IllegalArgumentException("an X25519 public key must be " + PUBLIC_KEY_BYTES + " bytes, got "
                    + (raw == null ? "none" : raw.length));
        }
        byte[] be = new byte[PUBLIC_KEY_BYTES];
        for (int i = 0; i < PUBLIC_KEY_BYTES; i++) {
            be[i] = raw[PUBLIC_KEY_BYTES - 1 - i];
        }
        be[0] &= 0x7f; // RFC 7748 §5: the most significant bit is masked on decoding
        try {
            return KeyFactory.getInstance("XDH").generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519, new BigInteger(1, be)));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("not a valid X25519 public key: " + e.getMessage(), e);
        }
    }

    /**
     * Party {@code self}'s mask: Σ_{v &gt; self} p_{self,v} − Σ_{v &lt; self} p_{self,v} (mod 2^64).
     *
     * @param self      this party's id
     * @param ownKey    this party's private key for the round
     * @param peers     every participant's raw public key by id (this party's own entry is skipped)
     * @param session   the session identifier all parties agreed on
     * @param round     the round number (keys and masks are never reused across rounds)
     * @param dimension d ≥ 1, the vector length
     * @return a new mask of d words, to be added to the party's vector modulo 2^64
     * @throws IllegalStateException    if the platform's X25519 key agreement fails for another reason
     * @throws IllegalArgumentException if a peer key is malformed or of small order (the shared
     *                                  secret would be all zeros), or if d &lt; 1
     */
    public static long[] mask(int self, PrivateKey ownKey, Map<Integer, byte[]> peers, byte[] session, long round, int dimension) {
        if (dimension < 1) {
            throw new IllegalArgumentException("dimension d must be >= 1, got " + dimension);
        }
        long[] mask = new long[dimension];
        for (Map.Entry<Integer, byte[]> e : peers.entrySet()) {
            int v = e.getKey();
            if (v == self) {
                continue;
            }
            long[] pad = pad(sharedSecret(ownKey, decodePublicKey(e.getValue()), v), session, round, Math.min(self, v), Math.max(self, v), dimension);
            boolean add = v > self;
            for (int j = 0; j < dimension; j++) {
                mask[j] = add ? mask[j] + pad[j] : mask[j] - pad[j]; // wraps modulo 2^64
            }
        }
        return mask;
    }

    private static byte[] sharedSecret(PrivateKey own, PublicKey peer, int peerId) {
        try {
            KeyAgreement ka = KeyAgreement.getInstance("XDH");
            ka.init(own);
            ka.doPhase(peer, true);
            return ka.generateSecret();
        } catch (InvalidKeyException e) {
            throw new IllegalArgumentException("public key of party " + peerId + " is rejected by X25519: " + e.getMessage(), e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("X25519 key agreement failed", e);
        }
    }

    /** The pad p_uv: AES-256-CTR keystream under an HKDF-derived key and counter block, as d big-endian words. */
    static long[] pad(byte[] secret, byte[] session, long round, int low, int high, int dimension) {
        ByteBuffer info = ByteBuffer.allocate(LABEL.length + 4 + session.length + 8 + 12);
        info.put(LABEL).putInt(session.length).put(session).putLong(round).putInt(low).putInt(high).putInt(dimension);
        byte[] okm = Hkdf.deriveKey(null, secret, info.array(), 48);
        try {
            Cipher aes = Cipher.getInstance("AES/CTR/NoPadding");
            aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(okm, 0, 32, "AES"), new IvParameterSpec(okm, 32, 16));
            ByteBuffer stream = ByteBuffer.wrap(aes.doFinal(new byte[8 * dimension]));
            long[] out = new long[dimension];
            for (int j = 0; j < dimension; j++) {
                out[j] = stream.getLong();
            }
            return out;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES/CTR is required by every Java SE platform", e);
        }
    }
}
