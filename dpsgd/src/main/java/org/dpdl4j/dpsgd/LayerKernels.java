package org.dpdl4j.dpsgd;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import org.deeplearning4j.nn.conf.CNN2DFormat;
import org.deeplearning4j.nn.conf.ConvolutionMode;
import org.deeplearning4j.nn.conf.InputPreProcessor;
import org.deeplearning4j.nn.conf.layers.ActivationLayer;
import org.deeplearning4j.nn.conf.layers.BatchNormalization;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.DepthwiseConvolution2D;
import org.deeplearning4j.nn.conf.layers.DropoutLayer;
import org.deeplearning4j.nn.conf.layers.GlobalPoolingLayer;
import org.deeplearning4j.nn.conf.layers.Layer;
import org.deeplearning4j.nn.conf.layers.LossLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.PoolingType;
import org.deeplearning4j.nn.conf.layers.SeparableConvolution2D;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;
import org.deeplearning4j.nn.conf.layers.ZeroPaddingLayer;
import org.deeplearning4j.nn.conf.preprocessor.CnnToFeedForwardPreProcessor;
import org.deeplearning4j.nn.conf.preprocessor.FeedForwardToCnnPreProcessor;
import org.dpdl4j.models.GroupNormalization;
import org.dpdl4j.models.Scattering;
import org.dpdl4j.models.WeightStandardizedConvolution;
import org.nd4j.linalg.activations.impl.ActivationIdentity;
import org.nd4j.linalg.activations.impl.ActivationSoftmax;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.lossfunctions.impl.LossMCXENT;

/**
 * The one registry of per-example-gradient kernels, keyed by DL4J layer configuration class (the exact class: a
 * subclass may change what the layer computes). For each supported class it holds the check of that layer's settings
 * and the factory of its {@link LayerKernel}; for layer types that cannot be supported at all it holds what to use
 * instead; a layer type in neither list runs on the exact {@link FallbackKernel}. It also turns the input
 * preprocessors between layers into reshape kernels. {@link DpCompatibility} and {@link NetworkPlan} ask it, and
 * nothing else knows the list.
 *
 * <p>Adding a layer type: one {@link LayerKernel} subclass and one {@link #register} line below.
 */
final class LayerKernels {
    /** How one layer configuration class is checked and run. */
    record Registration<L extends Layer>(Class<L> type, BiConsumer<L, String> check,
                                         BiFunction<L, org.deeplearning4j.nn.api.Layer, LayerKernel> kernel) {
        void check(Layer conf, String where) {
            check.accept(type.cast(conf), where);
        }

        /** The layer's kernel, or null when this configuration of the layer runs on the {@link FallbackKernel}. */
        LayerKernel kernel(org.deeplearning4j.nn.api.Layer layer) {
            return kernel.apply(type.cast(layer.conf().getLayer()), layer);
        }
    }

    private static final Map<Class<? extends Layer>, Registration<?>> KERNELS = new LinkedHashMap<>();
    private static final Map<Class<? extends Layer>, String> INSTEAD = new LinkedHashMap<>();

    static {
        register(ConvolutionLayer.class, LayerKernels::checkConvolution, (c, layer) -> samePadded(c, new ConvKernel(layer.getParam("W"),
                c.hasBias() ? layer.getParam("b") : null, c.getActivationFn(), convolutionWindow(c))));
        register(WeightStandardizedConvolution.class, LayerKernels::checkConvolution, (c, layer) -> samePadded(c, new WsConvKernel(
                layer.getParam("W"), c.hasBias() ? layer.getParam("b") : null, c.getActivationFn(), convolutionWindow(c), c.getEps())));
        // depthwise and separable convolutions in NCHW, Truncate, Strict or Same mode; other settings (NHWC) on the fallback
        register(DepthwiseConvolution2D.class, (c, where) -> {
        }, (c, layer) -> !convolutionCovered(c) ? null : samePadded(c, new DepthwiseKernel(layer.getParam("W"),
                DepthwiseKernel.Layout.KH_KW_IC_M, c.hasBias() ? layer.getParam("b") : null, c.getActivationFn(), convolutionWindow(c))));
        register(SeparableConvolution2D.class, (c, where) -> {
        }, (c, layer) -> !convolutionCovered(c) ? null : new SeparableKernel(samePadded(c, new DepthwiseKernel(layer.getParam("W"),
                DepthwiseKernel.Layout.M_IC_KH_KW, null, new ActivationIdentity(), convolutionWindow(c))),
                new ConvKernel(layer.getParam("pW"), c.hasBias() ? layer.getParam("b") : null, c.getActivationFn(),
                        window(new int[]{1, 1}, new int[]{1, 1}, new int[]{0, 0}, new int[]{1, 1}))));
        // 1-D convolutions in NCW, in every mode (Truncate, Strict, Same, Causal), on the 2-D kernel; NWC on the fallback
        register(org.deeplearning4j.nn.conf.layers.Convolution1DLayer.class, (c, where) -> {
        }, LayerKernels::convolution1d);
        register(org.deeplearning4j.nn.conf.layers.Convolution1D.class, (c, where) -> {
        }, LayerKernels::convolution1d);
        // transposed convolutions in NCHW (Truncate, Strict, Same); NHWC on the fallback
        register(org.deeplearning4j.nn.conf.layers.Deconvolution2D.class, (c, where) -> {
        }, (c, layer) -> !convolutionCovered(c) ? null
                : new DeconvKernel(layer.getParam("W"), c.hasBias() ? layer.getParam("b") : null, c.getActivationFn(),
                        convolutionWindow(c), c.getConvolutionMode() == ConvolutionMode.Same));
        register(GroupNormalization.class, (g, where) -> {
        }, (g, layer) -> new GroupNormKernel(layer.getParam("gamma"), layer.getParam("beta"), g.getGroups(), g.getEps(),
                g.getActivationFn()));
        register(SubsamplingLayer.class, (s, where) -> {
            if (s.getPoolingType() != PoolingType.MAX && s.getPoolingType() != PoolingType.AVG) {
                throw new IllegalArgumentException(where + ": pooling type " + s.getPoolingType() + " is not supported; use MAX or AVG");
            }
            if (s.getCnn2dDataFormat() != CNN2DFormat.NCHW) {
                throw new IllegalArgumentException(where + ": data format " + s.getCnn2dDataFormat() + " is not supported; use NCHW");
            }
            requireExplicitPadding(where, s.getConvolutionMode());
        }, (s, layer) -> {
            boolean max = s.getPoolingType() == PoolingType.MAX;
            int extra = !max && s.isAvgPoolIncludePadInDivisor() ? 1 : 0; // as DL4J's SubsamplingLayer sets it
            boolean same = s.getConvolutionMode() == ConvolutionMode.Same; // libnd4j pads as DL4J does in this mode
            int[] k = s.getKernelSize();
            int[] st = s.getStride();
            int[] p = same ? new int[]{0, 0} : s.getPadding();
            int[] d = s.getDilation();
            return new PoolKernel(new Ops.Window(k[0], k[1], st[0], st[1], p[0], p[1], d[0], d[1], same), max, extra);
        });
        // layer normalisation is per example: DL4J's own backprop runs it exactly on the fallback
        register(DenseLayer.class, (d, where) -> {
        }, (d, layer) -> d.hasLayerNorm() ? null
                : new DenseKernel(layer.getParam("W"), d.hasBias() ? layer.getParam("b") : null, d.getActivationFn()));
        register(OutputLayer.class, (o, where) -> requirePerExampleLoss(o.getLossFn(), where), (o, layer) -> {
            INDArray b = o.hasBias() ? layer.getParam("b") : null;
            // softmax with unweighted cross-entropy (or NLL, its subclass): p − y directly, as DL4J's LossMCXENT computes it
            if (o.getActivationFn() instanceof ActivationSoftmax && o.getLossFn() instanceof LossMCXENT m && m.getWeights() == null) {
                return new SoftmaxCrossEntropyKernel(new DenseKernel(layer.getParam("W"), b, o.getActivationFn()));
            }
            return new LossKernel(new DenseKernel(layer.getParam("W"), b, new ActivationIdentity()), o.getActivationFn(), o.getLossFn());
        });
        // an LSTM as DL4J's LSTMHelpers computes it (tanh and sigmoid, NCW; a feature mask passes through it, as in DL4J);
        // other settings run on the fallback
        register(org.deeplearning4j.nn.conf.layers.LSTM.class, (l, where) -> {
        }, (l, layer) -> l.getActivationFn() instanceof org.nd4j.linalg.activations.impl.ActivationTanH
                && l.getGateActivationFn() instanceof org.nd4j.linalg.activations.impl.ActivationSigmoid
                && (l.getRnnDataFormat() == null || l.getRnnDataFormat() == org.deeplearning4j.nn.conf.RNNFormat.NCW)
                ? new LstmKernel(layer.getParam("W"), layer.getParam("RW"), layer.getParam("b"),
                        FallbackKernel.of(layer, layer.conf(), "an LSTM", layer.params().dataType(), false))
                : null);
        // a SimpleRnn as DL4J computes it (any activation, NCW, masks of 0s and 1s); layer normalisation and NWC run on the
        // fallback, and so does a batch whose mask holds other values (inside the kernel)
        register(org.deeplearning4j.nn.conf.layers.recurrent.SimpleRnn.class, (r, where) -> {
        }, (r, layer) -> !r.hasLayerNorm()
                && (r.getRnnDataFormat() == null || r.getRnnDataFormat() == org.deeplearning4j.nn.conf.RNNFormat.NCW)
                ? new SimpleRnnKernel(layer.getParam("W"), layer.getParam("RW"), layer.getParam("b"), r.getActivationFn(),
                        FallbackKernel.of(layer, layer.conf(), "a SimpleRnn with a fractional feature mask", layer.params().dataType(), false))
                : null);
        // embeddings (indices in, rows of W out) with an element-wise activation; EmbeddingSequenceLayer in NCW only
        register(org.deeplearning4j.nn.conf.layers.EmbeddingLayer.class, (e, where) -> {
        }, (e, layer) -> elementWise(e.getActivationFn()) ? new EmbeddingKernel(layer.getParam("W"), e.hasBias()
                ? layer.getParam("b") : null, e.getActivationFn(), false, -1, whereOf(layer)) : null);
        register(org.deeplearning4j.nn.conf.layers.EmbeddingSequenceLayer.class, (e, where) -> {
        }, (e, layer) -> elementWise(e.getActivationFn())
                && (e.getOutputFormat() == null || e.getOutputFormat() == org.deeplearning4j.nn.conf.RNNFormat.NCW)
                ? new EmbeddingKernel(layer.getParam("W"), e.hasBias() ? layer.getParam("b") : null, e.getActivationFn(), true,
                        e.isInferInputLength() ? -1 : e.getInputLength(), whereOf(layer)) : null);
        register(LossLayer.class, (l, where) -> requirePerExampleLoss(l.getLossFn(), where),
                (l, layer) -> new LossKernel(null, l.getActivationFn(), l.getLossFn()));
        register(org.deeplearning4j.nn.conf.layers.RnnOutputLayer.class, (o, where) -> {
            requirePerExampleLoss(o.getLossFn(), where);
            requireNcw(o.getRnnDataFormat(), where);
        }, (o, layer) -> new SequenceLossKernel(new DenseKernel(layer.getParam("W"), o.hasBias() ? layer.getParam("b") : null,
                new ActivationIdentity()), o.getActivationFn(), o.getLossFn()));
        register(org.deeplearning4j.nn.conf.layers.RnnLossLayer.class, (l, where) -> {
            requirePerExampleLoss(l.getLossFn(), where);
            requireNcw(l.getRnnDataFormat(), where);
        }, (l, layer) -> new SequenceLossKernel(null, l.getActivationFn(), l.getLossFn()));

        register(GlobalPoolingLayer.class, (g, where) -> {
            if (g.getPoolingType() != PoolingType.AVG && g.getPoolingType() != PoolingType.MAX && g.getPoolingType() != PoolingType.SUM) {
                throw new IllegalArgumentException(where + ": global pooling type " + g.getPoolingType()
                        + " is not supported; use AVG, MAX or SUM");
            }
            int[] dims = g.getPoolingDimensions();
            if (dims != null && !java.util.Arrays.equals(dims, new int[]{2, 3}) && !java.util.Arrays.equals(dims, new int[]{2})
                    || !g.isCollapseDimensions()) {
                throw new IllegalArgumentException(where + ": global pooling must pool NCHW activations over dimensions {2, 3} "
                        + "(or a sequence's over {2}) and collapse them (the defaults)");
            }
        }, (g, layer) -> new GlobalPoolingKernel(GlobalPoolingKernel.Kind.valueOf(g.getPoolingType().name())));
        register(ActivationLayer.class, (a, where) -> {
        }, (a, layer) -> new ActivationKernel(a.getActivationFn()));
        register(DropoutLayer.class, (d, where) -> {
        }, (d, layer) -> new ActivationKernel(new org.nd4j.linalg.activations.impl.ActivationIdentity())); // its dropout runs before it
        register(ZeroPaddingLayer.class, (z, where) -> {
            if (z.getDataFormat() != CNN2DFormat.NCHW) {
                throw new IllegalArgumentException(where + ": data format " + z.getDataFormat() + " is not supported; use NCHW");
            }
        }, (z, layer) -> new ZeroPaddingKernel(z.getPadding()));

        register(Scattering.class, (sc, where) -> {
        }, (sc, layer) -> new ScatteringKernel(sc));
        register(org.dpdl4j.models.FeatureStandardization.class, (f, where) -> {
        }, (f, layer) -> new FeatureStandardizationKernel(f));

        insteadOf(org.deeplearning4j.nn.conf.layers.SpaceToBatchLayer.class, "it moves blocks of each image into the batch "
                + "dimension, so one example's gradient is spread over several rows and is not its own; remove it");
        insteadOf(org.deeplearning4j.nn.conf.layers.LearnedSelfAttentionLayer.class, "DL4J 1.0.0-M2.1's own forward pass of this "
                + "layer fails (its scatter_update op); use SelfAttentionLayer");
        for (Class<? extends Layer> volume : java.util.List.of(org.deeplearning4j.nn.conf.layers.Convolution3D.class,
                org.deeplearning4j.nn.conf.layers.Deconvolution3D.class, org.deeplearning4j.nn.conf.layers.Subsampling3DLayer.class,
                org.deeplearning4j.nn.conf.layers.Upsampling3D.class, org.deeplearning4j.nn.conf.layers.ZeroPadding3DLayer.class,
                org.deeplearning4j.nn.conf.layers.convolutional.Cropping3D.class, org.deeplearning4j.nn.conf.layers.Cnn3DLossLayer.class)) {
            insteadOf(volume, "3-D layers (volumes [B, c, d, h, w]) are not supported by the DP-SGD engine");
        }
        insteadOf(BatchNormalization.class, "batch normalisation mixes the examples of a batch, so per-example gradients (and "
                + "DP-SGD's guarantee) are not defined; remove it (tempered-sigmoid activations are the usual replacement in DP "
                + "training; DpCompatibility.fix replaces it by GroupNormalization)");
    }

    private LayerKernels() {
    }

    /** Factories of users' kernels (ServiceLoader, {@link Kernels#register}), by layer class. */
    private static final Map<Class<? extends Layer>, org.dpdl4j.dpsgd.spi.KernelFactory> EXTERNAL =
            new java.util.concurrent.ConcurrentHashMap<>();
    private static volatile boolean loaded;

    /** Adds a user's kernel factory (see {@link Kernels#register}). */
    static void registerExternal(org.dpdl4j.dpsgd.spi.KernelFactory factory) {
        Class<? extends Layer> type = factory.layerType();
        if (KERNELS.containsKey(type)) {
            throw new IllegalArgumentException(type.getSimpleName() + " has a kernel of dpdl4j's own; a factory of yours cannot "
                    + "replace it");
        }
        for (Map.Entry<Class<? extends Layer>, String> e : INSTEAD.entrySet()) {
            if (e.getKey().isAssignableFrom(type)) {
                throw new IllegalArgumentException(type.getSimpleName() + " cannot be trained with DP-SGD: " + e.getValue());
            }
        }
        EXTERNAL.put(type, factory);
    }

    /** The factories listed in META-INF/services, once. */
    private static void loadServices() {
        if (!loaded) {
            synchronized (EXTERNAL) {
                if (!loaded) {
                    for (org.dpdl4j.dpsgd.spi.KernelFactory f : java.util.ServiceLoader.load(org.dpdl4j.dpsgd.spi.KernelFactory.class)) {
                        EXTERNAL.putIfAbsent(f.layerType(), f);
                    }
                    loaded = true;
                }
            }
        }
    }

    /** A user's kernel for this layer, or null (no factory, or the factory declined). */
    static LayerKernel external(org.deeplearning4j.nn.api.Layer layer) {
        loadServices();
        org.dpdl4j.dpsgd.spi.KernelFactory f = EXTERNAL.get(layer.conf().getLayer().getClass());
        if (f == null) {
            return null;
        }
        org.dpdl4j.dpsgd.spi.PerExampleKernel k = f.create(layer);
        return k == null ? null : new ExternalKernel(k);
    }

    /** Whether an activation acts on each entry alone (softmax normalises along an axis, which a reshape would change). */
    private static boolean elementWise(org.nd4j.linalg.activations.IActivation a) {
        return !(a instanceof ActivationSoftmax);
    }

    /** "layer 0 (EmbeddingLayer 'emb')", for the messages of a kernel about its data. */
    private static String whereOf(org.deeplearning4j.nn.api.Layer layer) {
        Layer c = layer.conf().getLayer();
        return "layer " + layer.getIndex() + " (" + c.getClass().getSimpleName()
                + (c.getLayerName() != null ? " '" + c.getLayerName() + "'" : "") + ")";
    }

    /** Losses whose score is not a sum of per-example terms (they mix the examples of a batch). */
    private static void requirePerExampleLoss(org.nd4j.linalg.lossfunctions.ILossFunction loss, String where) {
        if (loss instanceof org.nd4j.linalg.lossfunctions.impl.LossFMeasure) {
            throw new IllegalArgumentException(where + ": the F-measure loss is computed over the whole batch, so an example's "
                    + "gradient depends on the others; use a per-example loss (MCXENT, XENT, MSE, ...)");
        }
    }

    private static <L extends Layer> void register(Class<L> type, BiConsumer<L, String> check,
                                                   BiFunction<L, org.deeplearning4j.nn.api.Layer, LayerKernel> kernel) {
        KERNELS.put(type, new Registration<>(type, check, kernel));
    }

    private static void insteadOf(Class<? extends Layer> type, String advice) {
        INSTEAD.put(type, advice);
    }

    /**
     * The registration of this layer configuration's exact class, or null when it has none and may use the exact
     * fallback ({@link FallbackKernel}).
     *
     * @throws IllegalArgumentException saying what to use instead for a class (or a subclass of one) that can be run
     *                                  neither way
     */
    static Registration<?> find(Layer conf, String where) {
        Registration<?> r = KERNELS.get(conf.getClass());
        if (r == null) {
            for (Map.Entry<Class<? extends Layer>, String> e : INSTEAD.entrySet()) {
                if (e.getKey().isInstance(conf)) { // subclasses too: they may mix examples just the same
                    throw new IllegalArgumentException(where + ": " + e.getValue());
                }
            }
        }
        return r;
    }

    /**
     * The kernel of a layer's input preprocessor: the engine runs the two reshapes between convolutional and dense
     * layers (NCHW), and nothing else.
     *
     * @param where the layer's position, for the message
     * @throws IllegalArgumentException if the preprocessor is of another kind, or not NCHW
     */
    static LayerKernel preprocessor(InputPreProcessor p, String where) {
        if (p instanceof FeedForwardToCnnPreProcessor f) {
            return new ReshapeKernel(f.getNumChannels(), f.getInputHeight(), f.getInputWidth());
        }
        if (p instanceof CnnToFeedForwardPreProcessor c) {
            if (c.getFormat() != CNN2DFormat.NCHW) {
                throw new IllegalArgumentException("input preprocessor of " + where + " must use NCHW");
            }
            return new ReshapeKernel(c.getNumChannels() * c.getInputHeight() * c.getInputWidth());
        }
        if (p instanceof org.dpdl4j.models.ImageRowsPreProcessor r) {
            return new ImageRowsKernel(r);
        }
        if (p instanceof org.deeplearning4j.nn.conf.preprocessor.RnnToFeedForwardPreProcessor r) {
            requireNcw(r.getRnnDataFormat(), where);
            return new SequenceReshapeKernel(true);
        }
        if (p instanceof org.deeplearning4j.nn.conf.preprocessor.FeedForwardToRnnPreProcessor r) {
            requireNcw(r.getRnnDataFormat(), where);
            return new SequenceReshapeKernel(false);
        }
        if (p instanceof org.deeplearning4j.nn.conf.preprocessor.Cnn3DToFeedForwardPreProcessor c) {
            if (!c.isNCDHW()) {
                throw new IllegalArgumentException("input preprocessor of " + where + " must use NCDHW");
            }
            return new ReshapeKernel(5, c.getNumChannels() * c.getInputDepth() * c.getInputHeight() * c.getInputWidth());
        }
        throw new IllegalArgumentException("input preprocessor of " + where + " (" + p.getClass().getSimpleName()
                + ") is not supported by the DP-SGD engine");
    }

    private static void requireNcw(org.deeplearning4j.nn.conf.RNNFormat format, String where) {
        if (format != null && format != org.deeplearning4j.nn.conf.RNNFormat.NCW) {
            throw new IllegalArgumentException("input preprocessor of " + where + " must use NCW sequences [B, features, T], got "
                    + format);
        }
    }

    /** Whether this exact layer configuration class has a per-example-gradient kernel (its settings may still be refused). */
    static boolean supports(Class<? extends Layer> type) {
        loadServices();
        return KERNELS.containsKey(type) || EXTERNAL.containsKey(type);
    }

    /** The supported layer configuration classes, by simple name, in registration order. */
    static String supportedNames() {
        return String.join(", ", KERNELS.keySet().stream().map(Class::getSimpleName).toList());
    }

    private static void checkConvolution(ConvolutionLayer c, String where) {
        if (c.getCnn2dDataFormat() != CNN2DFormat.NCHW) {
            throw new IllegalArgumentException(where + ": data format " + c.getCnn2dDataFormat() + " is not supported; use NCHW");
        }
        requireExplicitPadding(where, c.getConvolutionMode());
    }

    /** Whether a depthwise, separable or transposed convolution's settings are its kernel's (else it runs on the fallback). */
    private static boolean convolutionCovered(ConvolutionLayer c) {
        ConvolutionMode mode = c.getConvolutionMode();
        return c.getCnn2dDataFormat() == CNN2DFormat.NCHW
                && (mode == ConvolutionMode.Truncate || mode == ConvolutionMode.Strict || mode == ConvolutionMode.Same);
    }

    /** A 1-D convolution's kernel (k × 1 windows on [B, iC, T, 1]), or null (NWC: the fallback). */
    private static LayerKernel convolution1d(org.deeplearning4j.nn.conf.layers.Convolution1DLayer c, org.deeplearning4j.nn.api.Layer layer) {
        if (c.getRnnDataFormat() != null && c.getRnnDataFormat() != org.deeplearning4j.nn.conf.RNNFormat.NCW) {
            return null;
        }
        ConvolutionMode mode = c.getConvolutionMode();
        boolean padded = mode == ConvolutionMode.Same || mode == ConvolutionMode.Causal;
        // DL4J keeps a 1-D layer's sizes in the first entry of each pair (its builders may fill both)
        Ops.Window w = new Ops.Window(c.getKernelSize()[0], 1, c.getStride()[0], 1, padded ? 0 : c.getPadding()[0], 0,
                c.getDilation()[0], 1);
        LayerKernel convolution = new Conv1dKernel.Weights(layer.getParam("W"), c.hasBias() ? layer.getParam("b") : null,
                c.getActivationFn(), w);
        return new Conv1dKernel(padded ? new SamePaddingKernel(convolution, w, mode == ConvolutionMode.Causal) : convolution, c);
    }

    /** A convolution's window: its padding, or none in Same mode (where {@link SamePaddingKernel} pads). */
    private static Ops.Window convolutionWindow(ConvolutionLayer c) {
        return window(c.getKernelSize(), c.getStride(), c.getConvolutionMode() == ConvolutionMode.Same ? new int[]{0, 0}
                : c.getPadding(), c.getDilation());
    }

    /** The kernel, behind DL4J's Same-mode padding when the layer asks for it. */
    private static LayerKernel samePadded(ConvolutionLayer c, LayerKernel kernel) {
        return c.getConvolutionMode() == ConvolutionMode.Same ? new SamePaddingKernel(kernel, convolutionWindow(c)) : kernel;
    }

    private static void requireExplicitPadding(String where, ConvolutionMode mode) {
        if (mode != ConvolutionMode.Truncate && mode != ConvolutionMode.Strict && mode != ConvolutionMode.Same) {
            throw new IllegalArgumentException(where + ": convolution mode " + mode + " is not supported for 2-D layers; use "
                    + "Same, Truncate or Strict (Causal is for 1-D convolutions)");
        }
    }

    private static Ops.Window window(int[] k, int[] s, int[] p, int[] d) {
        return new Ops.Window(k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1]);
    }
}
