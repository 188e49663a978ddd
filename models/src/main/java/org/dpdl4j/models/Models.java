package org.dpdl4j.models;

import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.ComputationGraphConfiguration;
import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.graph.ElementWiseVertex;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.GlobalPoolingLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.PoolingType;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * The networks the seed papers train, as ordinary DL4J {@link MultiLayerNetwork}s (initialised,
 * Xavier weights, zero biases), and wide residual networks with group normalisation as {@link ComputationGraph}s. All use explicit padding with {@link ConvolutionMode#Truncate},
 * NCHW inputs flattened as in {@code InputType.convolutionalFlat}, and a softmax output with
 * cross-entropy loss; every one passes the DP-SGD engine's {@code DpCompatibility.check} (tested in module dpsgd).
 */
public final class Models {
    /** Names accepted by {@link #byName}. */
    public static final String NAMES = "standard-cnn, all-conv, cifar-cnn, mlp, small-resnet, wrn-D-K (e.g. wrn-16-4), "
            + "scatternet-linear, scatternet-cnn, lenet, resnet50, lstm";

    private Models() {
    }

    /**
     * Whether {@link #byName} knows the name (for wrn-D-K: whether D and K are valid).
     *
     * @param name a model name, one of {@link #NAMES}; not null
     * @return true if {@link #byName} accepts the name
     */
    public static boolean isName(String name) {
        java.util.regex.Matcher wrn = WRN.matcher(name);
        if (wrn.matches()) {
            int d = Integer.parseInt(wrn.group(1));
            return d >= 10 && (d - 4) % 6 == 0 && Integer.parseInt(wrn.group(2)) >= 1;
        }
        return java.util.List.of("standard-cnn", "all-conv", "cifar-cnn", "mlp", "small-resnet", "scatternet-linear",
                "scatternet-cnn", "lenet", "resnet50", "lstm").contains(name);
    }

    private static final java.util.regex.Pattern WRN = java.util.regex.Pattern.compile("wrn-(\\d{1,3})-(\\d{1,2})");

    /**
     * Builds a model by its CLI name; {@code small-resnet} is WRN-10-1.
     *
     * @param name one of {@link #NAMES}; not null
     * @param o    input shape, classes, activation, updater, seed and data type of the model
     * @return the initialised network ({@link MultiLayerNetwork} or {@link ComputationGraph})
     * @throws IllegalArgumentException for an unknown name, or when the named factory rejects the options
     */
    public static Model byName(String name, ModelOptions o) {
        java.util.regex.Matcher wrn = WRN.matcher(name);
        if (wrn.matches()) {
            return wideResNet(Integer.parseInt(wrn.group(1)), Integer.parseInt(wrn.group(2)), o);
        }
        return switch (name) {
            case "standard-cnn" -> standardCnn(o);
            case "all-conv" -> allConvNet(o);
            case "cifar-cnn" -> cifarCnn(o);
            case "mlp" -> mlp(o);
            case "small-resnet" -> wideResNet(10, 1, o);
            case "scatternet-linear" -> scatterNetLinear(o);
            case "scatternet-cnn" -> scatterNetCnn(o);
            case "lenet" -> lenet(o);
            case "resnet50" -> resNet50(o);
            case "lstm" -> lstmRows(o);
            default -> throw new IllegalArgumentException("model must be one of " + NAMES + ", got '" + name + "'");
        };
    }

    /**
     * The same network with a {@link FeatureStandardization} layer in front (no parameters: the weights are the given
     * network's, bit for bit), so that data normalisation can release its input's per-channel statistics privately;
     * the layer keeps statistics for {@code channels} channels of the flat or image input (channel-major) and clips at
     * C_μ = R·√m, C_s = R²·√m with R = 1, for features in [0, 1].
     *
     * @param network  an initialised network (its configuration is copied, its parameters copied in)
     * @param channels m ≥ 1, the input's colour channels (or features of a sequence, or entries of a vector)
     * @return a new, initialised network whose layer 0 is the standardisation and whose other layers are the given ones
     * @throws IllegalArgumentException if m &lt; 1
     */
    public static MultiLayerNetwork withStandardizedInput(MultiLayerNetwork network, int channels) {
        if (channels < 1) {
            throw new IllegalArgumentException("channels m must be >= 1, got " + channels);
        }
        org.deeplearning4j.nn.conf.MultiLayerConfiguration conf = network.getLayerWiseConfigurations().clone();
        FeatureStandardization fs = new FeatureStandardization.Builder().name("feature-standardization").build();
        fs.setChannels(channels);
        fs.setClipMean(Math.sqrt(channels));
        fs.setClipSquares(Math.sqrt(channels));
        org.deeplearning4j.nn.conf.NeuralNetConfiguration first = conf.getConf(0).clone();
        first.setLayer(fs);
        java.util.List<org.deeplearning4j.nn.conf.NeuralNetConfiguration> confs = new java.util.ArrayList<>();
        confs.add(first);
        confs.addAll(conf.getConfs());
        java.util.Map<Integer, org.deeplearning4j.nn.conf.InputPreProcessor> shifted = new java.util.HashMap<>();
        conf.getInputPreProcessors().forEach((at, p) -> shifted.put(at + 1, p));
        conf.setConfs(confs);
        conf.setInputPreProcessors(shifted);
        MultiLayerNetwork out = new MultiLayerNetwork(conf);
        out.init(network.params().dup(), false);
        return out;
    }

    /**
     * DL4J's zoo LeNet ({@code org.deeplearning4j.zoo.model.LeNet}, deeplearning4j-zoo 1.0.0-M2.1) as the zoo builds it:
     * Same-mode convolutions and pooling, flattened input; the options' classes, input shape, updater, seed and data type.
     *
     * @param o the options; the activation and the feature statistics are ignored
     * @return the initialised network, converted to the options' data type where the zoo's differs
     */
    public static MultiLayerNetwork lenet(ModelOptions o) {
        MultiLayerNetwork net = new MultiLayerNetwork(org.deeplearning4j.zoo.model.LeNet.builder().numClasses(o.numClasses())
                .inputShape(new int[]{o.channels(), o.height(), o.width()}).seed(o.seed()).updater(o.updater()).build().conf());
        net.init();
        return o.dataType() == net.params().dataType() ? net : net.convertDataType(o.dataType());
    }

    /** The smallest side DL4J 1.0.0-M2.1's zoo ResNet50 initialises at (at 64 its last pooling leaves nothing). */
    public static final int RESNET50_MIN_SIDE = 72;

    /**
     * DL4J's zoo ResNet50 ({@code org.deeplearning4j.zoo.model.ResNet50}, deeplearning4j-zoo 1.0.0-M2.1: 4-D input,
     * Same-mode convolutions) with each batch normalisation replaced by a group normalisation over the same channels
     * ({@link GroupNormalization#replacing}, as {@code DpCompatibility.fix} does), freshly initialised.
     *
     * @param o the options: height and width ≥ {@value #RESNET50_MIN_SIDE} pixels; the activation and the feature
     *          statistics are ignored
     * @return the initialised graph, converted to the options' data type where the zoo's differs
     * @throws IllegalArgumentException for images smaller than {@value #RESNET50_MIN_SIDE}×{@value #RESNET50_MIN_SIDE}
     */
    public static ComputationGraph resNet50(ModelOptions o) {
        if (o.height() < RESNET50_MIN_SIDE || o.width() < RESNET50_MIN_SIDE) {
            throw new IllegalArgumentException("resnet50 (DL4J's zoo ResNet50) needs images of at least " + RESNET50_MIN_SIDE + "x"
                    + RESNET50_MIN_SIDE + " pixels, got " + o.height() + "x" + o.width());
        }
        org.deeplearning4j.nn.conf.ComputationGraphConfiguration conf = org.deeplearning4j.zoo.model.ResNet50.builder()
                .numClasses(o.numClasses()).inputShape(new int[]{o.channels(), o.height(), o.width()}).seed(o.seed())
                .updater(o.updater()).build().graphBuilder().build();
        for (org.deeplearning4j.nn.conf.graph.GraphVertex v : conf.getVertices().values()) {
            if (v instanceof org.deeplearning4j.nn.conf.graph.LayerVertex lv
                    && lv.getLayerConf().getLayer() instanceof org.deeplearning4j.nn.conf.layers.BatchNormalization bn) {
                lv.getLayerConf().setLayer(GroupNormalization.replacing(bn));
            }
        }
        ComputationGraph g = new ComputationGraph(conf);
        g.init();
        return o.dataType() == g.params().dataType() ? g : g.convertDataType(o.dataType());
    }

    /**
     * An LSTM over an image's rows, the classic sequential-MNIST model: the image's h rows as h time steps of c·w
     * values ({@link ImageRowsPreProcessor}), one LSTM layer of 128 units (tanh, the options' activation ignored), its
     * last time step, and a softmax output layer. PyTorch's equivalent is {@code nn.LSTM(28, 128, batch_first=True)} on
     * {@code x.view(B, 28, 28)}, then a linear layer on the last step.
     *
     * @param o the options; the activation and the feature statistics are ignored
     * @return the initialised network
     */
    public static MultiLayerNetwork lstmRows(ModelOptions o) {
        int features = o.channels() * o.width();
        MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().seed(o.seed()).dataType(o.dataType())
                .updater(o.updater()).weightInit(WeightInit.XAVIER).list()
                .inputPreProcessor(0, new ImageRowsPreProcessor(o.channels(), o.height(), o.width()))
                .layer(new org.deeplearning4j.nn.conf.layers.recurrent.LastTimeStep(new org.deeplearning4j.nn.conf.layers.LSTM.Builder()
                        .nIn(features).nOut(128).activation(Activation.TANH).build()))
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(128).nOut(o.numClasses())
                        .activation(Activation.SOFTMAX).build())
                .build();
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    /**
     * The wide residual network WRN-D-K (S. Zagoruyko, N. Komodakis, "Wide Residual Networks", BMVC 2016,
     * arXiv:1605.07146) with group normalisation in place of batch normalisation, as De et al. train it with DP-SGD
     * ("Unlocking High-Accuracy Differentially Private Image Classification through Scale", arXiv:2204.13650, Sec. 3):
     * a 3×3 convolution to 16 channels, then three groups of N = (D − 4)/6 pre-activation blocks with 16K, 32K and 64K
     * channels (the first block of the 2nd and 3rd groups with stride 2), then GroupNorm-ReLU, global average pooling
     * and a softmax layer. A block is GroupNorm(16)-ReLU, 3×3 convolution, GroupNorm(16)-ReLU, 3×3 convolution, added to
     * the block's input (or to a 1×1 projection of the first normalised activation when the width or stride changes).
     * Convolutions have no bias; every GroupNorm has γ and β. WRN-16-4 on 32×32×3 with 10 classes has 2,748,890
     * parameters. A {@link ComputationGraph} with one input ("input", flattened NCHW as
     * {@code InputType.convolutionalFlat}) and one output ("output").
     *
     * @param depth D, the number of layers: ≥ 10 with D − 4 divisible by 6
     * @param width K, the widening factor: ≥ 1
     * @param o     the options; the activation (always ReLU here) and the feature statistics are ignored
     * @return the initialised graph
     * @throws IllegalArgumentException for another D or K
     */
    public static ComputationGraph wideResNet(int depth, int width, ModelOptions o) {
        if (depth < 10 || (depth - 4) % 6 != 0 || width < 1) {
            throw new IllegalArgumentException("wrn-D-K needs D >= 10 with D - 4 divisible by 6 (10, 16, 22, 28, ...) and K >= 1, "
                    + "got D = " + depth + ", K = " + width);
        }
        int blocks = (depth - 4) / 6;
        var g = base(o).weightInit(WeightInit.RELU).graphBuilder().addInputs("input")
                .setInputTypes(InputType.convolutionalFlat(o.height(), o.width(), o.channels()));
        g.addLayer("conv0", convolution(3, 1, 16), "input");
        String x = "conv0";
        int in = 16;
        for (int group = 0; group < 3; group++) {
            int out = 16 * width << group;
            for (int b = 0; b < blocks; b++) {
                x = preActivationBlock(g, "g" + (group + 1) + "b" + (b + 1), x, in, out, b == 0 && group > 0 ? 2 : 1);
                in = out;
            }
        }
        g.addLayer("norm", groupNorm(), x)
                .addLayer("pool", new GlobalPoolingLayer.Builder(PoolingType.AVG).build(), "norm")
                .addLayer("output", output(o), "pool")
                .setOutputs("output");
        ComputationGraph net = new ComputationGraph(g.build());
        net.init();
        return net;
    }

    private static String preActivationBlock(ComputationGraphConfiguration.GraphBuilder g, String name, String x, int in,
                                             int out, int stride) {
        g.addLayer(name + "_n1", groupNorm(), x)
                .addLayer(name + "_c1", convolution(3, stride, out), name + "_n1")
                .addLayer(name + "_n2", groupNorm(), name + "_c1")
                .addLayer(name + "_c2", convolution(3, 1, out), name + "_n2");
        String shortcut = x;
        if (in != out || stride != 1) {
            g.addLayer(name + "_sc", convolution(1, stride, out), name + "_n1");
            shortcut = name + "_sc";
        }
        g.addVertex(name, new ElementWiseVertex(ElementWiseVertex.Op.Add), name + "_c2", shortcut);
        return name;
    }

    private static ConvolutionLayer convolution(int k, int stride, int out) {
        return new ConvolutionLayer.Builder(k, k).stride(stride, stride).padding(k / 2, k / 2).nOut(out).hasBias(false)
                .activation(Activation.IDENTITY).build();
    }

    private static GroupNormalization groupNorm() {
        return new GroupNormalization.Builder().groups(16).activation(Activation.RELU).build();
    }

    /**
     * The CNN of the TF-Privacy and Opacus MNIST tutorials and Wang et al. 2023, arXiv:2306.05734, App. E.1: Conv 16@8×8 stride 2
     * padding 3, activation, MaxPool 2×2 stride 1, Conv 32@4×4 stride 2, activation, MaxPool 2×2
     * stride 1, Dense 32, activation, Dense softmax. 26,010 parameters on 28×28×1 with 10 classes.
     *
     * @param o the options; the feature statistics are ignored
     * @return the initialised network
     */
    public static MultiLayerNetwork standardCnn(ModelOptions o) {
        var list = base(o).list()
                .layer(new ConvolutionLayer.Builder(8, 8).stride(2, 2).padding(3, 3).nOut(16).activation(o.activation()).build())
                .layer(new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2).stride(1, 1).build())
                .layer(new ConvolutionLayer.Builder(4, 4).stride(2, 2).nOut(32).activation(o.activation()).build())
                .layer(new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2).stride(1, 1).build())
                .layer(new DenseLayer.Builder().nOut(32).activation(o.activation()).build())
                .layer(output(o));
        return init(list.setInputType(InputType.convolutionalFlat(o.height(), o.width(), o.channels())).build());
    }

    /**
     * The all-convolutional net of Papernot &amp; Steinke 2022, arXiv:2110.03620, Sec. 3.6: 3×3 convolutions with
     * 32, 32, 64, 64, 64 feature maps. The paper gives no strides or pooling; here the 2nd and 4th
     * convolutions have stride 2 (all padding 1), so 28×28 → 28 → 14 → 14 → 7 → 7, followed by a
     * dense softmax layer on the flattened 7×7×64 map (101,920 convolution + 31,370 dense = 133,290
     * parameters for MNIST).
     *
     * @param o the options; the feature statistics are ignored
     * @return the initialised network
     */
    public static MultiLayerNetwork allConvNet(ModelOptions o) {
        int[] maps = {32, 32, 64, 64, 64};
        int[] strides = {1, 2, 1, 2, 1};
        var list = base(o).list();
        for (int i = 0; i < maps.length; i++) {
            list.layer(new ConvolutionLayer.Builder(3, 3).stride(strides[i], strides[i]).padding(1, 1).nOut(maps[i])
                    .activation(o.activation()).build());
        }
        list.layer(output(o));
        return init(list.setInputType(InputType.convolutionalFlat(o.height(), o.width(), o.channels())).build());
    }

    /**
     * The end-to-end CIFAR-10 CNN of Papernot et al. 2020 / Tramèr &amp; Boneh 2021: three blocks of two
     * 3×3 convolutions (padding 1) with 32, 64, 128 channels, each block followed by 2×2 max-pooling
     * (stride 2), then Dense 128 and softmax; tanh in the paper (pass it as the activation).
     *
     * @param o the options; the feature statistics are ignored
     * @return the initialised network
     */
    public static MultiLayerNetwork cifarCnn(ModelOptions o) {
        var list = base(o).list();
        for (int channels : new int[]{32, 64, 128}) {
            for (int k = 0; k < 2; k++) {
                list.layer(new ConvolutionLayer.Builder(3, 3).stride(1, 1).padding(1, 1).nOut(channels)
                        .activation(o.activation()).build());
            }
            list.layer(new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2).stride(2, 2).build());
        }
        list.layer(new DenseLayer.Builder().nOut(128).activation(o.activation()).build());
        list.layer(output(o));
        return init(list.setInputType(InputType.convolutionalFlat(o.height(), o.width(), o.channels())).build());
    }

    /**
     * The feed-forward net of Koskela &amp; Kulkarni 2023, arXiv:2301.11989, App. A for Fashion-MNIST: two hidden
     * layers of width 120 and a softmax output (three weight layers), on the flattened image.
     *
     * @param o the options; the feature statistics are ignored
     * @return the initialised network
     */
    public static MultiLayerNetwork mlp(ModelOptions o) {
        var list = base(o).list()
                .layer(new DenseLayer.Builder().nOut(120).activation(o.activation()).build())
                .layer(new DenseLayer.Builder().nOut(120).activation(o.activation()).build())
                .layer(output(o));
        return init(list.setInputType(InputType.feedForward((long) o.height() * o.width() * o.channels())).build());
    }

    /**
     * Tramèr &amp; Boneh's ScatterNet + linear model ("Differentially Private Learning Needs Better Features (or Much
     * More Data)", ICLR 2021, arXiv:2011.11660, Sec. 3): the scattering transform (J = 2, L = 8: 81 channels at
     * H/4 × W/4 per input channel), GroupNorm with 27 groups on its channels (no privacy cost), and a softmax layer on
     * the flattened features (39,862 parameters on MNIST: 162 GroupNorm + 3,969·10 + 10). With
     * {@link ModelOptions#features()} the transform normalises its output by those fixed statistics instead (their data
     * normalisation) and there is no GroupNorm (39,700 parameters on MNIST).
     *
     * @param o the options, including the optional fixed feature statistics
     * @return the initialised network
     */
    public static MultiLayerNetwork scatterNetLinear(ModelOptions o) {
        var list = scatterNetBase(o).layer(output(o));
        return init(list.setInputType(InputType.convolutionalFlat(o.height(), o.width(), o.channels())).build());
    }

    /**
     * Tramèr &amp; Boneh's ScatterNet + CNN for MNIST-sized inputs (arXiv:2011.11660, Sec. 3 and their code): the
     * scattering transform and GroupNorm(27) (or fixed statistics) as in {@link #scatterNetLinear}, then Conv 16@3×3 stride 2 padding 1,
     * activation, Conv 32@3×3 padding 1, activation, Dense 32, activation, softmax (33,066 + 162 parameters on MNIST;
     * 33,066 with fixed statistics).
     *
     * @param o the options, including the optional fixed feature statistics
     * @return the initialised network
     */
    public static MultiLayerNetwork scatterNetCnn(ModelOptions o) {
        var list = scatterNetBase(o)
                .layer(new ConvolutionLayer.Builder(3, 3).stride(2, 2).padding(1, 1).nOut(16).activation(o.activation()).build())
                .layer(new ConvolutionLayer.Builder(3, 3).stride(1, 1).padding(1, 1).nOut(32).activation(o.activation()).build())
                .layer(new DenseLayer.Builder().nOut(32).activation(o.activation()).build())
                .layer(output(o));
        return init(list.setInputType(InputType.convolutionalFlat(o.height(), o.width(), o.channels())).build());
    }

    private static org.deeplearning4j.nn.conf.NeuralNetConfiguration.ListBuilder scatterNetBase(ModelOptions o) {
        var list = base(o).list().layer(new Scattering.Builder().scales(2).angles(8).features(o.features()).build());
        // fixed statistics (Tramer & Boneh's data normalisation) replace GroupNorm
        return o.features() != null ? list : list.layer(new GroupNormalization.Builder().groups(27).activation(Activation.IDENTITY).build());
    }

    private static NeuralNetConfiguration.Builder base(ModelOptions o) {
        return new NeuralNetConfiguration.Builder()
                .seed(o.seed())
                .dataType(o.dataType())
                .updater(o.updater())
                .weightInit(WeightInit.XAVIER)
                .convolutionMode(ConvolutionMode.Truncate);
    }

    private static OutputLayer output(ModelOptions o) {
        return new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(o.numClasses())
                .activation(Activation.SOFTMAX).build();
    }

    private static MultiLayerNetwork init(MultiLayerConfiguration conf) {
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }
}
