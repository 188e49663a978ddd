package org.dpdl4j.accounting;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Reads a CSV test fixture from the classpath into rows keyed by header name. */
final class ReferenceCsv {
    private ReferenceCsv() {
    }

    static List<Map<String, String>> read(String resource) throws IOException {
        var in = ReferenceCsv.class.getResourceAsStream(resource);
        if (in == null) {
            throw new IOException("missing test resource " + resource);
        }
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String[] header = r.readLine().split(",");
            List<Map<String, String>> rows = new ArrayList<>();
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (line.isBlank()) {
                    continue;
                }
                String[] cells = line.split(",");
                Map<String, String> row = new HashMap<>();
                for (int i = 0; i < header.length; i++) {
                    row.put(header[i], cells[i]);
                }
                rows.add(row);
            }
            return rows;
        }
    }

    static double num(Map<String, String> row, String key) {
        String v = row.get(key);
        return switch (v) {
            case "inf" -> Double.POSITIVE_INFINITY;
            case "-inf" -> Double.NEGATIVE_INFINITY;
            default -> Double.parseDouble(v);
        };
    }
}
