package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.CNN2DFormat;
import org.deeplearning4j.nn.conf.ComputationGraphConfiguration;
import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.RNNFormat;
import org.deeplearning4j.nn.conf.graph.AttentionVertex;
import org.deeplearning4j.nn.conf.graph.ElementWiseVertex;
import org.deeplearning4j.nn.conf.graph.FrozenVertex;
import org.deeplearning4j.nn.conf.graph.GraphVertex;
import org.deeplearning4j.nn.conf.graph.L2NormalizeVertex;
import org.deeplearning4j.nn.conf.graph.L2Vertex;
import org.deeplearning4j.nn.conf.graph.MergeVertex;
import org.deeplearning4j.nn.conf.graph.PoolHelperVertex;
import org.deeplearning4j.nn.conf.graph.PreprocessorVertex;
import org.deeplearning4j.nn.conf.graph.ReshapeVertex;
import org.deeplearning4j.nn.conf.graph.ScaleVertex;
import org.deeplearning4j.nn.conf.graph.ShiftVertex;
import org.deeplearning4j.nn.conf.graph.StackVertex;
import org.deeplearning4j.nn.conf.graph.SubsetVertex;
import org.deeplearning4j.nn.conf.graph.UnstackVertex;
import org.deeplearning4j.nn.conf.graph.rnn.DuplicateToTimeSeriesVertex;
import org.deeplearning4j.nn.conf.graph.rnn.LastTimeStepVertex;
import org.deeplearning4j.nn.conf.graph.rnn.ReverseTimeSeriesVertex;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.ActivationLayer;
import org.deeplearning4j.nn.conf.layers.AutoEncoder;
import org.deeplearning4j.nn.conf.layers.BatchNormalization;
import org.deeplearning4j.nn.conf.layers.CapsuleLayer;
import org.deeplearning4j.nn.conf.layers.CapsuleStrengthLayer;
import org.deeplearning4j.nn.conf.layers.CenterLossOutputLayer;
import org.deeplearning4j.nn.conf.layers.Cnn3DLossLayer;
import org.deeplearning4j.nn.conf.layers.CnnLossLayer;
import org.deeplearning4j.nn.conf.layers.Convolution1D;
import org.deeplearning4j.nn.conf.layers.Convolution1DLayer;
import org.deeplearning4j.nn.conf.layers.Convolution2D;
import org.deeplearning4j.nn.conf.layers.Convolution3D;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.Deconvolution2D;
import org.deeplearning4j.nn.conf.layers.Deconvolution3D;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.DepthwiseConvolution2D;
import org.deeplearning4j.nn.conf.layers.DropoutLayer;
import org.deeplearning4j.nn.conf.layers.EmbeddingLayer;
import org.deeplearning4j.nn.conf.layers.EmbeddingSequenceLayer;
import org.deeplearning4j.nn.conf.layers.GlobalPoolingLayer;
import org.deeplearning4j.nn.conf.layers.GravesBidirectionalLSTM;
import org.deeplearning4j.nn.conf.layers.GravesLSTM;
import org.deeplearning4j.nn.conf.layers.LSTM;
import org.deeplearning4j.nn.conf.layers.Layer;
import org.deeplearning4j.nn.conf.layers.LearnedSelfAttentionLayer;
import org.deeplearning4j.nn.conf.layers.LocalResponseNormalization;
import org.deeplearning4j.nn.conf.layers.LocallyConnected1D;
import org.deeplearning4j.nn.conf.layers.LocallyConnected2D;
import org.deeplearning4j.nn.conf.layers.LossLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.PReLULayer;
import org.deeplearning4j.nn.conf.layers.Pooling1D;
import org.deeplearning4j.nn.conf.layers.Pooling2D;
import org.deeplearning4j.nn.conf.layers.PoolingType;
import org.deeplearning4j.nn.conf.layers.PrimaryCapsules;
import org.deeplearning4j.nn.conf.layers.RecurrentAttentionLayer;
import org.deeplearning4j.nn.conf.layers.RnnLossLayer;
import org.deeplearning4j.nn.conf.layers.RnnOutputLayer;
import org.deeplearning4j.nn.conf.layers.SelfAttentionLayer;
import org.deeplearning4j.nn.conf.layers.SeparableConvolution2D;
import org.deeplearning4j.nn.conf.layers.SpaceToBatchLayer;
import org.deeplearning4j.nn.conf.layers.SpaceToDepthLayer;
import org.deeplearning4j.nn.conf.layers.Subsampling1DLayer;
import org.deeplearning4j.nn.conf.layers.Subsampling3DLayer;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;
import org.deeplearning4j.nn.conf.layers.Upsampling1D;
import org.deeplearning4j.nn.conf.layers.Upsampling2D;
import org.deeplearning4j.nn.conf.layers.Upsampling3D;
import org.deeplearning4j.nn.conf.layers.ZeroPadding1DLayer;
import org.deeplearning4j.nn.conf.layers.ZeroPadding3DLayer;
import org.deeplearning4j.nn.conf.layers.ZeroPaddingLayer;
import org.deeplearning4j.nn.conf.layers.convolutional.Cropping1D;
import org.deeplearning4j.nn.conf.layers.convolutional.Cropping2D;
import org.deeplearning4j.nn.conf.layers.convolutional.Cropping3D;
import org.deeplearning4j.nn.conf.layers.misc.ElementWiseMultiplicationLayer;
import org.deeplearning4j.nn.conf.layers.misc.FrozenLayer;
import org.deeplearning4j.nn.conf.layers.misc.FrozenLayerWithBackprop;
import org.deeplearning4j.nn.conf.layers.misc.RepeatVector;
import org.deeplearning4j.nn.conf.layers.objdetect.Yolo2OutputLayer;
import org.deeplearning4j.nn.conf.layers.recurrent.Bidirectional;
import org.deeplearning4j.nn.conf.layers.recurrent.LastTimeStep;
import org.deeplearning4j.nn.conf.layers.recurrent.SimpleRnn;
import org.deeplearning4j.nn.conf.layers.recurrent.TimeDistributed;
import org.deeplearning4j.nn.conf.layers.samediff.SameDiffLambdaLayer;
import org.deeplearning4j.nn.conf.layers.samediff.SameDiffLambdaVertex;
import org.deeplearning4j.nn.conf.layers.util.MaskLayer;
import org.deeplearning4j.nn.conf.layers.util.MaskZeroLayer;
import org.deeplearning4j.nn.conf.layers.variational.VariationalAutoencoder;
import org.deeplearning4j.nn.conf.preprocessor.CnnToFeedForwardPreProcessor;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.transferlearning.TransferLearning;
import org.deeplearning4j.nn.weights.WeightInit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.nd4j.autodiff.samediff.SDVariable;
import org.nd4j.autodiff.samediff.SameDiff;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Sgd;
import org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * Never a third outcome (issue 51, item 8): every concrete layer configuration class of DL4J 1.0.0-M2.1
 * ({@code org.deeplearning4j.nn.conf.layers} and its subpackages) and every graph vertex class
 * ({@code org.deeplearning4j.nn.conf.graph} and {@code .rnn}), each in a tiny float64 network around it, is either
 * <ol type="a">
 *   <li>accepted by {@link DpCompatibility#check} and then exact ({@link KernelChecks#assertExact} within 10⁻⁹ of DL4J's
 *       own gradient of each example alone), or</li>
 *   <li>refused by {@link DpCompatibility#check} with an {@link IllegalArgumentException} that names it (its class or its
 *       position),</li>
 * </ol>
 * and never anything else: no ND4J or DL4J exception, no {@link IllegalStateException} when the engine first runs it,
 * no wrong gradient. {@link #everyLayerClassIsWalked} scans DL4J's jar so that a class can be neither forgotten nor
 * silently added by a DL4J upgrade: each is in {@link #TABLE} or in {@link #SKIPPED} with its reason.
 *
 * <p>Shapes are tiny (batch 3; features 4; images 2 × 5 × 6; sequences [3, 4, 5]; volumes 2 × 3 × 4 × 4) so the whole
 * walk runs in seconds. A layer that is not itself an output layer gets an {@code OutputLayer(MCXENT, softmax)} head
 * with 3 classes, in a {@code MultiLayerNetwork} built with {@code setInputType}; a layer without parameters or one
 * that needs a particular input (pooling, padding, capsules) follows a small trainable layer, so that the gradient
 * through it is checked too. Sequence layers sit in a {@code ComputationGraph} ending in {@code LastTimeStepVertex}
 * (see {@link #sequenceClassifier}; the chain with global pooling has its own rows). The features are given in the
 * shape DL4J reads them, and {@link PerExampleGradients#inputRank()} must agree. Each row prints one line
 * ({@code LAYERWALK name outcome detail}); a third outcome fails with the exception's class, message and top dpdl4j
 * frame, and whether DL4J's own gradient of the batch works on the same network.
 *
 * <p>"Name/variant" rows walk a second configuration of a class (layer normalisation, PNORM pooling, Same mode, …) or,
 * for DL4J's abstract SameDiff classes, a user's subclass.
 */
@SuppressWarnings({"rawtypes", "deprecation"}) // DL4J's self-typed builders (RepeatVector, SpaceTo*), GravesLSTM
class LayerWalkTest {
    private static final int B = 3;
    private static final int CLASSES = 3;
    private static final double TOLERANCE = 1e-9;

    /** A network around the class under test, a batch for it, and what else a refusal may name (its position). */
    record Walk(Model network, INDArray features, INDArray labels, List<String> alsoNamed) {
        Walk(Model network, INDArray features, INDArray labels) {
            this(network, features, labels, List.of());
        }

        Walk naming(String... positions) {
            return new Walk(network, features, labels, List.of(positions));
        }
    }

    /** One row of the walk: a DL4J class (its simple name, "Name/variant" for another configuration) and its network. */
    record Row(String name, Supplier<Walk> build) {
        String className() {
            int slash = name.indexOf('/');
            return slash < 0 ? name : name.substring(0, slash);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // the network builders

    private static NeuralNetConfiguration.Builder base() {
        return new NeuralNetConfiguration.Builder().seed(12345).dataType(DataType.DOUBLE).updater(new Sgd(0.1))
                .weightInit(WeightInit.XAVIER).activation(Activation.TANH);
    }

    private static OutputLayer head() {
        return new OutputLayer.Builder(LossFunction.MCXENT).nOut(CLASSES).activation(Activation.SOFTMAX).build();
    }

    private static final InputType FLAT = InputType.feedForward(4);
    private static final InputType IMAGE = InputType.convolutional(5, 6, 2);
    private static final InputType SEQUENCE = InputType.recurrent(4, 5);
    private static final InputType VOLUME = InputType.convolutional3D(Convolution3D.DataFormat.NCDHW, 3, 4, 4, 2);

    /** Small random features in the shape DL4J reads for this input type, [B, ...]. */
    private static INDArray features(InputType in) {
        long[] shape = switch (in.getType()) {
            case FF -> new long[]{B, ((InputType.InputTypeFeedForward) in).getSize()};
            case RNN -> new long[]{B, ((InputType.InputTypeRecurrent) in).getSize(), ((InputType.InputTypeRecurrent) in).getTimeSeriesLength()};
            case CNN -> {
                InputType.InputTypeConvolutional c = (InputType.InputTypeConvolutional) in;
                yield new long[]{B, c.getChannels(), c.getHeight(), c.getWidth()};
            }
            case CNN3D -> {
                InputType.InputTypeConvolutional3D c = (InputType.InputTypeConvolutional3D) in;
                yield new long[]{B, c.getChannels(), c.getDepth(), c.getHeight(), c.getWidth()};
            }
            default -> throw new IllegalArgumentException(in.toString());
        };
        return Nd4j.rand(DataType.DOUBLE, shape).subi(0.5);
    }

    /** Integer indices in [0, n) as doubles, of the given shape (embedding input). */
    private static INDArray indices(int n, long... shape) {
        return Nd4j.rand(DataType.DOUBLE, shape).muli(n).castTo(DataType.INT32).castTo(DataType.DOUBLE);
    }

    /** One-hot labels [B, classes]. */
    private static INDArray oneHot(int classes) {
        INDArray y = Nd4j.zeros(DataType.DOUBLE, B, classes);
        for (int i = 0; i < B; i++) {
            y.putScalar(i, (i * 2 + 1) % classes, 1.0);
        }
        return y;
    }

    private static MultiLayerNetwork init(MultiLayerConfiguration conf) {
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    /** A chain of these layers (the caller adds its head, if any) on this input type. */
    private static Walk chain(InputType in, Layer... layers) {
        NeuralNetConfiguration.ListBuilder list = base().list();
        for (Layer l : layers) {
            list.layer(l);
        }
        return new Walk(init(list.setInputType(in).build()), features(in), oneHot(CLASSES));
    }

    /** The walk with a one-hot label per time step, [B, classes, T] (a sequence-to-sequence head's labels). */
    private static Walk perStep(Walk w) {
        long t = w.features().size(2);
        INDArray y = Nd4j.zeros(DataType.DOUBLE, B, CLASSES, t);
        for (int i = 0; i < B; i++) {
            for (int s = 0; s < t; s++) {
                y.putScalar(new int[]{i, (i + s) % CLASSES, s}, 1.0);
            }
        }
        return new Walk(w.network(), w.features(), y, w.alsoNamed());
    }

    /** Layers then the softmax head. */
    private static Walk classifier(InputType in, Layer... layers) {
        Layer[] all = Arrays.copyOf(layers, layers.length + 1);
        all[layers.length] = head();
        return chain(in, all);
    }

    /**
     * Sequence layers in a graph ("l0", "l1", …), then {@code LastTimeStepVertex} and the softmax head. A graph, not a
     * chain: DL4J's chain puts an {@code RnnToFeedForwardPreProcessor} before the output layer even after a
     * {@code GlobalPoolingLayer}, which the engine refuses (see the "GlobalPoolingLayer/sequence" rows); in a chain,
     * every sequence layer's own outcome would hide behind that one refusal.
     */
    private static Walk sequenceClassifier(InputType in, Layer... layers) {
        return graph(in, g -> {
            String previous = "in";
            for (int i = 0; i < layers.length; i++) {
                g.addLayer("l" + i, layers[i], previous);
                previous = "l" + i;
            }
            g.addVertex("last", new LastTimeStepVertex("in"), previous);
            return "last";
        });
    }

    /** A sequence layer in a graph, global average pooling over time, the softmax head. */
    private static Walk sequenceClassifierPooled(Layer layer) {
        return graph(SEQUENCE, g -> {
            g.addLayer("l0", layer, "in").addLayer("pool", new GlobalPoolingLayer.Builder(PoolingType.AVG).build(), "l0");
            return "pool";
        });
    }

    /** A graph with input "in": {@code body} adds vertices and returns the one the softmax head "out" reads. */
    private static Walk graph(InputType in, Function<ComputationGraphConfiguration.GraphBuilder, String> body) {
        ComputationGraphConfiguration.GraphBuilder g = base().graphBuilder().addInputs("in");
        String top = body.apply(g);
        g.addLayer("out", head(), top).setOutputs("out").setInputTypes(in);
        ComputationGraph net = new ComputationGraph(g.build());
        net.init();
        return new Walk(net, features(in), oneHot(CLASSES));
    }

    private static DenseLayer dense(int n) {
        return new DenseLayer.Builder().nOut(n).activation(Activation.TANH).build();
    }

    private static ConvolutionLayer conv(int kh, int kw, int n) {
        return new ConvolutionLayer.Builder(kh, kw).nOut(n).activation(Activation.TANH).build();
    }

    private static Convolution1DLayer conv1d(int n) {
        return new Convolution1DLayer.Builder(2).nOut(n).activation(Activation.TANH).build();
    }

    private static Convolution3D conv3d(int n) {
        return new Convolution3D.Builder(2, 2, 2).nOut(n).activation(Activation.TANH).build();
    }

    private static LSTM lstm(int n) {
        return new LSTM.Builder().nOut(n).activation(Activation.TANH).build();
    }

    /** DL4J's alias classes without builders, set field by field as their builder-made parents would be. */
    private static Convolution2D convolution2D() {
        Convolution2D c = new Convolution2D();
        c.setKernelSize(new int[]{2, 2});
        c.setStride(new int[]{1, 1});
        c.setPadding(new int[]{0, 0});
        c.setDilation(new int[]{1, 1});
        c.setConvolutionMode(ConvolutionMode.Truncate);
        c.setCnn2dDataFormat(CNN2DFormat.NCHW);
        c.setHasBias(true);
        c.setNOut(3);
        c.setActivationFn(Activation.TANH.getActivationFunction());
        return c;
    }

    private static Convolution1D convolution1D() {
        Convolution1D c = new Convolution1D();
        c.setKernelSize(new int[]{2, 1});
        c.setStride(new int[]{1, 1});
        c.setPadding(new int[]{0, 0});
        c.setDilation(new int[]{1, 1});
        c.setConvolutionMode(ConvolutionMode.Truncate);
        c.setCnn2dDataFormat(CNN2DFormat.NCHW);
        c.setRnnDataFormat(RNNFormat.NCW);
        c.setHasBias(true);
        c.setNOut(3);
        c.setActivationFn(Activation.TANH.getActivationFunction());
        return c;
    }

    private static <P extends SubsamplingLayer> P pooling(P p, int[] kernel) {
        p.setPoolingType(PoolingType.MAX);
        p.setKernelSize(kernel);
        p.setStride(new int[]{1, 1});
        p.setPadding(new int[]{0, 0});
        p.setDilation(new int[]{1, 1});
        p.setConvolutionMode(ConvolutionMode.Truncate);
        p.setCnn2dDataFormat(CNN2DFormat.NCHW);
        return p;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // the table: one row per concrete class (a few with a second configuration)

    static final List<Row> TABLE = new ArrayList<>();

    private static void row(String name, Supplier<Walk> build) {
        TABLE.add(new Row(name, build));
    }

    static {
        // feed-forward layers, input [B, 4]
        row("DenseLayer", () -> classifier(FLAT, dense(5)));
        row("DenseLayer/layerNorm", () -> classifier(FLAT, new DenseLayer.Builder().nOut(5).hasLayerNorm(true).build()));
        row("OutputLayer", () -> classifier(FLAT));
        row("LossLayer", () -> chain(FLAT, new DenseLayer.Builder().nOut(CLASSES).activation(Activation.IDENTITY).build(),
                new LossLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).build()));
        row("ActivationLayer", () -> classifier(FLAT, new DenseLayer.Builder().nOut(5).activation(Activation.IDENTITY).build(),
                new ActivationLayer.Builder().activation(Activation.ELU).build()));
        // retain probability 1: the layer's path without random draws (KernelChecks compares two separate passes)
        row("DropoutLayer", () -> classifier(FLAT, dense(5), new DropoutLayer.Builder(1.0).build()));
        row("AutoEncoder", () -> classifier(FLAT, new AutoEncoder.Builder().corruptionLevel(0).nOut(5).activation(Activation.TANH).build()));
        row("BatchNormalization", () -> classifier(FLAT, dense(5), new BatchNormalization.Builder().build()).naming("layer 1"));
        row("ElementWiseMultiplicationLayer", () -> classifier(FLAT, dense(5),
                new ElementWiseMultiplicationLayer.Builder().nOut(5).activation(Activation.TANH).build()));
        row("PReLULayer", () -> classifier(FLAT, new DenseLayer.Builder().nOut(5).activation(Activation.IDENTITY).build(),
                new PReLULayer.Builder().inputShape(5).build()));
        // no setInputType: DL4J's chain would set the embedding's nIn (its vocabulary) to the input's width, 1
        row("EmbeddingLayer", () -> new Walk(init(base().list().layer(new EmbeddingLayer.Builder().nIn(6).nOut(4).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(4).nOut(CLASSES).activation(Activation.SOFTMAX).build())
                .build()), indices(6, B, 1), oneHot(CLASSES)));
        row("MaskLayer", () -> classifier(FLAT, dense(5), new MaskLayer()));
        row("FrozenLayer", () -> classifier(FLAT, new FrozenLayer(dense(5)), dense(4)));
        row("FrozenLayerWithBackprop", () -> classifier(FLAT, dense(5), new FrozenLayerWithBackprop(dense(4))));
        row("VariationalAutoencoder", () -> classifier(FLAT, new VariationalAutoencoder.Builder().encoderLayerSizes(5)
                .decoderLayerSizes(5).nOut(3).activation(Activation.TANH).build()));
        row("CenterLossOutputLayer", () -> chain(FLAT, dense(5), new CenterLossOutputLayer.Builder(LossFunction.MCXENT)
                .nOut(CLASSES).activation(Activation.SOFTMAX).build()));
        row("RepeatVector", () -> sequenceClassifier(FLAT, dense(4), new RepeatVector.Builder(5).build()));

        // 2-D layers, input [B, 2, 5, 6]
        row("ConvolutionLayer", () -> classifier(IMAGE, conv(2, 2, 3)));
        row("ConvolutionLayer/same", () -> classifier(IMAGE, new ConvolutionLayer.Builder(3, 2).stride(2, 1).nOut(3)
                .convolutionMode(ConvolutionMode.Same).build()));
        row("Convolution2D", () -> classifier(IMAGE, convolution2D()));
        row("Deconvolution2D", () -> classifier(IMAGE, new Deconvolution2D.Builder(2, 2).nOut(3).activation(Activation.TANH).build()));
        row("DepthwiseConvolution2D", () -> classifier(IMAGE, new DepthwiseConvolution2D.Builder(2, 2).depthMultiplier(2)
                .activation(Activation.TANH).build()));
        row("SeparableConvolution2D", () -> classifier(IMAGE, new SeparableConvolution2D.Builder(2, 2).nOut(3)
                .activation(Activation.TANH).build()));
        row("SubsamplingLayer", () -> classifier(IMAGE, conv(2, 2, 3), new SubsamplingLayer.Builder(PoolingType.MAX)
                .kernelSize(2, 2).stride(1, 1).build()));
        row("SubsamplingLayer/pnorm", () -> classifier(IMAGE, conv(2, 2, 3), new SubsamplingLayer.Builder(PoolingType.PNORM)
                .pnorm(2).kernelSize(2, 2).stride(1, 1).build()));
        row("Pooling2D", () -> classifier(IMAGE, conv(2, 2, 3), pooling(new Pooling2D(), new int[]{2, 2})));
        row("GlobalPoolingLayer", () -> classifier(IMAGE, conv(2, 2, 3), new GlobalPoolingLayer.Builder(PoolingType.MAX).build()));
        row("GlobalPoolingLayer/pnorm", () -> classifier(IMAGE, conv(2, 2, 3), new GlobalPoolingLayer.Builder(PoolingType.PNORM)
                .pnorm(2).build()));
        row("ZeroPaddingLayer", () -> classifier(IMAGE, conv(2, 2, 3), new ZeroPaddingLayer.Builder(1, 0, 2, 1).build()));
        row("Cropping2D", () -> classifier(IMAGE, conv(2, 2, 3), new Cropping2D(1, 0, 0, 1)));
        row("Upsampling2D", () -> classifier(IMAGE, conv(2, 2, 3), new Upsampling2D.Builder(2).build()));
        row("SpaceToDepthLayer", () -> classifier(IMAGE, conv(2, 3, 3), new SpaceToDepthLayer.Builder(2).build()));
        row("SpaceToBatchLayer", () -> classifier(IMAGE, conv(2, 3, 3), new SpaceToBatchLayer.Builder(new int[]{2, 2}).build()));
        row("LocalResponseNormalization", () -> classifier(IMAGE, conv(2, 2, 4), new LocalResponseNormalization.Builder().build()));
        row("LocallyConnected2D", () -> classifier(IMAGE, conv(2, 2, 3), new LocallyConnected2D.Builder().nOut(3).kernelSize(2, 2)
                .activation(Activation.TANH).build()));
        row("PrimaryCapsules", () -> classifier(IMAGE, new PrimaryCapsules.Builder(4, 2).kernelSize(3, 3).stride(2, 2).build(),
                new CapsuleStrengthLayer.Builder().build()));
        // a convolution first: the rank the engine asks of the features is then the convolution's (see PrimaryCapsules)
        row("CapsuleLayer", () -> classifier(IMAGE, conv(2, 2, 3), new PrimaryCapsules.Builder(4, 2).kernelSize(2, 2).stride(2, 2).build(),
                new CapsuleLayer.Builder(3, 4, 2).build(), new CapsuleStrengthLayer.Builder().build()));
        row("CapsuleStrengthLayer", () -> classifier(IMAGE, conv(2, 2, 3), new PrimaryCapsules.Builder(3, 2).kernelSize(2, 2).stride(2, 2).build(),
                new CapsuleStrengthLayer.Builder().build()));
        row("CnnLossLayer", () -> chain(IMAGE, conv(1, 1, CLASSES), new CnnLossLayer.Builder(LossFunction.MCXENT)
                .activation(Activation.SOFTMAX).build()));
        row("Yolo2OutputLayer", () -> chain(IMAGE, conv(1, 1, 5 + CLASSES), new Yolo2OutputLayer.Builder()
                .boundingBoxPriors(Nd4j.createFromArray(new double[][]{{1.0, 1.0}})).build()));

        // sequence layers, input [B, 4, 5]
        row("LSTM", () -> sequenceClassifier(SEQUENCE, lstm(3)));
        row("GravesLSTM", () -> sequenceClassifier(SEQUENCE, new GravesLSTM.Builder().nOut(3).activation(Activation.TANH).build()));
        row("GravesBidirectionalLSTM", () -> sequenceClassifier(SEQUENCE, new GravesBidirectionalLSTM.Builder().nOut(3)
                .activation(Activation.TANH).build()));
        row("SimpleRnn", () -> sequenceClassifier(SEQUENCE, new SimpleRnn.Builder().nOut(3).activation(Activation.TANH).build()));
        row("Bidirectional", () -> sequenceClassifier(SEQUENCE, new Bidirectional(lstm(3))));
        row("LastTimeStep", () -> classifier(SEQUENCE, new LastTimeStep(lstm(3))));
        row("TimeDistributed", () -> sequenceClassifier(SEQUENCE, new TimeDistributed(dense(3))));
        row("MaskZeroLayer", () -> sequenceClassifier(SEQUENCE, new MaskZeroLayer(lstm(3), 0.0)));
        row("Convolution1DLayer", () -> sequenceClassifier(SEQUENCE, conv1d(3)));
        row("Convolution1D", () -> sequenceClassifier(SEQUENCE, convolution1D()));
        row("Subsampling1DLayer", () -> sequenceClassifier(SEQUENCE, conv1d(3), new Subsampling1DLayer.Builder(PoolingType.MAX, 2).stride(1).build()));
        row("Pooling1D", () -> sequenceClassifier(SEQUENCE, conv1d(3), pooling(new Pooling1D(), new int[]{2, 1})));
        row("Upsampling1D", () -> sequenceClassifier(SEQUENCE, conv1d(3), new Upsampling1D.Builder(2).build()));
        row("ZeroPadding1DLayer", () -> sequenceClassifier(SEQUENCE, conv1d(3), new ZeroPadding1DLayer.Builder(2, 0).build()));
        row("Cropping1D", () -> sequenceClassifier(SEQUENCE, conv1d(3), new Cropping1D(1, 0)));
        row("LocallyConnected1D", () -> sequenceClassifier(SEQUENCE, new LocallyConnected1D.Builder().nOut(3).kernelSize(2)
                .activation(Activation.TANH).build()));
        row("SelfAttentionLayer", () -> sequenceClassifier(SEQUENCE, new SelfAttentionLayer.Builder().nOut(4).nHeads(2).headSize(2)
                .projectInput(true).build()));
        row("LearnedSelfAttentionLayer", () -> sequenceClassifier(SEQUENCE, new LearnedSelfAttentionLayer.Builder().nOut(4).nHeads(2)
                .headSize(2).nQueries(2).projectInput(true).build()));
        row("RecurrentAttentionLayer", () -> sequenceClassifier(SEQUENCE, new RecurrentAttentionLayer.Builder().nOut(3).nHeads(1)
                .headSize(3).projectInput(true).activation(Activation.TANH).build()));
        row("EmbeddingSequenceLayer", () -> {
            ComputationGraph net = new ComputationGraph(base().graphBuilder().addInputs("in")
                    .addLayer("l0", new EmbeddingSequenceLayer.Builder().nIn(6).nOut(4).inputLength(5).build(), "in")
                    .addVertex("last", new LastTimeStepVertex("in"), "l0")
                    .addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nIn(4).nOut(CLASSES).activation(Activation.SOFTMAX)
                            .build(), "last").setOutputs("out").build());
            net.init();
            return new Walk(net, indices(6, B, 1, 5), oneHot(CLASSES));
        });
        row("RnnOutputLayer", () -> perStep(chain(SEQUENCE, lstm(3), new RnnOutputLayer.Builder(LossFunction.MCXENT).nOut(CLASSES)
                .activation(Activation.SOFTMAX).build())));
        row("RnnLossLayer", () -> perStep(chain(SEQUENCE, new LSTM.Builder().nOut(CLASSES).build(),
                new RnnLossLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).build())));

        // 3-D layers, input [B, 2, 3, 4, 4]
        row("Convolution3D", () -> classifier(VOLUME, conv3d(2)));
        row("Deconvolution3D", () -> classifier(VOLUME, new Deconvolution3D.Builder().kernelSize(2, 2, 2).nOut(2)
                .activation(Activation.TANH).build()));
        row("Subsampling3DLayer", () -> classifier(VOLUME, conv3d(2), new Subsampling3DLayer.Builder(PoolingType.MAX)
                .kernelSize(2, 2, 2).stride(1, 1, 1).build()));
        row("Upsampling3D", () -> classifier(VOLUME, conv3d(2), new Upsampling3D.Builder(2).build()));
        row("ZeroPadding3DLayer", () -> classifier(VOLUME, conv3d(2), new ZeroPadding3DLayer.Builder(1, 0, 1).build()));
        row("Cropping3D", () -> classifier(VOLUME, conv3d(2), new Cropping3D(0, 1, 0, 0, 1, 0)));
        row("Cnn3DLossLayer", () -> chain(VOLUME, conv3d(CLASSES), new Cnn3DLossLayer.Builder(Convolution3D.DataFormat.NCDHW)
                .lossFunction(LossFunction.MCXENT).activation(Activation.SOFTMAX).build()));

        // graph vertices, input [B, 4] unless said
        row("LayerVertex", () -> graph(FLAT, g -> {
            g.addLayer("d", dense(5), "in");
            return "d";
        }));
        row("ElementWiseVertex", () -> graph(FLAT, g -> {
            g.addLayer("d1", dense(5), "in").addLayer("d2", dense(5), "in")
                    .addVertex("v", new ElementWiseVertex(ElementWiseVertex.Op.Product), "d1", "d2");
            return "v";
        }));
        row("ElementWiseVertex/max", () -> graph(FLAT, g -> {
            g.addLayer("d1", dense(5), "in").addLayer("d2", dense(5), "in")
                    .addVertex("v", new ElementWiseVertex(ElementWiseVertex.Op.Max), "d1", "d2");
            return "v";
        }));
        row("MergeVertex", () -> graph(FLAT, g -> {
            g.addLayer("d1", dense(5), "in").addLayer("d2", dense(3), "in").addVertex("v", new MergeVertex(), "d1", "d2");
            return "v";
        }));
        row("ScaleVertex", () -> graph(FLAT, g -> {
            g.addLayer("d", dense(5), "in").addVertex("v", new ScaleVertex(2.5), "d");
            return "v";
        }));
        row("ShiftVertex", () -> graph(FLAT, g -> {
            g.addLayer("d", dense(5), "in").addVertex("v", new ShiftVertex(-0.5), "d");
            return "v";
        }));
        row("L2NormalizeVertex", () -> graph(FLAT, g -> {
            g.addLayer("d", dense(5), "in").addVertex("v", new L2NormalizeVertex(), "d");
            return "v";
        }));
        row("L2Vertex", () -> graph(FLAT, g -> {
            g.addLayer("d1", dense(5), "in").addLayer("d2", dense(5), "in").addVertex("v", new L2Vertex(), "d1", "d2");
            return "v";
        }));
        row("SubsetVertex", () -> graph(FLAT, g -> {
            g.addLayer("d", dense(5), "in").addVertex("v", new SubsetVertex(1, 3), "d");
            return "v";
        }));
        row("StackVertex", () -> graph(FLAT, g -> {
            g.addLayer("d1", dense(5), "in").addLayer("d2", dense(5), "in").addVertex("v", new StackVertex(), "d1", "d2");
            return "v";
        }).naming("vertex 'v'"));
        row("UnstackVertex", () -> graph(FLAT, g -> {
            g.addLayer("d", dense(5), "in").addVertex("v", new UnstackVertex(0, 1), "d");
            return "v";
        }).naming("vertex 'v'"));
        // as TransferLearning makes it: the vertices up to the feature extractor frozen (FrozenLayer, FrozenVertex)
        row("FrozenVertex", () -> {
            Walk w = graph(FLAT, g -> {
                g.addLayer("d", dense(5), "in").addVertex("v", new ScaleVertex(2.5), "d").addLayer("d2", dense(4), "v");
                return "d2";
            });
            // (TransferLearning's graph comes back in float32 whatever the configuration says: converted back)
            ComputationGraph frozen = new TransferLearning.GraphBuilder((ComputationGraph) w.network()).setFeatureExtractor("v").build()
                    .convertDataType(DataType.DOUBLE);
            assertTrue(frozen.getConfiguration().getVertices().get("v") instanceof FrozenVertex);
            return new Walk(frozen, w.features(), w.labels(), List.of("vertex 'v'"));
        });
        row("PreprocessorVertex", () -> graph(IMAGE, g -> {
            g.addLayer("c", conv(2, 2, 3), "in").addVertex("v", new PreprocessorVertex(new CnnToFeedForwardPreProcessor(4, 5, 3)), "c");
            return "v";
        }));
        row("ReshapeVertex", () -> graph(IMAGE, g -> {
            g.addLayer("c", conv(2, 2, 3), "in").addVertex("v", new ReshapeVertex('c', new int[]{-1, 60}, null), "c");
            return "v";
        }));
        row("PoolHelperVertex", () -> graph(IMAGE, g -> {
            // DL4J's PoolHelperVertex says its output has its input's shape (it is one row and column smaller): a
            // global pooling after it, as in GoogLeNet's Keras import, reads it whatever its size
            // (square: DL4J's own backward pass of the vertex fails on a non-square input)
            g.addLayer("c", conv(2, 3, 3), "in").addVertex("v", new PoolHelperVertex(), "c")
                    .addLayer("g", new GlobalPoolingLayer.Builder(PoolingType.MAX).build(), "v");
            return "g";
        }));
        // sequence vertices, input [B, 4, 5]
        row("LastTimeStepVertex", () -> graph(SEQUENCE, g -> {
            g.addLayer("r", lstm(4), "in").addVertex("v", new LastTimeStepVertex("in"), "r");
            return "v";
        }));
        row("ReverseTimeSeriesVertex", () -> graph(SEQUENCE, g -> {
            g.addLayer("r", lstm(4), "in").addVertex("v", new ReverseTimeSeriesVertex("in"), "r")
                    .addVertex("last", new LastTimeStepVertex("in"), "v");
            return "last";
        }));
        row("DuplicateToTimeSeriesVertex", () -> graph(SEQUENCE, g -> {
            g.addVertex("first", new LastTimeStepVertex("in"), "in").addLayer("d", dense(3), "first")
                    .addVertex("v", new DuplicateToTimeSeriesVertex("in"), "d")
                    .addLayer("r", lstm(4), "v")
                    .addVertex("last", new LastTimeStepVertex("in"), "r");
            return "last";
        }));
        row("AttentionVertex", () -> graph(SEQUENCE, g -> {
            g.addLayer("r", lstm(4), "in")
                    .addVertex("v", new AttentionVertex.Builder().nInQueries(4).nInKeys(4).nInValues(4).nOut(4).nHeads(1)
                            .projectInput(false).build(), "r", "r", "r")
                    .addVertex("last", new LastTimeStepVertex("in"), "v");
            return "last";
        }));
        row("AttentionVertex/projected", () -> graph(SEQUENCE, g -> {
            g.addLayer("r", lstm(4), "in")
                    .addVertex("v", new AttentionVertex.Builder().nInQueries(4).nInKeys(4).nInValues(4).nOut(4).nHeads(2)
                            .headSize(2).projectInput(true).build(), "r", "r", "r")
                    .addVertex("last", new LastTimeStepVertex("in"), "v");
            return "last";
        }).naming("vertex 'v'"));
        // DL4J's abstract SameDiff classes, as a user subclasses them for a custom layer or vertex
        row("SameDiffLambdaLayer/user", () -> classifier(FLAT, dense(5), new TwiceTanh()));
        row("SameDiffLambdaVertex/user", () -> graph(FLAT, g -> {
            g.addLayer("d1", dense(5), "in").addLayer("d2", dense(5), "in").addVertex("v", new Difference(), "d1", "d2");
            return "v";
        }));
        // a sequence classifier as DL4J users build it in a chain: LSTM, global pooling over time, the output layer (DL4J's
        // chain adds an RnnToFeedForwardPreProcessor before the output layer, a no-op on its [B, 3] input, with
        // setInputType or without); and in a graph, where no preprocessor is added
        row("GlobalPoolingLayer/sequence", () -> classifier(SEQUENCE, lstm(3), new GlobalPoolingLayer.Builder(PoolingType.AVG).build()));
        row("GlobalPoolingLayer/sequenceGraph", () -> sequenceClassifierPooled(lstm(3)));
    }

    /** A user's SameDiff lambda layer: 2·tanh(x). */
    public static class TwiceTanh extends SameDiffLambdaLayer {
        @Override
        public SDVariable defineLayer(SameDiff sd, SDVariable x) {
            return sd.math().tanh(x).mul(2.0);
        }

        @Override
        public InputType getOutputType(int layerIndex, InputType inputType) {
            return inputType;
        }
    }

    /** A user's SameDiff lambda vertex: a − b. */
    public static class Difference extends SameDiffLambdaVertex {
        @Override
        public SDVariable defineVertex(SameDiff sd, VertexInputs inputs) {
            return inputs.getInput(0).sub(inputs.getInput(1));
        }

        @Override
        public InputType getOutputType(int layerIndex, InputType... vertexInputs) {
            return vertexInputs[0];
        }
    }

    /** Concrete DL4J classes that are not walked, each with its reason. */
    static final Map<String, String> SKIPPED = new LinkedHashMap<>();

    static {
        // none at DL4J 1.0.0-M2.1: every concrete class has a row (a class added by a DL4J upgrade fails
        // everyLayerClassIsWalked until it has a row here or in the table)
    }

    static Stream<Arguments> table() {
        return TABLE.stream().map(r -> Arguments.of(r.name(), r));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // the walk

    /** Accepted and exact, or refused by name; anything else fails with its exception class, message and dpdl4j frame. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void neverAThirdOutcome(String name, Row row) {
        Nd4j.getRandom().setSeed(name.hashCode());
        Walk walk = row.build().get();
        try {
            DpCompatibility.check(walk.network());
        } catch (IllegalArgumentException refused) {
            String message = String.valueOf(refused.getMessage());
            boolean named = message.contains(row.className()) || walk.alsoNamed().stream().anyMatch(message::contains);
            report(name, named ? "refused" : "THIRD", (named ? "" : "refusal names neither " + row.className() + " nor "
                    + walk.alsoNamed() + ": ") + message);
            assertTrue(named, name + ": refused without naming " + row.className() + " or " + walk.alsoNamed() + ": " + message);
            return;
        }
        try {
            // the features are in the shape DL4J reads them; the engine must say the same rank (0: any)
            int rank = PerExampleGradients.of(walk.network()).inputRank();
            if (rank != 0 && rank != walk.features().rank()) {
                throw new AssertionError("PerExampleGradients.inputRank() is " + rank + ", but the network reads features of shape "
                        + Arrays.toString(walk.features().shape()));
            }
            KernelChecks.Result r = KernelChecks.assertExact(walk.network(), walk.features(), walk.labels(), TOLERANCE);
            report(name, "exact", String.format("%.1e", r.worst()));
        } catch (Throwable third) {
            String detail = describe(third) + " | DL4J alone: " + dl4jAlone(row);
            report(name, "THIRD", detail);
            throw new AssertionError(name + ": third outcome (accepted by DpCompatibility.check, then " + detail + ")", third);
        }
    }

    /** One line per row, for the report. */
    private static void report(String name, String outcome, String detail) {
        System.out.println("LAYERWALK\t" + name + "\t" + outcome + "\t" + detail.replace('\n', ' ').replace('\t', ' '));
    }

    /** The exception's class, message and the top frame in dpdl4j's code. */
    private static String describe(Throwable t) {
        StackTraceElement top = null;
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().startsWith("org.dpdl4j.") && !e.getClassName().startsWith(LayerWalkTest.class.getName())) {
                top = e;
                break;
            }
        }
        String s = t.getClass().getName() + ": " + t.getMessage() + " at " + (top == null ? "(no dpdl4j frame)" : top);
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == t ? s : s + " (root cause " + root.getClass().getName() + ": " + root.getMessage() + ")";
    }

    /**
     * Whether DL4J itself computes the gradient of a fresh copy of this row's network on the batch (to tell the engine's
     * failures from DL4J's).
     */
    private static String dl4jAlone(Row row) {
        try {
            Nd4j.getRandom().setSeed(row.name().hashCode());
            Walk walk = row.build().get();
            if (walk.network() instanceof MultiLayerNetwork m) {
                m.setInput(walk.features());
                m.setLabels(walk.labels());
                m.computeGradientAndScore();
            } else {
                ComputationGraph g = (ComputationGraph) walk.network();
                g.setInputs(walk.features());
                g.setLabels(walk.labels());
                g.computeGradientAndScore();
            }
            return "ok";
        } catch (Throwable t) {
            return "fails too (" + t.getClass().getSimpleName() + ": " + t.getMessage() + ")";
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // the list cannot silently miss a class

    /** Every class of DL4J's conf.layers and conf.graph packages (and subpackages) in the deeplearning4j-nn jar. */
    private static List<Class<?>> dl4jClasses() throws Exception {
        File jar = new File(DenseLayer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<Class<?>> classes = new ArrayList<>();
        try (JarFile j = new JarFile(jar)) {
            for (Enumeration<JarEntry> e = j.entries(); e.hasMoreElements(); ) {
                String n = e.nextElement().getName();
                if ((n.startsWith("org/deeplearning4j/nn/conf/layers/") || n.startsWith("org/deeplearning4j/nn/conf/graph/"))
                        && n.endsWith(".class")) {
                    classes.add(Class.forName(n.substring(0, n.length() - 6).replace('/', '.'), false,
                            LayerWalkTest.class.getClassLoader()));
                }
            }
        }
        return classes;
    }

    /** Every concrete public Layer or GraphVertex class is in the table or skipped with a reason; neither list names a stranger. */
    @Test
    void everyLayerClassIsWalked() throws Exception {
        List<Class<?>> all = dl4jClasses();
        assertTrue(all.size() > 100, "the scan found " + all.size() + " classes in DL4J's jar");
        TreeSet<String> concrete = new TreeSet<>();
        TreeSet<String> known = new TreeSet<>();
        for (Class<?> c : all) {
            known.add(c.getSimpleName());
            if ((Layer.class.isAssignableFrom(c) || GraphVertex.class.isAssignableFrom(c)) && !c.isInterface()
                    && !Modifier.isAbstract(c.getModifiers()) && Modifier.isPublic(c.getModifiers())) {
                concrete.add(c.getSimpleName());
            }
        }
        TreeSet<String> walked = new TreeSet<>();
        TABLE.forEach(r -> walked.add(r.className()));
        TreeSet<String> missing = new TreeSet<>(concrete);
        missing.removeAll(walked);
        missing.removeAll(SKIPPED.keySet());
        assertEquals(new TreeSet<>(), missing, "concrete DL4J layer and vertex classes neither in the table nor skipped");
        TreeSet<String> strangers = new TreeSet<>(walked);
        strangers.addAll(SKIPPED.keySet());
        strangers.removeAll(known);
        assertEquals(new TreeSet<>(), strangers, "table or skip entries that are not DL4J classes");
        TreeSet<String> both = new TreeSet<>(walked);
        both.retainAll(SKIPPED.keySet());
        assertEquals(new TreeSet<>(), both, "classes both walked and skipped");
        SKIPPED.forEach((name, reason) -> assertTrue(reason != null && !reason.isBlank(), name + " is skipped without a reason"));
        System.out.println("LAYERWALK-CLASSES\t" + concrete.size() + " concrete, " + walked.size() + " walked, " + SKIPPED.size()
                + " skipped");
    }
}
