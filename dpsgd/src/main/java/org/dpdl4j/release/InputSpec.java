package org.dpdl4j.release;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The input a model expects: images of {@code channels × height × width}, flattened in NCHW order into rows of
 * {@code channels·height·width} features (DL4J's {@code InputType.convolutionalFlat}), each feature the raw
 * 8-bit pixel divided by {@code scale}. A server turns raw pixel bytes into features with exactly this.
 *
 * @param channels c ≥ 1
 * @param height   h ≥ 1
 * @param width    w ≥ 1
 * @param scale    the divisor applied to each unsigned 8-bit pixel, finite and &gt; 0 (255 for dpdl4j's datasets)
 */
public record InputSpec(int channels, int height, int width, double scale) {
    /** The layout string written into the sidecar. */
    public static final String LAYOUT = "NCHW, flattened to [batch, channels*height*width]";

    /**
     * Checks the sizes and the scale.
     *
     * @param channels c ≥ 1
     * @param height   h ≥ 1
     * @param width    w ≥ 1
     * @param scale    the divisor applied to each unsigned 8-bit pixel, finite and &gt; 0
     * @throws IllegalArgumentException if a size is below 1, c·h·w exceeds {@link Integer#MAX_VALUE}, or the scale is
     *                                  not finite and positive
     */
    public InputSpec {
        if (channels < 1 || height < 1 || width < 1) {
            throw new IllegalArgumentException("input channels, height and width must be >= 1, got " + channels + "x" + height + "x" + width);
        }
        if ((long) channels * height * width > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("input channels*height*width must be at most " + Integer.MAX_VALUE + ", got "
                    + channels + "x" + height + "x" + width);
        }
        if (!(scale > 0) || Double.isInfinite(scale)) {
            throw new IllegalArgumentException("input scale must be finite and > 0, got " + scale);
        }
    }

    /**
     * The number of features of one example, c·h·w.
     *
     * @return c·h·w, ≥ 1
     */
    public int features() {
        return channels * height * width;
    }

    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("channels", channels);
        m.put("height", height);
        m.put("width", width);
        m.put("layout", LAYOUT);
        m.put("pixel_scale", scale);
        return m;
    }

    static InputSpec fromMap(Map<?, ?> m) {
        return new InputSpec(PrivacySidecar.integer(m, "input.channels"), PrivacySidecar.integer(m, "input.height"),
                PrivacySidecar.integer(m, "input.width"), PrivacySidecar.number(m, "input.pixel_scale"));
    }
}
