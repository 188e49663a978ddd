package org.dpdl4j.dpsgd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.BatchNormalization;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;
import org.dpdl4j.models.ModelOptions;
import org.dpdl4j.models.Models;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/** The layer registry and the network check that asks it. */
class DpCompatibilityTest {
    /** Every network the models module builds runs on the engine (the check that Models itself cannot make). */
    @Test
    void everyModelOfTheModelsModuleIsSupported() {
        for (String name : Models.NAMES.replace("wrn-D-K (e.g. wrn-16-4)", "wrn-16-4").split(",\\s*")) {
            var net = Models.byName(name, name.equals("resnet50") ? ModelOptions.cifar10().withInput(72, 72, 3)
                    : name.startsWith("cifar") || name.startsWith("wrn") ? ModelOptions.cifar10() : ModelOptions.mnist());
            if (net instanceof org.deeplearning4j.nn.graph.ComputationGraph g) {
                DpCompatibility.check(g.getConfiguration());
            } else {
                DpCompatibility.check(((org.deeplearning4j.nn.multilayer.MultiLayerNetwork) net).getLayerWiseConfigurations());
            }
            PerExampleGradients.of(net); // builds every kernel
        }
        var small = assertThrows(IllegalArgumentException.class, () -> Models.byName("resnet50", ModelOptions.mnist()));
        assertTrue(small.getMessage().contains("at least 72x72") && small.getMessage().contains("28x28"), small.getMessage());
    }

    /**
     * The sequential-MNIST model (an LSTM over an image's rows) and the zoo's LeNet: exact in float64 against DL4J one
     * example at a time, from flattened images; the rows preprocessor puts row t of the image at time step t.
     */
    @Test
    void theLstmOverRowsAndLeNetAreExact() {
        ModelOptions o = ModelOptions.mnist().withDataType(org.nd4j.linalg.api.buffer.DataType.DOUBLE).withInput(6, 5, 2);
        org.nd4j.linalg.factory.Nd4j.getRandom().setSeed(4);
        var x = org.nd4j.linalg.factory.Nd4j.rand(org.nd4j.linalg.api.buffer.DataType.DOUBLE, 4, 60);
        var y = org.nd4j.linalg.factory.Nd4j.eye(4).getColumns(0, 1, 2).castTo(org.nd4j.linalg.api.buffer.DataType.DOUBLE);
        y = org.nd4j.linalg.factory.Nd4j.concat(1, y, org.nd4j.linalg.factory.Nd4j.zeros(org.nd4j.linalg.api.buffer.DataType.DOUBLE, 4, 7));
        y.putScalar(3, 9, 1.0);
        var lstm = Models.lstmRows(o);
        KernelChecks.assertExact(lstm, x, y, 1e-10);
        var rows = new org.dpdl4j.models.ImageRowsPreProcessor(2, 6, 5);
        var seq = rows.rows(x);
        assertEquals(x.getDouble(1, 5 * 6 + 2 * 5 + 3), seq.getDouble(1, 5 + 3, 2), 0.0, "channel 1, row 2, column 3 at step 2");
        assertEquals(x, rows.images(seq));
        var lenet = Models.lenet(ModelOptions.mnist().withDataType(org.nd4j.linalg.api.buffer.DataType.DOUBLE));
        KernelChecks.assertExact(lenet, org.nd4j.linalg.factory.Nd4j.rand(org.nd4j.linalg.api.buffer.DataType.DOUBLE, 3, 784),
                y.getRows(0, 1, 2), 1e-10);
    }

    @Test
    void theRegistryKnowsItsLayerTypesAndSaysWhatToUseInstead() {
        assertEquals("ConvolutionLayer, WeightStandardizedConvolution, DepthwiseConvolution2D, SeparableConvolution2D, "
                + "Convolution1DLayer, Convolution1D, Deconvolution2D, GroupNormalization, SubsamplingLayer, DenseLayer, OutputLayer, LSTM, SimpleRnn, EmbeddingLayer, EmbeddingSequenceLayer, "
                + "LossLayer, RnnOutputLayer, RnnLossLayer, GlobalPoolingLayer, ActivationLayer, DropoutLayer, "
                + "ZeroPaddingLayer, Scattering, FeatureStandardization",
                LayerKernels.supportedNames());
        assertTrue(LayerKernels.supports(DenseLayer.class) && LayerKernels.supports(SubsamplingLayer.class));
        assertTrue(!LayerKernels.supports(BatchNormalization.class));
        var bn = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(3).build())
                .layer(new BatchNormalization.Builder().build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build();
        var e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(bn));
        assertTrue(e.getMessage().startsWith("layer 1 (BatchNormalization") && e.getMessage().contains("DpCompatibility.fix"),
                e.getMessage());
        var denseLast = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(3).build())
                .setInputType(InputType.feedForward(4)).build();
        e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(denseLast));
        assertTrue(e.getMessage().contains("the last layer must be an OutputLayer"), e.getMessage());
        // preprocessors are put in after build(), which would itself refuse these shapes
        var rnnPre = twoDenseLayers();
        rnnPre.getInputPreProcessors().put(1, new org.deeplearning4j.nn.conf.preprocessor.CnnToRnnPreProcessor(1, 1, 3));
        e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(rnnPre));
        assertTrue(e.getMessage().equals("input preprocessor of layer 1 (CnnToRnnPreProcessor) is not supported by the "
                + "DP-SGD engine"), e.getMessage());
        var nhwc = twoDenseLayers();
        nhwc.getInputPreProcessors().put(1, new org.deeplearning4j.nn.conf.preprocessor.CnnToFeedForwardPreProcessor(1, 1, 3,
                org.deeplearning4j.nn.conf.CNN2DFormat.NHWC));
        e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(nhwc));
        assertTrue(e.getMessage().equals("input preprocessor of layer 1 must use NCHW"), e.getMessage());
    }

    private static org.deeplearning4j.nn.conf.MultiLayerConfiguration twoDenseLayers() {
        return new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(3).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build();
    }

    @Test
    void compatibilityCheckTakesSameModeAndRejectsOtherDropouts() {
        var same = new NeuralNetConfiguration.Builder().convolutionMode(ConvolutionMode.Same).list()
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(2).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(5, 5, 1)).build();
        DpCompatibility.check(same); // DL4J's Same padding, asymmetric included (AnyNetworkTest checks it against DL4J)
        var dropout = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(3).dropOut(0.5).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build();
        DpCompatibility.check(dropout); // DL4J's inverted dropout runs on the engine's own kernel
        var gaussian = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(3).dropOut(new org.deeplearning4j.nn.conf.dropout.GaussianDropout(0.5)).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build();
        var e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(gaussian));
        assertTrue(e.getMessage().startsWith("layer 0 (DenseLayer") && e.getMessage().contains("dropout GaussianDropout")
                && e.getMessage().contains("dropOut(p)"),
                e.getMessage());
        var layerNorm = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(3).hasLayerNorm(true).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build();
        DpCompatibility.check(layerNorm); // per example: on the exact fallback (AnyNetworkTest checks it against DL4J)
        var mse = new NeuralNetConfiguration.Builder().list()
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MSE).nOut(2).activation(Activation.IDENTITY).build())
                .setInputType(InputType.feedForward(4)).build();
        DpCompatibility.check(mse); // any per-example loss (AnyNetworkTest checks it against DL4J)
    }

    /** fix() swaps each BatchNormalization for a GroupNormalization over the same channels and keeps the other weights. */
    @Test
    void fixReplacesBatchNormByGroupNormAndSaysSo() {
        var conf = new NeuralNetConfiguration.Builder().seed(1).convolutionMode(ConvolutionMode.Truncate).list()
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(48).build())
                .layer(new BatchNormalization.Builder().activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(5, 5, 1)).build();
        var net = new org.deeplearning4j.nn.multilayer.MultiLayerNetwork(conf);
        net.init();
        assertThrows(IllegalArgumentException.class, () -> new PerExampleGradients(net));
        DpCompatibility.Fixed<org.deeplearning4j.nn.multilayer.MultiLayerNetwork> fixed = DpCompatibility.fix(net);
        assertEquals("layer 1: BatchNormalization(48 channels) replaced by GroupNormalization(24 groups, 48 channels)",
                fixed.message());
        var gn = (org.dpdl4j.models.GroupNormalization) fixed.network().getLayer(1).conf().getLayer();
        assertEquals(24, gn.getGroups());
        assertEquals(Activation.RELU.getActivationFunction(), gn.getActivationFn());
        assertEquals(net.getLayer(0).params(), fixed.network().getLayer(0).params());
        assertEquals(net.getLayer(2).params(), fixed.network().getLayer(2).params());
        new PerExampleGradients(fixed.network()); // now accepted
        assertTrue(net.getLayer(1).conf().getLayer() instanceof BatchNormalization, "the input is not modified");
        assertEquals("nothing to fix", DpCompatibility.fix(fixed.network()).message());

        var graph = new NeuralNetConfiguration.Builder().graphBuilder().addInputs("in").setInputTypes(InputType.feedForward(4))
                .addLayer("d", new DenseLayer.Builder().nOut(16).build(), "in")
                .addLayer("bn", new BatchNormalization.Builder().build(), "d")
                .addLayer("out", new OutputLayer.Builder().nOut(2).activation(Activation.SOFTMAX).build(), "bn")
                .setOutputs("out").build();
        var g = new org.deeplearning4j.nn.graph.ComputationGraph(graph);
        g.init();
        var fg = DpCompatibility.fix(g);
        assertEquals("vertex 'bn': BatchNormalization(16 channels) replaced by GroupNormalization(16 groups, 16 channels)",
                fg.message());
        assertEquals(g.getLayer("d").params(), fg.network().getLayer("d").params());
        new PerExampleGradients(fg.network());
    }

    /** A DenseLayer subclass (so: no kernel, the fallback) whose output subtracts the batch mean: it mixes examples. */
    public static class MixingDense extends DenseLayer {
        @Override
        public org.deeplearning4j.nn.api.Layer instantiate(NeuralNetConfiguration conf,
                java.util.Collection<org.deeplearning4j.optimize.api.TrainingListener> listeners, int index,
                org.nd4j.linalg.api.ndarray.INDArray view, boolean init, org.nd4j.linalg.api.buffer.DataType type) {
            var layer = new org.deeplearning4j.nn.layers.feedforward.dense.DenseLayer(conf, type) {
                @Override
                public org.nd4j.linalg.api.ndarray.INDArray activate(boolean training,
                        org.deeplearning4j.nn.workspace.LayerWorkspaceMgr ws) {
                    var a = super.activate(training, ws);
                    return a.subRowVector(a.mean(0));
                }
            };
            return org.dpdl4j.models.LayerWiring.wire(layer, conf, listeners, index, view, init, initializer());
        }
    }

    @Test
    void layersThatMixExamplesAreRefusedEvenWithoutAKernel() {
        var sub = new BatchNormalization() { }; // a subclass: no kernel, but batch normalisation all the same
        var bn = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(3).build())
                .layer(sub)
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build();
        var e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(bn));
        assertTrue(e.getMessage().contains("batch normalisation mixes the examples"), e.getMessage());

        MixingDense mixing = new MixingDense();
        mixing.setNOut(3);
        mixing.setActivationFn(Activation.TANH.getActivationFunction());
        var conf = new NeuralNetConfiguration.Builder().seed(1).dataType(org.nd4j.linalg.api.buffer.DataType.DOUBLE).list()
                .layer(mixing)
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build();
        var net = new org.deeplearning4j.nn.multilayer.MultiLayerNetwork(conf);
        net.init();
        PerExampleGradients pg = new PerExampleGradients(net);
        assertEquals(1, pg.kernels(FallbackKernel.class).size());
        var x = org.nd4j.linalg.factory.Nd4j.randn(org.nd4j.linalg.api.buffer.DataType.DOUBLE, 5, 4);
        var y = org.nd4j.linalg.factory.Nd4j.zeros(org.nd4j.linalg.api.buffer.DataType.DOUBLE, 5, 2);
        y.getColumn(0).assign(1);
        var m = assertThrows(IllegalArgumentException.class, () -> pg.compute(x, y));
        assertTrue(m.getMessage().startsWith("layer 0 (MixingDense") && m.getMessage().contains("depends on the other examples"),
                m.getMessage());
    }

    /** A network-wide dropOut(p) reaches every layer's configuration; DL4J applies it only on layers with parameters. */
    @Test
    void dropoutRunsWhereDl4jAppliesIt() {
        var conf = new NeuralNetConfiguration.Builder().dropOut(0.8).convolutionMode(ConvolutionMode.Truncate).list()
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(2).build())
                .layer(new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2).stride(1, 1).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(6, 6, 1)).build();
        var net = new org.deeplearning4j.nn.multilayer.MultiLayerNetwork(conf);
        net.init();
        assertEquals(2, new PerExampleGradients(net).kernels(DropoutKernel.class).size(), "convolution and output, not pooling");
    }
}
