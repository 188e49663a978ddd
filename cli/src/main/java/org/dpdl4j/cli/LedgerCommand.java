package org.dpdl4j.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.dpdl4j.accounting.Accountants;
import org.dpdl4j.release.PrivacyLedger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dpdl4j ledger}: what a privacy ledger holds. */
@Command(name = "ledger", mixinStandardHelpOptions = true, description = "Inspect, verify or upgrade a privacy ledger.",
        subcommands = {LedgerCommand.Show.class, LedgerCommand.Verify.class, LedgerCommand.Upgrade.class})
final class LedgerCommand {
    private LedgerCommand() {
    }

    /** {@code ledger show FILE}: every entry with its own epsilon, the spent total and what remains. */
    @Command(name = "show", mixinStandardHelpOptions = true, description = {"Print what a ledger has spent: each entry (charges and the records they cover) with its own epsilon "
                        + "at the ledger's delta, the total spent and the remaining budget.",
                "Reads only: a torn last line (a crash during a write, never acknowledged, no cost) is reported, and the "
                        + "next run that writes to the ledger records it as torn."})
    static final class Show implements Callable<Integer> {
        @Parameters(paramLabel = "FILE", description = "The ledger (JSON lines).")
        Path file;

        @Option(names = "--json", description = "Print one JSON object as the last line of stdout.")
        boolean json;

        @Option(names = "--all", description = "Also list each run's checkpoint entries (counted, not listed, by default; they cost nothing).")
        boolean all;

        @Override
        public Integer call() throws Exception {
            try (PrivacyLedger ledger = openExisting(file)) {
                String dataset = ledger.dataset();
                int hidden = 0;
                for (String repair : ledger.repairs()) {
                    System.out.println("found: " + repair);
                }
                System.out.printf("ledger %s: dataset %s, budget epsilon %s at delta %s%n", file, dataset, ledger.epsilonBudget(),
                        ledger.delta());
                List<Map<String, Object>> rows = new ArrayList<>();
                for (PrivacyLedger.Entry e : ledger.entries()) {
                    boolean checkpoint = e.kind() == PrivacyLedger.Kind.CHECKPOINT;
                    // a checkpoint's steps so far cost nothing beyond its charge: no accountant is run for it
                    Double eps = e.event() == null || checkpoint ? null : Accountants.tightest(e.event(), ledger.delta()).epsilon();
                    String kind = e.kind().name().toLowerCase(java.util.Locale.ROOT);
                    hidden += checkpoint && !all ? 1 : 0;
                    if (!checkpoint || all) {
                        System.out.printf("%4d  %s  %-26s  epsilon %-10s  %s%n", e.sequence(), e.time(),
                                e.coveredBy() == null ? kind : kind + " (under " + e.coveredBy() + ")",
                                eps == null ? "-" : String.format("%.4f", eps), e.label());
                    }
                    Map<String, Object> row = new LinkedHashMap<>();
                    row.put("seq", e.sequence());
                    row.put("time", e.time());
                    row.put("kind", kind);
                    row.put("charged", e.charged());
                    row.put("covered_by", e.coveredBy());
                    row.put("label", e.label());
                    row.put("epsilon", eps);
                    rows.add(row);
                }
                if (hidden > 0) {
                    System.out.println("      (" + hidden + " checkpoint entries not listed: --all lists them)");
                }
                org.dpdl4j.accounting.PrivacyGuarantee spentGuarantee = ledger.spent();
                double spent = spentGuarantee.epsilon();
                System.out.printf("spent epsilon %.4f at delta %s (composition of the %d charges, by %s); remaining %.4f%n", spent,
                        ledger.delta(), ledger.entries().stream().filter(PrivacyLedger.Entry::charged).count(),
                        spentGuarantee.accountant().toUpperCase(java.util.Locale.ROOT), ledger.remaining());
                System.out.println("hash chain verified; head " + ledger.headHash() + "; " + ledger.headFileStatus());
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
                    j.put("head", ledger.headHash());
                    j.put("head_file", ledger.headFileStatus());
                    j.put("head_file_missing", ledger.headFileMissing());
                    Cli.printJsonLine(System.out, j);
                }
            }
            return 0;
        }
    }

    /** Opens FILE read-only as an existing ledger (nothing is written), or says clearly why not (missing, a directory). */
    private static PrivacyLedger openExisting(Path file) throws java.io.IOException {
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException("ledger " + file + " is a directory; give the ledger file");
        }
        if (!Files.exists(file)) {
            throw new IllegalArgumentException("ledger " + file + " does not exist");
        }
        return PrivacyLedger.inspect(file);
    }

    /** {@code ledger verify FILE [--head HASH]}: the hash chain, and optionally that an anchored head is still in it. */
    @Command(name = "verify", mixinStandardHelpOptions = true, description = {"Check a ledger's hash chain from its header to its last entry (exit 5 naming the first line that was "
                        + "edited, removed, inserted, duplicated or reordered), and that it still holds the head kept in "
                        + "FILE.head, and print its head hash; keep that hash where the operator cannot change it, and give it "
                        + "later as --head to check that the ledger was not rewritten or cut short since.",
                "Reads only: nothing is written, not even a repair."})
    static final class Verify implements Callable<Integer> {
        @Parameters(paramLabel = "FILE", description = "The ledger (JSON lines).")
        Path file;

        @Option(names = "--head", paramLabel = "HASH", description = "A head hash printed earlier: it must still be in the chain.")
        String head;

        @Option(names = "--json", description = "Print one JSON object as the last line of stdout.")
        boolean json;

        @Override
        public Integer call() throws Exception {
            if (head != null && !head.matches("[0-9a-f]{64}")) {
                throw new IllegalArgumentException("--head must be a SHA-256 hash in hex (64 characters 0-9a-f), got '" + head + "'");
            }
            try (PrivacyLedger ledger = openExisting(file)) {
                for (String repair : ledger.repairs()) {
                    System.out.println("found: " + repair);
                }
                if (head != null && !ledger.containsHash(head)) {
                    throw new PrivacyLedger.LedgerException("privacy ledger " + file + " does not contain the head " + head
                            + ": it was rewritten or lines were removed from its end since that head was taken");
                }
                System.out.printf("ledger %s: %d entries, hash chain verified%s; head %s; %s%n", file, ledger.entries().size(),
                        head != null ? ", contains the given head" : "", ledger.headHash(), ledger.headFileStatus());
                if (json) {
                    Map<String, Object> j = new LinkedHashMap<>();
                    j.put("file", file.toString());
                    j.put("entries", ledger.entries().size());
                    j.put("verified", true);
                    j.put("head", ledger.headHash());
                    j.put("head_file_missing", ledger.headFileMissing());
                    Cli.printJsonLine(System.out, j);
                }
            }
            return 0;
        }
    }

    /** {@code ledger upgrade FILE}: a version-1 ledger rewritten with the hash chain. */
    @Command(name = "upgrade", mixinStandardHelpOptions = true, description = {"Rewrite a ledger written by an earlier dpdl4j (format version 1, without a hash chain) in version 2, "
                        + "keeping every entry as it is and the original beside it (FILE.v1-TIME).",
                "The chain vouches for the lines from then on, not for edits made before."})
    static final class Upgrade implements Callable<Integer> {
        @Parameters(paramLabel = "FILE", description = "The ledger (JSON lines).")
        Path file;

        @Override
        public Integer call() throws Exception {
            if (Files.isDirectory(file) || !Files.exists(file)) {
                throw new IllegalArgumentException("ledger " + file + (Files.isDirectory(file) ? " is a directory" : " does not exist"));
            }
            try (PrivacyLedger ledger = PrivacyLedger.upgrade(file)) {
                ledger.repairs().forEach(System.out::println);
                System.out.println("head " + ledger.headHash());
            }
            return 0;
        }
    }
}
