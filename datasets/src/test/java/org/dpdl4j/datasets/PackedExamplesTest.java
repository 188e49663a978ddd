package org.dpdl4j.datasets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.TestDataSetIterator;
import org.nd4j.linalg.factory.Nd4j;

/** A DataSetIterator read once into records gives back exactly its examples, masks and data type, by index. */
class PackedExamplesTest {
    /** DataSets of 4, 1 and 6 rows cut from the given arrays (any may be null but the features and labels). */
    private static TestDataSetIterator cut(INDArray x, INDArray y, INDArray fm, INDArray lm) {
        List<DataSet> parts = new ArrayList<>();
        int at = 0;
        for (int k : new int[]{4, 1, 6}) {
            int[] rows = java.util.stream.IntStream.range(at, at + k).toArray();
            parts.add(new DataSet(LabeledData.gatherRows(x, rows), LabeledData.gatherRows(y, rows),
                    fm == null ? null : LabeledData.gatherRows(fm, rows), lm == null ? null : LabeledData.gatherRows(lm, rows)));
            at += k;
        }
        return new TestDataSetIterator(parts, 1); // one DataSet per next()
    }

    /**
     * Masked sequences come back exactly in float64, each cut to its feature mask's span (first to last unmasked step)
     * and padded at its end to the longest of the batch read, its masks with it: what an example is does not depend on
     * the padding its DataSet gave it. Computed here by hand.
     */
    @Test
    void sequencesWithMasksComeBackExactlyInFloat64(@TempDir Path tmp) throws Exception {
        Nd4j.getRandom().setSeed(3);
        INDArray x = Nd4j.rand(DataType.DOUBLE, 11, 5, 7).muli(Math.PI); // [n, f, T], values float32 cannot hold
        INDArray y = Nd4j.rand(DataType.DOUBLE, 11, 4, 7);               // per-step labels [n, classes, T]
        INDArray fm = Nd4j.rand(DataType.DOUBLE, 11, 7).gt(0.3).castTo(DataType.DOUBLE);
        fm.getRow(2).assign(0); // a sequence without a step: kept as one masked step
        INDArray lm = Nd4j.rand(DataType.DOUBLE, 11, 7).gt(0.5).castTo(DataType.DOUBLE);
        int[][] span = new int[11][];
        long values = 0;
        for (int i = 0; i < 11; i++) {
            int first = -1;
            int last = -1;
            for (int s = 0; s < 7; s++) {
                if (fm.getDouble(i, s) != 0) {
                    first = first < 0 ? s : first;
                    last = s;
                }
            }
            span[i] = first < 0 ? new int[]{0, 1} : new int[]{first, last + 1};
            values += (5 + 4 + 1 + 1) * (span[i][1] - span[i][0]);
        }
        Path file = tmp.resolve("seq.examples");
        try (PackedExamples packed = PackedExamples.pack(cut(x, y, fm, lm), file)) {
            assertEquals(11, packed.size());
            assertEquals(4, packed.numClasses());
            assertEquals(values * 8, Files.size(file), "each record its own steps, float64");
            int[] rows = {0, 2, 3, 4, 10};
            LabeledData b = packed.read(rows);
            assertEquals(DataType.DOUBLE, b.features().dataType());
            int t = 0;
            for (int r : rows) {
                t = Math.max(t, span[r][1] - span[r][0]);
            }
            assertEquals(t, b.features().size(2), "padded to the batch's longest");
            for (int k = 0; k < rows.length; k++) {
                int r = rows[k];
                int kept = span[r][1] - span[r][0];
                for (int s = 0; s < t; s++) {
                    for (int f = 0; f < 5; f++) {
                        assertEquals(s < kept ? x.getDouble(r, f, span[r][0] + s) : 0, b.features().getDouble(k, f, s), 0);
                    }
                    for (int c = 0; c < 4; c++) {
                        assertEquals(s < kept ? y.getDouble(r, c, span[r][0] + s) : 0, b.labels().getDouble(k, c, s), 0);
                    }
                    assertEquals(s < kept ? fm.getDouble(r, span[r][0] + s) : 0, b.featureMask().getDouble(k, s), 0);
                    assertEquals(s < kept ? lm.getDouble(r, span[r][0] + s) : 0, b.labelMask().getDouble(k, s), 0);
                }
            }
            assertEquals(0, packed.read(new int[0]).size());
            var unsorted = assertThrows(IllegalArgumentException.class, () -> packed.read(new int[]{3, 2}));
            assertTrue(unsorted.getMessage().contains("ascending and in [0, 11)"), unsorted.getMessage());
            assertThrows(IllegalArgumentException.class, () -> packed.read(new int[]{11}));
        }
        assertTrue(Files.exists(file), "a file given by the caller stays");
    }

    /**
     * DL4J's sequence iterators pad each minibatch to its own longest sequence (the issue: "DataSet 2 has per-example
     * shapes [[1, 58], …], DataSet 0 has [[1, 59], …]" was refused). DataSets of different lengths, padded at the end or
     * at the start (ALIGN_END), with per-sequence labels: each example comes back as its own steps, the same whichever
     * DataSet and padding it came in; without masks, a batch of different lengths gets masks of its own steps.
     */
    @Test
    void sequencesOfDifferentLengthsAreTheirOwnSteps(@TempDir Path tmp) {
        java.util.Random random = new java.util.Random(4);
        double[][][] seqs = new double[9][][];
        for (int i = 0; i < 9; i++) {
            seqs[i] = new double[2][3 + i % 4 * 5];
            for (double[] row : seqs[i]) {
                for (int s = 0; s < row.length; s++) {
                    row[s] = random.nextGaussian();
                }
            }
        }
        for (boolean alignEnd : new boolean[]{false, true}) {
            List<DataSet> parts = new ArrayList<>();
            for (int from = 0; from < 9; from += 3) { // three examples a DataSet, padded to their longest
                int t = 0;
                for (int i = from; i < from + 3; i++) {
                    t = Math.max(t, seqs[i][0].length);
                }
                INDArray x = Nd4j.zeros(DataType.DOUBLE, 3, 2, t);
                INDArray m = Nd4j.zeros(DataType.DOUBLE, 3, t);
                INDArray y = Nd4j.zeros(DataType.DOUBLE, 3, 2);
                for (int i = 0; i < 3; i++) {
                    double[][] q = seqs[from + i];
                    int shift = alignEnd ? t - q[0].length : 0;
                    for (int s = 0; s < q[0].length; s++) {
                        x.putScalar(new int[]{i, 0, shift + s}, q[0][s]);
                        x.putScalar(new int[]{i, 1, shift + s}, q[1][s]);
                        m.putScalar(i, shift + s, 1);
                    }
                    y.putScalar(i, (from + i) % 2, 1);
                }
                parts.add(new DataSet(x, y, m, null));
            }
            try (PackedExamples packed = PackedExamples.packToTemporaryFile(new TestDataSetIterator(parts, 1))) {
                assertArrayEquals(new long[]{2, 18}, packed.exampleShape(), "the longest sequence's shape");
                for (int i = 0; i < 9; i++) {
                    LabeledData one = packed.read(new int[]{i});
                    assertEquals(seqs[i][0].length, one.features().size(2), "example " + i + " alone: its own steps");
                    assertEquals(Nd4j.createFromArray(seqs[i]).reshape(1, 2, seqs[i][0].length), one.features());
                    assertEquals(seqs[i][0].length, one.featureMask().sumNumber().intValue());
                }
                LabeledData batch = packed.read(new int[]{0, 3, 8});
                assertEquals(18, batch.features().size(2));
                assertEquals(Nd4j.createFromArray(seqs[0][1]), batch.features().get(org.nd4j.linalg.indexing.NDArrayIndex.point(0),
                        org.nd4j.linalg.indexing.NDArrayIndex.point(1), org.nd4j.linalg.indexing.NDArrayIndex.interval(0, 3)));
            }
        }
        List<DataSet> unmasked = List.of(new DataSet(Nd4j.rand(DataType.DOUBLE, 2, 2, 4), Nd4j.zeros(DataType.DOUBLE, 2, 2)),
                new DataSet(Nd4j.rand(DataType.DOUBLE, 2, 2, 6), Nd4j.zeros(DataType.DOUBLE, 2, 2)));
        try (PackedExamples packed = PackedExamples.packToTemporaryFile(new TestDataSetIterator(unmasked, 1))) {
            LabeledData batch = packed.read(new int[]{1, 2});
            assertEquals(Nd4j.createFromArray(new double[][]{{1, 1, 1, 1, 0, 0}, {1, 1, 1, 1, 1, 1}}), batch.featureMask(),
                    "masks of each example's own steps");
        }
    }

    @Test
    void imagesWithoutMasksInFloat32AndTheTemporaryFileIsDeleted() {
        INDArray x = Nd4j.rand(DataType.FLOAT, 11, 2, 3, 4);
        INDArray y = Nd4j.eye(11).getColumns(0, 1, 2).castTo(DataType.FLOAT);
        Path file;
        try (PackedExamples packed = PackedExamples.packToTemporaryFile(cut(x, y, null, null))) {
            file = packed.file();
            assertTrue(Files.exists(file));
            assertEquals(11L * (24 + 3) * 4, packed.bytes());
            LabeledData all = packed.read(java.util.stream.IntStream.range(0, 11).toArray());
            assertEquals(x, all.features());
            assertEquals(y, all.labels());
            assertNull(all.featureMask());
            assertNull(all.labelMask());
            assertArrayEquals(new long[]{2, 3, 4}, packed.exampleShape());
        }
        assertFalse(Files.exists(file), "the temporary file is deleted on close");
    }

    @Test
    void dataSetsThatDisagreeAreRefusedByNumberAndNothingIsLeft(@TempDir Path tmp) {
        List<DataSet> parts = List.of(new DataSet(Nd4j.rand(DataType.FLOAT, 3, 6), Nd4j.rand(DataType.FLOAT, 3, 2)),
                new DataSet(Nd4j.rand(DataType.FLOAT, 2, 6), Nd4j.rand(DataType.FLOAT, 2, 2)),
                new DataSet(Nd4j.rand(DataType.FLOAT, 2, 7), Nd4j.rand(DataType.FLOAT, 2, 2)));
        Path file = tmp.resolve("bad.examples");
        var e = assertThrows(IllegalArgumentException.class, () -> PackedExamples.pack(new TestDataSetIterator(parts, 1), file));
        assertTrue(e.getMessage().contains("DataSet 2 of the iterator") && e.getMessage().contains("[[7], [2], null, null]")
                && e.getMessage().contains("[[6], [2], null, null]"), e.getMessage());
        assertFalse(Files.exists(file), "nothing half-written is left");
        var empty = assertThrows(IllegalArgumentException.class,
                () -> PackedExamples.pack(new TestDataSetIterator(new ArrayList<DataSet>(), 1), tmp.resolve("empty.examples")));
        assertTrue(empty.getMessage().contains("between 1 and"), empty.getMessage());
    }

    /**
     * A full java.io.tmpdir (issue 69, item 7) is named as such: "no space left" on its device, what was written, and the
     * setting that moves the file; another failure keeps its own words.
     */
    @org.junit.jupiter.api.Test
    void aFullTemporaryDirectoryIsNamedAsSuch(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) {
        String full = PackedExamples.describe(new java.io.IOException("No space left on device"), tmp.resolve("x.examples"), 5_000_000);
        org.junit.jupiter.api.Assertions.assertTrue(full.startsWith("no space left on the device of " + tmp) && full.contains("5.0 MB were written")
                && full.contains("-Djava.io.tmpdir=DIR") && full.contains("DPDL4J_JAVA_OPTS"), full);
        String other = PackedExamples.describe(new java.io.IOException("Input/output error"), tmp.resolve("x.examples"), 0);
        org.junit.jupiter.api.Assertions.assertEquals("IOException: Input/output error", other);
    }
}
