package dev.dripline.app.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.store.db.Database;
import dev.dripline.workflows.run.BackfillRunWorkflow;
import dev.dripline.workflows.run.RunSearchAttributes;
import dev.dripline.workflows.run.RunWorkflowIds;
import dev.dripline.workflows.run.RunWorkflowInput;
import io.micronaut.context.annotation.Property;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionDescription;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowTargetOptions;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The API against a real Temporal server ({@code DRIPLINE_TEST_TEMPORAL_ADDRESS}) but no worker:
 * workflows are started and signalled on a task queue nobody polls, so runs stay where the API put
 * them. Skipped when no server answers; the standalone module runs the full system.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.task-queue", value = "dripline-app-it-no-worker")
class RunsWithTemporalIT {
  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;
  @Inject WorkflowClient workflows;
  @Inject TemporalConfig temporal;

  private Api api;
  private TestData data;
  private final String backfill = TestData.uniqueName();
  private final List<Long> started = new ArrayList<>();

  @BeforeEach
  void setUp() {
    assumeTrue(
        TestData.reachable(temporal.address()), "no Temporal server at " + temporal.address());
    api = new Api(client, json);
    data = new TestData(database);
    data.definition(backfill, 10, 2);
  }

  @AfterEach
  void tearDown() {
    if (data == null) {
      return;
    }
    for (long id : started) {
      try {
        workflows.newUntypedWorkflowStub(RunWorkflowIds.forRun(id)).terminate("test over");
      } catch (RuntimeException e) {
        // already closed
      }
    }
    data.cleanUp(backfill);
  }

  @Test
  void createsARunAndStartsItsWorkflow() {
    Api.Reply reply = create("{\"items\":1000}", ",\"maxParallelBatches\":5,\"maxRecords\":1000");

    assertThat(reply.status()).isEqualTo(201);
    long id = id(reply);
    assertThat(reply.location()).isEqualTo("/api/runs/" + id);
    assertThat(reply.object())
        .containsEntry("status", "pending")
        .containsEntry("maxParallelBatches", 2)
        .containsEntry("batchSize", 10)
        .containsEntry("createdBy", "operator")
        .containsEntry("workflowId", "dripline-run-" + id)
        .containsEntry("options", Map.of("items", 1000, "sleepMs", 0, "mode", "fast"));
    WorkflowExecutionDescription workflow = describe(id);
    assertThat(workflow.getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
    assertThat(workflow.getTypedSearchAttributes().get(RunSearchAttributes.BACKFILL))
        .isEqualTo(backfill);
    assertThat(workflow.getTypedSearchAttributes().get(RunSearchAttributes.RUN_STATUS))
        .isEqualTo("pending");
    assertThat(workflow.getStaticSummary())
        .isEqualTo(backfill + " · batch size 10 · cap 2 · 1,000 keys max");
  }

  @Test
  void aSecondIdenticalActiveRunIs409AndAnIdempotentRepeatReturnsTheFirst() {
    Api.Reply first = create("{\"items\":5}", "", "key-" + backfill);
    Api.Reply duplicate = create("{\"items\":5,\"sleepMs\":0}", "");
    Api.Reply repeat = create("{\"items\":5}", "", "key-" + backfill);

    assertThat(first.status()).isEqualTo(201);
    assertThat(duplicate.status()).isEqualTo(409);
    assertThat(duplicate.object()).containsEntry("existingRunId", (int) id(first));
    assertThat(repeat.status()).isEqualTo(200);
    assertThat(id(repeat)).isEqualTo(id(first));
    assertThat(data.count("select count(*) from runs where backfill = ?", backfill)).isEqualTo(1);
  }

  /**
   * A run id's workflow left open by an earlier database (restored from a backup, or a test
   * database recreated beside one Temporal server) must not be taken for the new run's: the new run
   * would stay pending forever (docs/reliability.md, F4).
   */
  @Test
  void aNewRunIsNotHandedTheOpenWorkflowOfAnEarlierRunWithItsId() {
    long next = data.count("select nextval(pg_get_serial_sequence('runs', 'id'))") + 1;
    String foreignQueue = "dripline-app-it-earlier-database";
    WorkflowExecution foreign =
        WorkflowClient.start(
            workflows.newWorkflowStub(
                    BackfillRunWorkflow.class,
                    WorkflowOptions.newBuilder()
                        .setWorkflowId(RunWorkflowIds.forRun(next))
                        .setTaskQueue(foreignQueue)
                        .build())
                ::run,
            RunWorkflowInput.fresh(next));
    started.add(next);

    long id = id(create("{\"items\":5}", ""));

    assertThat(id).as("the id the run took").isEqualTo(next);
    WorkflowExecutionDescription workflow = describe(id);
    assertThat(workflow.getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
    assertThat(workflow.getExecution().getRunId()).isNotEqualTo(foreign.getRunId());
    assertThat(workflow.getTaskQueue()).isEqualTo(temporal.taskQueue());
    assertThat(
            workflows
                .newUntypedWorkflowStub(
                    WorkflowTargetOptions.newBuilder().setWorkflowExecution(foreign).build())
                .describe()
                .getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED);
  }

  /**
   * F4 (docs/reliability.md): the app died between recording a keyed run and starting its workflow;
   * the client's replay of the key must bring the run to life, not just return it.
   */
  @Test
  void aReplayedKeyStartsTheWorkflowOfARunRecordedWithoutOne() {
    long id = data.run(backfill, "pending", "{\"items\":5}");
    data.sql("update runs set idempotency_key = ? where id = ?", "key-" + backfill, id);
    started.add(id);

    Api.Reply repeat = create("{\"items\":5}", "", "key-" + backfill);
    Api.Reply again = create("{\"items\":5}", "", "key-" + backfill);

    assertThat(repeat.status()).isEqualTo(200);
    assertThat(id(repeat)).isEqualTo(id);
    assertThat(again.status()).isEqualTo(200);
    assertThat(describe(id).getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
    assertThat(data.count("select count(*) from runs where backfill = ?", backfill)).isEqualTo(1);
  }

  /**
   * The stop of a scheduled run is a signal to its workflow, which records it: with no worker the
   * record stays pending, and the signal waits in the workflow's history for one.
   */
  @Test
  void stoppingAScheduledRunSignalsItsWorkflowAndLeavesTheRecordToIt() {
    long id = id(create("{\"items\":5}", ",\"startAt\":\"2999-01-01T00:00:00Z\""));

    Api.Reply reply = api.post("/api/runs/" + id + "/stop", "");

    assertThat(reply.status()).isEqualTo(202);
    assertThat(signals(id)).containsExactly("stop");
    assertThat(api.get("/api/runs/" + id).object()).containsEntry("status", "pending");
  }

  /**
   * A cap change and a retry are Updates, which need a worker to answer: with none polling the
   * queue they are a 503 at once, and nothing reaches the workflow or the record.
   */
  @Test
  void aCapChangeOrRetryWithNoWorkerIs503AndChangesNothing() {
    long id = id(create("{\"items\":5}", ",\"startAt\":\"2999-01-01T00:00:00Z\""));
    long failed = data.run(backfill, "failed", "{\"items\":2,\"mode\":\"fast\",\"sleepMs\":0}");
    data.sql("update runs set plan_done = true where id = ?", failed);
    data.batch(failed, 1, 1, 1, "failed");

    Api.Reply cap = api.patch("/api/runs/" + id, "{\"maxParallelBatches\":1}");
    Api.Reply retry = api.post("/api/runs/" + failed + "/retry", "");

    assertThat(cap.status()).isEqualTo(503);
    assertThat((String) cap.object().get("detail"))
        .contains("no Dripline worker polls task queue dripline-app-it-no-worker")
        .contains("nothing was changed");
    assertThat(retry.status()).isEqualTo(503);
    assertThat(data.text("select requested_max_parallel_batches::text from runs where id = ?", id))
        .isNull();
    assertThat(data.text("select status from batches where run_id = ?", failed))
        .isEqualTo("failed");
    assertThat(data.text("select status from runs where id = ?", failed)).isEqualTo("failed");
    for (HistoryEvent event :
        workflows.fetchHistory(RunWorkflowIds.forRun(id)).getHistory().getEventsList()) {
      assertThat(event.hasWorkflowExecutionUpdateAcceptedEventAttributes()).isFalse();
    }
  }

  /** The names of the signals in the run's workflow history. */
  private List<String> signals(long id) {
    List<String> names = new ArrayList<>();
    for (HistoryEvent event :
        workflows.fetchHistory(RunWorkflowIds.forRun(id)).getHistory().getEventsList()) {
      if (event.hasWorkflowExecutionSignaledEventAttributes()) {
        names.add(event.getWorkflowExecutionSignaledEventAttributes().getSignalName());
      }
    }
    return names;
  }

  @Test
  void deletingAScheduledRunTerminatesItsWorkflow() {
    long id = id(create("{\"items\":5}", ",\"startAt\":\"2999-01-01T00:00:00Z\""));

    Api.Reply reply = api.delete("/api/runs/" + id);

    assertThat(reply.status()).isEqualTo(204);
    assertThat(describe(id).getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED);
    assertThat(api.get("/api/runs/" + id).status()).isEqualTo(404);
  }

  @Test
  void healthIsUpWithBothComponents() {
    Api.Reply reply = api.get("/health");

    assertThat(reply.status()).isEqualTo(200);
    @SuppressWarnings("unchecked")
    Map<String, Object> details = (Map<String, Object>) reply.object().get("details");
    assertThat(details).containsKeys("jdbc", "temporal");
  }

  private Api.Reply create(String options, String extra) {
    return remember(
        api.post(
            "/api/runs",
            "{\"backfill\":\"" + backfill + "\",\"options\":" + options + extra + "}"));
  }

  private Api.Reply create(String options, String extra, String idempotencyKey) {
    return remember(
        api.post(
            "/api/runs",
            "{\"backfill\":\"" + backfill + "\",\"options\":" + options + extra + "}",
            idempotencyKey));
  }

  private Api.Reply remember(Api.Reply reply) {
    if (reply.status() == 201) {
      started.add(id(reply));
    }
    return reply;
  }

  private WorkflowExecutionDescription describe(long id) {
    return workflows.newUntypedWorkflowStub(RunWorkflowIds.forRun(id)).describe();
  }

  private static long id(Api.Reply reply) {
    return ((Number) reply.object().get("id")).longValue();
  }
}
