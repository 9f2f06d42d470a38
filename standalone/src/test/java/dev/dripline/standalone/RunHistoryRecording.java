package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dripline.workflows.run.BackfillRunWorkflow;
import dev.dripline.workflows.run.RunStatus;
import dev.dripline.workflows.run.RunWorkflowIds;
import dev.dripline.workflows.run.RunWorkflowInput;
import dev.dripline.workflows.run.RunWorkflowStart;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.client.BatchRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.common.WorkflowExecutionHistory;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * Records the run workflow's histories that {@code RecordedRunHistoriesReplayTest} (workflows)
 * replays: real runs through the API, on real PostgreSQL and the real dev server, each history
 * written to {@code workflows/src/test/resources/histories/real-*.json}, or with {@code
 * -Ddripline.recordRelease=<version>} to that release's directory, {@code
 * histories/releases/<version>/} ({@code ReleaseHistoriesReplayTest}). Not part of any suite (its
 * name matches neither surefire's nor failsafe's patterns): run it by hand, once, when a new shape
 * of history is worth keeping —
 *
 * <pre>
 * bin/dripline-test -pl standalone -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *   -Dit.test=RunHistoryRecording
 * </pre>
 *
 * <p>Chains are off and an execution starts at most 5 batch activities, so a run of 12 batches
 * continues as new twice; an ended run's workflow stays open 5 s for a retry.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunHistoryRecording implements TestPropertyProvider {
  private static final String TAG = "rec-" + UUID.randomUUID().toString().substring(0, 8);
  private static final Path OUT = out(System.getProperty("dripline.recordRelease"));

  @Inject EmbeddedServer server;
  @Inject WorkflowClient temporal;
  private Api api;

  @Override
  public Map<String, String> getProperties() {
    return Map.of(
        "dripline.temporal.task-queue", "dripline-" + TAG,
        "dripline.engine.batch-chain-time", "0s",
        "dripline.engine.max-batches-per-execution", "5",
        "dripline.engine.ended-run-retry-window", "5s",
        "dripline.engine.batch-retry-max-interval", "2s");
  }

  /** Where the histories go: the replay tests' histories, or those of release {@code release}. */
  private static Path out(String release) {
    Path histories = Path.of("../workflows/src/test/resources/histories");
    return release == null || release.isBlank()
        ? histories
        : histories.resolve("releases").resolve(release);
  }

  @BeforeAll
  void connect() {
    api = new Api(server.getURI());
  }

  @Test
  void record() throws Exception {
    Files.createDirectories(OUT);
    // A stop while batches run; the workflow then waits out its retry window and completes.
    long stopped = create(sleepRun("stop", 40, 400, 2));
    awaitCompletedBatches(stopped, 1);
    assertThat(api.post("/api/runs/" + stopped + "/stop", Map.of()).status()).isEqualTo(202);
    awaitStatus(stopped, "stopped");
    save(stopped, "real-run-stopped-while-running.json");

    // A scheduled start.
    Map<String, Object> scheduled = sleepRun("scheduled", 10, 50, 2);
    scheduled.put("startAt", Instant.now().plusSeconds(3).toString());
    long later = create(scheduled);
    awaitStatus(later, "completed");
    save(later, "real-run-scheduled-start.json");

    // Planning that keeps failing: the run fails.
    TestDb.execute(
        "insert into example_faults (tag, phase, key) values (?, 'plan', null)", TAG + "-plan");
    long unplanned = create(sleepRun("plan", 10, 50, 2));
    awaitStatus(unplanned, "failed");
    TestDb.execute("delete from example_faults where tag = ?", TAG + "-plan");
    save(unplanned, "real-run-planning-failed.json");

    // A batch that keeps failing, then a retry signal (the Temporal CLI's or Web UI's; the API's
    // is an Update) while the ended run's workflow is still open.
    TestDb.execute(
        "insert into example_faults (tag, phase, key) values (?, 'batch', 7)", TAG + "-revive");
    long revived = create(sleepRun("revive", 20, 50, 2));
    awaitStatus(revived, "failed");
    TestDb.execute("delete from example_faults where tag = ?", TAG + "-revive");
    temporal.newWorkflowStub(BackfillRunWorkflow.class, RunWorkflowIds.forRun(revived)).retry();
    awaitStatus(revived, "completed");
    save(revived, "real-run-failed-and-retried.json");

    // A retry signal after the stopped run's workflow closed: signal-with-start, the signal early.
    awaitClosed(stopped);
    BackfillRunWorkflow again =
        temporal.newWorkflowStub(
            BackfillRunWorkflow.class,
            RunWorkflowStart.options(
                    stopped, "dripline-" + TAG, "example.sleep", RunStatus.STOPPED, null)
                .build());
    BatchRequest retry = temporal.newSignalWithStartRequest();
    retry.add(again::run, RunWorkflowInput.fresh(stopped));
    retry.add(again::retry);
    temporal.signalWithStart(retry);
    awaitStatus(stopped, "completed");
    write("real-run-revived-by-signal-with-start.json", executions(stopped).get(0));

    // Twelve batch activities, five per execution: two continue-as-new.
    long long12 = create(sleepRun("can", 60, 50, 2));
    awaitStatus(long12, "completed");
    List<WorkflowExecutionHistory> executions = executions(long12);
    assertThat(executions).hasSizeGreaterThanOrEqualTo(3);
    for (int i = 0; i < executions.size(); i++) {
      write("real-run-continued-as-new-" + (i + 1) + ".json", executions.get(i));
    }
  }

  /**
   * Runs since the workflow became its run's only writer: Updates from the API, and a stop that
   * reaches a new execution before it has loaded its run. Writes only histories not yet recorded.
   */
  @Test
  void recordUpdatesAndAnEarlySignal() throws Exception {
    Files.createDirectories(OUT);
    // A cap change (the changeCap Update) while batches run.
    long capped = create(sleepRun("cap", 30, 200, 1));
    awaitCompletedBatches(capped, 1);
    assertThat(api.patch("/api/runs/" + capped, Map.of("maxParallelBatches", 3)).status())
        .isEqualTo(200);
    awaitStatus(capped, "completed");
    write(
        "real-run-cap-changed-by-update.json",
        executions(capped).stream()
            .filter(
                history ->
                    history.getEvents().stream()
                        .anyMatch(e -> e.hasWorkflowExecutionUpdateAcceptedEventAttributes()))
            .findFirst()
            .orElseThrow());

    // A failed run retried through the API: the retryRun Update reaches its open workflow.
    TestDb.execute(
        "insert into example_faults (tag, phase, key) values (?, 'batch', 7)", TAG + "-update");
    long retried = create(sleepRun("update", 20, 50, 2));
    awaitStatus(retried, "failed");
    TestDb.execute("delete from example_faults where tag = ?", TAG + "-update");
    assertThat(api.post("/api/runs/" + retried + "/retry", Map.of()).status()).isEqualTo(202);
    awaitStatus(retried, "completed");
    save(retried, "real-run-retried-by-update.json");

    // A stopped run retried after its workflow closed: the Update starts a new execution.
    long closed = create(sleepRun("closed", 40, 400, 2));
    awaitCompletedBatches(closed, 1);
    assertThat(api.post("/api/runs/" + closed + "/stop", Map.of()).status()).isEqualTo(202);
    awaitStatus(closed, "stopped");
    awaitClosed(closed);
    assertThat(api.post("/api/runs/" + closed + "/retry", Map.of()).status()).isEqualTo(202);
    awaitStatus(closed, "completed");
    save(closed, "real-run-revived-by-update-with-start.json");

    // A scheduled run whose execution was lost (terminated by hand): the API's stop starts a new
    // execution with the signal in its first task, before the workflow has loaded the run.
    Map<String, Object> scheduled = sleepRun("early", 10, 50, 2);
    scheduled.put("startAt", Instant.now().plus(Duration.ofHours(1)).toString());
    long early = create(scheduled);
    awaitClosedOrRunning(early);
    temporal.newUntypedWorkflowStub(RunWorkflowIds.forRun(early)).terminate("lost by hand");
    assertThat(api.post("/api/runs/" + early + "/stop", Map.of()).status()).isEqualTo(202);
    awaitStatus(early, "stopped");
    save(early, "real-run-early-stop-in-a-new-execution.json");
  }

  private void awaitClosedOrRunning(long id) {
    await().atMost(Duration.ofMinutes(1)).ignoreExceptions().until(() -> statusOf(id) != null);
  }

  private Map<String, Object> sleepRun(String name, int items, int sleepMs, int cap) {
    Map<String, Object> options = new LinkedHashMap<>();
    options.put("items", items);
    options.put("sleepMs", sleepMs);
    options.put("faultTag", TAG + "-" + name);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", "example.sleep");
    body.put("options", options);
    body.put("batchSize", 5);
    body.put("maxParallelBatches", cap);
    return body;
  }

  private long create(Map<String, Object> body) {
    Api.Response created = api.post("/api/runs", body);
    assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
    return created.id();
  }

  private void awaitStatus(long id, String status) {
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> status.equals(api.get("/api/runs/" + id).body().path("status").asText()));
  }

  private void awaitCompletedBatches(long id, int completed) {
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () ->
                api.get("/api/runs/" + id).body().path("batchCounts").path("completed").asInt()
                    >= completed);
  }

  private WorkflowExecutionStatus statusOf(long id) {
    return temporal
        .getWorkflowServiceStubs()
        .blockingStub()
        .describeWorkflowExecution(
            DescribeWorkflowExecutionRequest.newBuilder()
                .setNamespace(temporal.getOptions().getNamespace())
                .setExecution(
                    WorkflowExecution.newBuilder().setWorkflowId(RunWorkflowIds.forRun(id)))
                .build())
        .getWorkflowExecutionInfo()
        .getStatus();
  }

  private void awaitClosed(long id) {
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> statusOf(id) != WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
  }

  /** Waits for the run's latest execution to close, then writes its history. */
  private void save(long id, String file) throws IOException {
    awaitClosed(id);
    write(file, temporal.fetchHistory(RunWorkflowIds.forRun(id)));
  }

  /** Every execution of the run's workflow id, first to last, once it has closed. */
  private List<WorkflowExecutionHistory> executions(long id) {
    awaitClosed(id);
    return RunExecutions.all(temporal, id);
  }

  /** Writes a history once: one already checked in is never recorded again. */
  private static void write(String file, WorkflowExecutionHistory history) throws IOException {
    if (Files.exists(OUT.resolve(file))) {
      return;
    }
    Files.writeString(OUT.resolve(file), history.toJson(true), StandardCharsets.UTF_8);
  }
}
