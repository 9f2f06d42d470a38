package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Health checks and the brake hold real runs (P1–P3), end to end through HTTP on real PostgreSQL
 * and the Temporal dev server, with the app, a worker and its check evaluator in this JVM. The
 * {@code sql} check reads a one-row table the test controls; the value 777 makes its query fail
 * (division by zero), an unknown reading.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ThrottleRunIT implements TestPropertyProvider {
  private static final String TAG = "thr-" + UUID.randomUUID().toString().substring(0, 8);
  private static final String CHECK = "throttle-run-it-" + TAG;
  private static final String GAUGE = "throttle_it_gauge_" + TAG.replace('-', '_');
  private static final Duration INTERVAL = Duration.ofSeconds(1);

  /** Generous bounds for what a busy machine may delay; none is a measured figure. */
  private static final Duration AT_MOST = Duration.ofMinutes(2);

  @Inject EmbeddedServer server;
  private Api api;

  @Override
  public Map<String, String> getProperties() {
    // The table exists before the context (and its evaluator) starts.
    TestDb.execute("create table if not exists " + GAUGE + " (v double precision not null)");
    TestDb.execute("delete from " + GAUGE);
    TestDb.execute("insert into " + GAUGE + " values (0)");
    String check = "dripline.throttle.checks." + CHECK + ".";
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("dripline.temporal.task-queue", "dripline-" + TAG);
    properties.put(check + "kind", "sql");
    properties.put(
        check + "query", "select case when v = 777 then 1 / (v - v) else v end from " + GAUGE);
    properties.put(check + "threshold", "10");
    properties.put(check + "resume-below", "5");
    properties.put(check + "interval", INTERVAL.toMillis() + "ms");
    properties.put(check + "applies-to", "example.sleep");
    return properties;
  }

  @BeforeAll
  void connect() {
    api = new Api(server.getURI());
  }

  @AfterEach
  void clear() {
    api.post("/api/throttle/release", Map.of());
    gauge(0);
  }

  @AfterAll
  void forget() {
    // Clear first, so that a row the evaluator writes after the delete does not hold other runs.
    gauge(0);
    await().atMost(AT_MOST).until(() -> !holding());
    TestDb.execute("delete from throttle_checks where name = ?", CHECK);
    TestDb.execute("drop table if exists " + GAUGE);
  }

  @Test
  void aSqlCheckHoldsOverItsThresholdInItsBandAndOnErrorAndResumesBelowResumeBelow() {
    long id = create(sleepRun(400, 20, "sql"));
    awaitCompleted(id, 3);

    gauge(20);
    JsonNode held = awaitThrottled(id, true);
    JsonNode reason = held.path("reasons").get(0);
    assertThat(reason.path("check").asText()).isEqualTo(CHECK);
    assertThat(reason.path("value").asDouble()).isEqualTo(20.0);
    assertThat(reason.path("threshold").asDouble()).isEqualTo(10.0);
    Instant since = Instant.parse(held.path("since").asText());
    awaitNothingInFlight(id);
    long started = startedBatches(id);
    assertNoBatchEnqueuedAfter(id, since.plus(INTERVAL));

    gauge(7); // between resumeBelow and the threshold: still holds
    awaitEvaluations(3);
    assertThat(throttle(id).path("throttled").asBoolean()).isTrue();
    assertThat(startedBatches(id)).isEqualTo(started);

    gauge(777); // the query fails: unknown, which holds
    await().atMost(AT_MOST).until(() -> "unknown".equals(checkState()));
    awaitEvaluations(2);
    assertThat(throttle(id).path("throttled").asBoolean()).isTrue();
    assertThat(startedBatches(id)).isEqualTo(started);
    assertThat(
            TestDb.queryLong(
                "select count(*) from throttle_checks where name = ?" + " and error is not null",
                CHECK))
        .isEqualTo(1);

    gauge(2); // below resumeBelow: batches start again
    awaitThrottled(id, false);
    await().atMost(AT_MOST).until(() -> startedBatches(id) > started);
    JsonNode run = awaitStatus(id, "completed");
    assertThat(run.path("batchCounts").path("completed").asInt()).isEqualTo(200);
    assertThat(run.path("throttle").isNull()).isTrue();
    assertThat(TestDb.queryLong("select throttled_millis from runs where id = ?", id))
        .as("the time held is booked")
        .isPositive();
    assertThat(
            TestDb.queryLong("select count(*) from runs where id = ? and held_since is null", id))
        .isEqualTo(1);
  }

  @Test
  void theBrakeHoldsEveryRunUntilReleased() {
    long first = create(sleepRun(200, 20, "brake-a"));
    long second = create(sleepRun(200, 20, "brake-b"));
    awaitCompleted(first, 2);
    awaitCompleted(second, 2);

    Api.Response hold = api.post("/api/throttle/hold", Map.of("reason", "drill " + TAG));
    assertThat(hold.status()).as("hold: %s", hold.body()).isEqualTo(200);
    for (long id : new long[] {first, second}) {
      JsonNode held = awaitThrottled(id, true);
      assertThat(held.path("reasons").get(0).path("check").asText()).isEqualTo("brake");
      awaitNothingInFlight(id);
    }
    long startedFirst = startedBatches(first);
    long startedSecond = startedBatches(second);
    // Held for several of the brake's looks (1 s each): nothing starts, the runs stay running.
    await()
        .during(Duration.ofSeconds(3))
        .atMost(AT_MOST)
        .until(
            () ->
                startedBatches(first) == startedFirst
                    && startedBatches(second) == startedSecond
                    && "running".equals(status(first))
                    && "running".equals(status(second)));

    assertThat(api.post("/api/throttle/release", Map.of()).status()).isEqualTo(200);
    for (long id : new long[] {first, second}) {
      assertThat(awaitStatus(id, "completed").path("batchCounts").path("completed").asInt())
          .isEqualTo(100);
      assertThat(TestDb.queryLong("select throttled_millis from runs where id = ?", id))
          .isPositive();
    }
  }

  private Map<String, Object> sleepRun(int items, int sleepMs, String tag) {
    Map<String, Object> options = new LinkedHashMap<>();
    options.put("items", items);
    options.put("sleepMs", sleepMs);
    options.put("faultTag", TAG + "-" + tag);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", "example.sleep");
    body.put("options", options);
    body.put("batchSize", 2);
    body.put("maxParallelBatches", 2);
    return body;
  }

  private long create(Map<String, Object> body) {
    Api.Response created = api.post("/api/runs", body);
    assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
    return created.id();
  }

  private void gauge(double value) {
    TestDb.execute("update " + GAUGE + " set v = ?", value);
  }

  private JsonNode run(long id) {
    return api.get("/api/runs/" + id).body();
  }

  private String status(long id) {
    return run(id).path("status").asText();
  }

  private JsonNode throttle(long id) {
    return run(id).path("throttle");
  }

  private JsonNode awaitStatus(long id, String status) {
    await().atMost(AT_MOST).until(() -> status.equals(status(id)));
    return run(id);
  }

  private void awaitCompleted(long id, int batches) {
    await()
        .atMost(AT_MOST)
        .until(() -> run(id).path("batchCounts").path("completed").asInt() >= batches);
  }

  private JsonNode awaitThrottled(long id, boolean throttled) {
    await().atMost(AT_MOST).until(() -> throttle(id).path("throttled").asBoolean() == throttled);
    return throttle(id);
  }

  private void awaitNothingInFlight(long id) {
    await().atMost(AT_MOST).until(() -> run(id).path("inFlight").asInt() == 0);
  }

  /** Waits until the evaluator has read the check {@code times} more times. */
  private void awaitEvaluations(int times) {
    Instant from = evaluatedAt();
    await()
        .atMost(AT_MOST)
        .until(() -> evaluatedAt().isAfter(from.plus(INTERVAL.multipliedBy(times - 1))));
  }

  private Instant evaluatedAt() {
    long micros =
        TestDb.queryLong(
            "select cast(extract(epoch from evaluated_at) * 1000000 as bigint)"
                + " from throttle_checks where name = ?",
            CHECK);
    return Instant.EPOCH.plus(Duration.ofNanos(micros * 1000));
  }

  private String checkState() {
    return TestDb.queryLong(
                "select count(*) from throttle_checks where name = ? and state = 'unknown'", CHECK)
            == 1
        ? "unknown"
        : "other";
  }

  private boolean holding() {
    return TestDb.queryLong(
            "select count(*) from throttle_checks where name = ? and holding", CHECK)
        > 0;
  }

  /** Batches of the run that have ever held a slot. */
  private long startedBatches(long id) {
    return TestDb.queryLong(
        "select count(*) from batches where run_id = ? and enqueued_at is not null", id);
  }

  private void assertNoBatchEnqueuedAfter(long id, Instant instant) {
    assertThat(
            TestDb.queryLong(
                "select count(*) from batches where run_id = ? and enqueued_at > ?",
                id,
                java.sql.Timestamp.from(instant)))
        .as("batches enqueued after the hold began, plus one interval")
        .isZero();
  }
}
