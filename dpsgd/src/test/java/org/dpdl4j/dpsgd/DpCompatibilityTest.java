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
import org.deeplearning4j.nn.conf.layers.LSTM;
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
        for (String name : Models.NAMES.split(",\\s*")) {
            DpCompatibility.check(Models.byName(name, name.equals("cifar-cnn") ? ModelOptions.cifar10() : ModelOptions.mnist())
                    .getLayerWiseConfigurations());
        }
    }

    @Test
    void theRegistryKnowsExactlyTheFourLayerTypesAndSaysWhatToUseInstead() {
        assertEquals("ConvolutionLayer, SubsamplingLayer, DenseLayer, OutputLayer", LayerKernels.supportedNames());
        assertTrue(LayerKernels.supports(DenseLayer.class) && LayerKernels.supports(SubsamplingLayer.class));
        assertTrue(!LayerKernels.supports(BatchNormalization.class) && !LayerKernels.supports(LSTM.class));
        var bn = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(3).build())
                .layer(new BatchNormalization.Builder().build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build();
        var e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(bn));
        assertTrue(e.getMessage().startsWith("layer 1 (BatchNormalization") && e.getMessage().contains("tempered-sigmoid"),
                e.getMessage());
        var lstm = new NeuralNetConfiguration.Builder().list()
                .layer(new LSTM.Builder().nOut(3).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.recurrent(4)).build();
        e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(lstm));
        assertTrue(e.getMessage().contains("layer 0 (LSTM") && e.getMessage().contains("supported are ConvolutionLayer"),
                e.getMessage());
        var denseLast = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(3).build())
                .setInputType(InputType.feedForward(4)).build();
        e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(denseLast));
        assertTrue(e.getMessage().contains("the last layer must be an OutputLayer"), e.getMessage());
        // preprocessors are put in after build(), which would itself refuse these shapes
        var rnnPre = twoDenseLayers();
        rnnPre.getInputPreProcessors().put(1, new org.deeplearning4j.nn.conf.preprocessor.RnnToFeedForwardPreProcessor());
        e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(rnnPre));
        assertTrue(e.getMessage().equals("input preprocessor of layer 1 (RnnToFeedForwardPreProcessor) is not supported by the "
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
    void compatibilityCheckRejectsSameModeAndDropout() {
        var same = new NeuralNetConfiguration.Builder().convolutionMode(ConvolutionMode.Same).list()
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(2).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(5, 5, 1)).build();
        var e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(same));
        assertTrue(e.getMessage().contains("layer 0") && e.getMessage().contains("Same"), e.getMessage());
        var dropout = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(3).dropOut(0.5).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build();
        e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(dropout));
        assertTrue(e.getMessage().contains("dropout"), e.getMessage());
        var layerNorm = new NeuralNetConfiguration.Builder().list()
                .layer(new DenseLayer.Builder().nOut(3).hasLayerNorm(true).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build();
        e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(layerNorm));
        assertTrue(e.getMessage().contains("layer normalisation"), e.getMessage());
        var mse = new NeuralNetConfiguration.Builder().list()
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MSE).nOut(2).activation(Activation.IDENTITY).build())
                .setInputType(InputType.feedForward(4)).build();
        e = assertThrows(IllegalArgumentException.class, () -> DpCompatibility.check(mse));
        assertTrue(e.getMessage().contains("softmax"), e.getMessage());
    }
}
