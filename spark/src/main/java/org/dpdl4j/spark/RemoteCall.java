package org.dpdl4j.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.dpsgd.Networks;
import org.deeplearning4j.util.ModelSerializer;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.dpsgd.TrainingResult;
import org.dpdl4j.tuning.Candidate;
import org.dpdl4j.tuning.RetrainableMechanism;
import org.dpdl4j.tuning.TrainingMechanism;
import org.dpdl4j.tuning.TrialResult;
import org.dpdl4j.tuning.TuningListener;

/**
 * One call of the base mechanism Q as a Spark task runs it: everything it needs (the candidate, the seed; Q with its
 * settings travels beside it) goes with the task, so a retried task computes the same output again. It writes nothing and returns the
 * model (as {@link ModelSerializer} bytes, parameters and updater state bit for bit) with the score or the training's
 * facts; a failure of Q is returned as a message, so that Spark does not retry a run that fails the same way each
 * time (only lost executors and tasks are retried).
 */
sealed interface RemoteCall extends Serializable {
    /** Runs the call on Q in this JVM. */
    Outcome execute(TrainingMechanism mechanism);

    /** {@link TrainingMechanism#run}: a whole trial, with its score. */
    record Run(Candidate candidate, long seed, int trial) implements RemoteCall {
        @Override
        public Outcome execute(TrainingMechanism mechanism) {
            long start = System.nanoTime();
            TrialResult r = mechanism.run(candidate, seed, TuningListener.NONE, trial);
            return Outcome.of(r.model(), r.score(), null, 0, false, 0, (System.nanoTime() - start) / 1e9);
        }
    }

    /** {@link RetrainableMechanism#train}: training on given data, optionally from a network's weights. */
    record Train(Candidate candidate, LabeledData data, long seed, byte[] init) implements RemoteCall {
        @Override
        public Outcome execute(TrainingMechanism mechanism) {
            return Outcome.of(((RetrainableMechanism) mechanism).train(candidate, data, seed, init == null ? null : Outcome.network(init), info -> { }));
        }
    }

    /** {@link RetrainableMechanism#trainOnTrainingSplit}: a final run on Q's own training split. */
    record TrainOnSplit(Candidate candidate, long seed) implements RemoteCall {
        @Override
        public Outcome execute(TrainingMechanism mechanism) {
            return Outcome.of(((RetrainableMechanism) mechanism).trainOnTrainingSplit(candidate, seed, info -> { }));
        }
    }

    /**
     * What a task returns.
     *
     * @param model            the network as {@link ModelSerializer} bytes (with updater), or null
     * @param score            the trial's released score (for {@link Run})
     * @param event            the training's event as {@link org.dpdl4j.accounting.PrivacyEvent#toMap} (training calls)
     * @param stepsTaken       steps the training took
     * @param stoppedAtBudget  whether it stopped at an ε budget
     * @param expectedExamples expected examples it processed
     * @param seconds          wall-clock time of the run on the executor
     * @param failure          Q's exception, as a message, or null
     * @param executor         the executor that ran it (operator record only)
     * @param setupSeconds     time the executor took to read the call: fetching and verifying its data the first time
     */
    record Outcome(byte[] model, double score, java.util.Map<String, Object> event, long stepsTaken, boolean stoppedAtBudget, double expectedExamples,
                   double seconds, String failure, String executor, double setupSeconds) implements Serializable {

        static Outcome of(Model net, double score, java.util.Map<String, Object> event, long steps, boolean stopped, double examples,
                          double seconds) {
            return new Outcome(bytes(net), score, event, steps, stopped, examples, seconds, null, null, 0);
        }

        static Outcome of(TrainingResult r) {
            return of(r.network(), Double.NaN, r.event().toMap(), r.stepsTaken(),
                    r.stoppedAtBudget(), r.expectedExamples(), r.seconds());
        }

        static Outcome failed(Throwable e) {
            return new Outcome(null, Double.NEGATIVE_INFINITY, null, 0, false, 0, 0, e.getClass().getSimpleName() + ": " + e.getMessage(),
                    null, 0);
        }

        Outcome on(String executorId, double setup) {
            return new Outcome(model, score, event, stepsTaken, stoppedAtBudget, expectedExamples, seconds, failure, executorId, setup);
        }

        Model network() {
            return model == null ? null : network(model);
        }

        static Model network(byte[] bytes) {
            try {
                return Networks.restore(bytes, true);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read a model returned by a Spark task", e);
            }
        }

        static byte[] bytes(Model net) {
            if (net == null) {
                return null;
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try {
                ModelSerializer.writeModel(net, out, true);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot serialise a trained model", e);
            }
            return out.toByteArray();
        }
    }
}
