package org.dpdl4j.models;

import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * The networks the seed papers train, as ordinary DL4J {@link MultiLayerNetwork}s (initialised,
 * Xavier weights, zero biases). All use explicit padding with {@link ConvolutionMode#Truncate},
 * NCHW inputs flattened as in {@code InputType.convolutionalFlat}, and a softmax output with
 * cross-entropy loss; every one passes the DP-SGD engine's {@code DpCompatibility.check} (tested in module dpsgd).
 */
public final class Models {
    /** Names accepted by {@link #byName}. */
    public static final String NAMES = "standard-cnn, all-conv, cifar-cnn, mlp";

    private Models() {
    }

    /**
     * Builds a model by its CLI name.
     *
     * @throws IllegalArgumentException for an unknown name
     */
    public static MultiLayerNetwork byName(String name, ModelOptions o) {
        return switch (name) {
            case "standard-cnn" -> standardCnn(o);
            case "all-conv" -> allConvNet(o);
            case "cifar-cnn" -> cifarCnn(o);
            case "mlp" -> mlp(o);
            default -> throw new IllegalArgumentException("model must be one of " + NAMES + ", got '" + name + "'");
        };
    }

    /**
     * The CNN of the TF-Privacy and Opacus MNIST tutorials and Wang et al. 2023, arXiv:2306.05734, App. E.1: Conv 16@8×8 stride 2
     * padding 3, activation, MaxPool 2×2 stride 1, Conv 32@4×4 stride 2, activation, MaxPool 2×2
     * stride 1, Dense 32, activation, Dense softmax. 26,010 parameters on 28×28×1 with 10 classes.
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
     */
    public static MultiLayerNetwork mlp(ModelOptions o) {
        var list = base(o).list()
                .layer(new DenseLayer.Builder().nOut(120).activation(o.activation()).build())
                .layer(new DenseLayer.Builder().nOut(120).activation(o.activation()).build())
                .layer(output(o));
        return init(list.setInputType(InputType.feedForward((long) o.height() * o.width() * o.channels())).build());
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
