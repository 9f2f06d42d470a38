package dev.dripline.app.targets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.store.db.Database;
import dev.dripline.workflows.run.RunSearchAttributes;
import dev.dripline.workflows.run.RunWorkflowIds;
import dev.dripline.workflows.targets.TargetWorkflowIds;
import io.micronaut.context.annotation.Property;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionDescription;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The targets API against a real Temporal server ({@code DRIPLINE_TEST_TEMPORAL_ADDRESS}) but no
 * worker: target workflows are started and signalled on a task queue nobody polls, so they stay
 * where the API put them. Skipped when no server answers.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.task-queue", value = "dripline-app-it-no-worker")
class TargetsWithTemporalIT {
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
  private final List<String> targets = new ArrayList<>();
  private final List<Long> runs = new ArrayList<>();

  @BeforeEach
  void setUp() {
    assumeTrue(
        TestData.reachable(temporal.address()), "no Temporal server at " + temporal.address());
    api = new Api(client, json);
    data = new TestData(database);
    data.definition(backfill, 10, null);
  }

  @AfterEach
  void tearDown() {
    if (data == null) {
      return;
    }
    for (String name : targets) {
      try {
        workflows.newUntypedWorkflowStub(TargetWorkflowIds.forTarget(name)).terminate("test over");
      } catch (RuntimeException e) {
        // already closed
      }
    }
    for (long run : runs) {
      try {
        workflows.newUntypedWorkflowStub(RunWorkflowIds.forRun(run)).terminate("test over");
      } catch (RuntimeException e) {
        // never started, or already closed
      }
    }
    data.cleanUpTargets(targets.toArray(String[]::new));
    data.cleanUp(backfill);
  }

  @Test
  void createsATargetAndStartsItsControllingWorkflow() {
    String name = newName();

    Api.Reply reply = create(name, ",\"group\":\"org-7\"");

    assertThat(reply.status()).isEqualTo(201);
    assertThat(reply.location()).isEqualTo("/api/targets/" + name);
    assertThat(reply.object())
        .containsEntry("name", name)
        .containsEntry("backfill", backfill)
        .containsEntry("group", "org-7")
        .containsEntry("state", "pending_backfill")
        .containsEntry("consecutiveFailures", 0)
        .containsEntry("failing", false)
        .containsEntry("options", Map.of("items", 5, "mode", "fast", "sleepMs", 0));
    assertThat(data.text("select options::text from targets where name = ?", name))
        .isEqualTo("{\"mode\": \"fast\", \"items\": 5, \"sleepMs\": 0}");
    WorkflowExecutionDescription workflow = describe(name);
    assertThat(workflow.getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
    assertThat(workflow.getWorkflowType()).isEqualTo("Target");
    assertThat(workflow.getTypedSearchAttributes().get(RunSearchAttributes.TARGET)).isEqualTo(name);
    assertThat(workflow.getStaticSummary())
        .isEqualTo("target " + name + " · " + backfill + " · group org-7");
  }

  @Test
  void aSecondCreationWithTheSameNameIs409AndKeepsTheWorkflow() {
    String name = newName();
    assertThat(create(name, "").status()).isEqualTo(201);
    String runId = describe(name).getExecution().getRunId();

    Api.Reply duplicate = create(name, "");

    assertThat(duplicate.status()).isEqualTo(409);
    assertThat(data.count("select count(*) from targets where name = ?", name)).isEqualTo(1);
    assertThat(describe(name).getExecution().getRunId()).isEqualTo(runId);
  }

  @Test
  void aLiveBatchRevivesALostTargetWorkflow() {
    String name = newName();
    assertThat(create(name, "").status()).isEqualTo(201);
    workflows.newUntypedWorkflowStub(TargetWorkflowIds.forTarget(name)).terminate("lost");

    Api.Reply reply = api.post("/api/targets/" + name + "/live-batches", "{\"payload\":{}}");

    assertThat(reply.status()).isEqualTo(202);
    assertThat(reply.object()).containsEntry("queuedAhead", 0);
    WorkflowExecutionDescription workflow = describe(name);
    assertThat(workflow.getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
    assertThat(workflow.getTypedSearchAttributes().get(RunSearchAttributes.TARGET)).isEqualTo(name);
  }

  @Test
  void aReplanCancelsTheCurrentRunEvenWithoutItsWorkflow() {
    String name = newName();
    assertThat(create(name, "").status()).isEqualTo(201);
    long run = data.run(backfill, "running", "{\"items\":5}");
    data.sql(
        "update targets set state = 'backfilling', consecutive_failures = 2,"
            + " current_run_id = ? where name = ?",
        run,
        name);

    Api.Reply reply = api.post("/api/targets/" + name + "/replan", "");

    // The run has no workflow to tell (not found is fine); the target's workflow is woken.
    assertThat(reply.status()).isEqualTo(202);
    assertThat(reply.object())
        .containsEntry("cancelledRunId", (int) run)
        .containsEntry("previousState", "backfilling")
        .containsEntry("previousConsecutiveFailures", 2)
        .containsEntry("state", "pending_backfill");
    assertThat(data.text("select current_run_id::text from targets where name = ?", name)).isNull();
    assertThat(describe(name).getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
  }

  @Test
  void deletingATargetTerminatesItsWorkflow() {
    String name = newName();
    assertThat(create(name, "").status()).isEqualTo(201);
    data.liveBatch(name, "queued", 1);

    Api.Reply reply = api.delete("/api/targets/" + name);

    assertThat(reply.status()).isEqualTo(204);
    assertThat(describe(name).getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED);
    assertThat(data.count("select count(*) from live_batches where target_name = ?", name))
        .isZero();
    assertThat(api.get("/api/targets/" + name).status()).isEqualTo(404);
  }

  /** A run of the target recorded as its current one, with no workflow behind it. */
  private long currentRunWithoutWorkflow(String name, String status) {
    long run = data.run(backfill, status, "{\"items\":5}");
    runs.add(run);
    data.sql("update runs set target_name = ? where id = ?", name, run);
    data.sql(
        "update targets set state = 'backfilling', current_run_id = ? where name = ?", run, name);
    return run;
  }

  /**
   * A run's workflow is the only writer of its status: deleting the target sends its unstarted run
   * the stop, with a new execution (the reconciler's restart finds that one and leaves it alone),
   * and the run's workflow ends it stopped when a worker runs it (none here: still pending).
   */
  @Test
  void deletingATargetSendsItsUnstartedRunTheStop() {
    String name = newName();
    assertThat(create(name, "").status()).isEqualTo(201);
    // Planned, but the target's workflow never started it (e.g. it was terminated right after).
    long run = currentRunWithoutWorkflow(name, "pending");

    assertThat(api.delete("/api/targets/" + name).status()).isEqualTo(204);

    assertThat(runSignals(run)).containsExactly("stop");
    assertThat(data.text("select status from runs where id = ?", run)).isEqualTo("pending");
  }

  @Test
  void replanningSendsAnUnstartedRunTheStop() {
    String name = newName();
    assertThat(create(name, "").status()).isEqualTo(201);
    long run = currentRunWithoutWorkflow(name, "pending");

    Api.Reply reply = api.post("/api/targets/" + name + "/replan", "");

    assertThat(reply.status()).isEqualTo(202);
    assertThat(reply.object()).containsEntry("cancelledRunId", (int) run);
    assertThat(runSignals(run)).containsExactly("stop");
  }

  private List<String> runSignals(long run) {
    return workflows.fetchHistory(RunWorkflowIds.forRun(run)).getEvents().stream()
        .filter(e -> e.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)
        .map(e -> e.getWorkflowExecutionSignaledEventAttributes().getSignalName())
        .toList();
  }

  @Test
  void deletingATargetWhoseRunLostItsWorkflowStopsTheRunThroughANewExecution() {
    String name = newName();
    assertThat(create(name, "").status()).isEqualTo(201);
    // Running, but its execution is gone (terminated by hand): a plain stop signal finds nothing.
    long run = currentRunWithoutWorkflow(name, "running");

    assertThat(api.delete("/api/targets/" + name).status()).isEqualTo(204);

    // The stop is delivered with a new execution, which ends the run stopped.
    String runWorkflow = RunWorkflowIds.forRun(run);
    assertThat(
            workflows.fetchHistory(runWorkflow).getEvents().stream()
                .filter(e -> e.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)
                .map(e -> e.getWorkflowExecutionSignaledEventAttributes().getSignalName()))
        .containsExactly("stop");
  }

  private Api.Reply create(String name, String extra) {
    return api.post(
        "/api/targets",
        "{\"name\":\""
            + name
            + "\",\"backfill\":\""
            + backfill
            + "\",\"options\":{\"items\":5}"
            + extra
            + "}");
  }

  private String newName() {
    String name = TestData.uniqueTarget();
    targets.add(name);
    return name;
  }

  private WorkflowExecutionDescription describe(String name) {
    return workflows.newUntypedWorkflowStub(TargetWorkflowIds.forTarget(name)).describe();
  }
}
