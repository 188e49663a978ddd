package org.dpdl4j.secagg;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** RFC 5869 Appendix A test vectors for HKDF-SHA256. */
class HkdfTest {
    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s);
    }

    @Test
    void testCase1() {
        byte[] okm = Hkdf.deriveKey(hex("000102030405060708090a0b0c"), hex("0b".repeat(22)), hex("f0f1f2f3f4f5f6f7f8f9"), 42);
        assertArrayEquals(hex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"), okm);
    }

    @Test
    void testCase3EmptySaltAndInfo() {
        byte[] okm = Hkdf.deriveKey(new byte[0], hex("0b".repeat(22)), new byte[0], 42);
        assertArrayEquals(hex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"), okm);
    }

    @Test
    void lengthOutOfRangeIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Hkdf.deriveKey(null, new byte[1], null, 0));
        assertThrows(IllegalArgumentException.class, () -> Hkdf.deriveKey(null, new byte[1], null, 8161));
    }
}
