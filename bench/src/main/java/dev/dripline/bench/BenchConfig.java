package dev.dripline.bench;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The bench's settings, from {@code --name value} arguments, parsed by picocli. */
record BenchConfig(
    List<String> workloads,
    String w1Backfill,
    String driplineCheck,
    int reps,
    int batches,
    int cap,
    int warmupBatches,
    int barePerExecution,
    int stopBatches,
    int stopSleepMs,
    int stopAfterMs,
    String temporalAddress,
    String dbUrl,
    String dbUser,
    String dbPassword,
    int httpPort,
    int workerSlots,
    int workflowTaskSlots,
    int dbPoolSize,
    String workerHeap,
    String driplineTaskQueue,
    String bareTaskQueue,
    Path logDir,
    Map<String, String> workloadOptions) {

  static final List<String> IMPLEMENTED =
      List.of("W1", "W2", "W3", "W4", "W5", "W6", "RC", "UI", "SIZING");

  /**
   * A workload's own option, e.g. {@code --w2-rows}: open-ended, each workload reads its own. The
   * {@code --cluster-*} options describe a second Temporal server, the multi-service cluster (see
   * {@link TemporalServer}).
   */
  private static final Pattern WORKLOAD_OPTION =
      Pattern.compile("--(w[2-6]|rc|ui|sizing|cluster)-[a-z0-9-]+");

  /**
   * The parser of {@code args}: BenchMain's options and the workload options {@code args} name.
   * {@code execute(args)} prints the usage for {@code --help} (exit code 0) and what is wrong, with
   * the usage, for a bad argument (exit code 2); otherwise its execution result is the config. A
   * later value of an option replaces an earlier one (bin/dripline-bench puts its own first), and
   * {@code @name} is a plain value, not an argument file.
   */
  static CommandLine commandLine(String... args) {
    CommandLine cli =
        new CommandLine(new Arguments()).setOverwrittenOptionsAllowed(true).setExpandAtFiles(false);
    CommandSpec spec = cli.getCommandSpec();
    for (String arg : args) {
      if (WORKLOAD_OPTION.matcher(arg).matches() && spec.findOption(arg) == null) {
        spec.addOption(
            OptionSpec.builder(arg).paramLabel("value").type(String.class).hidden(true).build());
      }
    }
    return cli;
  }

  /** BenchMain's options with their defaults; {@link #call} checks them and makes the config. */
  @Command(
      name = "BenchMain",
      separator = " ",
      sortOptions = false,
      sortSynopsis = false,
      showDefaultValues = true,
      usageHelpWidth = 100,
      description = {
        "Dripline against its baselines, alternating, in one run (docs/benchmarks.md).",
        ""
      },
      footer = {
        "",
        "  [--w2-<name> value] [--w3-<name> value] [--w4-<name> value] [--w6-<name> value]",
        "  [--rc-<name> value] [--ui-<name> value] [--sizing-<name> value] [--cluster-<name> value]",
        "(--wN-* options belong to workload N, --rc-* to RC, the record statement's cost, --ui-* to",
        "UI, the dashboard over a large database, --sizing-* to SIZING, the per-batch costs;",
        "--cluster-* name a second Temporal server, a multi-service cluster, for W4 and SIZING;",
        "the options are listed under each workload's class and TemporalServer)"
      })
  static final class Arguments implements Callable<BenchConfig> {
    @Spec CommandSpec spec;

    @Option(
        names = {"-h", "--help"},
        usageHelp = true,
        description = "Print this help and exit.")
    boolean help;

    @Option(
        names = "--workloads",
        paramLabel = "list",
        description =
            "Workloads to run, in this order, from W1, W2, W3, W4, W5, W6, RC, UI and SIZING.")
    String workloads = "W1,W5";

    @Option(names = "--reps", paramLabel = "n", description = "Repetitions of each workload.")
    int reps = 3;

    @Option(names = "--batches", paramLabel = "n", description = "W1: batches of each system.")
    int batches = 10_000;

    @Option(
        names = "--cap",
        paramLabel = "n",
        description = "W1 and W5: batches in flight at most (maxParallelBatches).")
    int cap = 50;

    @Option(
        names = "--warmup-batches",
        paramLabel = "n",
        description = "W1: batches of the warm-up of each system (not counted).")
    int warmupBatches = 500;

    @Option(
        names = "--w1-backfill",
        paramLabel = "bench.noop|example.sleep",
        description =
            "W1: Dripline's backfill (bench.noop does nothing; example.sleep also keeps its"
                + " concurrency witness, two more transactions per batch).")
    String w1Backfill = "bench.noop";

    @Option(
        names = "--dripline-check",
        paramLabel = "none|clear",
        description =
            "The shared Dripline JVM's health checks: none, or clear (one sql check that always"
                + " reads 0, threshold 1, every second, for every backfill: what a configured"
                + " check that never holds costs).")
    String driplineCheck = "none";

    @Option(
        names = "--bare-per-execution",
        paramLabel = "n",
        description = "W1: activities per execution of the baseline before it continues as new.")
    int barePerExecution = 1000;

    @Option(
        names = "--stop-batches",
        paramLabel = "n",
        description = "W5: batches of the run that is stopped.")
    int stopBatches = 5000;

    @Option(
        names = "--stop-sleep-ms",
        paramLabel = "ms",
        description = "W5: how long each batch sleeps.")
    int stopSleepMs = 200;

    @Option(
        names = "--stop-after-ms",
        paramLabel = "ms",
        description = "W5: the stop is requested this long after the run was created.")
    int stopAfterMs = 3000;

    @Option(
        names = "--temporal",
        paramLabel = "host:port",
        description = "Temporal server's gRPC address.")
    String temporal = "127.0.0.1:7253";

    @Option(names = "--db-url", paramLabel = "jdbc-url", description = "PostgreSQL database.")
    String dbUrl = "jdbc:postgresql://127.0.0.1:5432/dripline_bench?sslmode=disable";

    @Option(names = "--db-user", paramLabel = "name", description = "PostgreSQL user.")
    String dbUser = "dripline";

    @Option(names = "--db-password", paramLabel = "text", description = "PostgreSQL password.")
    String dbPassword = "dripline";

    @Option(
        names = "--http-port",
        paramLabel = "port",
        description = "HTTP port of the Dripline JVM the bench starts.")
    int httpPort = 18080;

    @Option(
        names = "--worker-slots",
        paramLabel = "n",
        description = "Activity slots of each worker.")
    int workerSlots = 64;

    @Option(
        names = "--workflow-task-slots",
        paramLabel = "n",
        description = "Workflow-task slots of each worker.")
    int workflowTaskSlots = 16;

    @Option(
        names = "--db-pool",
        paramLabel = "n",
        description = "Database connections of the Dripline JVM.")
    int dbPool = 150;

    @Option(
        names = "--worker-heap",
        paramLabel = "jvm-option",
        description = "Heap option of the JVMs the bench starts.")
    String workerHeap = "-Xmx512m";

    @Option(
        names = "--log-dir",
        paramLabel = "dir",
        description = "Where the JVMs the bench starts write their logs.")
    Path logDir = Path.of(".dripline", "logs");

    @Override
    public BenchConfig call() {
      List<String> chosen =
          Arrays.stream(workloads.split(","))
              .filter(w -> !w.isBlank())
              .map(w -> w.trim().toUpperCase(Locale.ROOT))
              .toList();
      for (String w : chosen) {
        if (!IMPLEMENTED.contains(w)) {
          throw new ParameterException(
              spec.commandLine(),
              "workload " + w + " is not implemented (implemented: " + IMPLEMENTED + ")");
        }
      }
      if (!driplineCheck.equals("none") && !driplineCheck.equals("clear")) {
        throw new ParameterException(spec.commandLine(), "--dripline-check must be none or clear");
      }
      if (reps < 1 || batches < 1 || cap < 1) {
        throw new ParameterException(
            spec.commandLine(), "--reps, --batches and --cap must be at least 1");
      }
      Map<String, String> workloadOptions = new LinkedHashMap<>();
      for (OptionSpec option : spec.options()) {
        String name = option.longestName();
        if (WORKLOAD_OPTION.matcher(name).matches() && option.getValue() != null) {
          workloadOptions.put(name.substring(2), option.getValue());
        }
      }
      return new BenchConfig(
          chosen,
          w1Backfill,
          driplineCheck,
          reps,
          batches,
          cap,
          warmupBatches,
          barePerExecution,
          stopBatches,
          stopSleepMs,
          stopAfterMs,
          temporal,
          dbUrl,
          dbUser,
          dbPassword,
          httpPort,
          workerSlots,
          workflowTaskSlots,
          dbPool,
          workerHeap,
          "dripline-bench",
          "dripline-bench-bare",
          logDir,
          Map.copyOf(workloadOptions));
    }
  }

  /** A workload's option, e.g. {@code intOption("w2-rows", 1_000_000)} for {@code --w2-rows}. */
  int intOption(String name, int defaultValue) {
    String value = workloadOptions.get(name);
    return value == null ? defaultValue : Integer.parseInt(value.replace("_", ""));
  }

  /** A workload's option as text, or the default when it was not given. */
  String option(String name, String defaultValue) {
    return workloadOptions.getOrDefault(name, defaultValue);
  }
}
