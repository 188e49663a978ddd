package org.dpdl4j.dpsgd;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.dpdl4j.accounting.ComposedEvent;
import org.dpdl4j.accounting.GaussianEvent;
import org.dpdl4j.accounting.PrivacyEvent;
import org.dpdl4j.datasets.ExampleSource;
import org.dpdl4j.datasets.LabeledData;
import org.dpdl4j.models.FeatureStandardization;
import org.dpdl4j.models.FeatureStatisticsLayer;
import org.dpdl4j.models.FeatureStatistics;
import org.dpdl4j.models.Scattering;
import org.dpdl4j.models.Scattering2D;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Tramèr &amp; Boneh's private data normalisation of ScatterNet features ("Differentially Private Learning Needs Better
 * Features (or Much More Data)", ICLR 2021, arXiv:2011.11660, Sec. 3 and Appendix): two Gaussian mechanisms that release
 * the per-channel mean μ and mean of squares of the scattering features, from which the model normalises its features
 * to (x − μ_c)/√(v_c + 10⁻⁵) with v = max(E[x²] − μ², 0) ({@link FeatureStatistics}).
 *
 * <p>Each example i contributes two vectors of C·K entries (C input channels, K scattering coefficients): a_i, its
 * features' mean over the H'×W' positions of each channel, and b_i, their mean of squares. They are clipped to L2 norms
 * at most C_μ and C_s (scaled by min(1, C/‖·‖)), so adding or removing one example moves the sums by at most C_μ and
 * C_s. The release is Σ clip(a_i) + N(0, σ²C_μ²·I) and Σ clip(b_i) + N(0, σ²C_s²·I), divided by n. Its event is two
 * Gaussian mechanisms with noise multiplier σ each ({@link #event}); compose it with the training's. Like DP-SGD
 * (q = B/n, the expected batch), it treats the data set's size n as public. Tramèr &amp; Boneh clip at the median norms,
 * which their code notes is not private; here the clipping norms are parameters fixed before the data are seen.
 *
 * <p>The same mechanism standardises any network's raw input ({@link #releaseFeatures}): with a
 * {@link FeatureStandardization} layer, each example's vectors are its input's channel means and means of squares (per
 * colour channel of an image, per feature of a sequence over its unmasked steps, per entry of a vector), clipped at the
 * layer's C_μ and C_s, and the released μ and v are set into that layer. This is the private alternative to DL4J's
 * {@code NormalizerStandardize} fitted on the training data, whose exact statistics no ε covers. An example with a
 * value that is not finite contributes nothing (both vectors count as clipped to 0), so that one example's content
 * cannot make the release fail after the run was charged.
 */
public final class PrivateNormalisation {
    private static final int CHUNK = 256;
    /**
     * Default C_μ for 28×28 images with pixels in [0, 1] (J = 2, L = 8): a round number set once, before any run, from
     * the norms of MNIST training images' vectors of channel means (median 0.17, maximum 0.34); that look at the data is
     * not counted in ε, as Tramèr &amp; Boneh's median clipping is not.
     */
    public static final double DEFAULT_CLIP_MEAN = 0.25;
    /** Default C_s, set as {@link #DEFAULT_CLIP_MEAN} was (channel means of squares: median 0.05, maximum 0.22). */
    public static final double DEFAULT_CLIP_SQUARES = 0.1;

    private PrivateNormalisation() {
    }

    /**
     * What the mechanism released.
     *
     * @param statistics      μ and v for {@link org.dpdl4j.models.ModelOptions#withFeatures}
     * @param noiseMultiplier σ of each of the two Gaussian mechanisms
     * @param clipMean        C_μ, the clipping norm of each example's vector of channel means
     * @param clipSquares     C_s, the clipping norm of each example's vector of channel means of squares
     * @param clipped         how many examples had at least one vector clipped, or a value that is not finite (then
     *                        left out); operator-only, not covered by ε
     */
    public record Release(FeatureStatistics statistics, double noiseMultiplier, double clipMean, double clipSquares, long clipped) {
        /**
         * The release's privacy event: {@link PrivateNormalisation#event(double)} of its σ.
         *
         * @return two composed Gaussian mechanisms with noise multiplier σ each
         */
        public PrivacyEvent event() {
            return PrivateNormalisation.event(noiseMultiplier);
        }

        /**
         * What may be published: σ and the clipping norms, not the operator-only clipped count.
         *
         * @return the statistics, σ, C_μ and C_s as text
         */
        @Override
        public String toString() {
            return "Release[" + statistics + ", sigma " + noiseMultiplier + ", C_mu " + clipMean + ", C_s " + clipSquares + "]";
        }
    }

    /**
     * Tramèr &amp; Boneh's setting: the statistics of the J = 2, L = 8 transform, clipped at {@link #DEFAULT_CLIP_MEAN} and
     * {@link #DEFAULT_CLIP_SQUARES}, noise seeded from {@code seed} (derived, so that it differs from a run's noise seeded
     * with the same number). See {@link #release}.
     *
     * @param data            the private training data (its images; the labels are not read), as for {@link #release}
     * @param noiseMultiplier σ ≥ 0, finite (0: exact statistics, not private)
     * @param seed            the seed the noise seed is derived from: keep it secret
     * @param threads         threads computing the transform, ≥ 1
     * @return the released statistics with σ and the clipping norms
     * @throws IllegalArgumentException as {@link #release}
     * @throws IllegalStateException    as {@link #release}
     */
    public static Release releaseScatterNet(ExampleSource data, double noiseMultiplier, long seed, int threads) {
        return release(data, 2, 8, DEFAULT_CLIP_MEAN, DEFAULT_CLIP_SQUARES, noiseMultiplier, seed ^ 0x5eed_0a0aL, threads);
    }

    /**
     * The one {@link Scattering} layer of a network (a {@code MultiLayerNetwork} or a {@code ComputationGraph}), whose
     * feature statistics {@link #releaseInto} sets.
     *
     * @param network the network
     * @return its scattering layer's configuration, which DL4J's output() and the engine's kernel both read
     * @throws IllegalArgumentException naming data_normalisation if the network has no scattering layer or more than one
     */
    public static Scattering scatteringLayer(org.deeplearning4j.nn.api.Model network) {
        List<Scattering> found = layersOf(network, Scattering.class);
        if (found.size() != 1) {
            throw new IllegalArgumentException("data_normalisation normalises the features of a Scattering layer: the network ("
                    + network.getClass().getSimpleName() + ") has " + found.size() + " of them, not one");
        }
        return found.get(0);
    }

    /**
     * The one layer of a network whose statistics data normalisation releases: a {@link Scattering} layer (its features')
     * or a {@link FeatureStandardization} layer (the raw input's).
     *
     * @param network the network
     * @return the layer's configuration, a {@link Scattering} or a {@link FeatureStandardization}
     * @throws IllegalArgumentException naming data_normalisation unless the network has exactly one such layer
     */
    public static FeatureStatisticsLayer normalisedLayer(org.deeplearning4j.nn.api.Model network) {
        List<FeatureStatisticsLayer> found = layersOf(network, FeatureStatisticsLayer.class);
        if (found.size() != 1) {
            throw new IllegalArgumentException("data_normalisation releases the statistics of one Scattering or FeatureStandardization "
                    + "layer: the network (" + network.getClass().getSimpleName() + ") has " + found.size() + " of them, not one "
                    + "(put a FeatureStandardization first to standardise the input)");
        }
        return found.get(0);
    }

    /** The configurations of the network's layers of the given class, in the network's order. */
    private static <T> List<T> layersOf(org.deeplearning4j.nn.api.Model network, Class<T> type) {
        org.deeplearning4j.nn.api.Layer[] layers = network instanceof org.deeplearning4j.nn.multilayer.MultiLayerNetwork m
                ? m.getLayers() : network instanceof org.deeplearning4j.nn.graph.ComputationGraph g ? g.getLayers()
                : new org.deeplearning4j.nn.api.Layer[0];
        List<T> found = new ArrayList<>();
        for (org.deeplearning4j.nn.api.Layer l : layers) {
            if (l.conf() != null && type.isInstance(l.conf().getLayer())) {
                found.add(type.cast(l.conf().getLayer()));
            }
        }
        return found;
    }

    /**
     * Whether the network's normalised layer ({@link #normalisedLayer}) holds statistics.
     *
     * @param network the network
     * @return true if its μ is set
     * @throws IllegalArgumentException as {@link #normalisedLayer}
     */
    public static boolean hasStatistics(org.deeplearning4j.nn.api.Model network) {
        return normalisedLayer(network).getFeatureMean() != null;
    }

    /**
     * Removes the statistics of the network's normalised layer (pending a release).
     *
     * @param network the network
     * @throws IllegalArgumentException as {@link #normalisedLayer}
     */
    public static void clearStatistics(org.deeplearning4j.nn.api.Model network) {
        normalisedLayer(network).clearStatistics();
    }

    /**
     * The clipping norms {C_μ, C_s} a release into the network uses: the defaults for a {@link Scattering} layer, the
     * layer's own for a {@link FeatureStandardization}.
     *
     * @param network the network
     * @return {C_μ, C_s}
     * @throws IllegalArgumentException as {@link #normalisedLayer}
     */
    public static double[] clipNorms(org.deeplearning4j.nn.api.Model network) {
        return normalisedLayer(network) instanceof FeatureStandardization f ? new double[]{f.getClipMean(), f.getClipSquares()}
                : new double[]{DEFAULT_CLIP_MEAN, DEFAULT_CLIP_SQUARES};
    }

    /**
     * Releases the statistics of {@code network}'s normalised layer and sets them into it: a {@link Scattering} layer's
     * features ({@link #release} with its J and L and the default clipping norms), or a {@link FeatureStandardization}
     * layer's input ({@link #releaseFeatures} with its channels and clipping norms).
     *
     * @param network         the network, with one such layer ({@link #normalisedLayer})
     * @param data            the training examples, images of the shape the layer takes
     * @param noiseMultiplier σ_norm ≥ 0, finite
     * @param seed            the noise's seed (keep it secret)
     * @param threads         threads computing the clipped sums, ≥ 1
     * @return the release (its event is {@link #event}(σ_norm))
     * @throws IllegalArgumentException as {@link #scatteringLayer} and {@link #release}
     */
    public static Release releaseInto(org.deeplearning4j.nn.api.Model network, ExampleSource data, double noiseMultiplier,
                                      long seed, int threads) {
        if (normalisedLayer(network) instanceof FeatureStandardization f) {
            Release r = releaseFeatures(data, (int) f.getChannels(), f.getClipMean(), f.getClipSquares(), noiseMultiplier,
                    seed ^ 0x5eed_0a0aL, threads);
            f.setFeatureMean(r.statistics().mean());
            f.setFeatureVariance(r.statistics().variance());
            return r;
        }
        Scattering layer = scatteringLayer(network);
        Release r = release(data, layer.getScales(), layer.getAngles(), DEFAULT_CLIP_MEAN, DEFAULT_CLIP_SQUARES, noiseMultiplier,
                seed ^ 0x5eed_0a0aL, threads);
        layer.setFeatureMean(r.statistics().mean());
        layer.setFeatureVariance(r.statistics().variance());
        return r;
    }

    /**
     * Releases the per-channel mean and variance of the examples' own features, for a {@link FeatureStandardization}
     * layer: example i's vectors a_i and b_i are its features' means and means of squares over each channel's positions
     * (over the unmasked steps of a masked sequence), clipped to C_μ and C_s, and the mechanism is as {@link #release}'s
     * (Tramèr &amp; Boneh, arXiv:2011.11660, Sec. 3: two Gaussian mechanisms of sensitivity C_μ and C_s, noise σC each;
     * {@link #event}).
     *
     * @param data            the private training data (its features; the labels are not read), read in chunks of 256
     * @param channels        m ≥ 1: each example's features are m channels of equal size, channel-major (NCHW, NCW, or
     *                        one entry per channel for vectors)
     * @param clipMean        C_μ &gt; 0, finite
     * @param clipSquares     C_s &gt; 0, finite
     * @param noiseMultiplier σ ≥ 0, finite (0: exact statistics, not private)
     * @param noiseSeed       seed of the noise: keep it secret, or draw it from {@link java.security.SecureRandom}
     * @param threads         threads computing the sums, ≥ 1
     * @return μ and v (m channels each), σ, C_μ, C_s and the operator-only count of clipped (or left out) examples
     * @throws IllegalArgumentException naming the parameter that is out of range, if {@code data} is empty, or if an
     *                                  example's size is not a multiple of m
     * @throws IllegalStateException    if computing a chunk's sums fails or the thread is interrupted
     */
    public static Release releaseFeatures(ExampleSource data, int channels, double clipMean, double clipSquares,
                                          double noiseMultiplier, long noiseSeed, int threads) {
        checkArguments(clipMean, clipSquares, noiseMultiplier, threads);
        if (channels < 1) {
            throw new IllegalArgumentException("channels m must be >= 1, got " + channels);
        }
        return finish(data, channels, noisySums(clippedSums(data, channels, chunk -> featureMoments(chunk, channels), clipMean,
                clipSquares, threads), channels, clipMean, clipSquares, noiseMultiplier, noiseSeed), noiseMultiplier, clipMean, clipSquares);
    }

    /** Each example's channel means and means of squares of its own features (over unmasked steps): {a[k][m], b[k][m]}. */
    private static double[][][] featureMoments(LabeledData chunk, int channels) {
        INDArray x = chunk.features().castTo(DataType.DOUBLE).dup('c');
        int k = chunk.size();
        long per = x.length() / Math.max(1, k);
        if (per % channels != 0) {
            throw new IllegalArgumentException("channels m = " + channels + " does not divide an example's " + per + " features");
        }
        int positions = (int) (per / channels);
        double[] v = x.data().asDouble();
        double[] mask = chunk.featureMask() != null && chunk.featureMask().size(1) == positions
                ? chunk.featureMask().castTo(DataType.DOUBLE).dup('c').data().asDouble() : null;
        double[][] a = new double[k][channels];
        double[][] b = new double[k][channels];
        for (int i = 0; i < k; i++) {
            double count = 0;
            for (int p = 0; p < positions; p++) {
                count += mask == null ? 1 : mask[i * positions + p];
            }
            for (int c = 0; c < channels; c++) {
                double s1 = 0;
                double s2 = 0;
                for (int p = 0; p < positions; p++) {
                    double w = mask == null ? 1 : mask[i * positions + p];
                    double val = v[(int) ((long) i * per + (long) c * positions + p)];
                    if (w != 0) {
                        s1 += w * val;
                        s2 += w * val * val;
                    }
                }
                a[i][c] = count > 0 ? s1 / count : 0;
                b[i][c] = count > 0 ? s2 / count : 0;
            }
        }
        return new double[][][]{a, b};
    }

    /** μ = sums/n and v = max(E[x²] − μ², 0) from the noisy sums. */
    private static Release finish(ExampleSource data, int channels, double[] released, double noiseMultiplier, double clipMean,
                                  double clipSquares) {
        int n = data.size();
        double[] mean = new double[channels];
        double[] variance = new double[channels];
        for (int c = 0; c < channels; c++) {
            mean[c] = released[c] / n;
            variance[c] = Math.max(released[channels + c] / n - mean[c] * mean[c], 0);
        }
        return new Release(new FeatureStatistics(mean, variance), noiseMultiplier, clipMean, clipSquares, (long) released[2 * channels]);
    }

    private static void checkArguments(double clipMean, double clipSquares, double noiseMultiplier, int threads) {
        if (!(clipMean > 0) || Double.isInfinite(clipMean)) {
            throw new IllegalArgumentException("clipMean C_mu must be finite and > 0, got " + clipMean);
        }
        if (!(clipSquares > 0) || Double.isInfinite(clipSquares)) {
            throw new IllegalArgumentException("clipSquares C_s must be finite and > 0, got " + clipSquares);
        }
        if (!(noiseMultiplier >= 0) || Double.isInfinite(noiseMultiplier)) {
            throw new IllegalArgumentException("noiseMultiplier sigma must be finite and >= 0, got " + noiseMultiplier);
        }
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
    }

    /**
     * The event of one release: two Gaussian mechanisms, sensitivity C and noise σ·C each (C = C_μ, C_s).
     *
     * @param noiseMultiplier σ, finite and ≥ 0 (0: not private)
     * @return the composition of two Gaussian mechanisms with noise multiplier σ
     * @throws IllegalArgumentException if σ is negative, NaN or infinite
     */
    public static PrivacyEvent event(double noiseMultiplier) {
        return ComposedEvent.of(new GaussianEvent(noiseMultiplier), new GaussianEvent(noiseMultiplier));
    }

    /**
     * Releases the statistics of the scattering features (J scales, L angles) of {@code data}'s images.
     *
     * @param data            the private training data (its images; the labels are not read): in memory, or read by index
     *                        in chunks of 256 examples (packed shards, a folder), so that it need not fit in memory
     * @param scales          J of the transform, in [1, 8]
     * @param angles          L of the transform, in [1, 64]
     * @param clipMean        C_μ &gt; 0, finite
     * @param clipSquares     C_s &gt; 0, finite
     * @param noiseMultiplier σ ≥ 0, finite (0: exact statistics, not private)
     * @param noiseSeed       seed of the noise: keep it secret, or draw it from {@link java.security.SecureRandom}
     * @param threads         threads computing the transform, ≥ 1
     * @return the released statistics μ and v (each of C·K channels), with σ, C_μ, C_s and the operator-only count of
     *         clipped examples
     * @throws IllegalArgumentException naming the parameter that is out of range, if {@code data} is empty, or if the
     *                                  images are too small for J
     * @throws IllegalStateException    if computing a chunk's sums fails (the cause says why) or the thread is interrupted
     */
    public static Release release(ExampleSource data, int scales, int angles, double clipMean, double clipSquares, double noiseMultiplier,
                                  long noiseSeed, int threads) {
        checkArguments(clipMean, clipSquares, noiseMultiplier, threads);
        if (data.size() < 1) {
            throw new IllegalArgumentException("data must hold at least one example");
        }
        LabeledData first = data.read(new int[]{0}); // the image shape (a source's examples may be flat rows)
        Scattering2D transform = new Scattering2D(first.height(), first.width(), scales, angles);
        int channels = first.channels() * transform.coefficients();
        double[] released = noisySums(data, transform, clipMean, clipSquares, noiseMultiplier, noiseSeed, threads);
        return finish(data, channels, released, noiseMultiplier, clipMean, clipSquares);
    }

    /** {@link #clippedSums} with N(0, (σC_μ)²) added to each mean sum and N(0, (σC_s)²) to each square sum, not to the count. */
    static double[] noisySums(ExampleSource data, Scattering2D transform, double clipMean, double clipSquares, double noiseMultiplier,
                              long seed, int threads) {
        double[] sums = clippedSums(data, transform, clipMean, clipSquares, threads);
        return noisySums(sums, (sums.length - 1) / 2, clipMean, clipSquares, noiseMultiplier, seed);
    }

    /** N(0, (σC_μ)²) added to each of the first m sums, N(0, (σC_s)²) to each of the next m, nothing to the count. */
    private static double[] noisySums(double[] sums, int channels, double clipMean, double clipSquares, double noiseMultiplier,
                                      long seed) {
        INDArray a = Nd4j.createFromArray(java.util.Arrays.copyOfRange(sums, 0, channels));
        INDArray b = Nd4j.createFromArray(java.util.Arrays.copyOfRange(sums, channels, 2 * channels));
        try (GaussianNoise noise = new GaussianNoise(seed)) {
            noise.addTo(a, noiseMultiplier * clipMean);
            noise.addTo(b, noiseMultiplier * clipSquares);
        }
        System.arraycopy(a.toDoubleVector(), 0, sums, 0, channels);
        System.arraycopy(b.toDoubleVector(), 0, sums, channels, channels);
        return sums;
    }

    /**
     * Σ clip(a_i) (C·K entries), Σ clip(b_i) (C·K entries), then the number of examples with a clipped vector. Partial
     * sums per chunk of examples are added in chunk order, so the result does not depend on the number of threads.
     */
    static double[] clippedSums(ExampleSource data, Scattering2D transform, double clipMean, double clipSquares, int threads) {
        int channels = data.read(new int[]{0}).channels() * transform.coefficients();
        return clippedSums(data, channels, chunk -> scatteringMoments(chunk, transform), clipMean, clipSquares, threads);
    }

    /**
     * Σ clip(a_i) (m entries), Σ clip(b_i) (m entries), then the number of examples with a clipped vector or a non-finite
     * value (left out), from each chunk's per-example vectors {a[k][m], b[k][m]}; chunks added in order.
     */
    private static double[] clippedSums(ExampleSource data, int channels, java.util.function.Function<LabeledData, double[][][]> moments,
                                        double clipMean, double clipSquares, int threads) {
        int n = data.size();
        int chunks = (n + CHUNK - 1) / CHUNK;
        List<Future<double[]>> parts = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, chunks));
        double[] sums = new double[2 * channels + 1];
        try {
            for (int k = 0; k < chunks; k++) {
                int from = k * CHUNK;
                int to = Math.min(n, from + CHUNK);
                parts.add(pool.submit(() -> clippedSums(moments.apply(data.read(java.util.stream.IntStream.range(from, to).toArray())),
                        channels, clipMean, clipSquares)));
            }
            for (Future<double[]> f : parts) {
                double[] p = f.get();
                for (int j = 0; j < sums.length; j++) {
                    sums[j] += p[j];
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while computing the feature statistics", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not compute the feature statistics", e.getCause());
        } finally {
            pool.shutdownNow();
        }
        return sums;
    }

    /** Each example's channel means and means of squares of its scattering features: {a[k][C·K], b[k][C·K]}. */
    private static double[][][] scatteringMoments(LabeledData data, Scattering2D transform) {
        int k = data.size();
        INDArray images = data.features().castTo(DataType.DOUBLE).reshape('c', new long[]{k, data.channels(), data.height(),
                data.width()});
        int channels = data.channels() * transform.coefficients();
        int positions = transform.outputHeight() * transform.outputWidth();
        INDArray features = transform.transform(images, 1); // one of the release's own threads
        double[] x = features.reshape('c', new long[]{features.length()}).toDoubleVector();
        double[][] a = new double[k][channels];
        double[][] b = new double[k][channels];
        for (int i = 0; i < k; i++) {
            for (int c = 0; c < channels; c++) {
                int base = (i * channels + c) * positions;
                double s1 = 0;
                double s2 = 0;
                for (int p = 0; p < positions; p++) {
                    double v = x[base + p];
                    s1 += v;
                    s2 += v * v;
                }
                a[i][c] = s1 / positions;
                b[i][c] = s2 / positions;
            }
        }
        return new double[][][]{a, b};
    }

    /** Σ clip(a_i), Σ clip(b_i) over a chunk's examples, then the number clipped or left out (a non-finite value). */
    private static double[] clippedSums(double[][][] moments, int channels, double clipMean, double clipSquares) {
        double[][] a = moments[0];
        double[][] b = moments[1];
        double[] sums = new double[2 * channels + 1];
        for (int i = 0; i < a.length; i++) {
            double na = 0;
            double nb = 0;
            for (int c = 0; c < channels; c++) {
                na += a[i][c] * a[i][c];
                nb += b[i][c] * b[i][c];
            }
            if (!Double.isFinite(na) || !Double.isFinite(nb)) { // one example's NaN or ∞ adds nothing and stops nothing
                sums[2 * channels]++;
                continue;
            }
            double fa = clipFactor(Math.sqrt(na), clipMean);
            double fb = clipFactor(Math.sqrt(nb), clipSquares);
            for (int c = 0; c < channels; c++) {
                sums[c] += a[i][c] * fa;
                sums[channels + c] += b[i][c] * fb;
            }
            if (fa < 1 || fb < 1) {
                sums[2 * channels]++;
            }
        }
        return sums;
    }

    /**
     * min(1, C/‖v‖), made a little smaller so that the scaled vector's norm, computed in floating point, stays at most C
     * (the factor's and the product's round-off are each ≤ 2⁻⁵² relative; 1 − 1e-12 covers them many times over).
     */
    static double clipFactor(double norm, double clipNorm) {
        return norm > clipNorm ? clipNorm / norm * (1 - 1e-12) : 1;
    }
}
