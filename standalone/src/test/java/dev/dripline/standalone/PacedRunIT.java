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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A paced run ({@code niceRatio}) end to end through HTTP, on real PostgreSQL and the Temporal dev
 * server with the app and a worker in this JVM: runs of {@code example.sleep}, whose batches sleep
 * a known time. Asserted on the times PostgreSQL recorded and the cap witness, never on how fast
 * anything ran: between one batch's finish and its lane's next start there is the rest.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PacedRunIT implements TestPropertyProvider {
  private static final String TAG = "pace-" + UUID.randomUUID().toString().substring(0, 8);

  /** Generous bounds for what a busy machine may delay; none is a measured figure. */
  private static final Duration AT_MOST = Duration.ofMinutes(3);

  /**
   * How long a rest cut short by a stop or pause may take to end: it looks every second; the bound
   * is generous, and far below the rests it cuts short.
   */
  private static final Duration REST_ENDS_WITHIN = Duration.ofSeconds(30);

  /**
   * What a batch's duration as PostgreSQL records it may exceed the duration its lane measured by
   * (the round trip that answered its start), in milliseconds.
   */
  private static final long SLACK_MILLIS = 100;

  @Inject EmbeddedServer server;
  private Api api;

  @Override
  public Map<String, String> getProperties() {
    return Map.of("dripline.temporal.task-queue", "dripline-" + TAG);
  }

  @BeforeAll
  void connect() {
    api = new Api(server.getURI());
  }

  @Test
  void aPacedLaneRestsRatioTimesEachBatchsDurationBeforeItsNextStart() {
    Map<String, Object> body = sleepRun(12, 300, "one-lane", 1);
    Api.Response created = api.post("/api/runs", body);
    assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
    assertThat(created.body().path("niceRatio").asDouble()).isEqualTo(1.0);
    long id = created.id();

    JsonNode done = awaitStatus(id, "completed", AT_MOST);

    assertThat(done.path("niceRatio").asDouble()).isEqualTo(1.0);
    assertThat(done.path("batchCounts").path("completed").asInt()).isEqualTo(12);
    assertThat(done.path("progress").path("processedKeys").asLong()).isEqualTo(12);
    assertThat(TestDb.queryLong("select max_seen from example_concurrency where run_id = ?", id))
        .isEqualTo(1);
    // One lane: each batch's successor started after the rest its duration called for.
    List<Long> overRest =
        TestDb.queryLongs(
            "select cast(extract(epoch from (next - finished_at) - (finished_at - started_at))"
                + " * 1000 as bigint) from (select started_at, finished_at,"
                + " lead(started_at) over (order by started_at) as next"
                + " from batches where run_id = ?) b where next is not null order by started_at",
            id);
    assertThat(overRest).hasSize(11).allSatisfy(ms -> assertThat(ms).isGreaterThan(-SLACK_MILLIS));
  }

  @Test
  void pacedLanesKeepTheirSlotsAndTheCapHolds() {
    int cap = 2;
    double ratio = 1;
    Map<String, Object> body = sleepRun(24, 300, "two-lanes", ratio);
    body.put("maxParallelBatches", cap);
    long id = create(body);

    awaitStatus(id, "completed", AT_MOST);

    assertThat(TestDb.queryLong("select max_seen from example_concurrency where run_id = ?", id))
        .isBetween(1L, (long) cap);
    // Each lane works, then rests ratio times as long, but after its last batch: over the run's
    // span, the lanes' work and rests fit in cap lanes.
    long work =
        TestDb.queryLong(
            "select cast(sum(extract(epoch from finished_at - started_at)) * 1000 as bigint)"
                + " from batches where run_id = ?",
            id);
    long longest =
        TestDb.queryLong(
            "select cast(max(extract(epoch from finished_at - started_at)) * 1000 as bigint)"
                + " from batches where run_id = ?",
            id);
    long span =
        TestDb.queryLong(
            "select cast(extract(epoch from max(finished_at) - min(started_at)) * 1000 as bigint)"
                + " from batches where run_id = ?",
            id);
    assertThat((long) (work * (1 + ratio)))
        .as("work %d ms, longest batch %d ms, span %d ms", work, longest, span)
        .isLessThanOrEqualTo(cap * span + (long) (cap * ratio * longest) + 24 * SLACK_MILLIS);
  }

  @Test
  void aStopDuringARestStartsNoFurtherBatchAndStopsTheRunWithExactCounts() {
    // Each rest is 100 times a batch of over 500 ms: far longer than a stop may take.
    long id = create(sleepRun(10, 500, "stop", 100));
    awaitCompleted(id, 1);

    assertThat(api.post("/api/runs/" + id + "/stop", Map.of()).status()).isEqualTo(202);

    JsonNode stopped = awaitStatus(id, "stopped", REST_ENDS_WITHIN);
    int completed = stopped.path("batchCounts").path("completed").asInt();
    assertThat(completed).isEqualTo(1);
    assertThat(stopped.path("batchCounts").path("stopped").asInt()).isEqualTo(10 - completed);
    assertThat(stopped.path("inFlight").asLong()).isZero();
    assertThat(stopped.path("progress").path("processedKeys").asLong()).isEqualTo(completed);
    assertThat(
            TestDb.queryLong(
                "select count(*) from batches b join runs r on r.id = b.run_id"
                    + " where r.id = ? and b.started_at >= r.stop_requested_at",
                id))
        .as("batches started after the stop")
        .isZero();
  }

  @Test
  void aPauseDuringARestEndsItWithoutStartingABatchAndAResumeGoesOnAtOnce() {
    // Each rest is 100 times a batch of over 500 ms: far longer than a pause may take to end it.
    long id = create(sleepRun(3, 500, "pause", 100));
    awaitCompleted(id, 1);

    assertThat(api.post("/api/runs/" + id + "/pause", Map.of()).status()).isEqualTo(202);

    await().atMost(REST_ENDS_WITHIN).until(() -> "paused".equals(run(id).path("status").asText()));
    // Paused for longer than a rest takes to see it: nothing starts meanwhile.
    await()
        .during(Duration.ofSeconds(3))
        .atMost(AT_MOST)
        .until(
            () -> {
              JsonNode run = run(id);
              return "paused".equals(run.path("status").asText())
                  && run.path("batchCounts").path("completed").asInt() == 1
                  && run.path("batchCounts").path("pending").asInt() == 2
                  && run.path("inFlight").asLong() == 0;
            });

    // The pause ended the rest: resumed, the lane starts its next batch without resting on.
    assertThat(api.post("/api/runs/" + id + "/resume", Map.of()).status()).isEqualTo(202);
    await()
        .atMost(REST_ENDS_WITHIN)
        .until(() -> run(id).path("batchCounts").path("completed").asInt() >= 2);
    // Stopped in the rest after it, the run ends with what it completed, none lost or counted
    // twice.
    assertThat(api.post("/api/runs/" + id + "/stop", Map.of()).status()).isEqualTo(202);
    JsonNode stopped = awaitStatus(id, "stopped", REST_ENDS_WITHIN);
    assertThat(stopped.path("batchCounts").path("completed").asInt()).isEqualTo(2);
    assertThat(stopped.path("batchCounts").path("stopped").asInt()).isEqualTo(1);
    assertThat(stopped.path("progress").path("processedKeys").asLong()).isEqualTo(2);
  }

  @Test
  void theCatalogueShowsADefinitionsNiceRatioAndABadOneIsA400() {
    JsonNode sleep = null;
    for (JsonNode definition : api.get("/api/backfills").body()) {
      if (definition.path("name").asText().equals("example.sleep")) {
        sleep = definition;
      }
    }
    assertThat(sleep).isNotNull();
    assertThat(sleep.path("niceRatio").isNumber()).isTrue();
    assertThat(sleep.path("niceRatio").asDouble()).isZero();

    long before = TestDb.queryLong("select count(*) from runs");
    for (Object bad : List.of(-1, 100.5, "1", true)) {
      Map<String, Object> body = sleepRun(10, 0, "bad", 0);
      body.put("niceRatio", bad);
      Api.Response response = api.post("/api/runs?dryRun=true", body);
      assertThat(response.status()).as("dry run %s: %s", bad, response.body()).isEqualTo(400);
      response = api.post("/api/runs", body);
      assertThat(response.status()).as("%s: %s", bad, response.body()).isEqualTo(400);
      assertThat(response.body().path("errors").get(0).path("field").asText())
          .isEqualTo("niceRatio");
    }
    assertThat(TestDb.queryLong("select count(*) from runs")).isEqualTo(before);
  }

  /** A run of {@code items} batches of one key, each sleeping {@code sleepMs}, in one lane. */
  private Map<String, Object> sleepRun(int items, int sleepMs, String tag, double niceRatio) {
    Map<String, Object> options = new LinkedHashMap<>();
    options.put("items", items);
    options.put("sleepMs", sleepMs);
    options.put("faultTag", TAG + "-" + tag);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", "example.sleep");
    body.put("options", options);
    body.put("batchSize", 1);
    body.put("maxParallelBatches", 1);
    body.put("niceRatio", niceRatio);
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

  private void awaitCompleted(long id, int batches) {
    await()
        .atMost(AT_MOST)
        .until(() -> run(id).path("batchCounts").path("completed").asInt() >= batches);
  }

  private JsonNode awaitStatus(long id, String status, Duration atMost) {
    await().atMost(atMost).until(() -> status.equals(run(id).path("status").asText()));
    return run(id);
  }
}
