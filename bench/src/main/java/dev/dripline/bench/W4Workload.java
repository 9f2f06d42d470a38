package dev.dripline.bench;

import static dev.dripline.bench.BenchMain.f;

import com.google.protobuf.ByteString;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.TaskQueueType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.taskqueue.v1.PollerInfo;
import io.temporal.api.taskqueue.v1.TaskQueue;
import io.temporal.api.workflowservice.v1.DescribeTaskQueueRequest;
import io.temporal.api.workflowservice.v1.GetWorkflowExecutionHistoryRequest;
import io.temporal.api.workflowservice.v1.GetWorkflowExecutionHistoryResponse;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * W4 — scale-out: the same run, whose batches are bound by a per-worker resource, with 1, 2 and 3
 * worker processes. Each worker process ({@code WorkerApplication}) allows {@code --w4-k} batch
 * executions at once ({@code DRIPLINE_WORKER_MAX_CONCURRENT_ACTIVITIES}); the batches are {@code
 * example.sleep} batches of one key sleeping {@code --w4-sleep-ms}, so a worker can do at most k /
 * sleep batches per second and more workers should do more. The run's cap {@code --w4-cap} is
 * chosen to bind only at the largest worker count (defaults: k 8, cap 20: expected concurrency 8,
 * 16, 20), so that {@code example.sleep}'s witness ({@code example_concurrency.max_seen}, counted
 * across all processes through PostgreSQL) checks the cap where it matters.
 *
 * <p>Processes: W4 stops the bench's standalone Dripline JVM (the next workload that needs it
 * starts it again) and starts an app JVM ({@code AppApplication}, HTTP API only, on the bench's
 * HTTP port) and up to max(workers) worker JVMs on the same task queue, each with its own HTTP port
 * ({@code DRIPLINE_WORKER_HTTP_PORT}: {@code --w4-port-base} + i), the bench's heap and
 * workflow-task slots, and a DB pool of 2k + 10 (an {@code example.sleep} batch holds two
 * connections). Before a run, workers are started or stopped to the wanted count and W4 waits until
 * Temporal lists an activity poller of each ({@code DescribeTaskQueue}; a worker's identity is
 * {@code pid@host}). Worker counts run in ascending order in odd repetitions and descending in even
 * ones.
 *
 * <p>Per run: {@code POST /api/runs} of {@code --w4-batches} batches, batch size 1; measured:
 *
 * <ul>
 *   <li>{@code wall}: from just before the POST to the run's {@code finished_at} (includes planning
 *       and the ramp);
 *   <li>{@code steady}: batches per second between the 10th and the 90th percentile of the batches'
 *       {@code finished_at} — the throughput once all workers are busy;
 *   <li>{@code ideal}: min(k × workers, cap) × 1000 / sleepMs;
 *   <li>{@code max_seen}: the witness's most batches of the run executing at once, target ≤ cap
 *       (and expected = min(k × workers, cap));
 *   <li>batches per worker ({@code w1:n w2:n ...}): {@code ActivityTaskStarted} events of the batch
 *       activity per worker identity, over every execution of the run's workflow.
 * </ul>
 *
 * <p>Verdict: throughput grows (each worker count's median steady throughput at least 10 % above
 * the next smaller count's) and the witness never exceeded the cap.
 *
 * <p>Options ({@code --w4-<name> value}):
 *
 * <ul>
 *   <li>{@code --w4-workers} (1,2,3): worker counts;
 *   <li>{@code --w4-k} (8): activity slots per worker process;
 *   <li>{@code --w4-cap} (20): the run's maxParallelBatches;
 *   <li>{@code --w4-sleep-ms} (1000): each batch's sleep;
 *   <li>{@code --w4-batches} (600): batches per run;
 *   <li>{@code --w4-reps} (--reps): repetitions of the whole series;
 *   <li>{@code --w4-port-base} (--http-port + 1): worker i (1..) listens on base + i - 1;
 *   <li>{@code --w4-timeout-s} (max(300, 3 × the run's time at one worker)): per run;
 *   <li>{@code --w4-servers} (dev): the Temporal servers, {@code dev} and/or {@code cluster} (see
 *       {@link TemporalServer}); with two, each repetition runs the series on both, the servers'
 *       order alternating like the worker counts', the app and worker JVMs restarted on each.
 * </ul>
 */
final class W4Workload {
  private final BenchConfig config;
  private final Services services;

  private int k;
  private int cap;
  private int sleepMs;
  private int batches;
  private int portBase;
  private int timeoutSeconds;
  private WorkflowServiceStubs stubs;
  private W3History history;
  private final List<Process> workers = new ArrayList<>();
  private TemporalServer server;
  private Process app;

  W4Workload(BenchConfig config, Services services) {
    this.config = config;
    this.services = services;
  }

  /** One measured run. */
  private record Result(
      String server,
      int rep,
      int workers,
      long runId,
      double wallSeconds,
      double steadyRate,
      double ideal,
      long maxSeen,
      int expectedMax,
      String perWorker) {}

  String run() throws Exception {
    List<Integer> counts = new ArrayList<>();
    for (String n : config.option("w4-workers", "1,2,3").split(",")) {
      if (!n.isBlank()) {
        counts.add(Integer.parseInt(n.trim()));
      }
    }
    counts = counts.stream().distinct().sorted().toList();
    k = config.intOption("w4-k", 8);
    cap = config.intOption("w4-cap", 20);
    sleepMs = config.intOption("w4-sleep-ms", 1000);
    batches = config.intOption("w4-batches", 600);
    int reps = config.intOption("w4-reps", config.reps());
    portBase = config.intOption("w4-port-base", config.httpPort() + 1);
    timeoutSeconds =
        config.intOption(
            "w4-timeout-s",
            (int) Math.max(300, 3L * batches * sleepMs / (1000L * Math.min(k, cap))));
    if (counts.isEmpty() || counts.get(0) < 1 || k < 1 || cap < 1 || batches < 10 || reps < 1) {
      throw new IllegalArgumentException(
          "W4 needs worker counts >= 1, --w4-k, --w4-cap, --w4-reps >= 1 and --w4-batches >= 10");
    }
    List<TemporalServer> servers = TemporalServer.named(config, config.option("w4-servers", "dev"));
    int most = counts.get(counts.size() - 1);
    System.out.println();
    System.out.println(
        f(
            "== W4 scale-out: runs of %d example.sleep batches of one key sleeping %d ms, cap %d;"
                + " %d activity slots per worker process; workers %s; %d reps (order alternating);"
                + " servers %s",
            batches,
            sleepMs,
            cap,
            k,
            counts,
            reps,
            servers.stream().map(TemporalServer::name).toList()));
    System.out.println(
        f(
            "app JVM (AppApplication) on port %d; worker JVMs (WorkerApplication) on ports %d..%d;"
                + " heap %s each",
            config.httpPort(), portBase, portBase + most - 1, config.workerHeap()));

    services.stopDripline();
    try {
      List<Result> results = new ArrayList<>();
      System.out.println(
          "rep  server   workers  run  wall_s  wall_b/s  steady_b/s  ideal_b/s   eff  max_seen"
              + "  expected  batches per worker");
      for (int rep = 1; rep <= reps; rep++) {
        List<Integer> order = new ArrayList<>(counts);
        List<TemporalServer> serverOrder = new ArrayList<>(servers);
        if (rep % 2 == 0) {
          Collections.reverse(order);
          Collections.reverse(serverOrder);
        }
        for (TemporalServer next : serverOrder) {
          useServer(next);
          for (int n : order) {
            ensureWorkers(n);
            if (results.isEmpty()) {
              W3Workload.stopLeftoverRuns(services, "W4");
            }
            Result r = measure(rep, n);
            results.add(r);
            System.out.println(
                f(
                    "%3d  %-7s  %7d  %3d  %6.1f  %8.1f  %10.1f  %9.1f  %4.2f  %8d  %8d  %s",
                    r.rep(),
                    r.server(),
                    r.workers(),
                    r.runId(),
                    r.wallSeconds(),
                    batches / r.wallSeconds(),
                    r.steadyRate(),
                    r.ideal(),
                    r.steadyRate() / r.ideal(),
                    r.maxSeen(),
                    r.expectedMax(),
                    r.perWorker()));
          }
        }
      }
      List<String> parts = new ArrayList<>();
      long maxSeen = results.stream().mapToLong(Result::maxSeen).max().orElse(0);
      for (TemporalServer each : servers) {
        List<Result> mine = results.stream().filter(r -> r.server().equals(each.name())).toList();
        String part = summary(each.name(), counts, mine);
        parts.add(servers.size() == 1 ? part : each.name() + ": " + part);
      }
      return f(
          "%s; witness max_seen %d <= cap %d (%s)",
          String.join("; ", parts), maxSeen, cap, maxSeen <= cap ? "met" : "NOT met: exceeded");
    } finally {
      stopAll();
    }
  }

  /**
   * Runs the app JVM and the workers on {@code next}: when another server is in use, stops them and
   * starts the app JVM on {@code next} (workers start in {@link #ensureWorkers}).
   */
  private void useServer(TemporalServer next) throws IOException, InterruptedException {
    if (server != null && server.name().equals(next.name())) {
      return;
    }
    stopAll();
    server = next;
    Map<String, String> appEnv = new HashMap<>(services.driplineEnv());
    appEnv.put("TEMPORAL_ADDRESS", next.address());
    appEnv.put("DRIPLINE_WORKER_ENABLED", "false");
    app =
        services.spawn(
            "w4-app",
            services.java(List.of(config.workerHeap()), "dev.dripline.app.AppApplication"),
            appEnv);
    stubs =
        WorkflowServiceStubs.newServiceStubs(
            WorkflowServiceStubsOptions.newBuilder().setTarget(next.address()).build());
    history = new W3History(stubs, "default");
    services.awaitHealthy(app, "W4 app", services.baseUrl() + "/health", Duration.ofMinutes(3));
    System.out.println(f("on %s (%s)", next.name(), next.address()));
  }

  /** Stops the worker JVMs and the app JVM, and closes the Temporal connection. */
  private void stopAll() throws InterruptedException {
    while (!workers.isEmpty()) {
      services.stop(workers.remove(workers.size() - 1));
    }
    if (app != null) {
      services.stop(app);
      app = null;
    }
    if (stubs != null) {
      stubs.shutdownNow();
      stubs = null;
    }
    server = null;
  }

  private String summary(String serverName, List<Integer> counts, List<Result> results) {
    System.out.println();
    System.out.println("on " + serverName + ":");
    System.out.println(
        "workers  runs  steady_b/s (median)  ideal_b/s   eff  vs_1_worker  vs_previous"
            + "  wall_b/s (median)  max_seen (max)");
    Map<Integer, Double> medians = new LinkedHashMap<>();
    long maxSeen = 0;
    for (int n : counts) {
      List<Result> mine = results.stream().filter(r -> r.workers() == n).toList();
      double steady = BenchMain.median(mine.stream().map(Result::steadyRate).toList());
      double wall = BenchMain.median(mine.stream().map(r -> batches / r.wallSeconds()).toList());
      long seen = mine.stream().mapToLong(Result::maxSeen).max().orElse(0);
      maxSeen = Math.max(maxSeen, seen);
      medians.put(n, steady);
      double first = medians.values().iterator().next();
      Double previous = null;
      for (Map.Entry<Integer, Double> e : medians.entrySet()) {
        if (e.getKey() < n) {
          previous = e.getValue();
        }
      }
      System.out.println(
          f(
              "%7d  %4d  %19.1f  %9.1f  %4.2f  %11s  %11s  %17.1f  %14d",
              n,
              mine.size(),
              steady,
              ideal(n),
              steady / ideal(n),
              f("x%.2f", steady / first),
              previous == null ? "-" : f("x%.2f", steady / previous),
              wall,
              seen));
    }
    boolean grows = true;
    Double previous = null;
    for (double m : medians.values()) {
      if (previous != null && m < previous * 1.1) {
        grows = false;
      }
      previous = m;
    }
    boolean capHeld = maxSeen <= cap;
    System.out.println(
        f(
            "throughput %s with workers (rule: each count's median >= 1.1 x the next smaller"
                + " count's); cap witness max_seen %d over all runs, cap %d: %s",
            grows ? "grows" : "does NOT grow",
            maxSeen,
            cap,
            capHeld ? "never exceeded" : "EXCEEDED"));
    StringBuilder rates = new StringBuilder();
    StringBuilder ideals = new StringBuilder();
    for (Map.Entry<Integer, Double> e : medians.entrySet()) {
      rates.append(rates.length() == 0 ? "" : ", ").append(f("%dw %.1f", e.getKey(), e.getValue()));
      ideals.append(ideals.length() == 0 ? "" : "/").append(f("%.0f", ideal(e.getKey())));
    }
    double first = medians.values().iterator().next();
    double last = previous == null ? first : previous;
    return f(
        "%s b/s steady (ideal %s), x%.2f from %d to %d workers (%s)",
        rates,
        ideals,
        last / first,
        counts.get(0),
        counts.get(counts.size() - 1),
        grows ? "grows: met" : "does NOT grow");
  }

  private double ideal(int workers) {
    return Math.min((long) k * workers, cap) * 1000.0 / sleepMs;
  }

  // ------------------------------------------------------------------------------------------
  // Workers

  /** Starts or stops worker JVMs until exactly {@code n} run, and waits until each polls. */
  private void ensureWorkers(int n) throws IOException, InterruptedException {
    while (workers.size() > n) {
      services.stop(workers.remove(workers.size() - 1));
    }
    List<Process> started = new ArrayList<>();
    while (workers.size() < n) {
      int index = workers.size() + 1;
      Map<String, String> env = new HashMap<>(services.driplineEnv());
      env.put("TEMPORAL_ADDRESS", server.address());
      env.put("DRIPLINE_WORKER_HTTP_PORT", Integer.toString(port(index)));
      env.put("DRIPLINE_WORKER_MAX_CONCURRENT_ACTIVITIES", Integer.toString(k));
      env.put(
          "DRIPLINE_WORKER_MAX_CONCURRENT_WORKFLOW_TASKS",
          Integer.toString(config.workflowTaskSlots()));
      env.put("DRIPLINE_DB_POOL_SIZE", Integer.toString(2 * k + 10));
      Process worker =
          services.spawn(
              "w4-worker-" + index,
              services.java(List.of(config.workerHeap()), "dev.dripline.worker.WorkerApplication"),
              env);
      workers.add(worker);
      started.add(worker);
    }
    for (Process worker : started) {
      int index = workers.indexOf(worker) + 1;
      services.awaitHealthy(
          worker,
          "W4 worker " + index,
          "http://127.0.0.1:" + port(index) + "/health",
          Duration.ofMinutes(3));
    }
    awaitPollers();
  }

  private int port(int index) {
    return portBase + index - 1;
  }

  /** Waits until Temporal lists an activity poller of every running worker. */
  private void awaitPollers() throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (true) {
      Set<String> polling = new HashSet<>();
      for (PollerInfo poller :
          history
              .call(
                  stub ->
                      stub.describeTaskQueue(
                          DescribeTaskQueueRequest.newBuilder()
                              .setNamespace("default")
                              .setTaskQueue(
                                  TaskQueue.newBuilder().setName(config.driplineTaskQueue()))
                              .setTaskQueueType(TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)
                              .build()))
              .getPollersList()) {
        polling.add(poller.getIdentity());
      }
      List<Long> missing = new ArrayList<>();
      for (Process worker : workers) {
        if (polling.stream().noneMatch(id -> id.startsWith(worker.pid() + "@"))) {
          missing.add(worker.pid());
        }
      }
      if (missing.isEmpty()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "worker JVMs " + missing + " do not poll the activity task queue; pollers: " + polling);
      }
      Thread.sleep(500);
    }
  }

  // ------------------------------------------------------------------------------------------
  // One run

  private Result measure(int rep, int n) {
    Instant posted = Instant.now();
    long id = BenchMain.createSleepRun(services, batches, sleepMs, cap);
    String status;
    try {
      status = BenchMain.awaitTerminal(services, id, Duration.ofSeconds(timeoutSeconds), 200);
    } catch (IllegalStateException timedOut) {
      // Stop it while the workers still run, or the next Dripline JVM on this database resumes it.
      services.post("/api/runs/" + id + "/stop", Map.of());
      throw timedOut;
    }
    if (!"completed".equals(status)) {
      throw new IllegalStateException("W4 run " + id + " ended " + status);
    }
    long done =
        services.queryLong(
            "select count(*) from batches where run_id = ? and status = 'completed'", id);
    if (done != batches) {
      throw new IllegalStateException("W4 run " + id + " completed " + done + " of " + batches);
    }
    Instant finished = services.queryInstant("select finished_at from runs where id = ?", id);
    double wall = Duration.between(posted, finished).toNanos() / 1e9;
    int r10 = (int) Math.ceil(batches * 0.1);
    int r90 = (int) Math.ceil(batches * 0.9);
    Instant t10 = finishedAtRank(id, r10);
    Instant t90 = finishedAtRank(id, r90);
    double window = Duration.between(t10, t90).toNanos() / 1e9;
    double steady = window > 0 ? (r90 - r10) / window : Double.NaN;
    long maxSeen =
        services.queryLong("select max_seen from example_concurrency where run_id = ?", id);
    String workflowId = services.queryString("select workflow_id from runs where id = ?", id);
    return new Result(
        server.name(),
        rep,
        n,
        id,
        wall,
        steady,
        ideal(n),
        maxSeen,
        (int) Math.min((long) k * n, cap),
        perWorkerOrUnknown(workflowId));
  }

  private String perWorkerOrUnknown(String workflowId) {
    try {
      return perWorker(workflowId);
    } catch (RuntimeException e) {
      return "? (" + e.getMessage() + ")";
    }
  }

  /** The {@code finished_at} of the run's batch that finished {@code rank}-th (1-based). */
  private Instant finishedAtRank(long runId, int rank) {
    return services.queryInstant(
        "select finished_at from batches where run_id = ? and status = 'completed'"
            + " order by finished_at offset ? limit 1",
        runId,
        rank - 1);
  }

  /**
   * Batch attempts started per worker process, from the {@code ActivityTaskStarted} events of the
   * batch activity over every execution of the run's workflow, as "pid:count" pairs.
   */
  private String perWorker(String workflowId) {
    Map<String, Integer> byIdentity = new TreeMap<>();
    for (W3History.Execution execution :
        history.list("WorkflowId = " + W3History.literal(workflowId))) {
      Map<Long, Boolean> batchScheduled = new HashMap<>();
      ByteString token = ByteString.EMPTY;
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
                                    .setWorkflowId(execution.workflowId())
                                    .setRunId(execution.runId()))
                            .setNextPageToken(pageToken)
                            .build()));
        for (HistoryEvent event : page.getHistory().getEventsList()) {
          if (event.hasActivityTaskScheduledEventAttributes()) {
            batchScheduled.put(
                event.getEventId(),
                event
                    .getActivityTaskScheduledEventAttributes()
                    .getActivityType()
                    .getName()
                    .endsWith("ProcessBatch"));
          } else if (event.hasActivityTaskStartedEventAttributes()) {
            var started = event.getActivityTaskStartedEventAttributes();
            if (batchScheduled.getOrDefault(started.getScheduledEventId(), false)) {
              byIdentity.merge(started.getIdentity(), 1, Integer::sum);
            }
          }
        }
        token = page.getNextPageToken();
      } while (!token.isEmpty());
    }
    // Labelled w1, w2, ... by worker index (its port); an identity of no current worker by itself.
    Map<String, Integer> labelled = new TreeMap<>();
    byIdentity.forEach(
        (identity, count) -> {
          String label = identity;
          for (int i = 0; i < workers.size(); i++) {
            if (identity.startsWith(workers.get(i).pid() + "@")) {
              label = "w" + (i + 1);
            }
          }
          labelled.merge(label, count, Integer::sum);
        });
    List<String> parts = new ArrayList<>();
    labelled.forEach((label, count) -> parts.add(label + ":" + count));
    return String.join(" ", parts);
  }
}
