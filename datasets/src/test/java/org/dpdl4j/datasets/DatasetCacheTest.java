package org.dpdl4j.datasets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DatasetCacheTest {
    /** One rule, as scripts/fetch-data.sh has it: $DPDL4J_DATA, else $HOME/.cache/dpdl4j, else user.home's. */
    @Test
    void theCacheFollowsTheLaunchersRule() {
        assertEquals(Paths.get("/data/x"), DatasetCache.root("/data/x", "/home/a", "/root"));
        assertEquals(Paths.get("/home/a/.cache/dpdl4j"), DatasetCache.root(null, "/home/a", "/root"));
        assertEquals(Paths.get("/home/a/.cache/dpdl4j"), DatasetCache.root(" ", "/home/a", "/root"));
        assertEquals(Paths.get("/root/.cache/dpdl4j"), DatasetCache.root(null, "", "/root"));
    }

    /** A directory where a dataset file belongs is named as such, not reported missing. */
    @Test
    void aDirectoryInPlaceOfADatasetFileIsSaidToBeOne(@TempDir Path dir) throws Exception {
        Path file = Files.createDirectories(dir.resolve("train-images-idx3-ubyte"));
        var e = assertThrows(InvalidDatasetException.class, () -> FileVerification.readVerified(file, null));
        assertTrue(e.getMessage().contains("is a directory"), e.getMessage());
    }
}
