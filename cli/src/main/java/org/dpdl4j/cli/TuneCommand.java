package org.dpdl4j.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code dpdl4j tune <tuner>}: private hyperparameter tuning whose whole cost is accounted, one subcommand per tuning
 * procedure. {@code tune --tuner X ...} (the old form) is read as {@code tune X ...}, and {@code tune ...} without a
 * tuner as {@code tune random-search ...}.
 */
@Command(name = "tune", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Tune hyperparameters with DP-SGD runs as the base mechanism and report the privacy cost of the whole "
                        + "search: one run's epsilon and the tuning's epsilon (the honest number).",
                "--output holds the release, exactly what that epsilon covers: model.zip with its privacy.json and "
                        + "tuning.json (trials.json with --reveal-trials). --output/operator/ holds the operator record (the "
                        + "realised K, every trial, sizes, timings): not covered by epsilon, never to be published.",
                "Name the tuner first (default random-search; 'tune --tuner X' still works); 'tune X --help' lists "
                        + "its options."},
        subcommands = {RandomSearchCommand.class, DpHypoCommand.class, SubsampledCommand.class, ProposeTestCommand.class,
                DpHypeCommand.class})
final class TuneCommand implements Callable<Integer> {
    /** The tuners, as subcommand names. */
    static final List<String> TUNERS = List.of("random-search", "dp-hypo", "subsampled", "propose-test", "dp-hype");

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name a tuner: tune " + String.join("|", TUNERS));
    }

    /**
     * The arguments after {@code tune} with the tuner as the first one: {@code --tuner X} (or {@code --tuner=X}) is
     * removed and X put first; without a tuner, random-search. Help and version requests on {@code tune} itself are
     * left alone.
     *
     * @throws IllegalArgumentException when --tuner names no tuner or comes without a value
     */
    static List<String> withTunerSubcommand(List<String> args) {
        List<String> rest = new ArrayList<>(args);
        String tuner = null;
        for (int i = 0; i < rest.size(); i++) {
            String a = rest.get(i);
            if (a.equals("--tuner")) {
                if (i + 1 == rest.size()) {
                    throw new IllegalArgumentException("--tuner needs a value: " + String.join(", ", TUNERS));
                }
                tuner = rest.remove(i + 1);
                rest.remove(i);
                break;
            }
            if (a.startsWith("--tuner=")) {
                tuner = a.substring("--tuner=".length());
                rest.remove(i);
                break;
            }
        }
        if (tuner != null && !TUNERS.contains(tuner)) {
            throw new IllegalArgumentException("--tuner must be random-search, dp-hypo, subsampled, propose-test or dp-hype, got '"
                    + tuner + "'");
        }
        boolean named = !rest.isEmpty() && (TUNERS.contains(rest.get(0)) || rest.get(0).equals("help"));
        if (!rest.isEmpty() && !named && !rest.get(0).startsWith("-")) { // tune foo: a tuner that does not exist
            throw new IllegalArgumentException("tune: no tuner '" + rest.get(0) + "'; the tuners are " + String.join(", ", TUNERS)
                    + " (tune --help)");
        }
        boolean helpOnly = tuner == null && rest.size() == 1 && List.of("-h", "--help", "-V", "--version").contains(rest.get(0));
        if (!named && !helpOnly) {
            rest.add(0, tuner != null ? tuner : "random-search");
        }
        return rest;
    }
}
