package dev.dripline.standalone.faults;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Read load while runs execute: an open-loop load generator on 127.0.0.1 sends GETs to the read
 * endpoints at a fixed rate while {@code example.sleep} runs execute (FULL: 20 runs, 200 req/s for
 * 60 s; SHORT: 5 runs, 100 req/s for 15 s), against an app JVM and a worker JVM of their own.
 *
 * <p><b>Load:</b> request {@code i} is due at {@code start + i/rate} whatever happened to earlier
 * ones (open loop: a slow answer does not slow the schedule); a send more than 10 ms behind its due
 * time counts as late; at most {@value #MAX_IN_FLIGHT} requests are in flight (one keep-alive
 * connection each, {@link LoadClient}: the generator shares the two cores, so it must cost little),
 * and a due request finding them all busy is skipped and counted. Latency is measured from the send
 * to the full answer, per endpoint: {@code GET /api/runs} (plain and by status), {@code
 * /api/runs/{id}}, a run's batches (plain and by status, several pages), {@code /api/targets},
 * {@code /api/backfills}.
 *
 * <p>A warm-up at the same rate (half the measured time, at least 10 s) comes first and is not
 * counted, so the figures are not those of an unwarmed JIT (C2 still compiles the request path
 * after a few thousand requests per endpoint: docs/benchmarks.md).
 *
 * <p><b>Asserts:</b> no 5xx and no transport error or timeout (30 s), every answer 200; every run
 * is still running when the load ends (so the reads really competed with all of them). Prints p50,
 * p95, p99 and max per endpoint and overall, the achieved rate and the skipped and late sends. The
 * rate a machine can serve is a measurement, not a pass/fail criterion here: on a saturated machine
 * the in-flight bound is reached and due requests are skipped (docs/reliability.md).
 */
class ReadLoadIT {
  private static final int MAX_IN_FLIGHT = 64;
  private static final int CAP_PER_RUN = 2;
  private static final int SLEEP_MS = 1000;
  private static final long LATE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  private final String tag = "load-" + UUID.randomUUID().toString().substring(0, 8);
  private final String queue = "dripline-" + tag;
  private final List<ChildJvm> processes = new ArrayList<>();

  @AfterEach
  void stopProcesses() {
    for (ChildJvm process : processes) {
      process.close();
    }
  }

  /** One endpoint of the mix: a label for the report, a weight, and how to make its path. */
  private record Endpoint(String label, int weight, PathMaker path) {}

  private interface PathMaker {
    String make(Random random, long runId);
  }

  private static final List<Endpoint> MIX =
      List.of(
          new Endpoint("GET /api/runs", 15, (r, id) -> "/api/runs?size=20"),
          new Endpoint("GET /api/runs?status=running", 10, (r, id) -> "/api/runs?status=running"),
          new Endpoint("GET /api/runs/{id}", 30, (r, id) -> "/api/runs/" + id),
          new Endpoint(
              "GET /api/runs/{id}/batches", 15, (r, id) -> "/api/runs/" + id + "/batches?size=50"),
          new Endpoint(
              "GET /api/runs/{id}/batches?status=completed",
              10,
              (r, id) ->
                  "/api/runs/" + id + "/batches?status=completed&size=50&page=" + r.nextInt(5)),
          new Endpoint("GET /api/targets", 10, (r, id) -> "/api/targets"),
          new Endpoint("GET /api/backfills", 10, (r, id) -> "/api/backfills"));

  /** Latencies (microseconds) and statuses of one endpoint. */
  private static final class Tally {
    private final List<Long> micros = new ArrayList<>();
    private final Map<Integer, Integer> statuses = new ConcurrentHashMap<>();

    synchronized void add(long latencyMicros, int status) {
      micros.add(latencyMicros);
      statuses.merge(status, 1, Integer::sum);
    }

    synchronized long[] sorted() {
      long[] values = micros.stream().mapToLong(Long::longValue).toArray();
      Arrays.sort(values);
      return values;
    }
  }

  private static double percentileMillis(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int index = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))] / 1000.0;
  }

  private static String line(String label, long[] sorted, Map<Integer, Integer> statuses) {
    return String.format(
        "%-46s %7d %8.1f %8.1f %8.1f %8.1f  %s",
        label,
        sorted.length,
        percentileMillis(sorted, 0.50),
        percentileMillis(sorted, 0.95),
        percentileMillis(sorted, 0.99),
        sorted.length == 0 ? 0.0 : sorted[sorted.length - 1] / 1000.0,
        statuses);
  }

  /** The 1-, 5- and 15-minute load averages (Linux), for the report: the machine is shared. */
  private static String loadAverage() {
    try {
      String[] fields = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return fields[0] + " " + fields[1] + " " + fields[2];
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }

  /** The same mix at the same rate for a while, bounded the same way, answers not counted. */
  private static void warmUp(LoadClient client, List<Long> runIds, int rate, int seconds)
      throws InterruptedException {
    Random random = new Random(7);
    long start = System.nanoTime();
    for (int i = 0; i < rate * seconds; i++) {
      LockSupport.parkNanos(start + (long) (i * (1_000_000_000.0 / rate)) - System.nanoTime());
      Endpoint endpoint = MIX.get(random.nextInt(MIX.size()));
      client.trySend(
          endpoint.path().make(random, runIds.get(random.nextInt(runIds.size()))),
          (status, body, failure) -> {});
    }
    client.drain(Duration.ofSeconds(30));
  }

  @Test
  void readEndpointsStayFastAndErrorFreeWhileRunsExecute() throws Exception {
    boolean full = ReliabilityProfile.full();
    int runCount = full ? 20 : 5;
    int rate = full ? 200 : 100;
    int seconds = full ? 60 : 15;
    processes.add(
        AppProcess.startWorker(
            "load-worker",
            queue,
            Map.of(
                "DRIPLINE_WORKER_MAX_CONCURRENT_ACTIVITIES",
                Integer.toString(runCount * CAP_PER_RUN + 8),
                "DRIPLINE_DB_POOL_SIZE",
                Integer.toString(runCount * CAP_PER_RUN * 2 + 10))));
    ChildJvm app = AppProcess.start("load-app", queue, Map.of());
    processes.add(app);
    OperatorApi api = new OperatorApi(app.base());

    // Arrange: the runs, all executing.
    List<Long> runIds = new ArrayList<>();
    for (int i = 0; i < runCount; i++) {
      OperatorApi.Answer created =
          api.post(
              "/api/runs",
              Map.of(
                  "backfill",
                  "example.sleep",
                  "options",
                  Map.of("items", 100_000, "sleepMs", SLEEP_MS, "faultTag", tag + "-" + i),
                  "batchSize",
                  1,
                  "maxParallelBatches",
                  CAP_PER_RUN),
              Map.of());
      assertThat(created.status()).as("%s", created.body()).isEqualTo(201);
      runIds.add(created.id());
    }
    Long[] ids = runIds.toArray(Long[]::new);
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofSeconds(1))
        .until(
            () ->
                FaultDb.queryLong(
                        "select count(distinct run_id) from run_key_counts"
                            + " where run_id = any (?) and processed_keys > 0",
                        (Object) ids)
                    == runCount);

    // Act: the open-loop load.
    Map<String, Tally> tallies = new LinkedHashMap<>();
    MIX.forEach(endpoint -> tallies.put(endpoint.label(), new Tally()));
    int[] weights = MIX.stream().mapToInt(Endpoint::weight).toArray();
    int totalWeight = Arrays.stream(weights).sum();
    LoadClient client =
        new LoadClient(
            app.base(), OperatorApi.OPERATOR_TOKEN, MAX_IN_FLIGHT, Duration.ofSeconds(30));
    AtomicInteger errors = new AtomicInteger();
    AtomicInteger serverErrors = new AtomicInteger();
    AtomicInteger otherStatuses = new AtomicInteger();
    int mostInFlight = 0;
    List<String> errorSamples = new ArrayList<>();
    AtomicLong lastAnswer = new AtomicLong();
    Random random = new Random(42);
    int warmUpSeconds = Math.max(10, seconds / 2);
    warmUp(client, runIds, rate, warmUpSeconds);
    long processedBefore =
        FaultDb.queryLong(
            "select sum(processed_keys) from run_key_counts where run_id = any (?)", (Object) ids);
    int due = rate * seconds;
    int sent = 0;
    int skipped = 0;
    int late = 0;
    long maxLateNanos = 0;
    long start = System.nanoTime();
    for (int i = 0; i < due; i++) {
      long dueAt = start + (long) (i * (1_000_000_000.0 / rate));
      long wait;
      while ((wait = dueAt - System.nanoTime()) > 0) {
        LockSupport.parkNanos(wait);
      }
      long lateness = System.nanoTime() - dueAt;
      maxLateNanos = Math.max(maxLateNanos, lateness);
      if (lateness > LATE_NANOS) {
        late++;
      }
      int pick = random.nextInt(totalWeight);
      int e = 0;
      while (pick >= weights[e]) {
        pick -= weights[e++];
      }
      Endpoint endpoint = MIX.get(e);
      String path = endpoint.path().make(random, runIds.get(random.nextInt(runIds.size())));
      long sentAt = System.nanoTime();
      boolean sending =
          client.trySend(
              path,
              (status, body, failure) -> {
                long now = System.nanoTime();
                lastAnswer.accumulateAndGet(now, Math::max);
                if (failure != null) {
                  errors.incrementAndGet();
                  synchronized (errorSamples) {
                    if (errorSamples.size() < 10) {
                      errorSamples.add(path + ": " + failure);
                    }
                  }
                  return;
                }
                tallies.get(endpoint.label()).add((now - sentAt) / 1000, status);
                if (status >= 500) {
                  serverErrors.incrementAndGet();
                } else if (status != 200) {
                  otherStatuses.incrementAndGet();
                }
                if (status != 200) {
                  synchronized (errorSamples) {
                    if (errorSamples.size() < 10) {
                      errorSamples.add(path + ": " + status + " " + new String(body, UTF_8));
                    }
                  }
                }
              });
      if (!sending) {
        skipped++;
        continue;
      }
      mostInFlight = Math.max(mostInFlight, client.inFlight());
      sent++;
    }
    long scheduleEnd = System.nanoTime();
    boolean drained = client.drain(Duration.ofSeconds(30));
    client.close();
    double scheduleSeconds = (scheduleEnd - start) / 1e9;
    double achieved = sent / scheduleSeconds;
    long processedAfter =
        FaultDb.queryLong(
            "select sum(processed_keys) from run_key_counts where run_id = any (?)", (Object) ids);
    long stillRunning =
        FaultDb.queryLong(
            "select count(*) from runs where id = any (?) and status = 'running'", (Object) ids);

    // Report.
    StringBuilder report = new StringBuilder();
    report.append(
        String.format(
            "%n=== ReadLoadIT (%s): %d runs of example.sleep (cap %d, %d ms batches),"
                + " target %d req/s for %d s, at most %d in flight ===%n",
            ReliabilityProfile.name(),
            runCount,
            CAP_PER_RUN,
            SLEEP_MS,
            rate,
            seconds,
            MAX_IN_FLIGHT));
    report.append(
        String.format(
            "%-46s %7s %8s %8s %8s %8s  %s%n",
            "endpoint", "count", "p50 ms", "p95 ms", "p99 ms", "max ms", "statuses"));
    List<Long> all = new ArrayList<>();
    Map<Integer, Integer> allStatuses = new ConcurrentHashMap<>();
    for (Map.Entry<String, Tally> entry : tallies.entrySet()) {
      long[] sorted = entry.getValue().sorted();
      Arrays.stream(sorted).forEach(all::add);
      entry.getValue().statuses.forEach((s, n) -> allStatuses.merge(s, n, Integer::sum));
      report.append(line(entry.getKey(), sorted, entry.getValue().statuses)).append('\n');
    }
    long[] overall = all.stream().mapToLong(Long::longValue).sorted().toArray();
    report.append(line("overall", overall, allStatuses)).append('\n');
    report.append(
        String.format(
            "warm-up %d s (not counted); due %d, sent %d, skipped (in-flight bound) %d, late sends"
                + " (>10 ms) %d, max lateness %.1f ms, most in flight %d; achieved %.1f req/s"
                + " over %.1f s (target %d); transport errors %d, 5xx %d, other non-200 %d%n",
            warmUpSeconds,
            due,
            sent,
            skipped,
            late,
            maxLateNanos / 1e6,
            mostInFlight,
            achieved,
            scheduleSeconds,
            rate,
            errors.get(),
            serverErrors.get(),
            otherStatuses.get()));
    report.append(
        String.format(
            "runs: %d of %d still running at the end; %d batches completed during the load"
                + " (%.1f/s); machine load average at the end %s (%d cores)%n",
            stillRunning,
            runCount,
            processedAfter - processedBefore,
            (processedAfter - processedBefore) / scheduleSeconds,
            loadAverage(),
            Runtime.getRuntime().availableProcessors()));
    System.out.println(report);
    if (!errorSamples.isEmpty()) {
      System.out.println("first failures: " + errorSamples);
    }

    // Clean up the runs before asserting, so a failure leaves nothing running.
    for (long id : runIds) {
      api.post("/api/runs/" + id + "/stop");
    }

    assertThat(drained).as("every request answered within 30 s of the schedule's end").isTrue();
    assertThat(errors.get()).as("transport errors: %s", errorSamples).isZero();
    assertThat(serverErrors.get()).as("5xx: %s", errorSamples).isZero();
    assertThat(otherStatuses.get()).as("non-200: %s", errorSamples).isZero();
    assertThat(stillRunning).as("runs running throughout").isEqualTo(runCount);
    await()
        .atMost(Duration.ofMinutes(1))
        .until(
            () ->
                FaultDb.queryLong(
                        "select count(*) from runs where id = any (?) and status = 'stopped'",
                        (Object) ids)
                    == runCount);
  }
}
