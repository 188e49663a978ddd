package org.dpdl4j.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.LSTM;
import org.deeplearning4j.nn.conf.layers.RnnOutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.dpsgd.PrivateTraining;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.lossfunctions.LossFunctions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bench sequences}: DL4J's LSTM example programs' shapes, DL4J's own {@code fit(iterator)} against
 * {@code PrivateTraining.of(net, iterator)...train()} on the same iterator: minibatches as DL4J's
 * {@code SequenceRecordReaderDataSetIterator} with {@code ALIGN_END} makes them (each padded at the front to its own
 * longest sequence, the label on the last step, masks for both).
 */
@Command(name = "sequences", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Times DL4J's fit(iterator) and PrivateTraining.of(net, iterator).train() (DP-SGD, sigma 1.1, C 1, "
                + "expected batch = the iterator's batch) for one epoch each on random sequences shaped as a DL4J LSTM example "
                + "reads them: minibatches padded at the front to their own longest sequence (ALIGN_END), the label on the last "
                + "step, with masks. Prints seconds per epoch and per step of each, and their ratio. The private epoch includes "
                + "reading the iterator once into a temporary file.",
                "uci: UCISequenceClassification (1 feature, LSTM(10), RnnOutputLayer over 6 classes, 450 sequences, batch 10). "
                        + "imdb: ImdbReviewClassificationRNN (300-d word vectors, LSTM(256), 2 classes, batch 64)."})
final class BenchSequencesCommand implements Callable<Integer> {
    @Option(names = "--example", defaultValue = "uci", description = "uci or imdb (default ${DEFAULT-VALUE}).")
    String example;

    @Option(names = "--examples", description = "Sequences in the epoch (default: 450 for uci, 2,000 for imdb).")
    Integer examples;

    @Option(names = "--min-steps", description = "Shortest sequence (default: 40 for uci, 20 for imdb).")
    Integer minSteps;

    @Option(names = "--max-steps", description = "Longest sequence (default: 60 for uci, 256 for imdb, its truncation).")
    Integer maxSteps;

    @Option(names = "--json", description = "Print one JSON object as the last line.")
    boolean json;

    /** An example program's shape: features per step, LSTM units, classes, batch, and its defaults. */
    private record Shape(int features, int units, int classes, int batch, int examples, int minSteps, int maxSteps) {
    }

    private Shape shape() {
        Shape s = switch (example) {
            case "uci" -> new Shape(1, 10, 6, 10, 450, 40, 60);
            case "imdb" -> new Shape(300, 256, 2, 64, 2_000, 20, 256);
            default -> throw new IllegalArgumentException("--example: unknown example '" + example + "'; allowed: uci, imdb");
        };
        int n = examples != null ? examples : s.examples();
        int lo = minSteps != null ? minSteps : s.minSteps();
        int hi = maxSteps != null ? maxSteps : s.maxSteps();
        if (n < s.batch() || lo < 1 || hi < lo) {
            throw new IllegalArgumentException("--examples must be >= the batch (" + s.batch() + ") and 1 <= --min-steps <= "
                    + "--max-steps, got " + n + ", " + lo + ", " + hi);
        }
        return new Shape(s.features(), s.units(), s.classes(), s.batch(), n, lo, hi);
    }

    /** The example's minibatches: each padded at the front to its own longest sequence, the label on the last step. */
    private static List<DataSet> minibatches(Shape s, long seed) {
        SplittableRandom rng = new SplittableRandom(seed);
        List<DataSet> out = new ArrayList<>();
        for (int start = 0; start < s.examples(); start += s.batch()) {
            int b = Math.min(s.batch(), s.examples() - start);
            int[] steps = new int[b];
            int longest = 0;
            for (int i = 0; i < b; i++) {
                steps[i] = rng.nextInt(s.minSteps(), s.maxSteps() + 1);
                longest = Math.max(longest, steps[i]);
            }
            INDArray x = Nd4j.zeros(DataType.FLOAT, b, s.features(), longest);
            INDArray y = Nd4j.zeros(DataType.FLOAT, b, s.classes(), longest);
            INDArray fm = Nd4j.zeros(DataType.FLOAT, b, longest);
            INDArray lm = Nd4j.zeros(DataType.FLOAT, b, longest);
            for (int i = 0; i < b; i++) {
                int first = longest - steps[i];
                for (int t = first; t < longest; t++) {
                    fm.putScalar(i, t, 1.0);
                    for (int f = 0; f < s.features(); f++) {
                        x.putScalar(new int[]{i, f, t}, rng.nextDouble() - 0.5);
                    }
                }
                y.putScalar(new int[]{i, rng.nextInt(s.classes()), longest - 1}, 1.0);
                lm.putScalar(i, longest - 1, 1.0);
            }
            out.add(new DataSet(x, y, fm, lm));
        }
        return out;
    }

    private static MultiLayerNetwork network(Shape s) {
        MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(1).updater(new Adam(0.005)).list()
                .layer(new LSTM.Builder().nOut(s.units()).activation(Activation.TANH).build())
                .layer(new RnnOutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(s.classes()).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(s.features())).build());
        net.init();
        return net;
    }

    @Override
    public Integer call() {
        Shape s = shape();
        List<DataSet> batches = minibatches(s, 7);
        int steps = batches.size();
        // a short warm-up of each (the JIT, ND4J's workspaces), then one timed epoch of each
        List<DataSet> warm = batches.subList(0, Math.min(3, steps));
        network(s).fit(new ListDataSetIterator<>(warm, s.batch()), 1);
        PrivateTraining.of(network(s), new ListDataSetIterator<>(warm, s.batch())).noiseMultiplier(1.1).clipNorm(1)
                .expectedBatchSize(s.batch()).epochs(1).seed(1).train();

        MultiLayerNetwork plain = network(s);
        long t0 = System.nanoTime();
        plain.fit(new ListDataSetIterator<>(batches, s.batch()), 1);
        double fitSeconds = (System.nanoTime() - t0) / 1e9;

        MultiLayerNetwork priv = network(s);
        t0 = System.nanoTime();
        PrivateTraining.of(priv, new ListDataSetIterator<>(batches, s.batch())).noiseMultiplier(1.1).clipNorm(1)
                .expectedBatchSize(s.batch()).epochs(1).seed(1).train();
        double privateSeconds = (System.nanoTime() - t0) / 1e9;

        System.out.printf(java.util.Locale.ROOT, "example %s: %d sequences of %d to %d steps (%d features), LSTM(%d), %d classes, "
                        + "batch %d, %d steps per epoch, %d ND4J op threads%n", example, s.examples(), s.minSteps(), s.maxSteps(),
                s.features(), s.units(), s.classes(), s.batch(), steps, Nd4j.getEnvironment().maxMasterThreads());
        System.out.printf(java.util.Locale.ROOT, "%-44s %8.2f s per epoch  %7.1f ms per step%n", "DL4J fit(iterator), non-private:",
                fitSeconds, 1e3 * fitSeconds / steps);
        System.out.printf(java.util.Locale.ROOT, "%-44s %8.2f s per epoch  %7.1f ms per step%n", "PrivateTraining (DP-SGD), iterator:",
                privateSeconds, 1e3 * privateSeconds / steps);
        System.out.printf(java.util.Locale.ROOT, "ratio private / fit: %.2f%n", privateSeconds / fitSeconds);
        if (json) {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("example", example);
            out.put("examples", s.examples());
            out.put("min_steps", s.minSteps());
            out.put("max_steps", s.maxSteps());
            out.put("batch_size", s.batch());
            out.put("steps_per_epoch", steps);
            out.put("fit_seconds", fitSeconds);
            out.put("private_seconds", privateSeconds);
            out.put("ratio", privateSeconds / fitSeconds);
            Cli.printJsonLine(System.out, out);
        }
        return 0;
    }
}
