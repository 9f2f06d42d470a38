package dev.dripline.bench;

import static dev.dripline.bench.BenchMain.f;

import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * W3 — scale: one run of {@code --w3-batches} (1,000,000) batches of one key that do nothing,
 * against a Dripline worker JVM ({@code WorkerApplication}, with the bench's worker heap {@code
 * --worker-heap}, {@code -Xmx512m}) and an API JVM ({@code AppApplication}) as deployed, or both in
 * one JVM ({@code StandaloneApplication}, {@code --w3-api same}). Measured while it runs, at 0 %
 * and at each 10 % of progress (from the run's processed keys in {@code run_key_counts}, polled
 * every 250 ms):
 *
 * <ul>
 *   <li><b>history</b>: the most events (and bytes) of any execution of the run's workflow chain
 *       ({@code dripline-run-<id>} continues as new), from Temporal visibility ({@code WorkflowId =
 *       ...}, closed executions) and {@code DescribeWorkflowExecution} (the running one); at the
 *       end also every other workflow on the task queue (the metrics workflow), and the largest
 *       execution's events counted from its history; target: under Temporal's 10,240-event warning;
 *   <li><b>heap after GC</b>: over JMX (the bench attaches to the JVM), {@code MemoryMXBean.gc()}
 *       (a full GC) and the heap used right after it (see {@link W3Heap}); also metaspace, RSS and
 *       threads; flat means the 90 % reading is at most max({@code --w3-flat-pct} %, {@code
 *       --w3-flat-mb} MiB) above the 10 % reading. The JVM also writes a GC log ({@code
 *       bench-w3-gc.log});
 *   <li><b>{@code GET /api/runs/{id}}</b>: one request every {@code --w3-get-interval-ms} from its
 *       own thread ({@link W3GetSampler}), response times per progress decile (p50, p99, max); held
 *       back while a heap sample forces its GC; the API is warmed up first ({@code
 *       --w3-api-warmup}); target: p99 under 100 ms in every decile;
 *   <li><b>completion</b>: the run ends {@code completed} with N completed batches and {@code
 *       processed_keys} N; throughput per decile and overall ({@code started_at} to {@code
 *       finished_at}).
 * </ul>
 *
 * <p>The backfill is {@code bench.noop} ({@link NoopBackfill}), not {@code example.sleep} with
 * sleepMs 0: the example's concurrency witness adds two serialised transactions per batch on one
 * row per run (W1 measured it as the larger part of the example's cost), which would measure the
 * example, not the engine, and roughly halve the throughput of an already long run. W3's subjects
 * (history, heap, the API under a large run) are the engine's.
 *
 * <p>W3 starts its own Dripline JVMs (after stopping the bench's shared one; the next workload that
 * needs it starts it again), so that the heap readings start from a fresh JVM, the process id is
 * known for attaching, and the activity slots fit the cap. Options ({@code --w3-<name> value}):
 *
 * <ul>
 *   <li>{@code --w3-batches} (1000000): batches (= keys; batch size 1);
 *   <li>{@code --w3-cap} (100): the run's maxParallelBatches;
 *   <li>{@code --w3-slots} (max(--worker-slots, cap + 8)): the JVM's activity slots;
 *   <li>{@code --w3-api} ({@code own}): {@code own} runs the API in its own JVM beside the
 *       worker's, as deployed; {@code same} runs both in one (the heap readings are then of both);
 *   <li>{@code --w3-backfill} (bench.noop): the definition (any with the {@code items} and {@code
 *       sleepMs} options);
 *   <li>{@code --w3-get-interval-ms} (200): interval of the GET sampler (5 requests/s);
 *   <li>{@code --w3-api-warmup} (2000): requests sent before the run, alternately {@code GET
 *       /api/runs?size=1} and {@code GET /api/runs/{id}} of the latest earlier run, so that the
 *       first decile's GETs meet a warm API, as a live one is, not a JVM that has answered 50;
 *   <li>{@code --w3-worker-nice} (0): run the worker JVM under {@code nice -n} this (with {@code
 *       --w3-api own}: the API keeps the CPU it needs while the worker takes the rest);
 *   <li>{@code --w3-flat-pct} (20), {@code --w3-flat-mb} (8): the flatness rule above;
 *   <li>{@code --w3-timeout-s} (max(1800, batches / 10)): give up (and stop the run) after this.
 *       The bench script's own limit, {@code DRIPLINE_BENCH_TIMEOUT} (3600 s), must be raised for
 *       the full size.
 * </ul>
 */
final class W3Workload {
  private static final String STANDALONE = "dev.dripline.standalone.StandaloneApplication";
  private static final String APP = "dev.dripline.app.AppApplication";
  private static final String WORKER = "dev.dripline.worker.WorkerApplication";

  /** A run's processed keys: the sum of its shards (migration V5). */
  private static final String PROCESSED_KEYS =
      "select coalesce(sum(processed_keys), 0)::bigint from run_key_counts where run_id = ?";

  private final BenchConfig config;
  private final Services services;

  private int batches;
  private int cap;
  private int slots;
  private String backfill;
  private boolean ownApi;
  private int getInterval;
  private int workerNice;
  private int flatPct;
  private int flatMb;
  private int timeoutSeconds;

  /** The JVM that runs the batches (worker, or standalone), whose heap is sampled. */
  private Process jvm;

  /** The API's own JVM, or null when {@link #jvm} serves the API too. */
  private Process app;

  private W3Heap heap;
  private W3History history;
  private long runId;
  private String workflowId;
  private long postNanos;
  private W3GetSampler sampler;
  private int apiWarmup;
  private final List<Checkpoint> checkpoints = new ArrayList<>();

  W3Workload(BenchConfig config, Services services) {
    this.config = config;
    this.services = services;
  }

  /** One line of the progress table: a reading at 0 %, at each 10 % and at the end. */
  private record Checkpoint(
      int decile,
      double elapsedSeconds,
      long processed,
      W3Heap.Sample heap,
      int executions,
      long maxEvents,
      long maxBytes) {}

  String run() throws Exception {
    batches = config.intOption("w3-batches", 1_000_000);
    cap = config.intOption("w3-cap", 100);
    slots = config.intOption("w3-slots", Math.max(config.workerSlots(), cap + 8));
    backfill = config.option("w3-backfill", NoopBackfill.NAME);
    String api = config.option("w3-api", "own");
    if (!api.equals("own") && !api.equals("same")) {
      throw new IllegalArgumentException("--w3-api must be own or same, not " + api);
    }
    ownApi = api.equals("own");
    getInterval = config.intOption("w3-get-interval-ms", 200);
    apiWarmup = config.intOption("w3-api-warmup", 2000);
    workerNice = config.intOption("w3-worker-nice", 0);
    flatPct = config.intOption("w3-flat-pct", 20);
    flatMb = config.intOption("w3-flat-mb", 8);
    timeoutSeconds = config.intOption("w3-timeout-s", Math.max(1800, batches / 10));
    if (batches < 1 || cap < 1 || slots < 1 || getInterval < 1) {
      throw new IllegalArgumentException(
          "--w3-batches, --w3-cap, --w3-slots and --w3-get-interval-ms must be at least 1");
    }
    System.out.println();
    System.out.println(
        f(
            "== W3 scale: one run of %d batches of %s (batch size 1, sleepMs 0), cap %d;"
                + " Dripline %s %s, %d activity slots, %d workflow task slots",
            batches,
            backfill,
            cap,
            ownApi ? "worker JVM (API in its own JVM)" : "JVM (standalone: API and worker)",
            config.workerHeap(),
            slots,
            config.workflowTaskSlots()));

    services.stopDripline();
    Map<String, String> env = new HashMap<>(services.driplineEnv());
    env.put("DRIPLINE_WORKER_MAX_CONCURRENT_ACTIVITIES", Integer.toString(slots));
    env.put(
        "DRIPLINE_WORKER_MAX_CONCURRENT_WORKFLOW_TASKS",
        Integer.toString(config.workflowTaskSlots()));
    String health = services.baseUrl() + "/health";
    if (ownApi) {
      int workerPort = config.httpPort() + 11;
      env.put("DRIPLINE_WORKER_HTTP_PORT", Integer.toString(workerPort));
      health = "http://127.0.0.1:" + workerPort + "/health";
      Map<String, String> appEnv = new HashMap<>(services.driplineEnv());
      appEnv.put("DRIPLINE_WORKER_ENABLED", "false");
      app = services.spawn("w3-app", services.java(List.of(config.workerHeap()), APP), appEnv);
    }
    Path gcLog = config.logDir().toAbsolutePath().resolve("bench-w3-gc.log");
    List<String> command = new ArrayList<>();
    if (workerNice > 0) {
      // The worker yields the CPU to the API when both want it, as separate hosts would give each
      // its own: a run of no-op batches otherwise takes every cycle the machine has.
      command.addAll(List.of("nice", "-n", Integer.toString(workerNice)));
    }
    command.addAll(
        services.java(
            List.of(
                config.workerHeap(),
                // An OutOfMemoryError anywhere is a failure of W3: end the JVM so it shows.
                "-XX:+ExitOnOutOfMemoryError",
                "-Xlog:gc:file=" + gcLog),
            ownApi ? WORKER : STANDALONE));
    jvm = services.spawn(ownApi ? "w3-worker" : "w3-dripline", command, env);
    WorkflowServiceStubs stubs = null;
    try {
      services.awaitHealthy(jvm, "W3 Dripline", health, Duration.ofMinutes(3));
      if (app != null) {
        services.awaitHealthy(app, "W3 API", services.baseUrl() + "/health", Duration.ofMinutes(3));
      }
      heap = W3Heap.attach(jvm.pid());
      System.out.println(
          f("JVM pid %d, collectors: %s; GC log %s", jvm.pid(), heap.collectors(), gcLog));
      stopLeftoverRuns(services, "W3");
      stubs =
          WorkflowServiceStubs.newServiceStubs(
              WorkflowServiceStubsOptions.newBuilder().setTarget(config.temporalAddress()).build());
      history = new W3History(stubs, "default");
      return measure();
    } finally {
      if (heap != null) {
        heap.close();
      }
      services.stop(jvm);
      if (app != null) {
        services.stop(app);
      }
      if (stubs != null) {
        stubs.shutdownNow();
      }
    }
  }

  @SuppressWarnings("try") // the sampler's close waits for its thread
  private String measure() throws Exception {
    warmUp();
    Instant w3Start = Instant.now();
    W3Heap.Sample idle = heap.sample();
    runId = BenchMain.createRun(services, backfill, batches, 0, cap);
    postNanos = System.nanoTime();
    workflowId = services.queryString("select workflow_id from runs where id = ?", runId);
    System.out.println(
        f(
            "run %d (workflow %s); GET /api/runs/%d every %d ms; heap: used right after a forced"
                + " full GC (JMX)",
            runId, workflowId, runId, getInterval));
    System.out.println(
        "b/s: since the line before; GET columns: requests answered while progress was between"
            + " the line before and this one");
    System.out.println(
        "  pct  elapsed_s  processed   b/s  heap_MB  commit_MB  gc_ms  meta_MB  rss_MB  thr"
            + "  execs  max_events  get_n  err  p50_ms  p99_ms  max_ms");
    Checkpoint zero = new Checkpoint(0, 0, 0, idle, 0, 0, 0);
    checkpoints.add(zero);
    printRow(zero, null);

    String status = null;
    String failure = null;
    long deadline = postNanos + Duration.ofSeconds(timeoutSeconds).toNanos();
    sampler = new W3GetSampler(services.baseUrl() + "/api/runs/" + runId, batches, getInterval);
    try (W3GetSampler running = sampler) {
      running.start();
      int next = 1;
      while (true) {
        if (!jvm.isAlive()) {
          failure = "the Dripline JVM exited with status " + jvm.exitValue() + " (see its log)";
          break;
        }
        if (app != null && !app.isAlive()) {
          failure = "the API JVM exited with status " + app.exitValue() + " (see its log)";
          break;
        }
        status = services.queryString("select status from runs where id = ?", runId);
        long processed = services.queryLong(PROCESSED_KEYS, runId);
        while (next <= 9 && processed >= (long) next * batches / 10) {
          checkpoint(next++);
        }
        if ("completed".equals(status) || "failed".equals(status) || "stopped".equals(status)) {
          break;
        }
        if (System.nanoTime() > deadline) {
          failure = "the run did not end within " + timeoutSeconds + " s";
          break;
        }
        BenchMain.sleep(250);
      }
      if (failure == null) {
        checkpoint(10);
      }
      System.out.println(
          f(
              "the GET sampler was held back for %.1f s in total while heap samples forced GCs",
              sampler.pausedSeconds()));
      return report(w3Start, status, failure);
    } finally {
      stopIfActive();
    }
  }

  /**
   * Warms the API's request paths up (routing, JSON, JDBC; the list and one run's detail) before
   * the run, as a live API is: {@code --w3-api-warmup} requests, half of them the detail of the
   * latest earlier run if there is one.
   */
  private void warmUp() {
    long latest = services.queryLong("select coalesce(max(id), 0) from runs");
    W3GetSampler list = new W3GetSampler(services.baseUrl() + "/api/runs?size=1", 1, 1);
    W3GetSampler detail =
        latest == 0 ? list : new W3GetSampler(services.baseUrl() + "/api/runs/" + latest, 1, 1);
    long start = System.nanoTime();
    for (int i = 0; i < apiWarmup; i++) {
      (i % 2 == 0 ? list : detail).sendOnce();
    }
    System.out.println(
        f(
            "API warm-up: %d requests (list%s) in %.1f s",
            apiWarmup,
            latest == 0 ? " only: no earlier run" : " and run " + latest,
            (System.nanoTime() - start) / 1e9));
  }

  /** Stops the run if it is still active (given up, failed), or a later JVM would resume it. */
  private void stopIfActive() {
    String now = services.queryString("select status from runs where id = ?", runId);
    if ((app != null ? app : jvm).isAlive()
        && ("pending".equals(now) || "running".equals(now) || "paused".equals(now))) {
      Services.Response stop = services.post("/api/runs/" + runId + "/stop", Map.of());
      System.out.println("W3 gave up: stop run " + runId + " answered " + stop.status());
      try {
        BenchMain.awaitTerminal(services, runId, Duration.ofSeconds(60), 500);
      } catch (IllegalStateException e) {
        System.out.println("W3: " + e.getMessage());
      }
    }
  }

  private void checkpoint(int decile) throws Exception {
    long processed = services.queryLong(PROCESSED_KEYS, runId);
    double elapsed = (System.nanoTime() - postNanos) / 1e9;
    // A reading that fails (a loaded machine, a timeout) is reported and left out; the run goes on.
    W3Heap.Sample reading;
    try {
      reading = sampler.paused(heap::sample);
    } catch (Exception e) {
      System.out.println(f("  (%d %%: no heap reading: %s)", decile * 10, e));
      reading = new W3Heap.Sample(Double.NaN, Double.NaN, Double.NaN, Double.NaN, -1, Double.NaN);
    }
    int executions = -1;
    long maxEvents = -1;
    long maxBytes = -1;
    try {
      List<W3History.Execution> chain =
          history.list("WorkflowId = " + W3History.literal(workflowId));
      executions = chain.size();
      maxEvents = chain.stream().mapToLong(W3History.Execution::events).max().orElse(0);
      maxBytes = chain.stream().mapToLong(W3History.Execution::bytes).max().orElse(0);
    } catch (RuntimeException e) {
      System.out.println(f("  (%d %%: no history reading: %s)", decile * 10, e));
    }
    Checkpoint c =
        new Checkpoint(decile, elapsed, processed, reading, executions, maxEvents, maxBytes);
    Checkpoint previous = checkpoints.get(checkpoints.size() - 1);
    checkpoints.add(c);
    printRow(c, previous);
  }

  private void printRow(Checkpoint c, Checkpoint previous) {
    double rate =
        previous == null || c.elapsedSeconds() <= previous.elapsedSeconds()
            ? Double.NaN
            : (c.processed() - previous.processed())
                / (c.elapsedSeconds() - previous.elapsedSeconds());
    String get = "";
    if (previous != null) {
      List<Double> ms = sampler.millis(c.decile() - 1);
      get =
          f(
              "  %5d  %3d  %6.1f  %6.1f  %6.0f",
              ms.size(),
              sampler.errors(c.decile() - 1),
              W3GetSampler.percentile(ms, 50),
              W3GetSampler.percentile(ms, 99),
              W3GetSampler.percentile(ms, 100));
    }
    W3Heap.Sample h = c.heap();
    System.out.println(
        f(
                "%4d%%  %9.1f  %9d  %5.0f  %7.1f  %9.1f  %5.0f  %7.1f  %6.0f  %3d  %5d  %10d",
                c.decile() * 10,
                c.elapsedSeconds(),
                c.processed(),
                rate,
                h.usedMb(),
                h.committedMb(),
                h.gcMillis(),
                h.metaspaceMb(),
                h.rssMb(),
                h.threads(),
                c.executions(),
                c.maxEvents())
            + get);
  }

  private String report(Instant w3Start, String status, String failure) {
    long id = runId;
    System.out.println();
    List<String> verdicts = new ArrayList<>();
    boolean allMet = true;

    // Completion.
    long completed =
        services.queryLong(
            "select count(*) from batches where run_id = ? and status = 'completed'", id);
    long processed = services.queryLong(PROCESSED_KEYS, id);
    Instant started = services.queryInstant("select started_at from runs where id = ?", id);
    Instant finished = services.queryInstant("select finished_at from runs where id = ?", id);
    boolean done = failure == null && "completed".equals(status);
    boolean exact = completed == batches && processed == batches;
    String throughput = "";
    if (started != null && finished != null) {
      double seconds = Duration.between(started, finished).toNanos() / 1e9;
      throughput =
          f("; %.1f s from started_at to finished_at, %.1f b/s", seconds, batches / seconds);
    }
    System.out.println(
        f(
            "completion: run %d %s; %d of %d batches completed; processed_keys %d%s",
            id,
            failure != null ? "NOT ended (" + failure + ")" : status,
            completed,
            batches,
            processed,
            throughput));
    allMet &= done && exact;
    verdicts.add(
        f(
            "%s, %d/%d batches, processed_keys %d%s",
            done ? "completed" : "NOT completed", completed, batches, processed, throughput));

    // History: every execution on the queue that closed since W3 began or is still running.
    String query =
        f(
            "TaskQueue = %s AND (ExecutionStatus = 'Running' OR CloseTime >= %s)",
            W3History.literal(config.driplineTaskQueue()), W3History.literal(w3Start.toString()));
    List<W3History.Execution> all;
    try {
      all = history.list(query);
    } catch (RuntimeException e) {
      System.out.println("history: cannot list the task queue's executions: " + e);
      all = List.of();
    }
    Map<String, List<W3History.Execution>> byWorkflow = new LinkedHashMap<>();
    for (W3History.Execution e : all) {
      byWorkflow.computeIfAbsent(e.workflowId(), k -> new ArrayList<>()).add(e);
    }
    System.out.println(
        f(
            "history (Temporal; executions on task queue %s closed since W3 began or running):",
            config.driplineTaskQueue()));
    System.out.println(
        "  workflow id                              type               execs  max_events"
            + "  max_bytes");
    List<Map.Entry<String, List<W3History.Execution>>> rows =
        new ArrayList<>(byWorkflow.entrySet());
    rows.sort(
        Comparator.comparingLong(
                (Map.Entry<String, List<W3History.Execution>> e) ->
                    e.getValue().stream().mapToLong(W3History.Execution::events).max().orElse(0))
            .reversed());
    for (int i = 0; i < rows.size() && i < 10; i++) {
      List<W3History.Execution> list = rows.get(i).getValue();
      System.out.println(
          f(
              "  %-40s %-17s %6d  %10d  %9d",
              rows.get(i).getKey(),
              list.get(0).type(),
              list.size(),
              list.stream().mapToLong(W3History.Execution::events).max().orElse(0),
              list.stream().mapToLong(W3History.Execution::bytes).max().orElse(0)));
    }
    if (rows.size() > 10) {
      System.out.println(f("  (%d more workflow ids, smaller)", rows.size() - 10));
    }
    W3History.Execution largest =
        all.stream().max(Comparator.comparingLong(W3History.Execution::events)).orElse(null);
    long maxEvents = 0;
    if (largest != null) {
      long counted;
      try {
        counted = history.countEvents(largest.workflowId(), largest.runId());
      } catch (RuntimeException e) {
        System.out.println("history: cannot read the largest execution's events: " + e);
        counted = -1;
      }
      maxEvents = Math.max(largest.events(), counted);
      System.out.println(
          f(
              "largest execution: %s run %s: %d events (visibility/describe), %d counted in its"
                  + " history, %d bytes",
              largest.workflowId(), largest.runId(), largest.events(), counted, largest.bytes()));
    }
    List<W3History.Execution> chain = byWorkflow.getOrDefault(workflowId, List.of());
    long chainMax = chain.stream().mapToLong(W3History.Execution::events).max().orElse(0);
    System.out.println(
        f(
            "the run's workflow %s: %d executions, at most %d events each (%.1f batches per"
                + " execution)",
            workflowId,
            chain.size(),
            chainMax,
            chain.isEmpty() ? 0.0 : (double) batches / chain.size()));
    // The readings during the run count too (the final listing may have failed).
    maxEvents =
        Math.max(maxEvents, checkpoints.stream().mapToLong(Checkpoint::maxEvents).max().orElse(0));
    boolean historyMet = maxEvents > 0 && maxEvents < 10_240;
    allMet &= historyMet;
    verdicts.add(
        f(
            "max events per execution %d (run's chain %d in %d executions; < 10240: %s)",
            maxEvents, chainMax, chain.size(), historyMet ? "met" : "NOT met"));

    // Heap after GC, 10 % against 90 %.
    Checkpoint at10 = find(checkpoints, 1);
    Checkpoint at90 = find(checkpoints, 9);
    if (at10 != null && at90 != null) {
      double h10 = at10.heap().usedMb();
      double h90 = at90.heap().usedMb();
      double allowed = Math.max(h10 * flatPct / 100.0, flatMb);
      boolean flat = h90 - h10 <= allowed;
      double min = Double.MAX_VALUE;
      double max = 0;
      for (Checkpoint c : checkpoints) {
        if (c.decile() >= 1 && c.decile() <= 9) {
          min = Math.min(min, c.heap().usedMb());
          max = Math.max(max, c.heap().usedMb());
        }
      }
      System.out.println(
          f(
              "heap after GC: 10 %% %.1f MB, 90 %% %.1f MB (%+.1f MB, %+.1f %%); range 10..90 %%:"
                  + " %.1f..%.1f MB; flat if 90 %% <= 10 %% + max(%d %%, %d MB) = %.1f MB: %s",
              h10,
              h90,
              h90 - h10,
              h10 > 0 ? (h90 - h10) * 100 / h10 : 0.0,
              min,
              max,
              flatPct,
              flatMb,
              h10 + allowed,
              flat ? "flat" : "NOT flat"));
      allMet &= flat;
      verdicts.add(
          f(
              "heap after GC 10 %% %.1f MB -> 90 %% %.1f MB (%s)",
              h10, h90, flat ? "flat: met" : "NOT flat"));
    } else {
      allMet = false;
      verdicts.add("heap: no 10 %/90 % readings");
    }

    // GET latency.
    List<Double> allMs = sampler.allMillis();
    double worstP99 = 0;
    int worstDecile = -1;
    for (int d = 0; d < W3GetSampler.DECILES; d++) {
      List<Double> ms = sampler.millis(d);
      if (!ms.isEmpty()) {
        double p99 = W3GetSampler.percentile(ms, 99);
        if (p99 > worstP99) {
          worstP99 = p99;
          worstDecile = d;
        }
      }
    }
    System.out.println(
        f(
            "GET /api/runs/%d: %d answered, %d errors; p50 %.1f ms, p99 %.1f ms, max %.0f ms;"
                + " worst decile p99 %.1f ms (%d..%d %%)",
            id,
            allMs.size(),
            sampler.allErrors(),
            W3GetSampler.percentile(allMs, 50),
            W3GetSampler.percentile(allMs, 99),
            W3GetSampler.percentile(allMs, 100),
            worstP99,
            worstDecile * 10,
            worstDecile * 10 + 10));
    boolean getMet = !allMs.isEmpty() && worstP99 < 100 && sampler.allErrors() == 0;
    allMet &= getMet;
    verdicts.add(
        f(
            "GET p99 %.1f ms overall, worst decile %.1f ms, %d errors (< 100 ms: %s)",
            W3GetSampler.percentile(allMs, 99),
            worstP99,
            sampler.allErrors(),
            getMet ? "met" : "NOT met"));
    return (allMet ? "met: " : "NOT met: ") + String.join("; ", verdicts);
  }

  private static Checkpoint find(List<Checkpoint> checkpoints, int decile) {
    return checkpoints.stream().filter(c -> c.decile() == decile).findFirst().orElse(null);
  }

  /**
   * Stops runs this database still has active (left by an interrupted bench): a new worker would
   * resume them (the reconciler revives active runs) and they would compete with the measured run.
   */
  static void stopLeftoverRuns(Services services, String workload) {
    while (true) {
      long id =
          services.queryLong(
              "select coalesce(min(id), 0) from runs where status in ('pending', 'running',"
                  + " 'paused')");
      if (id == 0) {
        return;
      }
      Services.Response response = services.post("/api/runs/" + id + "/stop", Map.of());
      System.out.println(
          f(
              "%s: run %d was left active by an earlier bench; stop answered %d",
              workload, id, response.status()));
      if (response.status() != 202) {
        throw new IllegalStateException(
            "cannot stop run " + id + " left active in the bench database: " + response.body());
      }
      BenchMain.awaitTerminal(services, id, Duration.ofMinutes(2), 500);
    }
  }
}
