package org.dpdl4j.cli;

import java.util.HashMap;
import java.util.Map;
import org.dpdl4j.accounting.RepetitionDistribution;
import org.dpdl4j.accounting.TruncatedNegativeBinomial;

/**
 * Parses a distribution of the number of runs K, as the CLI writes it: {@code poisson:10},
 * {@code logarithmic:mean=10}, {@code geometric:mean=10}, {@code geometric:gamma=0.01},
 * {@code tnb:eta=0.5,mean=10}, {@code tnb:eta=0.5,gamma=0.001}, or {@code fixed:10} (naive
 * repetition: K = 10 runs, charged by composition).
 */
final class RepetitionSpec {
    static final String FORMS = "poisson:MU, logarithmic:mean=M|gamma=G, geometric:mean=M|gamma=G, "
            + "tnb:eta=E,mean=M|gamma=G, fixed:K";

    private RepetitionSpec() {
    }

    /**
     * The distribution the text names, truncated at {@code maxRepetitions} when that is given.
     *
     * @throws IllegalArgumentException on a malformed or invalid specification
     */
    static RepetitionDistribution parse(String text, Long maxRepetitions) {
        if (maxRepetitions != null && maxRepetitions < 1) {
            throw new IllegalArgumentException("--max-repetitions must be >= 1, got " + maxRepetitions);
        }
        RepetitionDistribution d = parse(text);
        return maxRepetitions == null || d instanceof RepetitionDistribution.PointMass ? d : d.truncatedAt(maxRepetitions);
    }

    static RepetitionDistribution parse(String text) {
        int colon = text.indexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("--repetitions must be one of " + FORMS + ", got '" + text + "'");
        }
        String kind = text.substring(0, colon);
        String rest = text.substring(colon + 1);
        try {
            switch (kind) {
                case "poisson":
                    return RepetitionDistribution.poisson(Double.parseDouble(rest));
                case "fixed": {
                    int k = Integer.parseInt(rest);
                    if (k < 1) {
                        throw new IllegalArgumentException("--repetitions fixed:K needs K >= 1, got " + k);
                    }
                    return RepetitionDistribution.pointMass(k);
                }
                case "logarithmic":
                    return tnb(text, 0, keys(rest));
                case "geometric":
                    return tnb(text, 1, keys(rest));
                case "tnb": {
                    Map<String, String> kv = keys(rest);
                    if (!kv.containsKey("eta")) {
                        throw new IllegalArgumentException("--repetitions tnb needs eta=..., got '" + text + "'");
                    }
                    return tnb(text, Double.parseDouble(kv.get("eta")), kv);
                }
                default:
                    throw new IllegalArgumentException("--repetitions must be one of " + FORMS + ", got '" + text + "'");
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--repetitions has a malformed number in '" + text + "'");
        }
    }

    private static RepetitionDistribution tnb(String text, double eta, Map<String, String> kv) {
        if (kv.containsKey("mean") == kv.containsKey("gamma")) {
            throw new IllegalArgumentException("--repetitions '" + text + "' needs exactly one of mean=... or gamma=...");
        }
        return kv.containsKey("mean") ? TruncatedNegativeBinomial.withMean(eta, Double.parseDouble(kv.get("mean")))
                : new TruncatedNegativeBinomial(eta, Double.parseDouble(kv.get("gamma")));
    }

    private static Map<String, String> keys(String s) {
        Map<String, String> kv = new HashMap<>();
        for (String part : s.split(",")) {
            String[] p = part.split("=", 2);
            if (p.length != 2) {
                throw new IllegalArgumentException("--repetitions expects key=value pairs, got '" + part + "'");
            }
            kv.put(p[0].trim(), p[1].trim());
        }
        return kv;
    }
}
