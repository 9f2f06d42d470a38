package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dripline.workflows.run.BackfillRunWorkflow;
import dev.dripline.workflows.run.RunProgressView;
import dev.dripline.workflows.run.RunWorkflowIds;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowStub;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Runs end to end through HTTP on real PostgreSQL and the real Temporal dev server, with the app
 * and a worker in this JVM on a task queue of the test's own.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunApiIT implements TestPropertyProvider {
  /** Unique per test JVM so options never collide with active runs left by earlier test runs. */
  private static final String TAG = "it-" + UUID.randomUUID().toString().substring(0, 8);

  @Inject EmbeddedServer server;
  @Inject WorkflowClient temporal;
  private Api api;

  @Override
  public Map<String, String> getProperties() {
    return Map.of("dripline.temporal.task-queue", "dripline-" + TAG);
  }

  @BeforeAll
  void connect() {
    api = new Api(server.getURI());
  }

  private Map<String, Object> sleepRun(int items, int sleepMs, String tag) {
    Map<String, Object> options = new LinkedHashMap<>();
    options.put("items", items);
    options.put("sleepMs", sleepMs);
    options.put("faultTag", TAG + "-" + tag);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", "example.sleep");
    body.put("options", options);
    return body;
  }

  private Api.Response create(Map<String, Object> body) {
    Api.Response created = api.post("/api/runs", body);
    assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
    return created;
  }

  private JsonNode awaitStatus(long id, String status) {
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> status.equals(api.get("/api/runs/" + id).body().path("status").asText()));
    return api.get("/api/runs/" + id).body();
  }

  private BackfillRunWorkflow workflow(long id) {
    return temporal.newWorkflowStub(BackfillRunWorkflow.class, RunWorkflowIds.forRun(id));
  }

  @Test
  void catalogueListsTheExamples() {
    Api.Response catalogue = api.get("/api/backfills");

    assertThat(catalogue.status()).isEqualTo(200);
    assertThat(catalogue.body().findValuesAsText("name"))
        .contains("example.sleep", "example.normalize-emails", "example.copy-events");
  }

  @Test
  void runCompletesWithinItsCapAndApiAgreesWithTheProgressQuery() {
    Map<String, Object> body = sleepRun(60, 30, "complete");
    body.put("batchSize", 5);
    body.put("maxParallelBatches", 3);

    Api.Response created = create(body);
    long id = created.id();
    assertThat(created.header("Location")).endsWith("/api/runs/" + id);
    JsonNode run = awaitStatus(id, "completed");

    assertThat(run.path("workflowId").asText()).isEqualTo("dripline-run-" + id);
    assertThat(run.path("batchCounts").path("completed").asInt()).isEqualTo(12);
    assertThat(run.path("inFlight").asInt()).isZero();
    JsonNode progress = run.path("progress");
    assertThat(progress.path("totalKeys").asLong()).isEqualTo(60);
    assertThat(progress.path("processedKeys").asLong()).isEqualTo(60);
    assertThat(progress.path("percent").asInt()).isEqualTo(100);
    RunProgressView query = workflow(id).progress();
    assertThat(query.progress().totalKeys()).isEqualTo(progress.path("totalKeys").asLong());
    assertThat(query.progress().processedKeys()).isEqualTo(progress.path("processedKeys").asLong());
    assertThat(query.progress().percent()).isEqualTo(progress.path("percent").asInt());
    assertThat(query.status().wire()).isEqualTo("completed");
    assertThat(TestDb.queryLong("select max_seen from example_concurrency where run_id = ?", id))
        .isBetween(1L, 3L);
    Api.Response batches = api.get("/api/runs/" + id + "/batches?size=5");
    assertThat(batches.status()).isEqualTo(200);
    assertThat(batches.body().path("total").asInt()).isEqualTo(12);
    assertThat(batches.body().path("items").get(0).path("number").asInt()).isEqualTo(1);
  }

  @Test
  void runIsFoundByAVisibilityQueryOnItsBackfill() {
    long id = create(sleepRun(5, 0, "visible")).id();
    awaitStatus(id, "completed");
    String query =
        "DriplineBackfill = 'example.sleep' AND WorkflowId = '"
            + RunWorkflowIds.forRun(id)
            + "' AND DriplineRunStatus = 'completed'";

    await().atMost(Duration.ofSeconds(30)).until(() -> temporal.listExecutions(query).count() == 1);
  }

  @Test
  void stopSignalSentThroughTemporalStopsTheRun() {
    Map<String, Object> body = sleepRun(200, 100, "signal-stop");
    body.put("batchSize", 10);
    body.put("maxParallelBatches", 2);
    long id = create(body).id();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                api.get("/api/runs/" + id).body().path("batchCounts").path("completed").asInt()
                    >= 2);

    // What `temporal workflow signal --workflow-id dripline-run-<id> --name stop` sends.
    temporal.newUntypedWorkflowStub(RunWorkflowIds.forRun(id)).signal("stop");
    JsonNode run = awaitStatus(id, "stopped");

    JsonNode counts = run.path("batchCounts");
    assertThat(counts.path("stopped").asInt()).isPositive();
    assertThat(counts.path("pending").asInt()).isZero();
    assertThat(counts.path("enqueued").asInt() + counts.path("running").asInt()).isZero();
    assertThat(counts.path("completed").asInt() + counts.path("stopped").asInt()).isEqualTo(20);
  }

  /**
   * Item 9 of the review: an operator with only the Temporal CLI (or the Web UI's "Send a signal")
   * retries a stopped run. The signal used to fail ("workflow execution already completed"); the
   * stopped run's workflow now waits for it, and the run completes.
   */
  @Test
  void aRetrySignalSentThroughTemporalRevivesAStoppedRun() {
    Map<String, Object> body = sleepRun(40, 100, "signal-retry");
    body.put("batchSize", 4);
    body.put("maxParallelBatches", 1);
    long id = create(body).id();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                api.get("/api/runs/" + id).body().path("batchCounts").path("completed").asInt()
                    >= 1);
    assertThat(api.post("/api/runs/" + id + "/stop", Map.of()).status()).isEqualTo(202);
    JsonNode stopped = awaitStatus(id, "stopped");
    assertThat(stopped.path("batchCounts").path("stopped").asInt()).isPositive();
    WorkflowStub workflow = temporal.newUntypedWorkflowStub(RunWorkflowIds.forRun(id));
    assertThat(workflow.describe().getStatus())
        .as("the stopped run's workflow waits for a retry")
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);

    // What `temporal workflow signal --workflow-id dripline-run-<id> --name retry` sends.
    workflow.signal("retry");

    JsonNode run = awaitStatus(id, "completed");
    assertThat(run.path("batchCounts").path("completed").asInt()).isEqualTo(10);
    assertThat(run.path("batchCounts").path("stopped").asInt()).isZero();
    assertThat(run.path("progress").path("processedKeys").asLong()).isEqualTo(40);
    // A completed run's workflow closes at once.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                workflow.describe().getStatus()
                    == WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED);
    assertThat(api.post("/api/runs/" + id + "/retry", Map.of()).status()).isEqualTo(409);
  }

  @Test
  void anUpdateIsCountedInPrometheusBesideTheOtherCallsOfItsMetric() {
    Map<String, Object> body = sleepRun(40, 100, "update-metrics");
    body.put("batchSize", 4);
    body.put("maxParallelBatches", 1);
    long id = create(body).id();

    Api.Response changed = api.patch("/api/runs/" + id, Map.of("maxParallelBatches", 2));

    assertThat(changed.status()).as("%s", changed.body()).isEqualTo(200);
    // The SDK's metrics reach the registry every 10 s: the Update's call (update_name) and the
    // create's StartWorkflowExecution (no update_name) are both in the same scrape.
    await()
        .atMost(Duration.ofMinutes(1))
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(
            () -> {
              String scrape = api.getText("/prometheus");
              assertThat(scrape).contains("update_name=\"changeCap\"");
              assertThat(scrape).containsPattern("temporal_request[^\\n]*StartWorkflowExecution");
            });
    // Leave nothing running for the tests after this one (the run may have completed already).
    api.post("/api/runs/" + id + "/stop", Map.of());
    await()
        .atMost(Duration.ofMinutes(2))
        .until(
            () ->
                List.of("stopped", "completed")
                    .contains(api.get("/api/runs/" + id).body().path("status").asText()));
  }

  @Test
  void secondIdenticalActiveRunIsAConflictNamingTheFirst() {
    Map<String, Object> body = sleepRun(100, 200, "duplicate");
    body.put("maxParallelBatches", 1);
    long first = create(body).id();

    Api.Response second = api.post("/api/runs", body);

    assertThat(second.status()).isEqualTo(409);
    assertThat(second.raw().headers().firstValue("Content-Type").orElse(""))
        .contains("application/problem+json");
    assertThat(second.body().path("detail").asText()).contains(String.valueOf(first));
    api.post("/api/runs/" + first + "/stop", Map.of());
    awaitStatus(first, "stopped");
  }

  @Test
  void repeatedIdempotencyKeyReturnsTheOriginalRun() {
    Map<String, Object> body = sleepRun(3, 0, "idempotent");
    Map<String, String> headers = Map.of("Idempotency-Key", TAG + "-key");
    long first = create(body).id();
    awaitStatus(first, "completed");
    // Same options again, now allowed since the first run ended, under a key.
    Api.Response keyed = api.post("/api/runs", body, headers);
    assertThat(keyed.status()).isEqualTo(201);

    Api.Response repeat = api.post("/api/runs", body, headers);

    assertThat(repeat.status()).isIn(200, 201);
    assertThat(repeat.id()).isEqualTo(keyed.id());
    assertThat(
            TestDb.queryLong("select count(*) from runs where idempotency_key = ?", TAG + "-key"))
        .isEqualTo(1);
  }

  @Test
  void badRequestsAreProblemDocumentsWithOneErrorPerFieldAndCreateNothing() {
    long before = TestDb.queryLong("select count(*) from runs");
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", "example.sleep");
    body.put("options", Map.of("sleepMs", "fast", "colour", "red"));
    body.put("batchSize", 0);
    body.put("maxRecords", 0);
    body.put("maxParallelBatches", 0);
    body.put("startAt", "tomorrow");

    Api.Response response = api.post("/api/runs", body);

    assertThat(response.status()).isEqualTo(400);
    assertThat(response.body().findValuesAsText("field"))
        .contains(
            "options.items",
            "options.sleepMs",
            "options.colour",
            "batchSize",
            "maxRecords",
            "maxParallelBatches",
            "startAt");
    assertThat(api.post("/api/runs", Map.of("backfill", "no.such")).status()).isEqualTo(400);
    assertThat(api.post("/api/runs", "{not json").status()).isEqualTo(400);
    assertThat(TestDb.queryLong("select count(*) from runs")).isEqualTo(before);
  }

  @Test
  void unknownRunsAreNotFound() {
    assertThat(api.get("/api/runs/999999999").status()).isEqualTo(404);
    assertThat(api.post("/api/runs/999999999/stop", Map.of()).status()).isEqualTo(404);
    assertThat(api.post("/api/runs/999999999/retry", Map.of()).status()).isEqualTo(404);
    assertThat(api.post("/api/runs/999999999/pause", Map.of()).status()).isEqualTo(404);
    assertThat(api.post("/api/runs/999999999/resume", Map.of()).status()).isEqualTo(404);
    assertThat(api.patch("/api/runs/999999999", Map.of("maxParallelBatches", 2)).status())
        .isEqualTo(404);
    assertThat(api.delete("/api/runs/999999999").status()).isEqualTo(404);
    assertThat(api.get("/api/runs/999999999/batches").status()).isEqualTo(404);
  }

  @Test
  void scheduledRunStaysPendingAndCanBeStopped() {
    Map<String, Object> body = sleepRun(10, 0, "scheduled-stop");
    body.put("startAt", Instant.now().plus(Duration.ofHours(1)).toString());
    long id = create(body).id();
    assertThat(api.get("/api/runs/" + id).body().path("status").asText()).isEqualTo("pending");

    Api.Response stop = api.post("/api/runs/" + id + "/stop", Map.of());

    assertThat(stop.status()).isEqualTo(202);
    JsonNode run = awaitStatus(id, "stopped");
    assertThat(run.path("batchCounts").path("completed").asInt()).isZero();
    assertThat(api.post("/api/runs/" + id + "/stop", Map.of()).status()).isEqualTo(409);
  }

  @Test
  void deleteRemovesPendingAndEndedRunsRefusesRunningOnesAndIsNotFoundTwice() {
    Map<String, Object> scheduled = sleepRun(10, 0, "delete-pending");
    scheduled.put("startAt", Instant.now().plus(Duration.ofHours(1)).toString());
    long pending = create(scheduled).id();
    assertThat(api.delete("/api/runs/" + pending).status()).isEqualTo(204);
    assertThat(api.delete("/api/runs/" + pending).status()).isEqualTo(404);
    assertThat(api.get("/api/runs/" + pending).status()).isEqualTo(404);

    Map<String, Object> slow = sleepRun(100, 200, "delete-running");
    slow.put("maxParallelBatches", 1);
    long running = create(slow).id();
    awaitStatus(running, "running");
    assertThat(api.delete("/api/runs/" + running).status()).isEqualTo(409);
    api.post("/api/runs/" + running + "/stop", Map.of());
    awaitStatus(running, "stopped");

    assertThat(api.delete("/api/runs/" + running).status()).isEqualTo(204);
    // The batches go in the background: the delete triggers the purge, this test's worker runs it.
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () -> TestDb.queryLong("select count(*) from batches where run_id = ?", running) == 0);
    // The stopped run's workflow, waiting for a retry, is ended by the delete.
    assertThat(
            temporal.newUntypedWorkflowStub(RunWorkflowIds.forRun(running)).describe().getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED);
    assertThat(api.delete("/api/runs/" + running).status()).isEqualTo(404);
  }

  @Test
  void failedBatchesAreRetriedAfterTheFaultIsHealed() {
    Map<String, Object> body = sleepRun(20, 0, "retry");
    body.put("batchSize", 2);
    String tag = (String) ((Map<?, ?>) body.get("options")).get("faultTag");
    TestDb.execute("insert into example_faults(tag, phase, key) values (?, 'batch', 7)", tag);
    long id = create(body).id();
    JsonNode failed = awaitStatus(id, "failed");
    assertThat(failed.path("batchCounts").path("failed").asInt()).isEqualTo(1);
    assertThat(failed.path("batchCounts").path("completed").asInt()).isEqualTo(9);

    TestDb.execute("delete from example_faults where tag = ?", tag);
    Api.Response retry = api.post("/api/runs/" + id + "/retry", Map.of());

    assertThat(retry.status()).isEqualTo(202);
    assertThat(retry.body().path("requeued").asInt()).isEqualTo(1);
    JsonNode run = awaitStatus(id, "completed");
    assertThat(run.path("progress").path("processedKeys").asLong()).isEqualTo(20);
    assertThat(api.post("/api/runs/" + id + "/retry", Map.of()).status()).isEqualTo(409);
  }

  /**
   * Issue 18's regression with the workflow as the one writer: a retry asked right after a stop,
   * before the stop is in the run's record, is answered by the workflow that took the stop — a 409
   * — instead of a 202 for batches the stop then stops again.
   */
  @Test
  void aRetryRightAfterAStopIs409AndTheStopWins() {
    Map<String, Object> body = sleepRun(200, 100, "stop-retry");
    body.put("batchSize", 1);
    body.put("maxParallelBatches", 2);
    String tag = (String) ((Map<?, ?>) body.get("options")).get("faultTag");
    TestDb.execute("insert into example_faults(tag, phase, key) values (?, 'batch', 1)", tag);
    long id = create(body).id();
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () ->
                api.get("/api/runs/" + id).body().path("batchCounts").path("failed").asInt() == 1);

    Api.Response stop = api.post("/api/runs/" + id + "/stop", Map.of());
    Api.Response retry = api.post("/api/runs/" + id + "/retry", Map.of());

    assertThat(stop.status()).isEqualTo(202);
    assertThat(retry.status()).as("retry: %s", retry.body()).isEqualTo(409);
    assertThat(retry.body().path("detail").asText())
        .isEqualTo("run " + id + " is stopping; retry it once it has stopped");
    JsonNode stopped = awaitStatus(id, "stopped");
    assertThat(stopped.path("batchCounts").path("failed").asInt()).isEqualTo(1);
    assertThat(stopped.path("batchCounts").path("stopped").asInt()).isPositive();
  }

  /**
   * R9: a script that creates a run and pauses it at once — before its workflow may have recorded
   * it running — gets the pause, whichever comes first.
   */
  @Test
  void aRunPausedRightAfterItsCreateIsPausedUntilResumed() {
    Map<String, Object> body = sleepRun(30, 0, "pause-at-create");
    long id = create(body).id();

    Api.Response pause = api.post("/api/runs/" + id + "/pause", Map.of());

    assertThat(pause.status()).as("pause: %s", pause.body()).isEqualTo(202);
    awaitStatus(id, "paused");
    assertThat(api.post("/api/runs/" + id + "/resume", Map.of()).status()).isEqualTo(202);
    JsonNode completed = awaitStatus(id, "completed");
    assertThat(completed.path("progress").path("processedKeys").asLong()).isEqualTo(30);
  }

  @Test
  void pauseResumeAndLiveCapChangeThroughTheApi() {
    // Thirty batches of 100 ms at one slot: enough of them are left after the pause for four
    // slots to overlap (with four batches, a quick machine had finished three before the pause).
    Map<String, Object> body = sleepRun(300, 100, "pause");
    body.put("maxParallelBatches", 1);
    long id = create(body).id();
    awaitStatus(id, "running");

    assertThat(api.post("/api/runs/" + id + "/pause", Map.of()).status()).isEqualTo(202);
    awaitStatus(id, "paused");
    assertThat(api.post("/api/runs/" + id + "/pause", Map.of()).status()).isEqualTo(409);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> api.get("/api/runs/" + id).body().path("inFlight").asInt() == 0);
    long completedWhilePaused =
        api.get("/api/runs/" + id).body().path("batchCounts").path("completed").asLong();
    assertThat(completedWhilePaused).as("batches completed before the pause").isLessThan(26);

    Api.Response patched = api.patch("/api/runs/" + id, Map.of("maxParallelBatches", 4));
    assertThat(patched.status()).isEqualTo(200);
    assertThat(patched.body().path("maxParallelBatches").asInt()).isEqualTo(4);
    assertThat(api.patch("/api/runs/" + id, Map.of("maxParallelBatches", 0)).status())
        .isEqualTo(400);
    assertThat(api.post("/api/runs/" + id + "/resume", Map.of()).status()).isEqualTo(202);

    JsonNode run = awaitStatus(id, "completed");
    assertThat(run.path("batchCounts").path("completed").asLong())
        .isGreaterThan(completedWhilePaused);
    assertThat(TestDb.queryLong("select max_seen from example_concurrency where run_id = ?", id))
        .isBetween(2L, 4L);
    assertThat(api.patch("/api/runs/" + id, Map.of("maxParallelBatches", 2)).status())
        .isEqualTo(409);
  }

  @Test
  void listingFiltersByStatusAndBackfillNewestFirst() {
    long id = create(sleepRun(2, 0, "list")).id();
    awaitStatus(id, "completed");

    Api.Response page = api.get("/api/runs?status=completed&backfill=example.sleep&size=5");

    assertThat(page.status()).isEqualTo(200);
    assertThat(page.body().path("items").get(0).path("id").asLong()).isEqualTo(id);
    assertThat(page.body().path("size").asInt()).isEqualTo(5);
    assertThat(page.body().path("total").asLong()).isPositive();
    assertThat(api.get("/api/runs?status=bogus").status()).isEqualTo(400);
  }

  @Test
  void healthReportsDatabaseAndTemporal() {
    Api.Response health = api.get("/health");

    assertThat(health.status()).isEqualTo(200);
    assertThat(health.body().toString()).contains("temporal").containsIgnoringCase("jdbc");
  }
}
