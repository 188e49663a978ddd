package org.dpdl4j.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * A reproduced figure: rows of (series, x, y, extra columns…), written as {@code <id>.csv} (one row
 * per plotted point, a header naming the columns) and drawn as {@code <id>.png} with XChart.
 */
public final class Figure {
    private final String id;
    private final String title;
    private final String xLabel;
    private final String yLabel;
    private final List<String> extraColumns;
    private final List<Object[]> rows = new ArrayList<>();
    private boolean logX;
    private boolean logY;
    private boolean legendBelow;

    Figure(String id, String title, String xLabel, String yLabel, String... extraColumns) {
        this.id = id;
        this.title = title;
        this.xLabel = xLabel;
        this.yLabel = yLabel;
        this.extraColumns = List.of(extraColumns);
    }

    Figure logX() {
        logX = true;
        return this;
    }

    Figure logY() {
        logY = true;
        return this;
    }

    /** Legend under the plot (for figures whose lines fill the top left), points marked. */
    Figure legendBelow() {
        legendBelow = true;
        return this;
    }

    /** One plotted point; {@code extras} fill the extra columns in order. */
    void add(String series, double x, double y, double... extras) {
        if (extras.length != extraColumns.size()) {
            throw new IllegalArgumentException("figure " + id + " expects " + extraColumns.size() + " extra values");
        }
        Object[] row = new Object[3 + extras.length];
        row[0] = series;
        row[1] = x;
        row[2] = y;
        for (int i = 0; i < extras.length; i++) {
            row[3 + i] = extras[i];
        }
        rows.add(row);
    }

    /**
     * Writes {@code <id>.csv} and {@code <id>.png} into {@code dir} (each atomically), creating {@code dir} if needed.
     * The PNG (900×600 pixels) leaves out points that are not finite, or not &gt; 0 on a logarithmic axis; the CSV keeps
     * every point.
     *
     * @param dir the output directory
     * @throws IOException if the directory or a file cannot be written
     */
    public void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        StringBuilder csv = new StringBuilder("series," + column(xLabel) + "," + column(yLabel));
        for (String c : extraColumns) {
            csv.append(',').append(column(c));
        }
        csv.append('\n');
        for (Object[] r : rows) {
            csv.append('"').append(r[0]).append('"');
            for (int i = 1; i < r.length; i++) {
                csv.append(',').append(String.format(Locale.ROOT, "%.10g", (Double) r[i]));
            }
            csv.append('\n');
        }
        Reporting.writeAtomically(dir.resolve(id + ".csv"), csv.toString().getBytes(StandardCharsets.UTF_8));

        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(900).height(600).title(title).xAxisTitle(xLabel).yAxisTitle(yLabel).build();
        chart.getStyler().setXAxisLogarithmic(logX).setYAxisLogarithmic(logY);
        chart.getStyler().setLegendPosition(legendBelow ? org.knowm.xchart.style.Styler.LegendPosition.OutsideS
                : org.knowm.xchart.style.Styler.LegendPosition.InsideNW);
        Map<String, List<double[]>> series = new LinkedHashMap<>();
        for (Object[] r : rows) {
            double x = (Double) r[1];
            double y = (Double) r[2];
            if (Double.isFinite(x) && Double.isFinite(y) && (!logX || x > 0) && (!logY || y > 0)) {
                series.computeIfAbsent((String) r[0], k -> new ArrayList<>()).add(new double[]{x, y});
            }
        }
        for (Map.Entry<String, List<double[]>> e : series.entrySet()) {
            double[] xs = e.getValue().stream().mapToDouble(p -> p[0]).toArray();
            double[] ys = e.getValue().stream().mapToDouble(p -> p[1]).toArray();
            chart.addSeries(e.getKey(), xs, ys).setMarker(legendBelow ? SeriesMarkers.CIRCLE : SeriesMarkers.NONE);
        }
        Path tmp = Files.createTempFile(dir, "." + id, ".png");
        try {
            BitmapEncoder.saveBitmap(chart, tmp.toString(), BitmapEncoder.BitmapFormat.PNG);
            Reporting.publish(tmp, dir.resolve(id + ".png"));
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static String column(String label) {
        return label.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_").replaceAll("^_|_$", "");
    }
}
