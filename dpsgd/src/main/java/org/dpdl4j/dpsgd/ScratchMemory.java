package org.dpdl4j.dpsgd;

import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.memory.conf.WorkspaceConfiguration;
import org.nd4j.linalg.api.memory.enums.AllocationPolicy;
import org.nd4j.linalg.api.memory.enums.LearningPolicy;
import org.nd4j.linalg.api.memory.enums.ResetPolicy;
import org.nd4j.linalg.api.memory.enums.SpillPolicy;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The scratch memory of one {@link PerExampleGradients}: an ND4J workspace per thread, reused across batches and chunks,
 * and grown ahead of a chunk that its record of earlier chunks predicts will not fit ({@link #open(int, int)}). It holds
 * nothing of the sums: closing a chunk's workspace leaves only what was detached or written outside it.
 */
final class ScratchMemory {
    /** A learning workspace that starts empty: what a pass with no prediction opens. */
    private static final WorkspaceConfiguration WORKSPACE = configuration(0);
    private final String workspaceId;
    /** The workspace and rows of the last chunk, whose bytes are learnt when the next chunk opens it. */
    private MemoryWorkspace lastScratch;
    private int lastScratchRows;
    /** The fewest and most rows of one chunk seen so far and the workspace bytes each used (0 rows: none yet). */
    private int fewestRows;
    private long fewestRowsBytes;
    private int mostRows;
    private long mostRowsBytes;

    /** @param workspaceId the workspace's name, unique to its owner (each thread has its own workspace of that name) */
    ScratchMemory(String workspaceId) {
        this.workspaceId = workspaceId;
    }

    /** Opens the workspace for a pass that is not a chunk of a batch (no prediction, nothing learnt). */
    MemoryWorkspace open() {
        return Nd4j.getWorkspaceManager().getAndActivateWorkspace(WORKSPACE, workspaceId);
    }

    /**
     * Opens the scratch workspace for a chunk of {@code rows} rows. ND4J's learning workspace grows to each new largest
     * cycle, over-allocating only the first time, and each growth allocates and zeroes the whole workspace again: with
     * Poisson batches every new largest chunk did so (zoo ResNet50, 2 workers, batch 32: about 7 % of the first 20
     * steps). So once chunks have run, a chunk whose bytes would not fit grows the workspace at once by at least a
     * quarter (up to the call's largest chunk, {@code rowsCap}), its bytes predicted from those seen: a cycle's bytes are a + b·rows
     * (a straight line through the fewest and most rows seen; from one chunk, bytes(r)·R/r, which bounds it as a ≥ 0).
     * A prediction that falls short only spills and grows as before; the sums are the same.
     */
    MemoryWorkspace open(int rows, int rowsCap) {
        var manager = Nd4j.getWorkspaceManager();
        long last = lastScratch == null ? 0 : lastScratch.getLastCycleAllocations();
        if (last > 0) {
            if (mostRows == 0 || lastScratchRows >= mostRows) {
                mostRows = lastScratchRows;
                mostRowsBytes = last;
            }
            if (fewestRows == 0 || lastScratchRows <= fewestRows) {
                fewestRows = lastScratchRows;
                fewestRowsBytes = last;
            }
        }
        lastScratchRows = rows;
        if (mostRows > 0 && manager.checkIfWorkspaceExists(workspaceId)) {
            MemoryWorkspace current = manager.getWorkspaceForCurrentThread(workspaceId);
            long capacity = current.getCurrentSize();
            if (capacity > 0 && capacity < predictedBytes(rows)) {
                int target = rows;
                while (target < Math.max(rows, rowsCap) && predictedBytes(target) < 1.25 * capacity) {
                    target++;
                }
                manager.destroyWorkspace(current);
                return lastScratch = manager.getAndActivateWorkspace(configuration((long) Math.ceil(1.05 * predictedBytes(target))),
                        workspaceId);
            }
        }
        return lastScratch = manager.getAndActivateWorkspace(WORKSPACE, workspaceId);
    }

    /** A chunk's predicted scratch bytes for the given rows, from the chunks seen (see {@link #open(int, int)}). */
    private double predictedBytes(int rows) {
        if (mostRows == fewestRows) {
            return (double) mostRowsBytes * rows / mostRows;
        }
        double perRow = (double) (mostRowsBytes - fewestRowsBytes) / (mostRows - fewestRows);
        return mostRowsBytes + Math.max(0, perRow) * (rows - mostRows);
    }

    /** Frees the calling thread's workspace (ND4J keeps a thread's workspaces until they are destroyed). */
    void release() {
        var manager = Nd4j.getWorkspaceManager();
        if (manager.checkIfWorkspaceExists(workspaceId)) {
            manager.destroyWorkspace(manager.getWorkspaceForCurrentThread(workspaceId));
        }
        lastScratch = null;
    }

    /** Whether the calling thread holds this workspace. */
    boolean held() {
        return Nd4j.getWorkspaceManager().checkIfWorkspaceExists(workspaceId);
    }

    /** A learning workspace of {@code initialBytes} to start with (0: learnt from its first cycle) that grows when a cycle spills. */
    private static WorkspaceConfiguration configuration(long initialBytes) {
        return WorkspaceConfiguration.builder().initialSize(initialBytes).overallocationLimit(0.3)
                .policyAllocation(AllocationPolicy.OVERALLOCATE).policyLearning(LearningPolicy.FIRST_LOOP)
                .policyReset(ResetPolicy.BLOCK_LEFT).policySpill(SpillPolicy.REALLOCATE).build();
    }
}
