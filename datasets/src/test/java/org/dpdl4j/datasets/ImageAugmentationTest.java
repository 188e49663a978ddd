package org.dpdl4j.datasets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Augmented copies: a single lit pixel moves by a shift within the bound (all of them drawn), a mirror reflects it,
 * pixels shifted in from outside are 0, copies depend on the seed and the row alone, and bad settings are refused.
 */
class ImageAugmentationTest {
    /** n images of h×w, each with one pixel lit at (y, x) = (7 + i % 5, 9 + i % 3), value 1 + i. */
    private static INDArray lit(int n, int h, int w) {
        INDArray x = Nd4j.zeros(DataType.FLOAT, n, h * w);
        for (int i = 0; i < n; i++) {
            x.putScalar(i, (long) (7 + i % 5) * w + 9 + i % 3, 1 + i);
        }
        return x;
    }

    @Test
    void aLitPixelMovesByADrawnShiftWithinTheBound() {
        int n = 40;
        int k = 5;
        ImageAugmentation shifts = new ImageAugmentation(1, 20, 24, 2, false);
        INDArray copies = shifts.copies(lit(n, 20, 24), k, 11);
        assertArrayEquals(new long[]{(long) n * k, 480}, copies.shape());
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < k; j++) {
                INDArray row = copies.getRow((long) i * k + j);
                assertEquals(1 + i, row.sumNumber().doubleValue(), 1e-6, "one pixel of value 1 + i, moved: copy " + j + " of " + i);
                int at = row.argMax().getInt(0);
                int dy = at / 24 - (7 + i % 5);
                int dx = at % 24 - (9 + i % 3);
                assertTrue(Math.abs(dy) <= 2 && Math.abs(dx) <= 2, "shift (" + dy + ", " + dx + ")");
                seen.add(dy + "," + dx);
            }
        }
        assertEquals(25, seen.size(), "all 25 shifts of up to 2 pixels are drawn in 200 copies: " + seen);
    }

    @Test
    void aMirrorReflectsAndShiftedInPixelsAreZero() {
        ImageAugmentation a = new ImageAugmentation(2, 4, 5, 1, true);
        float[] in = new float[40];
        for (int v = 0; v < 40; v++) {
            in[v] = v + 1;
        }
        float[] out = new float[40];
        a.transform(in, 0, out, 0, 0, 0, true);
        for (int ch = 0; ch < 2; ch++) {
            for (int y = 0; y < 4; y++) {
                for (int x = 0; x < 5; x++) {
                    assertEquals(in[ch * 20 + y * 5 + 4 - x], out[ch * 20 + y * 5 + x], "mirror at " + ch + "," + y + "," + x);
                }
            }
        }
        a.transform(in, 0, out, 0, 1, -1, false); // out(y, x) = in(y + 1, x − 1)
        assertEquals(0f, out[0], "column 0 comes from outside");
        assertEquals(in[5], out[1], "out(0, 1) = in(1, 0)");
        assertEquals(0f, out[3 * 5 + 2], "the last row comes from outside");
        assertEquals(in[20 + 2 * 5 + 3], out[20 + 5 + 4], "second channel, out(1, 4) = in(2, 3)");
    }

    @Test
    void copiesDependOnTheSeedAndTheRowAlone() {
        ImageAugmentation a = ImageAugmentation.forDataset("fashion-mnist");
        INDArray x = Nd4j.rand(DataType.FLOAT, 6, 784);
        INDArray all = a.copies(x, 3, 5);
        assertEquals(all, a.copies(x, 3, 5), "same seed, same copies");
        assertNotEquals(all, a.copies(x, 3, 6), "another seed, other copies");
        INDArray changed = x.dup();
        changed.getRow(4).assign(0.5);
        INDArray other = a.copies(changed, 3, 5);
        for (int r = 0; r < 18; r++) {
            if (r / 3 != 4) {
                assertEquals(all.getRow(r), other.getRow(r), "row " + r + " of another example");
            }
        }
        INDArray identity = new ImageAugmentation(1, 28, 28, 0, false).copies(x, 2, 5);
        assertEquals(x.getRow(2), identity.getRow(5), "no shift, no flip: the example itself");
    }

    @Test
    void badSettingsAreRefusedByName() {
        var shift = assertThrows(IllegalArgumentException.class, () -> new ImageAugmentation(1, 28, 28, 28, false));
        assertTrue(shift.getMessage().contains("maxShift") && shift.getMessage().contains("28"), shift.getMessage());
        var size = assertThrows(IllegalArgumentException.class, () -> new ImageAugmentation(0, 28, 28, 2, false));
        assertTrue(size.getMessage().contains("channels"), size.getMessage());
        var name = assertThrows(IllegalArgumentException.class, () -> ImageAugmentation.forDataset("svhn"));
        assertTrue(name.getMessage().contains("svhn") && name.getMessage().contains("mnist"), name.getMessage());
        ImageAugmentation a = ImageAugmentation.forDataset("mnist");
        var width = assertThrows(IllegalArgumentException.class, () -> a.copies(Nd4j.zeros(DataType.FLOAT, 2, 100), 2, 1));
        assertTrue(width.getMessage().contains("[n, 784]"), width.getMessage());
        var k = assertThrows(IllegalArgumentException.class, () -> a.copies(Nd4j.zeros(DataType.FLOAT, 2, 784), 0, 1));
        assertTrue(k.getMessage().contains("copies k"), k.getMessage());
    }
}
