package org.dpdl4j.spark;

import java.io.File;
import java.net.URI;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * A Hadoop file system of the scheme {@code rooted:} whose paths lie under the local directory named by the setting
 * {@code rooted.root}: a stand-in for a distributed file system in tests. A {@code rooted:///x} path is not a local
 * path, so a reader that opened it without Hadoop's {@code FileSystem}, or without the driver's settings, would fail.
 */
public class RootedFileSystem extends RawLocalFileSystem {
    @Override
    public URI getUri() {
        return URI.create("rooted:///");
    }

    @Override
    public String getScheme() {
        return "rooted";
    }

    @Override
    public File pathToFile(Path path) {
        checkPath(path);
        String root = getConf().get("rooted.root");
        if (root == null) {
            throw new IllegalStateException("rooted.root is not set");
        }
        return new File(root, path.toUri().getPath());
    }
}
