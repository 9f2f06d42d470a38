package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dripline.workflows.targets.TargetView;
import dev.dripline.workflows.targets.TargetWorkflow;
import dev.dripline.workflows.targets.TargetWorkflowIds;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import io.temporal.client.WorkflowClient;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Three targets of {@code example.copy-events} on real PostgreSQL and the real Temporal dev server,
 * one of them with a planning fault: the healthy ones prime and apply their live batches in order;
 * the faulty one keeps failing with growing delays and is counted only in the failing, unalerted
 * gauges; healed, it recovers by itself and every gauge returns to zero — with the same figures on
 * the {@code /prometheus} of two processes.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TargetsIT implements TestPropertyProvider {
  private static final String TAG = "tgt-" + UUID.randomUUID().toString().substring(0, 8);
  private static final String QUEUE = "dripline-" + TAG;
  private int secondPort;
  private static final int EVENTS = 40;

  @Inject EmbeddedServer server;
  @Inject WorkflowClient temporal;
  private Api api;
  private Process secondProcess;
  private Api second;

  @Override
  public Map<String, String> getProperties() {
    return Map.of(
        "dripline.temporal.task-queue", QUEUE,
        "dripline.targets.planner-backoff-base", "1s",
        "dripline.targets.planner-backoff-cap", "6s",
        "dripline.targets.poll-interval", "300ms",
        "dripline.targets.capacity-retry", "500ms",
        "dripline.targets.metrics-interval", "1s");
  }

  @BeforeAll
  void setUp() throws Exception {
    api = new Api(server.getURI());
    // Gauges are global: this class owns the target tables while it runs (modules run one at a
    // time and no other test class of this module uses targets).
    TestDb.execute("delete from targets");
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    secondPort = port;
    secondProcess = startSecondProcess(port);
    // No token: a worker process's own /health and /prometheus stay open.
    second = new Api(URI.create("http://127.0.0.1:" + port), null);
    await()
        .atMost(Duration.ofSeconds(90))
        .ignoreExceptions()
        .until(() -> second.get("/health").status() == 200);
  }

  @Test
  void aWorkerProcessServesNoApiEvenWithTheOperatorToken() {
    Api operator = new Api(URI.create("http://127.0.0.1:" + secondPort));

    assertThat(operator.get("/api/backfills").status()).isEqualTo(404);
    assertThat(operator.get("/api/runs").status()).isEqualTo(404);
  }

  @AfterAll
  void tearDown() {
    if (secondProcess != null) {
      secondProcess.destroy();
    }
    TestDb.execute("delete from targets where name like ?", TAG + "%");
    TestDb.execute("delete from example_faults where tag like ?", TAG + "%");
  }

  /** A worker process on the same task queue, serving its own /prometheus. */
  private Process startSecondProcess(int port) throws IOException {
    return WorkerProcess.start(
        "second-process",
        QUEUE,
        Map.of(
            "DRIPLINE_WORKER_HTTP_PORT", String.valueOf(port),
            "DRIPLINE_PLANNER_BACKOFF_BASE", "1s",
            "DRIPLINE_PLANNER_BACKOFF_CAP", "6s",
            "DRIPLINE_TARGET_POLL_INTERVAL", "300ms",
            "DRIPLINE_TARGET_CAPACITY_RETRY", "500ms",
            "DRIPLINE_METRICS_INTERVAL", "1s"));
  }

  private JsonNode target(String name) {
    return api.get("/api/targets/" + name).body();
  }

  private void register(String name) {
    Api.Response created =
        api.post(
            "/api/targets",
            Map.of(
                "name",
                name,
                "backfill",
                "example.copy-events",
                "options",
                Map.of("tenant", name),
                "group",
                TAG));
    assertThat(created.status()).as("register %s: %s", name, created.body()).isEqualTo(201);
  }

  private void postLive(String name, int eventId) {
    Map<String, Object> payload =
        Map.of("events", List.of(Map.of("id", eventId, "body", "live " + eventId)));
    Api.Response queued =
        api.post("/api/targets/" + name + "/live-batches", Map.of("payload", payload));
    assertThat(queued.status()).as("live batch: %s", queued.body()).isEqualTo(202);
  }

  /** The dripline_* series of one process's /prometheus, by name and labels. */
  private static Map<String, Double> driplineMetrics(Api process) {
    String text = process.getText("/prometheus");
    Map<String, Double> values = new TreeMap<>();
    for (String line : text.split("\n")) {
      if (line.startsWith("dripline_")) {
        int space = line.lastIndexOf(' ');
        String series = line.substring(0, space).replace(",}", "}");
        values.put(series, Double.parseDouble(line.substring(space + 1)));
      }
    }
    return values;
  }

  /** Records the delay before the target's next attempt, once per streak length it shows. */
  private void sampleDelay(String name, Map<Integer, Long> delaysByStreak) {
    try {
      JsonNode t = target(name);
      int streak = t.path("consecutiveFailures").asInt();
      if (streak >= 1 && !t.path("nextAttemptAt").isNull()) {
        delaysByStreak.putIfAbsent(
            streak,
            Duration.between(
                    java.time.Instant.parse(t.path("lastAttemptAt").asText()),
                    java.time.Instant.parse(t.path("nextAttemptAt").asText()))
                .toMillis());
      }
    } catch (RuntimeException e) {
      // A failed sample is taken again 100 ms later.
    }
  }

  private static double metric(Map<String, Double> metrics, String name) {
    return metrics.getOrDefault(name, Double.NaN);
  }

  @Test
  void healthyTargetsPrimeFaultyOneBacksOffAndHealsAndGaugesAgreeAcrossProcesses() {
    String a = TAG + "-a";
    String b = TAG + "-b";
    String c = TAG + "-c";
    for (String tenant : List.of(a, b, c)) {
      TestDb.execute(
          "insert into example_events(tenant, event_id, body)"
              + " select ?, g, 'event ' || g from generate_series(1, ?) g",
          tenant,
          EVENTS);
    }
    TestDb.execute("insert into example_faults(tag, phase) values (?, 'plan')", c);
    // The faulty one's delays are sampled from its registration on: on a loaded machine the
    // healthy ones may take longer to prime than it takes to fail three times.
    Map<Integer, Long> delaysByStreak = new ConcurrentSkipListMap<>();
    ScheduledExecutorService sampler =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread thread = new Thread(task, "delay-sampler");
              thread.setDaemon(true);
              return thread;
            });
    var unused =
        sampler.scheduleWithFixedDelay(
            () -> sampleDelay(c, delaysByStreak), 0, 100, TimeUnit.MILLISECONDS);

    for (String name : List.of(a, b, c)) {
      register(name);
    }
    for (String name : List.of(a, b, c)) {
      for (int id = 1001; id <= 1003; id++) {
        postLive(name, id);
      }
    }

    // The healthy two prime and apply their live batches in arrival order.
    await()
        .atMost(Duration.ofMinutes(2))
        .until(
            () ->
                "primed".equals(target(a).path("state").asText())
                    && "primed".equals(target(b).path("state").asText()));
    for (String name : List.of(a, b)) {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  TestDb.queryLong(
                          "select count(*) from example_sink_events where tenant = ?", name)
                      == EVENTS + 3);
      assertThat(
              TestDb.queryLong(
                  "select count(*) from (select event_id, applied_seq, lag(event_id) over"
                      + " (order by applied_seq) prev from example_sink_events where tenant = ?"
                      + " and event_id > 1000) s where prev is not null and prev > event_id",
                  name))
          .as("live events of %s applied out of order", name)
          .isZero();
      assertThat(target(name).path("blockedLiveBatches").asInt()).isZero();
      assertThat(target(name).path("failing").asBoolean()).isFalse();
    }

    // The faulty one keeps failing, with growing delays, and never holds a slot while it waits.
    await()
        .atMost(Duration.ofMinutes(2))
        .until(() -> target(c).path("consecutiveFailures").asInt() >= 3);
    await().atMost(Duration.ofSeconds(5)).until(() -> delaysByStreak.size() >= 2);
    sampler.shutdownNow();
    List<Long> delays = new ArrayList<>(delaysByStreak.values());
    JsonNode faulty = target(c);
    assertThat(faulty.path("failing").asBoolean()).isTrue();
    assertThat(faulty.path("state").asText()).isIn("pending_backfill", "backfilling");
    assertThat(faulty.path("lastError").asText()).isNotBlank();
    assertThat(faulty.path("blockedLiveBatches").asInt()).isEqualTo(3);
    assertThat(delays).hasSizeGreaterThanOrEqualTo(2);
    assertThat(delays.get(delays.size() - 1)).isGreaterThan(delays.get(0));
    // The target's workflow tells the same story through its query.
    TargetWorkflow workflow =
        temporal.newWorkflowStub(TargetWorkflow.class, TargetWorkflowIds.forTarget(c));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              TargetView view = workflow.status();
              return view.failing()
                  && view.consecutiveFailures() == target(c).path("consecutiveFailures").asInt()
                  && view.blockedLiveBatches() == 3;
            });

    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              Map<String, Double> m = driplineMetrics(api);
              return metric(m, "dripline_stuck_targets") == 1
                  && metric(m, "dripline_failing_blocked_backlog") == 3
                  && metric(m, "dripline_blocked_backlog") == 0;
            });
    Map<String, Double> failingView = driplineMetrics(api);
    assertThat(metric(failingView, "dripline_stuck_oldest_age_seconds")).isPositive();
    assertThat(metric(failingView, "dripline_blocked_oldest_age_seconds")).isZero();
    assertThat(metric(failingView, "dripline_planning_failures_total")).isGreaterThanOrEqualTo(3);
    assertThat(metric(failingView, "dripline_targets{state=\"primed\"}")).isEqualTo(2);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> sameGauges(driplineMetrics(api), driplineMetrics(second)));

    // Healed, it recovers by itself and every gauge returns to zero.
    TestDb.execute("delete from example_faults where tag = ?", c);
    await()
        .atMost(Duration.ofMinutes(2))
        .until(() -> "primed".equals(target(c).path("state").asText()));
    JsonNode healed = target(c);
    assertThat(healed.path("consecutiveFailures").asInt()).isZero();
    assertThat(healed.path("firstFailedAt").isNull()).isTrue();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                TestDb.queryLong("select count(*) from example_sink_events where tenant = ?", c)
                    == EVENTS + 3);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              Map<String, Double> m = driplineMetrics(api);
              return metric(m, "dripline_stuck_targets") == 0
                  && metric(m, "dripline_failing_blocked_backlog") == 0
                  && metric(m, "dripline_blocked_backlog") == 0
                  && metric(m, "dripline_blocked_oldest_age_seconds") == 0
                  && metric(m, "dripline_stuck_oldest_age_seconds") == 0;
            });
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> sameGauges(driplineMetrics(api), driplineMetrics(second)));
  }

  /** One look at a target whose run keeps failing: its record and the stuck gauge. */
  private record Sample(int streak, boolean failing, String state, double stuck) {}

  @Test
  void aTargetWhoseRunKeepsFailingStaysStuckAndRetriesThatRunUntilABatchSucceeds() {
    String d = TAG + "-d";
    TestDb.execute(
        "insert into example_events(tenant, event_id, body)"
            + " select ?, g, 'event ' || g from generate_series(1, ?) g",
        d,
        EVENTS);
    // One batch of its run fails until the fault is deleted; planning works.
    TestDb.execute("insert into example_faults(tag, phase, key) values (?, 'batch', 7)", d);
    try {
      register(d);
      await()
          .atMost(Duration.ofMinutes(2))
          .until(() -> target(d).path("consecutiveFailures").asInt() >= 3);
      long run = TestDb.queryLong("select min(id) from runs where target_name = ?", d);
      // The gauges are snapshots taken every second: wait for the first that counts it.
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> metric(driplineMetrics(api), "dripline_stuck_targets") >= 1);

      // From its first run failure on, through two more failed retries of that run.
      List<Sample> samples = new ArrayList<>();
      await()
          .atMost(Duration.ofMinutes(3))
          .pollInterval(Duration.ofMillis(100))
          .until(
              () -> {
                JsonNode t = target(d);
                samples.add(
                    new Sample(
                        t.path("consecutiveFailures").asInt(),
                        t.path("failing").asBoolean(),
                        t.path("state").asText(),
                        metric(driplineMetrics(api), "dripline_stuck_targets")));
                return t.path("consecutiveFailures").asInt() >= 5;
              });

      assertThat(samples)
          .allSatisfy(
              sample -> {
                assertThat(sample.failing()).as("failing: %s", sample).isTrue();
                assertThat(sample.streak()).as("streak: %s", sample).isGreaterThanOrEqualTo(3);
                assertThat(sample.stuck()).as("stuck gauge: %s", sample).isGreaterThanOrEqualTo(1);
              });
      assertThat(samples).extracting(Sample::state).contains("backfilling", "pending_backfill");
      // Each retry re-ran the failed batch of that one run (R8): no new full backfill.
      assertThat(TestDb.queryLong("select count(*) from runs where target_name = ?", d))
          .isEqualTo(1);

      // Healed, the next retry completes the batch: the streak resets and the target primes.
      TestDb.execute("delete from example_faults where tag = ?", d);
      await()
          .atMost(Duration.ofMinutes(2))
          .until(() -> "primed".equals(target(d).path("state").asText()));
      JsonNode primed = target(d);
      assertThat(primed.path("consecutiveFailures").asInt()).isZero();
      assertThat(primed.path("failing").asBoolean()).isFalse();
      assertThat(primed.path("currentRunId").asLong()).isEqualTo(run);
      assertThat(TestDb.queryLong("select count(*) from runs where target_name = ?", d))
          .isEqualTo(1);
      assertThat(TestDb.queryLong("select count(*) from example_sink_events where tenant = ?", d))
          .isEqualTo(EVENTS);
    } finally {
      // The gauges are global: leave nothing for the other tests of this class to count.
      api.delete("/api/targets/" + d);
      TestDb.execute("delete from example_faults where tag = ?", d);
    }
  }

  /** The PostgreSQL-derived gauges of two processes are equal (ages and counters included). */
  private static boolean sameGauges(Map<String, Double> one, Map<String, Double> other) {
    Map<String, Double> left = derived(one);
    Map<String, Double> right = derived(other);
    return !left.isEmpty() && left.equals(right);
  }

  private static Map<String, Double> derived(Map<String, Double> all) {
    Map<String, Double> derived = new TreeMap<>();
    all.forEach(
        (name, value) -> {
          if (name.startsWith("dripline_targets")
              || name.startsWith("dripline_runs")
              || name.startsWith("dripline_blocked")
              || name.startsWith("dripline_failing")
              || name.startsWith("dripline_stuck")
              || name.startsWith("dripline_planning")) {
            derived.put(name, value);
          }
        });
    return derived;
  }
}
