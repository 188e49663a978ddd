package org.dpdl4j.cli;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code dpdl4j} command line. */
@Command(name = "dpdl4j", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Differentially private deep learning on the JVM: DP-SGD training, honestly accounted tuning, privacy "
                + "accounting, audits, serving, benchmarks.",
        subcommands = {TrainCommand.class, TuneCommand.class, AccountCommand.class, AuditCommand.class, LedgerCommand.class, EvaluateCommand.class,
                ReproduceCommand.class, ServeCommand.class, DataCommand.class,
                BenchCommand.class, CommandLine.HelpCommand.class})
public final class Main {
    /**
     * Runs the command line and exits with its status.
     *
     * @param args the command and its options, as typed after {@code dpdl4j}
     */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /**
     * Runs the command line and returns its exit status.
     *
     * @param args the command and its options, as typed after {@code dpdl4j}
     * @return 0 on success, 2 for bad input, another code as the command reports (for example 4 when an audit fails)
     */
    public static int run(String... args) {
        CommandLine cl = commandLine().setExecutionExceptionHandler(Cli.errorHandler())
                .setParameterExceptionHandler((ex, arguments) -> {
                    // one line, like every other error: what is wrong and where the usage is (not the whole usage)
                    ex.getCommandLine().getErr().println("error: " + Cli.oneLine(ex.getMessage()).replaceFirst("^Error: ", "") + " (see "
                            + ex.getCommandLine().getCommandSpec().qualifiedName() + " --help)");
                    return 2;
                });
        if (args.length > 0 && args[0].equals("tune")) { // tune --tuner X ... (the old form) is tune X ...
            try {
                List<String> rest = TuneCommand.withTunerSubcommand(Arrays.asList(args).subList(1, args.length));
                args = Stream.concat(Stream.of("tune"), rest.stream()).toArray(String[]::new);
            } catch (IllegalArgumentException e) {
                cl.getErr().println("error: " + e.getMessage());
                return 2;
            }
        }
        int status = cl.execute(args);
        Cli.removeEmptyCreated(status != 0); // a refused or failed run leaves no empty --output behind
        return status;
    }

    /** Every command, with the subcommands added in code ({@link ReproduceCommand#addAnalytic}). */
    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        ReproduceCommand.addAnalytic(cl.getSubcommands().get("reproduce"));
        return cl;
    }

    /** Version from the build. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[]{"dpdl4j " + Cli.version()};
        }
    }
}
