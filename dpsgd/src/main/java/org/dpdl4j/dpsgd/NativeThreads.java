package org.dpdl4j.dpsgd;

import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.nativeblas.NativeOpsHolder;

/**
 * The native thread counts of DP-SGD workers on the CPU backend. libnd4j's ops, the oneDNN
 * primitives of {@link Dnnl} (both on libgomp) and OpenBLAS start their own thread teams, sized by
 * {@code OMP_NUM_THREADS} or the number of cores. With W workers each calling them, that is W teams
 * of that size on the same cores, and the teams' spinning threads took about 45% of the CPU time of
 * a 2-worker run on 2 cores (per-thread CPU ticks from {@code /proc}, {@code OMP_NUM_THREADS=2}).
 * So each worker thread sets its own OpenMP team size (a per-thread setting) and OpenBLAS's
 * process-wide thread count is set to the same value. Nothing is done on other backends.
 */
final class NativeThreads {
    private static final boolean CPU = Nd4j.getBackend().getClass().getSimpleName().startsWith("Cpu");

    private NativeThreads() {
    }

    /**
     * Native threads per worker for W workers: min(ND4J's op threads, cores / W), at least 1. ND4J's
     * op threads ({@code Nd4j.getEnvironment().setMaxMasterThreads}; in ND4J 1.0.0-M2.1
     * {@code setMaxThreads} changes nothing) are where a caller running several trainings at once says
     * its share of the cores.
     */
    static int perWorker(int workers) {
        int cores = Runtime.getRuntime().availableProcessors();
        return Math.max(1, Math.min(Nd4j.getEnvironment().maxMasterThreads(), cores / workers));
    }

    /** The calling thread's OpenMP team size; 0 off the CPU backend. */
    static int teamSize() {
        return CPU ? NativeOpsHolder.getInstance().getDeviceNativeOps().ompGetMaxThreads() : 0;
    }

    /**
     * Sets the calling thread's OpenMP team size to n (it affects no other thread) and returns the
     * previous size; a no-op returning n off the CPU backend.
     */
    static int setForCallingThread(int n) {
        if (!CPU) {
            return n;
        }
        int previous = teamSize();
        if (previous != n) {
            NativeOpsHolder.getInstance().getDeviceNativeOps().setOmpNumThreads(n);
        }
        return previous;
    }

    /**
     * Sets OpenBLAS's process-wide thread count to n. It is not restored afterwards: trainings running
     * at the same time share it (and compute the same n from the same settings), and a run's last bits
     * depend on it, so it follows the settings rather than whichever run ran before.
     */
    static void setBlasThreads(int n) {
        if (CPU && Nd4j.factory().blas().getMaxThreads() != n) {
            Nd4j.factory().blas().setMaxThreads(n);
        }
    }
}
