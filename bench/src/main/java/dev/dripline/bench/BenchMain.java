package dev.dripline.bench;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;

/**
 * Dripline's benchmark program. A whole run is the unit: each workload is measured against its
 * baseline in the same invocation, alternating, over several repetitions, and medians and ratios
 * are printed. See docs/benchmarks.md for what each workload measures; bin/dripline-bench runs it.
 *
 * <ul>
 *   <li>W1 (overhead): {@code --batches} batches of {@code bench.noop} ({@code --w1-backfill};
 *       batch size 1, cap {@code --cap}), which do nothing, through the HTTP API, against {@link
 *       BareLoopWorkflow} running the same number of no-op activities with the same cap, on the
 *       same Temporal server, each on its own worker JVM with the same worker settings.
 *   <li>W5 (stop latency): a run of {@code --stop-batches} batches sleeping {@code --stop-sleep-ms}
 *       is stopped after {@code --stop-after-ms}; measured from the stop request to the last {@code
 *       batches.started_at} of the run and to the run's {@code finished_at}.
 * </ul>
 */
public final class BenchMain {
  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    CommandLine cli = BenchConfig.commandLine(args);
    int exitCode = cli.execute(args);
    BenchConfig config = cli.getExecutionResult();
    if (config == null) {
      System.exit(exitCode); // --help, or a bad argument: picocli has printed why
      return;
    }
    try (Services services = new Services(config)) {
      printMachine(config, services, args);
      Map<String, String> verdicts = new LinkedHashMap<>();
      for (String workload : config.workloads()) {
        switch (workload) {
          case "W1" -> verdicts.put("W1", new W1(config, services).run());
          case "W2" -> {
            for (W2Example example : W2Workload.examples(config)) {
              verdicts.put(
                  W2Workload.verdictName(example), new W2Workload(config, services, example).run());
            }
          }
          case "W3" -> verdicts.put("W3", new W3Workload(config, services).run());
          case "W4" -> verdicts.put("W4", new W4Workload(config, services).run());
          case "W5" -> verdicts.put("W5", new W5(config, services).run());
          case "W6" -> verdicts.put("W6", new W6Workload(config, services).run());
          case "RC" -> verdicts.put("RC", new RecordCost(config).run());
          case "UI" -> verdicts.put("UI", new UiWorkload(config, services).run());
          case "SIZING" -> verdicts.put("SIZING", new SizingWorkload(config, services).run());
          default -> throw new IllegalStateException(workload);
        }
      }
      System.out.println();
      System.out.println("== Summary");
      verdicts.forEach((w, v) -> System.out.println(w + ": " + v));
    }
    System.exit(0);
  }

  private static void printMachine(BenchConfig config, Services services, String[] args) {
    System.out.println("== Dripline benchmark");
    System.out.println("arguments: " + String.join(" ", args));
    System.out.println("date (UTC): " + Instant.now());
    System.out.println("processors: " + Runtime.getRuntime().availableProcessors());
    System.out.println("memory: " + memTotal());
    System.out.println(
        "java: "
            + System.getProperty("java.vm.name")
            + " "
            + System.getProperty("java.runtime.version"));
    System.out.println(
        "os: " + System.getProperty("os.name") + " " + System.getProperty("os.version"));
    System.out.println("postgresql: " + services.queryString("select version()"));
    System.out.println("temporal: " + config.temporalAddress());
    System.out.println(
        "worker JVMs: "
            + config.workerHeap()
            + ", activity slots "
            + config.workerSlots()
            + ", workflow task slots "
            + config.workflowTaskSlots()
            + ", Dripline DB pool "
            + config.dbPoolSize());
  }

  private static String memTotal() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          return line.substring("MemTotal:".length()).trim();
        }
      }
    } catch (IOException e) {
      // not Linux
    }
    return "unknown";
  }

  // --------------------------------------------------------------------------------------------
  // Statistics and tables

  static double median(List<Double> values) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  static double max(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
  }

  static String f(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Creates an example.sleep run through the API; returns its id. */
  static long createSleepRun(Services services, int items, int sleepMs, int cap) {
    return createRun(services, "example.sleep", items, sleepMs, cap);
  }

  /** Creates a run of a synthetic-key backfill through the API; returns its id. */
  static long createRun(Services services, String backfill, int items, int sleepMs, int cap) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", backfill);
    body.put("options", Map.of("items", items, "sleepMs", sleepMs));
    body.put("batchSize", 1);
    body.put("maxParallelBatches", cap);
    Services.Response response = services.post("/api/runs", body);
    if (response.status() != 201) {
      throw new IllegalStateException(
          "POST /api/runs answered " + response.status() + ": " + response.body());
    }
    return response.body().get("id").asLong();
  }

  /** Whether a run in {@code status} has ended. */
  static boolean isTerminal(String status) {
    return "completed".equals(status) || "failed".equals(status) || "stopped".equals(status);
  }

  /** Polls the run's status in PostgreSQL until it is terminal; returns the status. */
  static String awaitTerminal(Services services, long runId, Duration timeout, long pollMillis) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      String status = services.queryString("select status from runs where id = ?", runId);
      if (isTerminal(status)) {
        return status;
      }
      sleep(pollMillis);
    }
    throw new IllegalStateException("run " + runId + " did not end within " + timeout);
  }

  // --------------------------------------------------------------------------------------------
  // W1

  /** W1: no-op batch throughput, Dripline against a bare Temporal activity loop. */
  static final class W1 {
    private final BenchConfig config;
    private final Services services;
    private final CpuMeter cpu;
    private final Map<String, List<Double>> driplineCpu = new LinkedHashMap<>();
    private final Map<String, List<Double>> bareCpu = new LinkedHashMap<>();
    private long polls;

    W1(BenchConfig config, Services services) {
      this.config = config;
      this.services = services;
      this.cpu =
          new CpuMeter()
              .part("dripline-jvm", () -> List.of(services.driplinePid()))
              .part("bare-jvm", () -> List.of(services.bareWorkerPid()))
              .part("temporal", services::temporalPids)
              .part("postgres", services::backendPids);
    }

    /** Runs one side, recording the CPU seconds each part used into {@code into}. */
    private double measured(Map<String, List<Double>> into, Callable<Double> side)
        throws Exception {
      CpuMeter.Reading before = cpu.read();
      double seconds = side.call();
      cpu.read()
          .since(before)
          .forEach((part, used) -> into.computeIfAbsent(part, p -> new ArrayList<>()).add(used));
      return seconds;
    }

    private void printCpu(String side, Map<String, List<Double>> used) {
      StringBuilder line = new StringBuilder(f("  %-9s", side));
      double total = 0;
      for (Map.Entry<String, List<Double>> e : used.entrySet()) {
        double perThousand = median(e.getValue()) * 1000.0 / config.batches();
        total += perThousand;
        line.append(f(" %s %.2f", e.getKey(), perThousand));
      }
      System.out.println(line.append(f("  total %.2f", total)));
    }

    String run() throws Exception {
      System.out.println();
      System.out.println(
          f(
              "== W1 overhead: %d no-op batches of %s, cap %d, %d reps (alternating; warm-up %d each)",
              config.batches(),
              config.w1Backfill(),
              config.cap(),
              config.reps(),
              config.warmupBatches()));
      services.ensureDripline();
      services.startBareWorker();
      WorkflowServiceStubs stubs =
          WorkflowServiceStubs.newServiceStubs(
              WorkflowServiceStubsOptions.newBuilder().setTarget(config.temporalAddress()).build());
      try {
        WorkflowClient client = WorkflowClient.newInstance(stubs);
        if (config.warmupBatches() > 0) {
          double d = dripline(config.warmupBatches());
          double b = bare(client, config.warmupBatches());
          System.out.println(f("warm-up: dripline %.2f s, bare %.2f s (not counted)", d, b));
        }
        polls = 0;
        long[] before = pgStats();
        List<Double> driplineSeconds = new ArrayList<>();
        List<Double> bareSeconds = new ArrayList<>();
        System.out.println();
        System.out.println("rep  order  dripline_s  bare_s  dripline_b/s  bare_b/s  ratio");
        for (int rep = 1; rep <= config.reps(); rep++) {
          boolean driplineFirst = rep % 2 == 1;
          double d;
          double b;
          if (driplineFirst) {
            d = measured(driplineCpu, () -> dripline(config.batches()));
            b = measured(bareCpu, () -> bare(client, config.batches()));
          } else {
            b = measured(bareCpu, () -> bare(client, config.batches()));
            d = measured(driplineCpu, () -> dripline(config.batches()));
          }
          driplineSeconds.add(d);
          bareSeconds.add(b);
          System.out.println(
              f(
                  "%3d  %-5s  %10.2f  %6.2f  %12.1f  %8.1f  %5.2f",
                  rep,
                  driplineFirst ? "D,B" : "B,D",
                  d,
                  b,
                  config.batches() / d,
                  config.batches() / b,
                  b / d));
        }
        double dm = median(driplineSeconds);
        double bm = median(bareSeconds);
        double ratio = bm / dm;
        System.out.println(
            f(
                "med  -      %10.2f  %6.2f  %12.1f  %8.1f  %5.2f",
                dm, bm, config.batches() / dm, config.batches() / bm, ratio));
        System.out.println(
            "ratio = Dripline throughput / bare throughput (median times); target >= 0.80");
        System.out.println(
            "CPU seconds per 1,000 batches (median over reps; /proc utime+stime; postgres ="
                + " backends of the bench database):");
        printCpu("Dripline", driplineCpu);
        printCpu("bare", bareCpu);

        // Database work per Dripline batch over the measured reps: the pg_stat_database delta of
        // the bench's database (idle backends flush their counters within ~10 s, hence the
        // wait), less what the bench's own statements cost (see ownStatements). It includes the
        // metrics workflow's snapshots: they are Dripline's.
        sleep(11_000);
        long[] after = pgStats();
        long[] own = ownStatements(config.reps());
        double batches = (double) config.reps() * config.batches();
        String[] names = {"commits", "rows inserted", "updated", "deleted", "rows read"};
        StringBuilder perBatch =
            new StringBuilder(
                "PostgreSQL per Dripline batch (pg_stat_database delta over the reps):");
        for (int i = 0; i < names.length; i++) {
          perBatch.append(
              f(
                  "%s %.1f %s",
                  i == 0 ? "" : ",", (after[i] - before[i] - own[i]) / batches, names[i]));
        }
        System.out.println(perBatch);
        System.out.println(
            f(
                "PostgreSQL rows read per Dripline batch: %.1f (tup_returned + tup_fetched; %d"
                    + " rows read by the bench's own %d polls and checks subtracted, %.1f per"
                    + " batch)",
                (after[4] - before[4] - own[4]) / batches, own[4], polls, own[4] / batches));
        return f(
            "Dripline %.1f b/s, bare %.1f b/s, ratio %.2f (target >= 0.80: %s)",
            config.batches() / dm, config.batches() / bm, ratio, ratio >= 0.8 ? "met" : "NOT met");
      } finally {
        stubs.shutdownNow();
      }
    }

    private long[] pgStats() {
      return services.queryLongs(
          "select xact_commit, tup_inserted, tup_updated, tup_deleted,"
              + " tup_returned + tup_fetched from pg_stat_database"
              + " where datname = current_database()");
    }

    /**
     * What the bench's own statements during the measured reps cost the database's counters,
     * measured by running them again with nothing else to do: the status polls ({@link #polls},
     * counted as they ran) against the last run, and each rep's two checks of its run (completed
     * batches, finished_at), on the same connection. Dripline's JVM is idle but not silent (its
     * metrics workflow snapshots), so an idle window of ~11 s is measured first and its rate taken
     * out of the replay's window; each window ends with a flush wait and one counter read, as the
     * reps' window does.
     */
    private long[] ownStatements(int runs) {
      long last = services.queryLong("select max(id) from runs");
      long[] a = pgStats();
      long idleStart = System.nanoTime();
      sleep(11_000);
      long[] b = pgStats();
      double idleSeconds = (System.nanoTime() - idleStart) / 1e9;
      long replayStart = System.nanoTime();
      for (long i = 0; i < polls; i++) {
        services.queryString("select status from runs where id = ?", last);
      }
      for (int i = 0; i < runs; i++) {
        checkCompleted(last, config.batches());
      }
      sleep(11_000);
      long[] c = pgStats();
      double replaySeconds = (System.nanoTime() - replayStart) / 1e9;
      long[] own = new long[c.length];
      for (int i = 0; i < c.length; i++) {
        double background = (b[i] - a[i]) * replaySeconds / idleSeconds;
        own[i] = Math.max(0, Math.round(c[i] - b[i] - background));
      }
      return own;
    }

    /** Checks that run {@code id} completed its {@code n} batches; its finished_at. */
    private Instant checkCompleted(long id, int n) {
      long done =
          services.queryLong(
              "select count(*) from batches where run_id = ? and status = 'completed'", id);
      if (done != n) {
        throw new IllegalStateException("W1 run " + id + " completed " + done + " of " + n);
      }
      return services.queryInstant("select finished_at from runs where id = ?", id);
    }

    /**
     * Seconds from POST /api/runs to the run's finished_at, for an {@code n}-batch no-op run; the
     * run's status is polled every 50 ms (each poll counted in {@link #polls}).
     */
    private double dripline(int n) {
      Instant start = Instant.now();
      long id = createRun(services, config.w1Backfill(), n, 0, config.cap());
      long deadline = System.nanoTime() + Duration.ofSeconds(Math.max(300, n / 5L)).toNanos();
      String status;
      while (true) {
        status = services.queryString("select status from runs where id = ?", id);
        polls++;
        if (isTerminal(status)) {
          break;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("W1 run " + id + " did not end in time");
        }
        sleep(50);
      }
      if (!"completed".equals(status)) {
        throw new IllegalStateException("W1 run " + id + " ended " + status);
      }
      Instant finished = checkCompleted(id, n);
      return Duration.between(start, finished).toNanos() / 1e9;
    }

    /** Seconds from starting the bare loop workflow to its result, for {@code n} activities. */
    private double bare(WorkflowClient client, int n) {
      BareLoopWorkflow workflow =
          client.newWorkflowStub(
              BareLoopWorkflow.class,
              WorkflowOptions.newBuilder()
                  .setTaskQueue(config.bareTaskQueue())
                  .setWorkflowId("bench-bare-" + UUID.randomUUID())
                  .build());
      long start = System.nanoTime();
      WorkflowClient.start(
          workflow::run, new BareLoopWorkflow.Input(n, config.cap(), 0, config.barePerExecution()));
      // getResult follows the chain of continue-as-new executions to the last one's result.
      long done = WorkflowStub.fromTyped(workflow).getResult(Long.class);
      double seconds = (System.nanoTime() - start) / 1e9;
      if (done != n) {
        throw new IllegalStateException("bare loop completed " + done + " of " + n);
      }
      return seconds;
    }
  }

  // --------------------------------------------------------------------------------------------
  // W5

  /** W5: from POST /api/runs/{id}/stop until no batch of the run starts any more. */
  static final class W5 {
    private final BenchConfig config;
    private final Services services;

    W5(BenchConfig config, Services services) {
      this.config = config;
      this.services = services;
    }

    String run() throws Exception {
      services.ensureDripline();
      System.out.println();
      System.out.println(
          f(
              "== W5 stop latency: runs of %d batches sleeping %d ms, cap %d, stopped after %d ms;"
                  + " %d reps",
              config.stopBatches(),
              config.stopSleepMs(),
              config.cap(),
              config.stopAfterMs(),
              config.reps()));
      System.out.println(
          "rep  run  done_before  in_flight  ack_ms  last_start_ms  started_after  stopped_ms"
              + "  observed_ms");
      List<Double> lastStart = new ArrayList<>();
      List<Double> stopped = new ArrayList<>();
      for (int rep = 1; rep <= config.reps(); rep++) {
        long id =
            createSleepRun(services, config.stopBatches(), config.stopSleepMs(), config.cap());
        Instant created = Instant.now();
        // Let it run: running, a batch started, and stop-after-ms since the POST. On a loaded
        // machine a run can still be planning when the time is up; stopping it then measures
        // nothing (and left max(started_at) null).
        while (true) {
          String status = services.queryString("select status from runs where id = ?", id);
          if (isTerminal(status)) {
            throw new IllegalStateException(
                f(
                    "W5 run %d ended %s before its stop request: give it more batches"
                        + " (--stop-batches) or stop it sooner (--stop-after-ms)",
                    id, status));
          }
          if ("running".equals(status)
              && Duration.between(created, Instant.now()).toMillis() >= config.stopAfterMs()
              && services.queryLong(
                      "select count(*) from batches where run_id = ? and started_at is not null",
                      id)
                  > 0) {
            break;
          }
          sleep(20);
        }
        long doneBefore =
            services.queryLong(
                "select count(*) from batches where run_id = ? and status = 'completed'", id);
        long inFlight =
            services.queryLong(
                "select count(*) from batches where run_id = ?"
                    + " and status in ('enqueued', 'running')",
                id);
        Instant stopAt = Instant.now();
        Services.Response response = services.post("/api/runs/" + id + "/stop", Map.of());
        Instant ackAt = Instant.now();
        if (response.status() != 202) {
          throw new IllegalStateException("stop answered " + response.status());
        }
        String status = awaitTerminal(services, id, Duration.ofMinutes(2), 10);
        Instant observedAt = Instant.now();
        if (!"stopped".equals(status)) {
          throw new IllegalStateException("W5 run " + id + " ended " + status + ", not stopped");
        }
        Instant last =
            services.queryInstant("select max(started_at) from batches where run_id = ?", id);
        long startedAfter =
            services.queryLong(
                "select count(*) from batches where run_id = ? and started_at > ?", id, stopAt);
        Instant finished = services.queryInstant("select finished_at from runs where id = ?", id);
        double lastMs = Duration.between(stopAt, last).toNanos() / 1e6;
        double stoppedMs = Duration.between(stopAt, finished).toNanos() / 1e6;
        lastStart.add(Math.max(0, lastMs));
        stopped.add(stoppedMs);
        System.out.println(
            f(
                "%3d  %3d  %11d  %9d  %6.0f  %13.0f  %13d  %10.0f  %11.0f",
                rep,
                id,
                doneBefore,
                inFlight,
                Duration.between(stopAt, ackAt).toNanos() / 1e6,
                lastMs,
                startedAfter,
                stoppedMs,
                Duration.between(stopAt, observedAt).toNanos() / 1e6));
      }
      double lm = median(lastStart);
      double lx = max(lastStart);
      System.out.println(
          f(
              "last batch start after the stop request: median %.0f ms, max %.0f ms"
                  + " (negative = none started after it; counted as 0)",
              lm, lx));
      System.out.println(
          f(
              "run stopped (finished_at) after the stop request: median %.0f ms, max %.0f ms",
              median(stopped), max(stopped)));
      return f(
          "no new batch after %.0f ms median, %.0f ms max; stopped after %.0f ms median"
              + " (target < 1000 ms: %s)",
          lm, lx, median(stopped), lx < 1000 ? "met" : "NOT met");
    }
  }
}
