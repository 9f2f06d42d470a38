package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.workflows.ReleaseHistories;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Replays recorded histories of the run workflow against today's code, so a change to the command
 * sequence that is not guarded by {@code Workflow.getVersion} fails here instead of in production.
 * The histories were recorded with {@code -Ddripline.recordHistory=true} (which records them
 * again); {@code -Ddripline.recordRelease=<version>} records them into that release's directory
 * ({@link ReleaseHistories}) instead.
 */
class BackfillRunWorkflowReplayTest {
  private static final String HISTORY = "run-with-failure-cap-change-and-retry.json";
  private static final String CHAINED_HISTORY = "chained-run-with-plan-ahead-and-pause.json";

  @Test
  void recordedHistoryReplaysWithoutNonDeterminism() throws Exception {
    Optional<Path> into = recordingInto();
    if (into.isPresent()) {
      record(into.get().resolve(HISTORY));
    }
    replay("histories/" + HISTORY, 20);
  }

  @Test
  void recordedChainedRunReplaysWithoutNonDeterminism() throws Exception {
    Optional<Path> into = recordingInto();
    if (into.isPresent()) {
      recordChained(into.get().resolve(CHAINED_HISTORY));
    }
    replay("histories/" + CHAINED_HISTORY, 40);
  }

  /** Where this run records its histories, if it does. */
  private static Optional<Path> recordingInto() {
    if (Boolean.getBoolean("dripline.recordHistory")) {
      return Optional.of(Path.of("src/test/resources/histories"));
    }
    return ReleaseHistories.recording();
  }

  private void replay(String resource, int minEvents) throws Exception {
    String json;
    try (InputStream in = getClass().getClassLoader().getResourceAsStream(resource)) {
      assertThat(in).as("recorded history %s", resource).isNotNull();
      json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    WorkflowExecutionHistory history = WorkflowExecutionHistory.fromJson(json);
    assertThat(history.getEvents()).hasSizeGreaterThan(minEvents);

    Replays.replay(history);
  }

  /**
   * Runs chains with planning a window ahead (its looks paced by the chains' rate), paused and
   * resumed midway and with a cap change; saves its history.
   */
  private void recordChained(Path file) throws Exception {
    FakeRunStore store = new FakeRunStore();
    store.items = 240;
    store.requestedCap = 3;
    store.batchMillis = 40;
    store.planPageBatches = 5;
    store.chainMillis = 60_000;
    recordScenario(
        store,
        file,
        live -> {
          while (store.count(BatchStatus.COMPLETED) < 40) {
            Thread.sleep(20);
          }
          live.pause(SignalOrigin.API);
          Thread.sleep(300);
          live.setMaxParallelBatches(new CapChange(2));
          live.resume(SignalOrigin.API);
        });
  }

  /** Runs a scenario touching claims, a failure, a cap change and a retry; saves its history. */
  private void record(Path file) throws Exception {
    FakeRunStore store = new FakeRunStore();
    store.items = 12;
    store.batchSize = 2;
    store.requestedCap = 2;
    store.failing.add(2);
    store.gate(1);
    recordScenario(
        store,
        file,
        live -> {
          while (store.executing() < 1) {
            Thread.sleep(20);
          }
          live.setMaxParallelBatches(new CapChange(3));
          store.failing.clear();
          live.retry();
          store.release(1);
        });
  }

  /** What a recording does to the running workflow before it waits for its result. */
  private interface Scenario {
    void drive(BackfillRunWorkflow live) throws Exception;
  }

  private void recordScenario(FakeRunStore store, Path file, Scenario scenario) throws Exception {
    try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
      for (String name : List.of("DriplineBackfill", "DriplineRunStatus", "DriplineTarget")) {
        env.registerSearchAttribute(name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
      }
      Worker worker = env.newWorker("replay");
      worker.registerWorkflowImplementationTypes(BackfillRunWorkflowImpl.class);
      worker.registerActivitiesImplementations(store);
      env.start();
      WorkflowClient client = env.getWorkflowClient();
      String id = RunWorkflowIds.forRun(store.runId);
      BackfillRunWorkflow run =
          client.newWorkflowStub(
              BackfillRunWorkflow.class,
              WorkflowOptions.newBuilder().setWorkflowId(id).setTaskQueue("replay").build());
      WorkflowClient.start(run::run, RunWorkflowInput.fresh(store.runId));
      BackfillRunWorkflow live = client.newWorkflowStub(BackfillRunWorkflow.class, id);
      scenario.drive(live);
      WorkflowStub.fromTyped(live).getResult(RunOutcome.class);
      String json = client.fetchHistory(id).toJson(true);
      Files.createDirectories(file.getParent());
      Files.writeString(file, json);
    }
  }
}
