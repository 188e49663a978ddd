package org.dpdl4j.spark;

import java.util.Objects;
import org.deeplearning4j.nn.api.Model;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.accounting.PrivacyEvents;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.dpsgd.TrainingListener;
import org.dpdl4j.dpsgd.TrainingResult;
import org.dpdl4j.tuning.Candidate;
import org.dpdl4j.tuning.RetrainableMechanism;
import org.dpdl4j.tuning.TrainingMechanism;
import org.dpdl4j.tuning.TrialResult;
import org.dpdl4j.tuning.TuningListener;

/**
 * Q on the cluster: every run is one Spark task; everything else (the events, the candidates' settings) is answered on
 * the driver by Q itself. The task's listener sees no steps (progress is per trial).
 */
class SparkMechanism implements TrainingMechanism {
    final SparkCluster cluster;
    final TrainingMechanism mechanism;
    /** Q serialised once (its data replaced by handles), for every task. */
    final SparkCluster.Shipped shipped;

    /** @throws IllegalArgumentException if Q cannot be serialised */
    SparkMechanism(SparkCluster cluster, TrainingMechanism mechanism) {
        this.cluster = Objects.requireNonNull(cluster, "cluster");
        this.mechanism = Objects.requireNonNull(mechanism, "mechanism");
        this.shipped = cluster.ship(mechanism);
    }

    /** Q on the cluster, retrainable if Q is. */
    static SparkMechanism of(SparkCluster cluster, TrainingMechanism mechanism) {
        return mechanism instanceof RetrainableMechanism r ? new Retrainable(cluster, r) : new SparkMechanism(cluster, mechanism);
    }

    @Override
    public PrivacyEvent event(Candidate candidate) {
        return mechanism.event(candidate);
    }

    /**
     * Runs the trial as a Spark task with this candidate and seed (a retried task recomputes it identically).
     *
     * @throws IllegalStateException if Q failed on the executor (with its message), or the job failed
     */
    @Override
    public TrialResult run(Candidate candidate, long seed, TuningListener listener, int trial) {
        RemoteCall.Outcome o = cluster.call(shipped, new RemoteCall.Run(candidate, seed, trial), "trial " + (trial + 1) + ": " + candidate);
        return new TrialResult(trial, candidate, o.network(), o.score(), mechanism.event(candidate), o.seconds(), null);
    }

    /** Q's training calls on the cluster as well. */
    static final class Retrainable extends SparkMechanism implements RetrainableMechanism {
        private final RetrainableMechanism r;

        Retrainable(SparkCluster cluster, RetrainableMechanism r) {
            super(cluster, r);
            this.r = r;
        }

        @Override
        public ExampleSource privateData() {
            return r.privateData();
        }

        @Override
        public ExampleSource train() {
            return r.train();
        }

        @Override
        public ExampleSource validation() {
            return r.validation();
        }

        @Override
        public double validationFraction() {
            return r.validationFraction();
        }

        @Override
        public double scoreNoiseCount() {
            return r.scoreNoiseCount();
        }

        @Override
        public RetrainableMechanism withScoreNoiseCount(double s) {
            return new Retrainable(cluster, r.withScoreNoiseCount(s));
        }

        @Override
        public RetrainableMechanism withData(ExampleSource privateData, double scoreNoiseCount) {
            return new Retrainable(cluster, r.withData(privateData, scoreNoiseCount));
        }

        @Override
        public RetrainableMechanism nonPrivateCopy() {
            return new Retrainable(cluster, r.nonPrivateCopy());
        }

        @Override
        public boolean hasFixedSamplingRate() {
            return r.hasFixedSamplingRate();
        }

        @Override
        public Candidate explicit(Candidate c) {
            return r.explicit(c);
        }

        @Override
        public PrivacyEvent trainingEvent(Candidate c) {
            return r.trainingEvent(c);
        }

        @Override
        public double expectedGradients(Candidate c) {
            return r.expectedGradients(c);
        }

        @Override
        public TrainingResult train(Candidate c, ExampleSource data, long seed, Model init, TrainingListener listener) {
            if (!(data instanceof LabeledData inMemory)) {
                throw new IllegalArgumentException("a tuning's runs on the cluster take their data in memory, not read by index ("
                        + data + ")");
            }
            return result(cluster.call(shipped, new RemoteCall.Train(c, inMemory, seed, RemoteCall.Outcome.bytes(init)),
                    "training on " + data.size() + " examples: " + c));
        }

        @Override
        public TrainingResult trainOnTrainingSplit(Candidate c, long seed, TrainingListener listener) {
            return result(cluster.call(shipped, new RemoteCall.TrainOnSplit(c, seed), "final run: " + c));
        }

        private static TrainingResult result(RemoteCall.Outcome o) {
            return new TrainingResult(o.network(), PrivacyEvents.fromMap(o.event()), o.stepsTaken(), o.stoppedAtBudget(),
                    o.expectedExamples(), o.seconds());
        }
    }
}
