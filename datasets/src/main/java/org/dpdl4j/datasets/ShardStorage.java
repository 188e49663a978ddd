package org.dpdl4j.datasets;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ServiceLoader;
import java.util.regex.Pattern;

/**
 * The directory that holds packed shards ({@link PackedShards}): a local (or mounted) directory, or a directory of any
 * file system a {@link Provider} on the class path serves, such as Hadoop's {@code FileSystem} for {@code hdfs://} and
 * {@code s3a://} (the {@code dpdl4j-spark} module's provider). Serializable, so that a cluster's executors open the
 * directory the driver named.
 */
public interface ShardStorage extends Serializable {

    /**
     * The directory's location, as given: a path, or a URI such as {@code hdfs://namenode/data/train}.
     *
     * @return the location (an absolute path for a {@link Local} directory)
     */
    String location();

    /**
     * A subdirectory.
     *
     * @param child a relative name without separators, e.g. {@code train}
     * @return the storage of {@code location()/child}
     */
    ShardStorage resolve(String child);

    /**
     * The length of a file in this directory.
     *
     * @param name the file's name
     * @return its length in bytes, or −1 if there is no such regular file
     * @throws IOException if the file system cannot be asked
     */
    long length(String name) throws IOException;

    /**
     * Opens a file in this directory to read from its start (to hash it, or read the manifest).
     *
     * @param name the file's name
     * @return a stream the caller closes
     * @throws IOException if it cannot be opened
     */
    InputStream open(String name) throws IOException;

    /**
     * Opens a file for positional reads, which several threads may issue at once.
     *
     * @param name the file's name
     * @return the open file, which the caller closes
     * @throws IOException if it cannot be opened
     */
    RandomReads openForReads(String name) throws IOException;

    /**
     * The location of a file in this directory, for messages.
     *
     * @param name the file's name
     * @return e.g. {@code hdfs://namenode/data/train/manifest.json}
     */
    default String describe(String name) {
        return location().endsWith("/") ? location() + name : location() + "/" + name;
    }

    /** An open file read by position; thread-safe. */
    interface RandomReads extends Closeable {
        /**
         * Reads up to {@code length} bytes at {@code position} of the file into {@code buffer[offset, offset + length)}.
         *
         * @param position the file offset of the first byte, ≥ 0
         * @param buffer   where the bytes go
         * @param offset   the first index of {@code buffer} written
         * @param length   the most bytes read
         * @return the bytes read, or −1 at the end of the file
         * @throws IOException if the read fails
         */
        int read(long position, byte[] buffer, int offset, int length) throws IOException;
    }

    /**
     * A file system for the storage of URIs of some schemes, found with {@link ServiceLoader} (registered in
     * {@code META-INF/services/org.dpdl4j.datasets.ShardStorage$Provider}).
     */
    interface Provider {
        /**
         * Whether this provider serves a URI scheme.
         *
         * @param scheme a URI scheme other than {@code file}, e.g. {@code hdfs}, in lower case
         * @return whether this provider opens locations of that scheme
         */
        boolean handles(String scheme);

        /**
         * The storage at a location of a scheme this provider serves.
         *
         * @param location a URI of a scheme this provider {@link #handles}
         * @return its storage
         * @throws IllegalArgumentException if the location cannot be opened
         */
        ShardStorage storage(String location);
    }

    /** A URI with a scheme of two or more letters (so that a Windows drive letter stays a path). */
    Pattern URI_SCHEME = Pattern.compile("^([a-zA-Z][a-zA-Z0-9+.-]+):.*");

    /**
     * The storage at a location: a path or a {@code file:} URI is a local directory; a URI of another scheme is opened
     * by the first {@link Provider} on the class path that handles its scheme.
     *
     * @param location a path, {@code file:/…}, or e.g. {@code hdfs://namenode:8020/data/mnist}
     * @return the storage
     * @throws IllegalArgumentException if no provider handles the scheme (naming it and what to add)
     */
    static ShardStorage of(String location) {
        var m = URI_SCHEME.matcher(location);
        if (!m.matches()) {
            return local(Path.of(location));
        }
        String scheme = m.group(1).toLowerCase(java.util.Locale.ROOT);
        if (scheme.equals("file")) {
            return local(Path.of(URI.create(location)));
        }
        for (Provider p : ServiceLoader.load(Provider.class, ShardStorage.class.getClassLoader())) {
            if (p.handles(scheme)) {
                return p.storage(location);
            }
        }
        throw new IllegalArgumentException(location + ": no file system for the scheme '" + scheme + "' is on the class path; "
                + "shards on a distributed file system (hdfs://, s3a://, …) are read through Hadoop's FileSystem, which the "
                + "dpdl4j-spark module brings (its configuration, e.g. core-site.xml, on the class path or HADOOP_CONF_DIR)");
    }

    /**
     * A local (or mounted) directory.
     *
     * @param dir the directory
     * @return its storage, by its absolute path
     */
    static ShardStorage local(Path dir) {
        return new Local(dir.toAbsolutePath().toString());
    }

    /**
     * A directory of the default file system, read with {@link FileChannel}'s positional reads ({@code pread}).
     *
     * @param location the directory's path, as a string
     */
    record Local(String location) implements ShardStorage {
        /**
         * The directory as a path.
         *
         * @return {@code Path.of(location)}
         */
        public Path path() {
            return Path.of(location);
        }

        @Override
        public ShardStorage resolve(String child) {
            return new Local(path().resolve(child).toString());
        }

        @Override
        public long length(String name) throws IOException {
            Path f = path().resolve(name);
            return Files.isRegularFile(f) ? Files.size(f) : -1;
        }

        @Override
        public InputStream open(String name) throws IOException {
            return Files.newInputStream(path().resolve(name));
        }

        @Override
        public RandomReads openForReads(String name) throws IOException {
            FileChannel ch = FileChannel.open(path().resolve(name), StandardOpenOption.READ); // positional reads: shared
            return new RandomReads() {
                @Override
                public int read(long position, byte[] buffer, int offset, int length) throws IOException {
                    return ch.read(ByteBuffer.wrap(buffer, offset, length), position);
                }

                @Override
                public void close() throws IOException {
                    ch.close();
                }
            };
        }

        @Override
        public String describe(String name) {
            return path().resolve(name).toString();
        }
    }

    /**
     * Reads a whole (small) file, such as a manifest.
     *
     * @param name the file's name
     * @return its bytes
     * @throws UncheckedIOException if it cannot be read
     */
    default byte[] readAll(String name) {
        try (InputStream in = open(name)) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + describe(name), e);
        }
    }
}
