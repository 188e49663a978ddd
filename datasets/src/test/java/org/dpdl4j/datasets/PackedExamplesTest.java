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

    @Test
    void sequencesWithMasksComeBackExactlyInFloat64(@TempDir Path tmp) throws Exception {
        Nd4j.getRandom().setSeed(3);
        INDArray x = Nd4j.rand(DataType.DOUBLE, 11, 5, 7).muli(Math.PI); // [n, f, T], values float32 cannot hold
        INDArray y = Nd4j.rand(DataType.DOUBLE, 11, 4, 7);               // per-step labels [n, classes, T]
        INDArray fm = Nd4j.rand(DataType.DOUBLE, 11, 7).gt(0.3).castTo(DataType.DOUBLE);
        INDArray lm = Nd4j.rand(DataType.DOUBLE, 11, 7).gt(0.5).castTo(DataType.DOUBLE);
        Path file = tmp.resolve("seq.examples");
        try (PackedExamples packed = PackedExamples.pack(cut(x, y, fm, lm), file)) {
            assertEquals(11, packed.size());
            assertEquals(4, packed.numClasses());
            assertArrayEquals(new long[]{5, 7}, packed.exampleShape());
            assertEquals(11L * (5 * 7 + 4 * 7 + 7 + 7) * 8, Files.size(file), "n records of float64 values");
            int[] rows = {0, 3, 4, 10};
            LabeledData b = packed.read(rows);
            assertEquals(DataType.DOUBLE, b.features().dataType());
            assertEquals(LabeledData.gatherRows(x, rows), b.features());
            assertEquals(LabeledData.gatherRows(y, rows), b.labels());
            assertEquals(LabeledData.gatherRows(fm, rows), b.featureMask());
            assertEquals(LabeledData.gatherRows(lm, rows), b.labelMask());
            assertEquals(0, packed.read(new int[0]).size());
            var unsorted = assertThrows(IllegalArgumentException.class, () -> packed.read(new int[]{3, 2}));
            assertTrue(unsorted.getMessage().contains("ascending and in [0, 11)"), unsorted.getMessage());
            assertThrows(IllegalArgumentException.class, () -> packed.read(new int[]{11}));
        }
        assertTrue(Files.exists(file), "a file given by the caller stays");
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
}
