package org.dpdl4j.cli;

import org.dpdl4j.benchmarks.Reporting;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.tuning.PrivacyLedger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dpdl4j ledger}: what a privacy ledger holds. */
@Command(name = "ledger", mixinStandardHelpOptions = true, description = "Inspect a privacy ledger.",
        subcommands = {LedgerCommand.Show.class})
final class LedgerCommand {
    private LedgerCommand() {
    }

    /** {@code ledger show FILE}: every entry with its own epsilon, the spent total and what remains. */
    @Command(name = "show", mixinStandardHelpOptions = true, description = {"Print what a ledger has spent: each entry (charges",
            "and the records they cover) with its own epsilon at the ledger's delta, the total spent and the remaining budget.",
            "Opening repairs a torn last line (a crash during a write), counted conservatively, and says so."})
    static final class Show implements Callable<Integer> {
        @Parameters(paramLabel = "FILE", description = "The ledger (JSON lines).")
        Path file;

        @Option(names = "--json", description = "Print one JSON object as the last line of stdout.")
        boolean json;

        @Override
        public Integer call() throws Exception {
            if (!Files.exists(file)) {
                throw new IllegalArgumentException("ledger " + file + " does not exist");
            }
            String dataset = datasetOf(file);
            try (PrivacyLedger ledger = PrivacyLedger.open(file, dataset)) {
                for (String repair : ledger.repairs()) {
                    System.out.println("repaired: " + repair);
                }
                System.out.printf("ledger %s: dataset %s, budget epsilon %s at delta %s%n", file, dataset, ledger.epsilonBudget(),
                        ledger.delta());
                List<Map<String, Object>> rows = new ArrayList<>();
                for (PrivacyLedger.Entry e : ledger.entries()) {
                    double eps = Accountants.tightest(e.event(), ledger.delta()).epsilon();
                    System.out.printf("%4d  %s  %-22s  epsilon %-10s  %s%n", e.sequence(), e.time(),
                            e.charged() ? "charge" : "record (under " + e.coveredBy() + ")", String.format("%.4f", eps), e.label());
                    Map<String, Object> row = new LinkedHashMap<>();
                    row.put("seq", e.sequence());
                    row.put("time", e.time());
                    row.put("charged", e.charged());
                    row.put("covered_by", e.coveredBy());
                    row.put("label", e.label());
                    row.put("epsilon", eps);
                    rows.add(row);
                }
                org.dpdl4j.accounting.PrivacyGuarantee spentGuarantee = ledger.spent();
                double spent = spentGuarantee.epsilon();
                System.out.printf("spent epsilon %.4f at delta %s (composition of the %d charges, by %s); remaining %.4f%n", spent,
                        ledger.delta(), ledger.entries().stream().filter(PrivacyLedger.Entry::charged).count(),
                        spentGuarantee.accountant().toUpperCase(java.util.Locale.ROOT), ledger.remaining());
                if (json) {
                    Map<String, Object> j = new LinkedHashMap<>();
                    j.put("file", file.toString());
                    j.put("dataset", dataset);
                    j.put("epsilon_budget", ledger.epsilonBudget());
                    j.put("delta", ledger.delta());
                    j.put("epsilon_spent", spent);
                    j.put("epsilon_remaining", ledger.remaining());
                    j.put("entries", rows);
                    j.put("repairs", ledger.repairs());
                    Cli.printJsonLine(System.out, j);
                }
            }
            return 0;
        }

        private static String datasetOf(Path file) throws java.io.IOException {
            try (var lines = Files.lines(file)) {
                Object d = Reporting.JSON.readValue(lines.findFirst().orElse("{}"), Map.class).get("dataset");
                if (d instanceof String s) {
                    return s;
                }
            } catch (com.fasterxml.jackson.core.JsonProcessingException | java.io.UncheckedIOException e) {
                // reported below
            }
            throw new PrivacyLedger.LedgerException(file + " is not a dpdl4j privacy ledger (its first line is not a ledger header)");
        }
    }
}
