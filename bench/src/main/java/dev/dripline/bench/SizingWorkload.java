package dev.dripline.bench;

import static dev.dripline.bench.BenchMain.f;

import com.google.protobuf.ByteString;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.workflowservice.v1.GetWorkflowExecutionHistoryRequest;
import io.temporal.api.workflowservice.v1.GetWorkflowExecutionHistoryResponse;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * SIZING — what a batch and a run cost the machinery around them (spec §12 D6, docs/sizing.md):
 * PostgreSQL commits and rows written in Dripline's database, Temporal history events and what
 * Temporal Cloud would bill as actions, the cluster's own PostgreSQL writes, and CPU seconds of
 * each process.
 *
 * <p>On each Temporal server of {@code --sizing-servers} (dev, cluster: see {@link
 * TemporalServer}), the bench's standalone Dripline JVM (API and worker in one process) runs a
 * warm-up run, then an idle window that measures what the JVM costs with nothing to do (its metrics
 * workflow's snapshots, heartbeats), then two phases of runs started together through the API:
 * {@code small}, {@code --sizing-small-runs} runs of {@code --sizing-small-batches} batches, and
 * {@code large}, {@code --sizing-runs} runs of {@code --sizing-batches} batches. Each phase's
 * counters (less the idle rate over its duration) are one equation cost = a × runs + b × batches;
 * the two give a, what a run costs besides its batches, and b, what a batch costs.
 *
 * <p>Counted per phase:
 *
 * <ul>
 *   <li>Dripline's PostgreSQL: {@code pg_stat_database} of the bench's database (commits, rows
 *       inserted, updated, deleted; the bench's own statements in the window subtracted: each is
 *       one commit and writes nothing) and {@code pg_stat_user_tables} per table; WAL bytes from
 *       {@code pg_stat_wal} — the whole PostgreSQL cluster's, so anything else running adds to it;
 *   <li>the runs' workflow histories, every execution of each continue-as-new chain (followed from
 *       the latest execution back through {@code continuedExecutionRunId}): executions, events,
 *       serialized bytes, workflow tasks, activities scheduled and attempts started, timers,
 *       markers, search-attribute upserts, signals, and from those the actions Temporal Cloud bills
 *       (a workflow start per execution, each activity attempt, timer, marker — version, side
 *       effect, local activity —, upsert, signal, child start; activity heartbeats are not in a
 *       history);
 *   <li>on the cluster: its persistence and visibility databases' {@code pg_stat_database} (commits
 *       and rows written by Temporal itself) and, with its metrics, the server's own {@code action}
 *       counter per type and the frontend's requests per operation (heartbeats among them) — of the
 *       whole server, the idle rate subtracted;
 *   <li>CPU seconds ({@code /proc}) of the Dripline JVM, the Temporal server's processes, and the
 *       PostgreSQL backends of Dripline's and of the cluster's databases.
 * </ul>
 *
 * <p>Counts do not depend on the machine's load; CPU seconds do (a shared machine, frequency,
 * caches).
 *
 * <p>Options ({@code --sizing-<name> value}): {@code servers} (dev), {@code sleep-ms} (0: {@code
 * bench.noop}'s batches sleep that long), {@code cap} (20), {@code runs} (4), {@code batches}
 * (5000), {@code small-runs} (20), {@code small-batches} (10), {@code warmup} (1000 batches),
 * {@code idle-s} (30), {@code timeout-s} (1800).
 */
final class SizingWorkload {
  private final BenchConfig config;
  private final Services services;

  private String backfill;
  private int sleepMs;
  private int cap;
  private int timeoutSeconds;
  private int copies;

  /** Statements the bench ran on Dripline's database (each one commit), counted as they run. */
  private long own;

  SizingWorkload(BenchConfig config, Services services) {
    this.config = config;
    this.services = services;
  }

  /** One phase's counters: name → value, in print order. */
  private record Counts(Map<String, Double> values) {
    double get(String name) {
      return values.getOrDefault(name, 0.0);
    }
  }

  /** A phase: its runs, batches, duration and counters. */
  private record Phase(String name, int runs, long batches, double seconds, Counts counts) {}

  String run() throws Exception {
    List<TemporalServer> servers =
        TemporalServer.named(config, config.option("sizing-servers", "dev"));
    backfill = NoopBackfill.NAME;
    sleepMs = config.intOption("sizing-sleep-ms", 0);
    cap = config.intOption("sizing-cap", 20);
    int runs = config.intOption("sizing-runs", 4);
    int batches = config.intOption("sizing-batches", 5000);
    int smallRuns = config.intOption("sizing-small-runs", 20);
    int smallBatches = config.intOption("sizing-small-batches", 10);
    int warmup = config.intOption("sizing-warmup", 1000);
    int idleSeconds = config.intOption("sizing-idle-s", 30);
    timeoutSeconds = config.intOption("sizing-timeout-s", 1800);
    if ((long) runs * smallBatches == (long) smallRuns * batches) {
      throw new IllegalArgumentException(
          "SIZING: the small and the large phase must differ in batches per run");
    }
    System.out.println();
    System.out.println(
        f(
            "== SIZING: %s, cap %d per run, sleep %d ms; phase small %d runs x %d batches, large %d"
                + " runs x %d batches; servers %s",
            backfill,
            cap,
            sleepMs,
            smallRuns,
            smallBatches,
            runs,
            batches,
            servers.stream().map(TemporalServer::name).toList()));
    List<String> verdicts = new ArrayList<>();
    for (TemporalServer server : servers) {
      verdicts.add(measureOn(server, warmup, idleSeconds, smallRuns, smallBatches, runs, batches));
    }
    services.stopDripline();
    return String.join("; ", verdicts);
  }

  private String measureOn(
      TemporalServer server,
      int warmup,
      int idleSeconds,
      int smallRuns,
      int smallBatches,
      int runs,
      int batches)
      throws Exception {
    System.out.println();
    System.out.println(f("--- on %s (%s)", server.name(), server.address()));
    services.stopDripline();
    services.ensureDripline(Map.of("TEMPORAL_ADDRESS", server.address()));
    W3Workload.stopLeftoverRuns(services, "SIZING");
    CpuMeter cpu =
        new CpuMeter()
            .part("dripline-jvm", () -> List.of(services.driplinePid()))
            .part("temporal", server::pids)
            .part(
                "pg-dripline",
                () -> {
                  own++;
                  return services.backendPids();
                })
            .part("pg-temporal", () -> temporalBackends(server));
    WorkflowServiceStubs stubs =
        WorkflowServiceStubs.newServiceStubs(
            WorkflowServiceStubsOptions.newBuilder().setTarget(server.address()).build());
    try {
      W3History history = new W3History(stubs, "default");
      if (warmup > 0) {
        long id = createRun(warmup, ++copies);
        awaitCompleted(List.of(id), warmup);
        System.out.println(f("warm-up: one run of %d batches (not counted)", warmup));
      }
      BenchMain.sleep(11_000);
      // The idle window: what the JVM and the server cost with no run.
      Reading before = read(server, cpu);
      BenchMain.sleep(idleSeconds * 1000L);
      Reading after = read(server, cpu);
      Counts idle = after.since(before);
      double idleSecondsMeasured = (after.nanos() - before.nanos()) / 1e9;
      System.out.println(
          f(
              "idle window %.1f s: per second %s",
              idleSecondsMeasured, brief(scale(idle, 1 / idleSecondsMeasured))));

      Phase small = phase(server, cpu, history, "small", smallRuns, smallBatches);
      Phase large = phase(server, cpu, history, "large", runs, batches);
      Counts idleRate = scale(idle, 1 / idleSecondsMeasured);
      print(server, small, large, idleRate);
      return f(
          "%s: %.2f Dripline commits, %.2f rows written, %.2f history events, %.2f actions per"
              + " batch",
          server.name(),
          perBatch(small, large, idleRate, "pg commits"),
          perBatch(small, large, idleRate, "pg rows written"),
          perBatch(small, large, idleRate, "history events"),
          perBatch(small, large, idleRate, "actions (history)"));
    } finally {
      stubs.shutdownNow();
    }
  }

  private List<Long> temporalBackends(TemporalServer server) {
    if (server.persistenceDb().isEmpty()) {
      return List.of();
    }
    own++;
    return services.queryLongColumn(
        "select pid from pg_stat_activity where datname in (?, ?)",
        server.persistenceDb(),
        server.persistenceDb() + "_visibility");
  }

  // ------------------------------------------------------------------------------------------
  // A phase

  private Phase phase(
      TemporalServer server,
      CpuMeter cpu,
      W3History history,
      String name,
      int runs,
      int batchesPerRun) {
    Reading before = read(server, cpu);
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < runs; i++) {
      ids.add(createRun(batchesPerRun, ++copies));
    }
    awaitCompleted(ids, batchesPerRun);
    CpuMeter.Reading cpuAtEnd = cpu.read();
    BenchMain.sleep(11_000); // idle backends flush their statistics within ~10 s
    Reading after = read(server, cpu).withCpu(cpuAtEnd);
    Counts counts = after.since(before);
    Map<String, Double> values = new LinkedHashMap<>(counts.values());
    values.putAll(histories(history, ids).values());
    double seconds = (after.nanos() - before.nanos()) / 1e9;
    Phase phase = new Phase(name, runs, (long) runs * batchesPerRun, seconds, new Counts(values));
    System.out.println(
        f(
            "phase %s: %d runs x %d batches, %.1f s (the statistics' flush wait included)",
            name, runs, batchesPerRun, seconds));
    return phase;
  }

  /**
   * Creates a run through the API; {@code copy}, an option {@code bench.noop} ignores, tells apart
   * runs that are otherwise the same (an active run with equal options is a conflict).
   */
  private long createRun(int items, int copy) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", backfill);
    body.put("options", Map.of("items", items, "sleepMs", sleepMs, "copy", copy));
    body.put("batchSize", 1);
    body.put("maxParallelBatches", cap);
    Services.Response response = services.post("/api/runs", body);
    if (response.status() != 201) {
      throw new IllegalStateException(
          "POST /api/runs answered " + response.status() + ": " + response.body());
    }
    return response.body().get("id").asLong();
  }

  /** Polls until every run is terminal; fails unless each completed all its batches. */
  private void awaitCompleted(List<Long> ids, int batchesPerRun) {
    String list = ids.stream().map(String::valueOf).collect(Collectors.joining(","));
    long deadline = System.nanoTime() + Duration.ofSeconds(timeoutSeconds).toNanos();
    while (true) {
      own++;
      long open =
          services.queryLong(
              "select count(*) from runs where id in ("
                  + list
                  + ")"
                  + " and status not in ('completed', 'failed', 'stopped')");
      if (open == 0) {
        break;
      }
      if (System.nanoTime() > deadline) {
        for (long id : ids) {
          services.post("/api/runs/" + id + "/stop", Map.of());
        }
        throw new IllegalStateException("SIZING runs " + ids + " did not end in time");
      }
      BenchMain.sleep(500);
    }
    own++;
    long done =
        services.queryLong(
            "select count(*) from batches where run_id in ("
                + list
                + ")"
                + " and status = 'completed'");
    own++;
    long completed =
        services.queryLong(
            "select count(*) from runs where id in (" + list + ") and status = 'completed'");
    if (completed != ids.size() || done != (long) ids.size() * batchesPerRun) {
      throw new IllegalStateException(
          f(
              "SIZING runs %s: %d of %d completed, %d of %d batches",
              ids, completed, ids.size(), done, (long) ids.size() * batchesPerRun));
    }
  }

  // ------------------------------------------------------------------------------------------
  // Counters read at one instant

  /** Cumulative counters at one instant. */
  private record Reading(
      long nanos,
      long ownBefore,
      Map<String, Long> db,
      Map<String, Long> temporalDb,
      Map<String, Double> serverCounters,
      CpuMeter.Reading cpu) {

    Reading withCpu(CpuMeter.Reading reading) {
      return new Reading(nanos, ownBefore, db, temporalDb, serverCounters, reading);
    }

    /**
     * The counters' growth since {@code earlier}; the bench's own statements between the two (each
     * one commit that writes nothing) taken out of the commits.
     */
    Counts since(Reading earlier) {
      Map<String, Double> values = new LinkedHashMap<>();
      db.forEach(
          (name, value) -> values.put(name, (double) value - earlier.db().getOrDefault(name, 0L)));
      values.merge("pg commits", -(double) (ownBefore - earlier.ownBefore()), Double::sum);
      temporalDb.forEach(
          (name, value) ->
              values.put(name, (double) value - earlier.temporalDb().getOrDefault(name, 0L)));
      serverCounters.forEach(
          (name, value) ->
              values.put(name, value - earlier.serverCounters().getOrDefault(name, 0.0)));
      cpu.since(earlier.cpu()).forEach((part, seconds) -> values.put("cpu s " + part, seconds));
      return new Counts(values);
    }
  }

  /**
   * Reads every counter. The statement reading Dripline's database's statistics runs first, and the
   * bench's statement count is taken just before it: the statements between two readings' first
   * statements are the bench's share of the commits.
   */
  private Reading read(TemporalServer server, CpuMeter cpu) {
    long ownBefore = own;
    own++;
    long[] db =
        services.queryLongs(
            "select xact_commit, tup_inserted, tup_updated, tup_deleted,"
                + " (select coalesce(sum(n_tup_hot_upd), 0) from pg_stat_user_tables)::bigint,"
                + " (select wal_bytes from pg_stat_wal)::bigint"
                + " from pg_stat_database where datname = current_database()");
    Map<String, Long> dbValues = new LinkedHashMap<>();
    dbValues.put("pg commits", db[0]);
    dbValues.put("pg rows written", db[1] + db[2] + db[3]);
    dbValues.put("pg rows inserted", db[1]);
    dbValues.put("pg rows updated", db[2]);
    dbValues.put("pg rows deleted", db[3]);
    dbValues.put("pg hot updates", db[4]);
    dbValues.put("pg WAL bytes (whole cluster)", db[5]);
    own++;
    for (Map.Entry<String, Long> e :
        services
            .queryLongMap(
                "select relname, n_tup_ins + n_tup_upd + n_tup_del from pg_stat_user_tables")
            .entrySet()) {
      dbValues.put("pg rows written: " + e.getKey(), e.getValue());
    }
    Map<String, Long> temporalDb = new LinkedHashMap<>();
    if (!server.persistenceDb().isEmpty()) {
      for (String kind : List.of("persistence", "visibility")) {
        String name =
            kind.equals("persistence")
                ? server.persistenceDb()
                : server.persistenceDb() + "_visibility";
        own++;
        long[] t =
            services.queryLongs(
                "select xact_commit, tup_inserted + tup_updated + tup_deleted"
                    + " from pg_stat_database where datname = ?",
                name);
        temporalDb.put("temporal pg commits (" + kind + ")", t.length > 0 ? t[0] : 0);
        temporalDb.put("temporal pg rows written (" + kind + ")", t.length > 0 ? t[1] : 0);
      }
    }
    Map<String, Double> serverCounters = new LinkedHashMap<>();
    if (server.hasMetrics()) {
      double actions = 0;
      for (Map.Entry<String, Double> e : server.counter("action", "action_type").entrySet()) {
        serverCounters.put("server action: " + e.getKey(), e.getValue());
        actions += e.getValue();
      }
      serverCounters.put("server actions", actions);
      Map<String, Double> requests = server.counter("frontend", "service_requests", "operation");
      serverCounters.put(
          "frontend requests", requests.values().stream().mapToDouble(Double::doubleValue).sum());
      requests.forEach((operation, n) -> serverCounters.put("frontend requests: " + operation, n));
    }
    CpuMeter.Reading cpuReading = cpu.read();
    return new Reading(
        System.nanoTime(), ownBefore, dbValues, temporalDb, serverCounters, cpuReading);
  }

  // ------------------------------------------------------------------------------------------
  // Histories

  /** Marker names the Java SDK records that Temporal Cloud bills as actions. */
  private static final Set<String> BILLED_MARKERS =
      Set.of("Version", "SideEffect", "MutableSideEffect", "LocalActivity");

  /** Counts over every execution of each run's workflow. */
  private Counts histories(W3History history, List<Long> ids) {
    Map<String, Double> c = new LinkedHashMap<>();
    for (String name :
        List.of(
            "executions",
            "history events",
            "history bytes",
            "workflow tasks",
            "activities scheduled",
            "activity attempts",
            "timers",
            "markers",
            "upserts",
            "signals",
            "child starts, external signals",
            "actions (history)")) {
      c.put(name, 0.0);
    }
    Map<String, Double> activities = new TreeMap<>();
    Map<String, Double> markers = new TreeMap<>();
    for (long id : ids) {
      own++;
      String workflowId = services.queryString("select workflow_id from runs where id = ?", id);
      String runId = "";
      do {
        String current = runId;
        String previous = "";
        ByteString token = ByteString.EMPTY;
        c.merge("executions", 1.0, Double::sum);
        do {
          ByteString pageToken = token;
          GetWorkflowExecutionHistoryResponse page =
              history.call(
                  stub ->
                      stub.getWorkflowExecutionHistory(
                          GetWorkflowExecutionHistoryRequest.newBuilder()
                              .setNamespace("default")
                              .setExecution(
                                  WorkflowExecution.newBuilder()
                                      .setWorkflowId(workflowId)
                                      .setRunId(current))
                              .setMaximumPageSize(1000)
                              .setNextPageToken(pageToken)
                              .build()));
          for (HistoryEvent event : page.getHistory().getEventsList()) {
            c.merge("history events", 1.0, Double::sum);
            c.merge("history bytes", (double) event.getSerializedSize(), Double::sum);
            switch (event.getEventType()) {
              case EVENT_TYPE_WORKFLOW_EXECUTION_STARTED ->
                  previous =
                      event
                          .getWorkflowExecutionStartedEventAttributes()
                          .getContinuedExecutionRunId();
              case EVENT_TYPE_WORKFLOW_TASK_COMPLETED ->
                  c.merge("workflow tasks", 1.0, Double::sum);
              case EVENT_TYPE_ACTIVITY_TASK_SCHEDULED -> {
                c.merge("activities scheduled", 1.0, Double::sum);
                activities.merge(
                    event.getActivityTaskScheduledEventAttributes().getActivityType().getName(),
                    1.0,
                    Double::sum);
              }
              case EVENT_TYPE_ACTIVITY_TASK_STARTED ->
                  c.merge(
                      "activity attempts",
                      (double)
                          Math.max(1, event.getActivityTaskStartedEventAttributes().getAttempt()),
                      Double::sum);
              case EVENT_TYPE_TIMER_STARTED -> c.merge("timers", 1.0, Double::sum);
              case EVENT_TYPE_MARKER_RECORDED -> {
                String marker = event.getMarkerRecordedEventAttributes().getMarkerName();
                markers.merge(marker, 1.0, Double::sum);
                if (BILLED_MARKERS.contains(marker)) {
                  c.merge("markers", 1.0, Double::sum);
                }
              }
              case EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES ->
                  c.merge("upserts", 1.0, Double::sum);
              case EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED -> c.merge("signals", 1.0, Double::sum);
              case EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
                  EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED ->
                  c.merge("child starts, external signals", 1.0, Double::sum);
              default -> {}
            }
          }
          token = page.getNextPageToken();
        } while (!token.isEmpty());
        runId = previous;
      } while (!runId.isEmpty());
    }
    c.put(
        "actions (history)",
        c.get("executions")
            + c.get("activity attempts")
            + c.get("timers")
            + c.get("markers")
            + c.get("upserts")
            + c.get("signals")
            + c.get("child starts, external signals"));
    activities.forEach((type, n) -> c.put("activity scheduled: " + type, n));
    markers.forEach((name, n) -> c.put("marker: " + name, n));
    return new Counts(c);
  }

  // ------------------------------------------------------------------------------------------
  // Results

  private static Counts scale(Counts counts, double factor) {
    Map<String, Double> values = new LinkedHashMap<>();
    counts.values().forEach((name, value) -> values.put(name, value * factor));
    return new Counts(values);
  }

  private static String brief(Counts rate) {
    return f(
        "%.1f commits, %.1f rows written, %.2f CPU-s Dripline JVM, %.2f CPU-s Temporal%s",
        rate.get("pg commits"),
        rate.get("pg rows written"),
        rate.get("cpu s dripline-jvm"),
        rate.get("cpu s temporal"),
        rate.values().containsKey("server actions")
            ? f(", %.1f server actions", rate.get("server actions"))
            : "");
  }

  /** A phase's value of {@code name} less the idle rate over the phase's duration. */
  private static double net(Phase phase, Counts idleRate, String name) {
    boolean timeBound = !name.startsWith("cpu s ") && idleRate.values().containsKey(name);
    return phase.counts().get(name) - (timeBound ? idleRate.get(name) * phase.seconds() : 0);
  }

  /** b of cost = a × runs + b × batches, from the two phases. */
  private static double perBatch(Phase s, Phase l, Counts idleRate, String name) {
    double det = (double) s.runs() * l.batches() - (double) l.runs() * s.batches();
    return (s.runs() * net(l, idleRate, name) - l.runs() * net(s, idleRate, name)) / det;
  }

  /** a of cost = a × runs + b × batches, from the two phases. */
  private static double perRun(Phase s, Phase l, Counts idleRate, String name) {
    double det = (double) s.runs() * l.batches() - (double) l.runs() * s.batches();
    return (net(s, idleRate, name) * l.batches() - net(l, idleRate, name) * s.batches()) / det;
  }

  private void print(TemporalServer server, Phase small, Phase large, Counts idleRate) {
    System.out.println();
    System.out.println(
        f(
            "SIZING on %s: each phase's count less the idle rate x its duration (CPU: not"
                + " subtracted; until its runs ended); per run and per batch solve"
                + " count = a x runs + b x batches over the two phases",
            server.name()));
    System.out.println(
        f(
            "%-48s %12s %12s %12s %12s %10s",
            "counter",
            f("%s %dr/%db", small.name(), small.runs(), small.batches()),
            f("%s %dr/%db", large.name(), large.runs(), large.batches()),
            "idle /s",
            "per run (a)",
            "per batch"));
    List<String> names = new ArrayList<>(large.counts().values().keySet());
    for (String name : small.counts().values().keySet()) {
      if (!names.contains(name)) {
        names.add(name);
      }
    }
    for (String name : names) {
      double s = net(small, idleRate, name);
      double l = net(large, idleRate, name);
      if (s == 0 && l == 0) {
        continue;
      }
      System.out.println(
          f(
              "%-48s %12.1f %12.1f %12.2f %12.2f %10.4f",
              name.length() > 48 ? name.substring(0, 48) : name,
              s,
              l,
              idleRate.get(name),
              perRun(small, large, idleRate, name),
              perBatch(small, large, idleRate, name)));
    }
    System.out.println(
        f(
            "large phase: %.0f batches/s over its runs (%.1f s with the 11 s flush wait);"
                + " CPU per 1,000 batches of the large phase alone: Dripline JVM %.2f s, Temporal"
                + " %.2f s, PostgreSQL (Dripline) %.2f s, PostgreSQL (Temporal) %.2f s",
            large.batches() / Math.max(0.001, large.seconds() - 11),
            large.seconds(),
            1000 * large.counts().get("cpu s dripline-jvm") / large.batches(),
            1000 * large.counts().get("cpu s temporal") / large.batches(),
            1000 * large.counts().get("cpu s pg-dripline") / large.batches(),
            1000 * large.counts().get("cpu s pg-temporal") / large.batches()));
  }
}
