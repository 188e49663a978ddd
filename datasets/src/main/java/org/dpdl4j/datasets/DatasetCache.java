package org.dpdl4j.datasets;

import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Where datasets live: {@code $DPDL4J_DATA} if set, else {@code ~/.cache/dpdl4j}; one
 * sub-directory per dataset ({@code mnist}, {@code fashion-mnist}, {@code cifar10}).
 * {@code scripts/fetch-data.sh} fills it.
 */
public final class DatasetCache {
    private DatasetCache() {
    }

    /** The cache root. */
    public static Path root() {
        String env = System.getenv("DPDL4J_DATA");
        return env != null && !env.isBlank() ? Paths.get(env) : Paths.get(System.getProperty("user.home"), ".cache", "dpdl4j");
    }
}
