package org.dpdl4j.datasets;

import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Where datasets live: {@code $DPDL4J_DATA} if set, else {@code $HOME/.cache/dpdl4j}, else (no {@code HOME} in the
 * environment) the JVM's {@code user.home}; one sub-directory per dataset ({@code mnist}, {@code fashion-mnist},
 * {@code cifar10}). The launcher and {@code scripts/fetch-data.sh} follow the same rule (they read {@code $HOME}, not
 * the JVM's {@code user.home}, which differs from it under {@code sudo -E} and in some containers), so that data is
 * fetched where it is looked for.
 */
public final class DatasetCache {
    private DatasetCache() {
    }

    /**
     * The cache root, from this process's environment and system properties.
     *
     * @return {@code $DPDL4J_DATA}, else {@code $HOME/.cache/dpdl4j}, else {@code user.home}'s {@code .cache/dpdl4j}
     */
    public static Path root() {
        return root(System.getenv("DPDL4J_DATA"), System.getenv("HOME"), System.getProperty("user.home"));
    }

    /** The rule of {@link #root()} for the given environment values (each may be null or blank). */
    static Path root(String data, String home, String userHome) {
        if (data != null && !data.isBlank()) {
            return Paths.get(data);
        }
        return Paths.get(home != null && !home.isBlank() ? home : userHome, ".cache", "dpdl4j");
    }
}
