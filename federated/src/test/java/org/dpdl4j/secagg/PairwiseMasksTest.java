package org.dpdl4j.secagg;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.apache.commons.math3.stat.inference.ChiSquareTest;
import org.junit.jupiter.api.Test;

class PairwiseMasksTest {
    private static final byte[] SESSION = "test-session".getBytes(StandardCharsets.UTF_8);

    private static Map<Integer, KeyPair> keys(int n) {
        Map<Integer, KeyPair> k = new HashMap<>();
        for (int i = 0; i < n; i++) {
            k.put(10 + 7 * i, PairwiseMasks.newKeyPair()); // ids need not be contiguous
        }
        return k;
    }

    private static Map<Integer, byte[]> publicKeys(Map<Integer, KeyPair> k) {
        Map<Integer, byte[]> p = new HashMap<>();
        k.forEach((id, kp) -> p.put(id, PairwiseMasks.encodePublicKey(kp.getPublic())));
        return p;
    }

    @Test
    void maskedSumEqualsPlainSumExactly() {
        Random random = new Random(1);
        int d = 257;
        Map<Integer, KeyPair> k = keys(6);
        Map<Integer, byte[]> pub = publicKeys(k);
        long[] plain = new long[d];
        long[] masked = new long[d];
        for (Map.Entry<Integer, KeyPair> e : k.entrySet()) {
            long[] x = new long[d];
            for (int j = 0; j < d; j++) {
                x[j] = j % 3 == 0 ? random.nextLong() : random.nextInt(2000) - 1000; // near-overflow values too: sums wrap identically
            }
            long[] m = PairwiseMasks.mask(e.getKey(), e.getValue().getPrivate(), pub, SESSION, 3, d);
            for (int j = 0; j < d; j++) {
                plain[j] += x[j];
                masked[j] += x[j] + m[j];
            }
        }
        assertArrayEquals(plain, masked);
    }

    @Test
    void padsAgreeBetweenThePairAndDependOnRoundAndSession() {
        KeyPair a = PairwiseMasks.newKeyPair();
        KeyPair b = PairwiseMasks.newKeyPair();
        Map<Integer, byte[]> pub = Map.of(1, PairwiseMasks.encodePublicKey(a.getPublic()), 2, PairwiseMasks.encodePublicKey(b.getPublic()));
        long[] ma = PairwiseMasks.mask(1, a.getPrivate(), pub, SESSION, 1, 16);
        long[] mb = PairwiseMasks.mask(2, b.getPrivate(), pub, SESSION, 1, 16);
        for (int j = 0; j < 16; j++) {
            assertEquals(0, ma[j] + mb[j]);
            assertNotEquals(0, ma[j]);
        }
        assertNotEquals(ma[0], PairwiseMasks.mask(1, a.getPrivate(), pub, SESSION, 2, 16)[0]);
        assertNotEquals(ma[0], PairwiseMasks.mask(1, a.getPrivate(), pub, "other".getBytes(StandardCharsets.UTF_8), 1, 16)[0]);
    }

    @Test
    void publicKeysRoundTripThroughTheirRawEncoding() {
        for (int i = 0; i < 20; i++) {
            KeyPair a = PairwiseMasks.newKeyPair();
            byte[] raw = PairwiseMasks.encodePublicKey(a.getPublic());
            assertEquals(32, raw.length);
            assertArrayEquals(raw, PairwiseMasks.encodePublicKey(PairwiseMasks.decodePublicKey(raw)));
        }
    }

    @Test
    void badKeysAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PairwiseMasks.decodePublicKey(new byte[31]));
        assertTrue(e.getMessage().contains("32 bytes"), e.getMessage());
        KeyPair a = PairwiseMasks.newKeyPair();
        // u = 0 is a point of small order: the shared secret would be all zeros, known to everyone
        Map<Integer, byte[]> pub = Map.of(1, PairwiseMasks.encodePublicKey(a.getPublic()), 2, new byte[32]);
        e = assertThrows(IllegalArgumentException.class, () -> PairwiseMasks.mask(1, a.getPrivate(), pub, SESSION, 1, 4));
        assertTrue(e.getMessage().contains("party 2"), e.getMessage());
    }

    /**
     * A single client's masked vector is indistinguishable from uniform on Z_{2^64}: chi-square on
     * each byte position (256 bins) and a frequency test on each of the 64 bits, while the same
     * tests reject the unmasked vector, so they have power.
     */
    @Test
    void aSingleMaskedVectorLooksUniform() {
        int d = 32_768;
        Map<Integer, KeyPair> k = keys(3);
        Map<Integer, byte[]> pub = publicKeys(k);
        int self = k.keySet().iterator().next();
        long[] x = new long[d];
        Random random = new Random(7);
        for (int j = 0; j < d; j++) {
            x[j] = (j % 20 < 5 ? 65_536 : 0) + Math.round(300 * random.nextGaussian()); // a vote vector plus noise
        }
        long[] m = PairwiseMasks.mask(self, k.get(self).getPrivate(), pub, SESSION, 1, d);
        long[] y = new long[d];
        for (int j = 0; j < d; j++) {
            y[j] = x[j] + m[j];
        }
        ChiSquareTest chi = new ChiSquareTest();
        for (int byteIndex = 0; byteIndex < 8; byteIndex++) {
            assertTrue(chi.chiSquareTest(expected(d), byteCounts(y, byteIndex)) > 1e-4, "masked byte " + byteIndex + " not uniform");
        }
        assertTrue(chi.chiSquareTest(expected(d), byteCounts(x, 7)) < 1e-12, "the plain vector's top byte must fail the test");
        for (int bit = 0; bit < 64; bit++) {
            int ones = 0;
            for (long v : y) {
                ones += (int) ((v >>> bit) & 1);
            }
            double z = (ones - d / 2.0) / Math.sqrt(d / 4.0);
            assertTrue(Math.abs(z) < 5, "bit " + bit + " has z = " + z);
        }
    }

    private static double[] expected(int d) {
        double[] e = new double[256];
        java.util.Arrays.fill(e, d / 256.0);
        return e;
    }

    private static long[] byteCounts(long[] v, int byteIndex) {
        long[] counts = new long[256];
        for (long w : v) {
            counts[(int) ((w >>> (8 * byteIndex)) & 0xff)]++;
        }
        return counts;
    }
}
