package dev.dripline.workflows.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.workflows.targets.TargetWorkflowIds;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The metrics workflow on the time-skipping test server. */
class MetricsWorkflowTest {
  private static final String QUEUE = "dripline-test";

  /** Records when each snapshot ran; fails the first {@code failFirst} calls. */
  static final class FakeMetrics implements MetricsActivities {
    final List<Instant> calls = new ArrayList<>();
    volatile int failFirst;
    private final TestWorkflowEnvironment env;

    FakeMetrics(TestWorkflowEnvironment env) {
      this.env = env;
    }

    @Override
    public synchronized int snapshot() {
      calls.add(Instant.ofEpochMilli(env.currentTimeMillis()));
      if (calls.size() <= failFirst) {
        throw ApplicationFailure.newFailure("database unavailable", "TEST");
      }
      return 11;
    }

    synchronized List<Instant> calls() {
      return List.copyOf(calls);
    }
  }

  private TestWorkflowEnvironment env;
  private WorkflowClient client;
  private FakeMetrics metrics;

  @BeforeEach
  void setUp() {
    env = TestWorkflowEnvironment.newInstance();
    metrics = new FakeMetrics(env);
    Worker worker = env.newWorker(QUEUE);
    worker.registerWorkflowImplementationTypes(MetricsWorkflowImpl.class);
    worker.registerActivitiesImplementations(metrics);
    env.start();
    client = env.getWorkflowClient();
  }

  @AfterEach
  void tearDown() {
    env.close();
  }

  private WorkflowExecution start(long intervalMillis) {
    MetricsWorkflow workflow =
        client.newWorkflowStub(
            MetricsWorkflow.class,
            WorkflowOptions.newBuilder()
                .setWorkflowId(TargetWorkflowIds.METRICS)
                .setTaskQueue(QUEUE)
                .build());
    return WorkflowClient.start(workflow::run, new MetricsInput(intervalMillis));
  }

  @Test
  void snapshotsEveryIntervalAndSurvivesContinueAsNew() {
    WorkflowExecution first = start(15_000);

    env.sleep(Duration.ofMinutes(60));

    List<Instant> calls = metrics.calls();
    assertThat(calls.size()).isBetween(MetricsWorkflowImpl.MAX_SNAPSHOTS_PER_EXECUTION + 10, 241);
    for (int i = 1; i < calls.size(); i++) {
      assertThat(Duration.between(calls.get(i - 1), calls.get(i)))
          .as("gap before snapshot %d", i + 1)
          .isBetween(Duration.ofSeconds(15), Duration.ofSeconds(16));
    }
    assertThat(
            client
                .fetchHistory(first.getWorkflowId(), first.getRunId())
                .getLastEvent()
                .getEventType())
        .isEqualTo(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    assertThat(client.newUntypedWorkflowStub(TargetWorkflowIds.METRICS).describe().getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
  }

  @Test
  void aFailingSnapshotIsSkippedAndTheNextTickTriesAgain() {
    metrics.failFirst = 7;
    start(60_000);

    env.sleep(Duration.ofMinutes(5));

    List<Instant> calls = metrics.calls();
    assertThat(calls.size()).isGreaterThan(8);
    assertThat(client.newUntypedWorkflowStub(TargetWorkflowIds.METRICS).describe().getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
  }
}
