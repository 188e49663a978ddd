package org.dpdl4j.release;

/**
 * Named moments of a run's lifecycle at which a test can stop the JVM as {@code kill -9} would (no cleanup, no
 * shutdown hooks), to check that no moment between a charge and its release loses or doubles it: the JVM halts with
 * status 137 at the point whose name the system property {@value #PROPERTY} holds. Without the property nothing
 * happens.
 */
public final class CrashPoint {
    /** The system property naming the point to halt at. */
    public static final String PROPERTY = "dpdl4j.crash-at";

    /**
     * The system property naming a file (by the end of its name, e.g. {@code ledger.jsonl.head}) whose atomic writes
     * fail as on a full file system ("No space left on device"), for the tests of what a full disk leaves behind.
     */
    public static final String DISK_FULL_PROPERTY = "dpdl4j.disk-full-at";

    private CrashPoint() {
    }

    /**
     * Throws as a full file system would if {@value #DISK_FULL_PROPERTY} names the end of {@code target}'s name.
     *
     * @param target the file about to be written
     * @throws java.nio.file.FileSystemException "No space left on device", naming the file, when the property names it
     */
    static void writing(java.nio.file.Path target) throws java.nio.file.FileSystemException {
        String full = System.getProperty(DISK_FULL_PROPERTY);
        if (full != null && !full.isEmpty() && target.toString().endsWith(full)) {
            throw new java.nio.file.FileSystemException(target.toString(), null, "No space left on device");
        }
    }

    /**
     * Halts the JVM (status 137, after flushing the console) if {@code name} is the point {@value #PROPERTY} names.
     *
     * @param name the moment, e.g. {@code "train:after-charge"}
     */
    public static void reached(String name) {
        if (name.equals(System.getProperty(PROPERTY))) {
            System.out.flush();
            System.err.flush();
            Runtime.getRuntime().halt(137);
        }
    }
}
