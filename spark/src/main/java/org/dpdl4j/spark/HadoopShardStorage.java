package org.dpdl4j.spark;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.dpdl4j.datasets.ShardStorage;

/**
 * Packed shards on any file system Hadoop's {@link FileSystem} serves ({@code hdfs://}, {@code s3a://}, {@code abfs://},
 * …, with that file system's client on the class path), as Spark reads its own input: the driver and every executor
 * open the same URI. Shard records are read with Hadoop's positioned reads, which its file system specification requires
 * to be thread-safe ("if a stream implements PositionedReadable, positioned reads MUST be thread-safe", the
 * {@code FSDataInputStream} section of the Hadoop FileSystem specification).
 *
 * <p>Serialized to the executors with the settings that differ from Hadoop's {@code core-default.xml} (the driver's
 * {@code core-site.xml}, {@code hdfs-site.xml} and {@code spark.hadoop.*} settings), so executors need no configuration
 * files of their own.
 */
public final class HadoopShardStorage implements ShardStorage {
    private static final long serialVersionUID = 1L;
    private final String location;
    private final Map<String, String> settings;
    private transient FileSystem fs;
    private transient Configuration conf;

    private HadoopShardStorage(String location, Map<String, String> settings) {
        this.location = location.endsWith("/") ? location.substring(0, location.length() - 1) : location;
        this.settings = settings;
    }

    /**
     * The storage at a URI, with a Hadoop configuration.
     *
     * @param location a URI, e.g. {@code hdfs://namenode:8020/data/mnist/train}
     * @param conf     the configuration to open it with, e.g. a Spark context's {@code hadoopConfiguration()}; only its
     *                 settings that differ from {@code core-default.xml} are kept
     * @return the storage (the file system is contacted on first use)
     * @throws NullPointerException if location or conf is null
     */
    public static HadoopShardStorage of(String location, Configuration conf) {
        Objects.requireNonNull(location, "location");
        Configuration base = new Configuration(false);
        base.addResource("core-default.xml");
        Map<String, String> differ = new TreeMap<>();
        for (Map.Entry<String, String> e : conf) {
            if (!Objects.equals(base.getRaw(e.getKey()), e.getValue())) {
                differ.put(e.getKey(), e.getValue());
            }
        }
        return new HadoopShardStorage(location, differ);
    }

    /**
     * The same location opened with another configuration (a Spark context's, so that {@code spark.hadoop.*} settings
     * reach the executors).
     *
     * @param conf the configuration
     * @return the storage of the same location with {@code conf}'s settings
     */
    public HadoopShardStorage with(Configuration conf) {
        return of(location, conf);
    }

    @Override
    public String location() {
        return location;
    }

    @Override
    public ShardStorage resolve(String child) {
        return new HadoopShardStorage(location + "/" + child, settings);
    }

    @Override
    public long length(String name) throws IOException {
        try {
            FileStatus s = fs().getFileStatus(path(name));
            return s.isFile() ? s.getLen() : -1;
        } catch (FileNotFoundException e) {
            return -1;
        }
    }

    @Override
    public InputStream open(String name) throws IOException {
        return fs().open(path(name));
    }

    @Override
    public RandomReads openForReads(String name) throws IOException {
        FSDataInputStream in = fs().open(path(name));
        return new RandomReads() {
            @Override
            public int read(long position, byte[] buffer, int offset, int length) throws IOException {
                return in.read(position, buffer, offset, length); // PositionedReadable: thread-safe by the specification
            }

            @Override
            public void close() throws IOException {
                in.close();
            }
        };
    }

    private Path path(String name) {
        return new Path(location + "/" + name);
    }

    /** The file system, from Hadoop's cache (shared, so never closed here). */
    private synchronized FileSystem fs() throws IOException {
        if (fs == null) {
            conf = new Configuration();
            settings.forEach(conf::set);
            fs = FileSystem.get(URI.create(location), conf);
        }
        return fs;
    }

    /** Equal storages: the same location opened with the same settings. */
    @Override
    public boolean equals(Object o) {
        return o instanceof HadoopShardStorage h && h.location.equals(location) && h.settings.equals(settings);
    }

    @Override
    public int hashCode() {
        return location.hashCode() * 31 + settings.hashCode();
    }

    @Override
    public String toString() {
        return location;
    }

    /** Serves every scheme but {@code file} (a local directory) to {@link ShardStorage#of}, with {@code new Configuration()}. */
    public static final class Provider implements ShardStorage.Provider {
        @Override
        public boolean handles(String scheme) {
            return !scheme.equals("file");
        }

        @Override
        public ShardStorage storage(String location) {
            HadoopShardStorage s = of(location, new Configuration());
            try {
                s.fs(); // a scheme Hadoop does not know is refused here, by name
            } catch (IOException e) {
                throw new IllegalArgumentException(location + ": Hadoop's FileSystem cannot open it: " + e.getMessage(), e);
            }
            return s;
        }
    }
}
