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

    private CrashPoint() {
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
