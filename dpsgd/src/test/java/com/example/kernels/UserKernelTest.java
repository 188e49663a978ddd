package com.example.kernels;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.deeplearning4j.nn.api.Layer;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.misc.ElementWiseMultiplicationLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.dpdl4j.dpsgd.KernelChecks;
import org.dpdl4j.dpsgd.Kernels;
import org.dpdl4j.dpsgd.spi.KernelFactory;
import org.dpdl4j.dpsgd.spi.PerExampleKernel;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.activations.impl.ActivationIdentity;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * A kernel written outside dpdl4j, in one file, through the public SPI (issue 51, item 9): DL4J's
 * ElementWiseMultiplicationLayer, z = x ⊙ w + b, whose per-example gradients are x_i ⊙ δ_i and δ_i. Registered with one
 * call; the engine then runs it, and the public exactness check holds it to DL4J's own gradient of each example alone.
 */
class UserKernelTest {
    /** The user's kernel: identity activation only (the factory declines others, which then run on the fallback). */
    static final class ElementWiseKernel implements PerExampleKernel {
        static int created;
        private final INDArray w;
        private final INDArray b;
        private INDArray x;
        private INDArray delta;

        private final boolean forgetsBias;

        ElementWiseKernel(Layer layer, boolean forgetsBias) {
            this.forgetsBias = forgetsBias;
            this.w = layer.getParam("W");
            this.b = layer.getParam("b");
            created++;
        }

        @Override
        public int inputRank() {
            return 2;
        }

        @Override
        public INDArray forward(INDArray input, boolean training, boolean keep) {
            if (keep) {
                x = input;
            }
            return input.mulRowVector(w.reshape(1, w.length())).addiRowVector(b.reshape(1, b.length()));
        }

        @Override
        public INDArray backward(INDArray gradOutput, boolean needInputGradient) {
            delta = gradOutput;
            return needInputGradient ? gradOutput.mulRowVector(w.reshape(1, w.length())) : null;
        }

        @Override
        public void addSquaredNorms(INDArray sq) {
            INDArray gw = x.mul(delta).castTo(DataType.DOUBLE);
            INDArray gb = delta.castTo(DataType.DOUBLE);
            sq.addi(gw.mul(gw).sum(1));
            if (!forgetsBias) {
                sq.addi(gb.mul(gb).sum(1));
            }
        }

        @Override
        public void addWeightedSum(INDArray weights, Map<String, INDArray> views) {
            INDArray wd = delta.mulColumnVector(weights.castTo(delta.dataType()));
            views.get("W").addi(x.mul(wd).sum(true, 0).reshape(views.get("W").shape()));
            views.get("b").addi(wd.sum(true, 0).reshape(views.get("b").shape()));
        }
    }

    static KernelFactory factory(boolean forgetsBias) {
        return new KernelFactory() {
            @Override
            public Class<? extends org.deeplearning4j.nn.conf.layers.Layer> layerType() {
                return ElementWiseMultiplicationLayer.class;
            }

            @Override
            public PerExampleKernel create(Layer layer) {
                return ((ElementWiseMultiplicationLayer) layer.conf().getLayer()).getActivationFn() instanceof ActivationIdentity
                        ? new ElementWiseKernel(layer, forgetsBias) : null;
            }
        };
    }

    @Test
    void aUsersKernelRunsAndIsExact() {
        // a kernel whose norm leaves out the bias's gradient would let a clipped gradient exceed C: the check catches it
        Kernels.register(factory(true));
        AssertionError wrong = assertThrows(AssertionError.class, () -> KernelChecks.assertExact(
                new ElementWiseMultiplicationLayer.Builder().nOut(6).activation(Activation.IDENTITY).build(), InputType.feedForward(6)));
        assertTrue(wrong.getMessage().contains("norm"), wrong.getMessage());
        Kernels.register(factory(false)); // replaces the wrong one
        assertTrue(Kernels.hasKernel(ElementWiseMultiplicationLayer.class));
        MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(3).dataType(DataType.DOUBLE).list()
                .layer(new DenseLayer.Builder().nOut(5).activation(Activation.TANH).build())
                .layer(new ElementWiseMultiplicationLayer.Builder().nIn(5).nOut(5).activation(Activation.IDENTITY).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build());
        net.init();
        Nd4j.getRandom().setSeed(5);
        net.getLayer(1).getParam("W").assign(Nd4j.rand(DataType.DOUBLE, 1, 5).addi(0.5)); // not the identity, nor 0
        net.getLayer(1).getParam("b").assign(Nd4j.rand(DataType.DOUBLE, 1, 5));
        INDArray y = Nd4j.zeros(DataType.DOUBLE, 4, 3);
        for (int i = 0; i < 4; i++) {
            y.putScalar(i, i % 3, 1.0);
        }
        int before = ElementWiseKernel.created;
        KernelChecks.assertExact(net, Nd4j.rand(DataType.DOUBLE, 4, 4), y, 1e-10);
        assertTrue(ElementWiseKernel.created > before, "the engine ran the user's kernel");
        // the one-line check of a layer configuration, on the same kernel
        int again = ElementWiseKernel.created;
        KernelChecks.assertExact(new ElementWiseMultiplicationLayer.Builder().nOut(6).activation(Activation.IDENTITY).build(),
                InputType.feedForward(6));
        assertTrue(ElementWiseKernel.created > again);
        KernelChecks.assertExact(new org.deeplearning4j.nn.conf.layers.LSTM.Builder().nOut(4).build(), InputType.recurrent(3, 5));
        assertThrows(IllegalArgumentException.class, () -> Kernels.register(new KernelFactory() {
            @Override
            public Class<? extends org.deeplearning4j.nn.conf.layers.Layer> layerType() {
                return DenseLayer.class;
            }

            @Override
            public PerExampleKernel create(Layer layer) {
                return null;
            }
        }), "dpdl4j's own kernels are not replaced");
    }

    @Test
    void aKernelListedInMetaInfServicesIsFound() {
        assertTrue(Kernels.hasKernel(ServiceLoadedLayer.class));
        int before = ElementWiseKernel.created;
        KernelChecks.assertExact(new ServiceLoadedLayer(new ElementWiseMultiplicationLayer.Builder().nOut(5)
                .activation(Activation.IDENTITY)), InputType.feedForward(5));
        assertTrue(ElementWiseKernel.created > before, "the engine ran the kernel the ServiceLoader found");
    }

    /**
     * A user's kernel gets the engine's non-finite guard: an example whose gradient is NaN gets factor 0 and adds
     * nothing, although the user's kernel keeps that example's NaN values (0·NaN is NaN): the step's clipped sum is the
     * sum over the other examples, exactly (it was NaN, and every parameter with it).
     */
    @Test
    void aNonFiniteExampleAddsNothingThroughAUsersKernel() {
        Kernels.register(factory(false));
        MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(3).dataType(DataType.DOUBLE).list()
                .layer(new ElementWiseMultiplicationLayer.Builder().nIn(4).nOut(4).activation(Activation.IDENTITY).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.feedForward(4)).build());
        net.init();
        INDArray x = Nd4j.rand(DataType.DOUBLE, 6, 4);
        x.putScalar(2, 1, Double.NaN);
        INDArray y = Nd4j.zeros(DataType.DOUBLE, 6, 3);
        for (int i = 0; i < 6; i++) {
            y.putScalar(i, i % 3, 1.0);
        }
        var g = org.dpdl4j.dpsgd.PerExampleGradients.of(net);
        INDArray all = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        g.clippedSum(x, y, new int[]{0, 1, 2, 3, 4, 5}, 0.5, 6, all);
        INDArray others = Nd4j.zeros(DataType.DOUBLE, 1, net.numParams());
        g.clippedSum(x, y, new int[]{0, 1, 3, 4, 5}, 0.5, 6, others);
        assertTrue(all.sub(others).amaxNumber().doubleValue() <= 1e-12, "the NaN example adds nothing: " + all + " vs " + others);
    }
}
