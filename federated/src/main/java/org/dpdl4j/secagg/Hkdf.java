package org.dpdl4j.secagg;

import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HKDF with HMAC-SHA256 (RFC 5869, Sections 2.2 and 2.3): extract a pseudorandom key from input
 * keying material, then expand it to the requested length bound to an {@code info} string.
 */
public final class Hkdf {
    private static final int HASH_LENGTH = 32;

    private Hkdf() {
    }

    /**
     * HKDF-SHA256(salt, ikm, info, length).
     *
     * @param salt   optional salt; null or empty means 32 zero bytes (RFC 5869 §2.2)
     * @param ikm    input keying material (e.g. an X25519 shared secret)
     * @param info   context the output is bound to; null means empty
     * @param length output length in bytes, 1..8160 (255 hash blocks)
     * @return the output keying material, {@code length} bytes
     * @throws IllegalArgumentException if length is out of range or ikm is null
     */
    public static byte[] deriveKey(byte[] salt, byte[] ikm, byte[] info, int length) {
        if (length < 1 || length > 255 * HASH_LENGTH) {
            throw new IllegalArgumentException("HKDF output length must be in [1, 8160] bytes, got " + length);
        }
        if (ikm == null) {
            throw new IllegalArgumentException("HKDF input keying material must not be null");
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            byte[] s = salt == null || salt.length == 0 ? new byte[HASH_LENGTH] : salt;
            mac.init(new SecretKeySpec(s, "HmacSHA256"));
            byte[] prk = mac.doFinal(ikm);
            mac.init(new SecretKeySpec(prk, "HmacSHA256"));
            byte[] out = new byte[length];
            byte[] block = new byte[0];
            for (int i = 1, pos = 0; pos < length; i++) {
                mac.update(block);
                mac.update(info == null ? new byte[0] : info);
                mac.update((byte) i);
                block = mac.doFinal();
                int n = Math.min(block.length, length - pos);
                System.arraycopy(block, 0, out, pos, n);
                pos += n;
            }
            return out;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is required by every Java SE platform", e);
        }
    }
}
