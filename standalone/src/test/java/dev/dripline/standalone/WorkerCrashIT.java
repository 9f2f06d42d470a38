package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Kills the worker JVM with SIGKILL in the middle of a run and starts another: the run completes,
 * every batch is processed and counted exactly once, and the independent witness in PostgreSQL
 * never saw more batches executing at once than the cap.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WorkerCrashIT implements TestPropertyProvider {
  private static final String TAG = "crash-" + UUID.randomUUID().toString().substring(0, 8);
  private static final String QUEUE = "dripline-" + TAG;
  private static final int CAP = 4;
  private static final int BATCHES = 300;

  @Inject EmbeddedServer server;
  private Api api;
  private Process worker;

  @Override
  public Map<String, String> getProperties() {
    // This JVM serves the API only; the worker is a separate process that the test kills.
    return Map.of("dripline.temporal.task-queue", QUEUE, "dripline.worker.enabled", "false");
  }

  @BeforeAll
  void connect() {
    api = new Api(server.getURI());
  }

  @AfterEach
  void stopWorker() {
    if (worker != null) {
      worker.destroyForcibly();
    }
  }

  private Process startWorker(String name) throws IOException {
    return WorkerProcess.start(
        name,
        QUEUE,
        Map.of(
            "DRIPLINE_BATCH_HEARTBEAT_TIMEOUT", "3s",
            "DRIPLINE_BATCH_RETRY_INITIAL_INTERVAL", "200ms",
            "DRIPLINE_BATCH_MAX_ATTEMPTS", "5",
            "DRIPLINE_MAX_BATCHES_PER_EXECUTION", "100"));
  }

  private JsonNode run(long id) {
    return api.get("/api/runs/" + id).body();
  }

  @Test
  void runSurvivesAWorkerKilledMidRunWithExactCountsAndTheCapHeld() throws Exception {
    worker = startWorker("first");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                TestDb.queryLong(
                        "select count(*) from backfill_definitions where name = 'example.sleep'")
                    == 1);
    Map<String, Object> body =
        Map.of(
            "backfill",
            "example.sleep",
            "options",
            Map.of("items", BATCHES, "sleepMs", 60, "faultTag", TAG),
            "batchSize",
            1,
            "maxParallelBatches",
            CAP);
    Api.Response created = api.post("/api/runs", body);
    assertThat(created.status()).as("%s", created.body()).isEqualTo(201);
    long id = created.id();
    await()
        .atMost(Duration.ofMinutes(2))
        .until(() -> run(id).path("batchCounts").path("completed").asInt() >= BATCHES / 4);

    worker.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    int completedAtKill = run(id).path("batchCounts").path("completed").asInt();
    assertThat(completedAtKill).isLessThan(BATCHES);
    worker = startWorker("second");

    await()
        .atMost(Duration.ofMinutes(4))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> "completed".equals(run(id).path("status").asText()));
    JsonNode finished = run(id);
    assertThat(finished.path("batchCounts").path("completed").asInt()).isEqualTo(BATCHES);
    assertThat(finished.path("progress").path("processedKeys").asLong()).isEqualTo(BATCHES);
    assertThat(TestDb.queryLong("select sum(size) from batches where run_id = ?", id))
        .isEqualTo(BATCHES);
    assertThat(TestDb.queryLong("select max_seen from example_concurrency where run_id = ?", id))
        .isBetween(1L, (long) CAP);
    assertThat(
            TestDb.queryLong(
                "select count(*) from example_executing where run_id = ? and backend_pid in"
                    + " (select pid from pg_stat_activity)",
                id))
        .isZero();
    System.out.println(
        "crash test: killed at "
            + completedAtKill
            + " of "
            + BATCHES
            + " batches; max_seen "
            + TestDb.queryLong("select max_seen from example_concurrency where run_id = ?", id));
  }
}
