package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dripline.workflows.dryrun.DryRunStart;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionMetadata;
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
 * A dry run (K5) through HTTP is one short workflow on the task queue, as the Web UI shows it, with
 * the app and a worker in this JVM on a task queue of the test's own.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DryRunIT implements TestPropertyProvider {
  private static final String TAG = "it-" + UUID.randomUUID().toString().substring(0, 8);
  private static final String QUEUE = "dripline-" + TAG;

  @Inject EmbeddedServer server;
  @Inject WorkflowClient temporal;
  private Api api;

  @Override
  public Map<String, String> getProperties() {
    return Map.of("dripline.temporal.task-queue", QUEUE);
  }

  @BeforeAll
  void connect() {
    api = new Api(server.getURI());
  }

  private List<WorkflowExecutionMetadata> executions(String query) {
    return temporal.listExecutions("TaskQueue = '" + QUEUE + "' AND " + query).toList();
  }

  @Test
  void aDryRunIsOneCompletedWorkflowExecutionAndStartsNoRun() {
    Map<String, Object> options = new LinkedHashMap<>();
    options.put("items", 25);
    options.put("faultTag", TAG);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", "example.sleep");
    body.put("options", options);
    body.put("batchSize", 10);
    long runsBefore = TestDb.queryLong("select count(*) from runs");

    Api.Response dry = api.post("/api/runs?dryRun=true", body);

    assertThat(dry.status()).as("dry run: %s", dry.body()).isEqualTo(200);
    assertThat(dry.body().path("totalKeys").asLong()).isEqualTo(25);
    assertThat(dry.body().path("batches").asLong()).isEqualTo(3);
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> executions("WorkflowType = 'DryRun'").size() == 1);
    WorkflowExecutionMetadata execution = executions("WorkflowType = 'DryRun'").get(0);
    assertThat(execution.getExecution().getWorkflowId()).startsWith(DryRunStart.ID_PREFIX);
    assertThat(execution.getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED);
    assertThat(executions("DriplineBackfill = 'example.sleep'")).hasSize(1);
    assertThat(executions("WorkflowType = 'BackfillRun'")).isEmpty();
    assertThat(TestDb.queryLong("select count(*) from runs")).isEqualTo(runsBefore);
  }
}
