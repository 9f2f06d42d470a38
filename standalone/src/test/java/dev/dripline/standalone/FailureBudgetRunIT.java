package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A run's failure budget (P6b) end to end through HTTP on real PostgreSQL and the Temporal dev
 * server: a run whose batches keep failing pauses itself, says why, and goes on after a fix when
 * retried (or resumed). Faults come from {@code example_faults}: every batch whose range holds a
 * faulty key fails on each attempt.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FailureBudgetRunIT implements TestPropertyProvider {
  private static final String TAG = "fb-" + UUID.randomUUID().toString().substring(0, 8);

  /** Generous bounds for what a busy machine may delay; none is a measured figure. */
  private static final Duration AT_MOST = Duration.ofMinutes(2);

  @Inject EmbeddedServer server;
  private Api api;

  @Override
  public Map<String, String> getProperties() {
    return Map.of(
        "dripline.temporal.task-queue",
        "dripline-" + TAG,
        "dripline.engine.batch-max-attempts",
        "1");
  }

  @BeforeAll
  void connect() {
    api = new Api(server.getURI());
  }

  @AfterEach
  void heal() {
    TestDb.execute("delete from example_faults where tag like ?", TAG + "%");
  }

  @Test
  void aRunWhoseBatchesFailBeyondItsBudgetPausesItselfAndARetryAfterTheFixFinishesIt() {
    // 100 batches of 2 keys; every batch from the 11th on fails: well beyond 10 %.
    String tag = TAG + "-retry";
    faultyFrom(tag, 21, 200);
    long id = create(run(tag, 10.0, 5));

    JsonNode paused = awaitStatus(id, "paused");
    JsonNode reason = budgetReason(paused);
    assertThat(reason.path("threshold").asDouble()).isEqualTo(10.0);
    assertThat(reason.path("value").asDouble()).isGreaterThan(10.0);
    assertThat(paused.path("failureBudget").path("spentAt").isNull()).isFalse();
    awaitNothingInFlight(id);
    int failed = run(id).path("batchCounts").path("failed").asInt();
    int completed = run(id).path("batchCounts").path("completed").asInt();
    assertThat(completed).isEqualTo(10);
    assertThat(failed).as("the budget stopped the run early").isLessThan(20);
    // Paused: nothing more starts.
    await()
        .during(Duration.ofSeconds(3))
        .atMost(AT_MOST)
        .until(
            () ->
                "paused".equals(status(id))
                    && run(id).path("batchCounts").path("failed").asInt() == failed);

    heal();
    Api.Response retry = api.post("/api/runs/" + id + "/retry", Map.of());
    assertThat(retry.status()).as("retry: %s", retry.body()).isEqualTo(202);
    assertThat(retry.body().path("requeued").asInt()).isEqualTo(failed);

    JsonNode done = awaitStatus(id, "completed");
    assertThat(done.path("batchCounts").path("completed").asInt()).isEqualTo(100);
    assertThat(done.path("failureBudget").path("spentAt").isNull()).isTrue();
    assertThat(done.path("throttle").isNull()).isTrue();
  }

  @Test
  void aResumeGoesOnAndTheBudgetCountsOnlyWhatFinishesAfterIt() {
    String tag = TAG + "-resume";
    faultyFrom(tag, 21, 30); // batches 11 to 15 fail
    long id = create(run(tag, 20.0, 5));

    awaitStatus(id, "paused");
    awaitNothingInFlight(id);
    heal();
    assertThat(api.post("/api/runs/" + id + "/resume", Map.of()).status()).isEqualTo(202);

    // The failures before the resume no longer count: the rest of the run completes.
    JsonNode ended = awaitStatus(id, "failed");
    int failed = ended.path("batchCounts").path("failed").asInt();
    assertThat(failed).isBetween(1, 5);
    assertThat(ended.path("batchCounts").path("completed").asInt()).isEqualTo(100 - failed);
  }

  @Test
  void aBudgetOutsideZeroToAHundredIsA400AndCreatesNothing() {
    long before = TestDb.queryLong("select count(*) from runs");
    for (Object bad : List.of(-1, 100.5, "ten")) {
      Map<String, Object> body = run(TAG + "-bad", 0, 5);
      body.put("maxFailedBatchesPercent", bad);
      Api.Response response = api.post("/api/runs", body);
      assertThat(response.status()).as("%s: %s", bad, response.body()).isEqualTo(400);
      assertThat(response.body().path("errors").get(0).path("field").asText())
          .isEqualTo("maxFailedBatchesPercent");
    }
    Map<String, Object> body = run(TAG + "-bad", 10, 5);
    body.put("failureBudgetMinBatches", 0);
    Api.Response response = api.post("/api/runs", body);
    assertThat(response.status()).isEqualTo(400);
    assertThat(response.body().path("errors").get(0).path("field").asText())
        .isEqualTo("failureBudgetMinBatches");
    assertThat(TestDb.queryLong("select count(*) from runs")).isEqualTo(before);
  }

  /** Keys {@code from..to} fail every batch that holds one. */
  private static void faultyFrom(String tag, int from, int to) {
    TestDb.execute(
        "insert into example_faults (tag, phase, key)"
            + " select ?, 'batch', k from generate_series(?, ?) k",
        tag,
        from,
        to);
  }

  private static Map<String, Object> run(String tag, double budget, int minBatches) {
    Map<String, Object> options = new LinkedHashMap<>();
    options.put("items", 200);
    options.put("sleepMs", 20);
    options.put("faultTag", tag);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", "example.sleep");
    body.put("options", options);
    body.put("batchSize", 2);
    body.put("maxParallelBatches", 1);
    body.put("maxFailedBatchesPercent", budget);
    body.put("failureBudgetMinBatches", minBatches);
    return body;
  }

  private long create(Map<String, Object> body) {
    Api.Response created = api.post("/api/runs", body);
    assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
    return created.id();
  }

  private JsonNode run(long id) {
    return api.get("/api/runs/" + id).body();
  }

  private String status(long id) {
    return run(id).path("status").asText();
  }

  private JsonNode awaitStatus(long id, String status) {
    await().atMost(AT_MOST).until(() -> status.equals(status(id)));
    return run(id);
  }

  private void awaitNothingInFlight(long id) {
    await().atMost(AT_MOST).until(() -> run(id).path("inFlight").asInt() == 0);
  }

  private static JsonNode budgetReason(JsonNode run) {
    for (JsonNode reason : run.path("throttle").path("reasons")) {
      if ("failure-budget".equals(reason.path("check").asText())) {
        return reason;
      }
    }
    throw new AssertionError("no failure-budget reason in " + run.path("throttle"));
  }
}
