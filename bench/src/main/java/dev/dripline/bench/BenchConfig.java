package dev.dripline.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The bench's settings, from {@code --name value} arguments. */
record BenchConfig(
    List<String> workloads,
    String w1Backfill,
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

  static final List<String> IMPLEMENTED = List.of("W1", "W2", "W3", "W4", "W5", "RC");

  static final String USAGE =
      """
      usage: BenchMain [--workloads W1,W5] [--reps 3] [--batches 10000] [--cap 50]
                       [--warmup-batches 500] [--w1-backfill example.sleep|bench.noop] [--bare-per-execution 1000]
                       [--stop-batches 5000] [--stop-sleep-ms 200] [--stop-after-ms 3000]
                       [--temporal 127.0.0.1:7253]
                       [--db-url jdbc:postgresql://127.0.0.1:5432/dripline_bench?sslmode=disable]
                       [--db-user dripline] [--db-password dripline] [--http-port 18080]
                       [--worker-slots 64] [--workflow-task-slots 16] [--db-pool 150]
                       [--worker-heap -Xmx512m] [--log-dir .dripline/logs]
                       [--w2-<name> value] [--w3-<name> value] [--w4-<name> value] [--rc-<name> value]
      (--wN-* options belong to workload N, --rc-* to RC, the record statement's cost; the
      options are listed under each workload's class)
      """;

  static BenchConfig parse(String[] args) {
    List<String> workloads = List.of("W1", "W5");
    int reps = 3;
    String w1Backfill = "example.sleep";
    int batches = 10_000;
    int cap = 50;
    int warmup = 500;
    int barePerExecution = 1000;
    int stopBatches = 5000;
    int stopSleepMs = 200;
    int stopAfterMs = 3000;
    String temporal = "127.0.0.1:7253";
    String dbUrl = "jdbc:postgresql://127.0.0.1:5432/dripline_bench?sslmode=disable";
    String dbUser = "dripline";
    String dbPassword = "dripline";
    int httpPort = 18080;
    int workerSlots = 64;
    int workflowTaskSlots = 16;
    int dbPool = 150;
    String heap = "-Xmx512m";
    Path logDir = Path.of(".dripline", "logs");
    Map<String, String> workloadOptions = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String name = args[i];
      if (name.equals("--help") || name.equals("-h")) {
        System.out.print(USAGE);
        System.exit(0);
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("missing value for " + name + "\n" + USAGE);
      }
      String value = args[++i];
      if (name.matches("--(w[2-4]|rc)-[a-z0-9-]+")) {
        workloadOptions.put(name.substring(2), value);
        continue;
      }
      switch (name) {
        case "--workloads" -> {
          List<String> list = new ArrayList<>();
          for (String w : value.split(",")) {
            if (!w.isBlank()) {
              list.add(w.trim().toUpperCase(java.util.Locale.ROOT));
            }
          }
          workloads = List.copyOf(list);
        }
        case "--reps" -> reps = Integer.parseInt(value);
        case "--w1-backfill" -> w1Backfill = value;
        case "--batches" -> batches = Integer.parseInt(value);
        case "--cap" -> cap = Integer.parseInt(value);
        case "--warmup-batches" -> warmup = Integer.parseInt(value);
        case "--bare-per-execution" -> barePerExecution = Integer.parseInt(value);
        case "--stop-batches" -> stopBatches = Integer.parseInt(value);
        case "--stop-sleep-ms" -> stopSleepMs = Integer.parseInt(value);
        case "--stop-after-ms" -> stopAfterMs = Integer.parseInt(value);
        case "--temporal" -> temporal = value;
        case "--db-url" -> dbUrl = value;
        case "--db-user" -> dbUser = value;
        case "--db-password" -> dbPassword = value;
        case "--http-port" -> httpPort = Integer.parseInt(value);
        case "--worker-slots" -> workerSlots = Integer.parseInt(value);
        case "--workflow-task-slots" -> workflowTaskSlots = Integer.parseInt(value);
        case "--db-pool" -> dbPool = Integer.parseInt(value);
        case "--worker-heap" -> heap = value;
        case "--log-dir" -> logDir = Path.of(value);
        default -> throw new IllegalArgumentException("unknown argument " + name + "\n" + USAGE);
      }
    }
    for (String w : workloads) {
      if (!IMPLEMENTED.contains(w)) {
        throw new IllegalArgumentException(
            "workload " + w + " is not implemented (implemented: " + IMPLEMENTED + ")");
      }
    }
    if (reps < 1 || batches < 1 || cap < 1) {
      throw new IllegalArgumentException("--reps, --batches and --cap must be at least 1");
    }
    return new BenchConfig(
        workloads,
        w1Backfill,
        reps,
        batches,
        cap,
        warmup,
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
        heap,
        "dripline-bench",
        "dripline-bench-bare",
        logDir,
        Map.copyOf(workloadOptions));
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
