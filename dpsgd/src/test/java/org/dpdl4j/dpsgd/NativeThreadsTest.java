package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.factory.Nd4j;

class NativeThreadsTest {
    private static int teamSize() {
        return NativeThreads.teamSize();
    }

    @Test
    void teamSizeIsPerThreadAndRestored() throws Exception {
        int mine = teamSize();
        assertTrue(mine >= 1, "the CPU backend's team size: " + mine);
        AtomicInteger seen = new AtomicInteger();
        AtomicInteger before = new AtomicInteger();
        AtomicInteger restored = new AtomicInteger();
        Thread other = new Thread(() -> {
            before.set(teamSize());
            int previous = NativeThreads.setForCallingThread(mine + 1);
            assertEquals(before.get(), previous, "the previous size returned");
            seen.set(teamSize());
            NativeThreads.setForCallingThread(previous);
            restored.set(teamSize());
        });
        other.start();
        other.join();
        assertEquals(mine + 1, seen.get(), "the other thread's team size");
        assertEquals(before.get(), restored.get(), "restored");
        assertEquals(mine, teamSize(), "this thread's team size changed when another thread set its own");
    }

    @Test
    void perWorkerSharesTheCoresAndRespectsNd4jsOpThreads() {
        int cores = Runtime.getRuntime().availableProcessors();
        int opThreads = Nd4j.getEnvironment().maxMasterThreads();
        assertEquals(Math.max(1, Math.min(opThreads, cores)), NativeThreads.perWorker(1));
        assertEquals(1, NativeThreads.perWorker(cores));
        assertEquals(1, NativeThreads.perWorker(4 * cores));
        try {
            Nd4j.getEnvironment().setMaxMasterThreads(1);
            assertEquals(1, NativeThreads.perWorker(1));
        } finally {
            Nd4j.getEnvironment().setMaxMasterThreads(opThreads);
        }
    }

    @Test
    void aParallelRunRestoresTheCallersTeamSize() {
        int before = teamSize();
        LabeledData train = LabeledData.fromBytes(new byte[64 * 784], new int[64], 10, 1, 28, 28);
        new DpSgdTrainer().train(Models.standardCnn(ModelOptions.mnist().withDataType(DataType.FLOAT)), train,
                DpSgdConfig.builder().samplingRate(0.25).noiseMultiplier(1.0).steps(2).seed(3).workers(2).build());
        assertEquals(before, teamSize());
    }
}
