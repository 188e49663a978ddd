package org.dpdl4j.datasets;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 digests in hex: how dpdl4j names the bytes it verifies (data files, shipped data, released models). */
public final class Sha256 {
    private Sha256() {
    }

    /** The SHA-256 of {@code bytes} as 64 lower-case hex digits. */
    public static String hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
