package org.dpdl4j.cli;

import java.io.IOException;
import java.nio.file.Path;
import org.dpdl4j.release.PrivacyLedger;
import picocli.CommandLine.Option;

/** The privacy-ledger options that {@code train} and {@code tune} share. */
final class LedgerOptions {
    @Option(names = "--ledger", paramLabel = "FILE", description = {"Privacy ledger (JSON lines) to charge the whole run to before it starts (once, also across "
                        + "--resume); created if missing."})
    Path file;

    @Option(names = "--ledger-budget", paramLabel = "ε", description = "Budget of a new ledger, at --delta (default: unlimited, a journal).")
    Double budget;

    /**
     * The ledger, or null without --ledger.
     *
     * @throws IllegalArgumentException if --ledger-budget comes without --ledger, or --ledger is a directory
     */
    PrivacyLedger open(String dataset, double delta) throws IOException {
        if (file == null) {
            if (budget != null) {
                throw new IllegalArgumentException("--ledger-budget needs --ledger FILE");
            }
            return null;
        }
        if (budget != null && !(budget > 0)) {
            throw new IllegalArgumentException("--ledger-budget must be > 0 (an epsilon budget; leave it out for no limit), got " + budget);
        }
        return Cli.openLedger(file, budget, dataset, delta);
    }
}
