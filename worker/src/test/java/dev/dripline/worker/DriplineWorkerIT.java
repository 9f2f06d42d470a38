package dev.dripline.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.store.db.Database;
import dev.dripline.workflows.metrics.MetricsInput;
import dev.dripline.workflows.metrics.MetricsWorkflow;
import dev.dripline.workflows.targets.TargetWorkflowIds;
import io.micronaut.context.ApplicationContext;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.WorkflowIdConflictPolicy;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowNotFoundException;
import io.temporal.client.WorkflowOptions;
import io.temporal.worker.WorkerFactory;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DriplineWorkerIT {

  @Test
  void disabledWorkerCreatesNoTemporalWorker() {
    try (ApplicationContext context = ApplicationContext.run(Map.of(), "test")) {
      assertThat(context.containsBean(DriplineWorker.class)).isFalse();
      assertThat(context.containsBean(WorkerFactory.class)).isFalse();
    }
  }

  @Test
  void configBindsTheWorkerSettings() {
    Map<String, Object> properties =
        Map.of(
            "dripline.worker.max-concurrent-activities", 5,
            "dripline.worker.max-concurrent-workflow-tasks", 3,
            "dripline.worker.shutdown-grace", "2s");
    try (ApplicationContext context = ApplicationContext.run(properties, "test")) {
      WorkerConfig config = context.getBean(WorkerConfig.class);

      assertThat(config.enabled()).isFalse();
      assertThat(config.maxConcurrentActivities()).isEqualTo(5);
      assertThat(config.maxConcurrentWorkflowTasks()).isEqualTo(3);
      assertThat(config.maxConcurrentLocalActivities()).isEqualTo(32);
      assertThat(config.shutdownGrace()).hasSeconds(2);
      assertThat(DriplineWorker.workerOptions(config).getMaxConcurrentActivityExecutionSize())
          .isEqualTo(5);
    }
  }

  @Test
  void enabledWorkerPublishesTheCatalogueThenPollsAndStopsOnClose() {
    Map<String, Object> properties =
        Map.of(
            "dripline.worker.enabled", true,
            "dripline.temporal.task-queue", "dripline-worker-it",
            "test.in-memory-temporal", true);
    WorkerFactory factory;
    try (ApplicationContext context = ApplicationContext.run(properties, "test")) {
      factory = context.getBean(WorkerFactory.class);

      assertThat(factory.isStarted()).isTrue();
      assertThat(factory.getWorker("dripline-worker-it")).isNotNull();
      List<String> hosted =
          context.getBean(BackfillRegistry.class).all().stream().map(KeyedBackfill::name).toList();
      assertThat(hosted).isNotEmpty();
      assertThat(published(context.getBean(Database.class))).containsAll(hosted);
    }
    assertThat(factory.isShutdown()).isTrue();
  }

  @Test
  void enabledWorkerStartsTheOneMetricsWorkflowAndASecondStartReusesIt() throws Exception {
    Map<String, Object> properties =
        Map.of(
            "dripline.worker.enabled", true,
            "dripline.temporal.task-queue", "dripline-metrics-it",
            "test.in-memory-temporal", true);
    try (ApplicationContext context = ApplicationContext.run(properties, "test")) {
      WorkflowClient client = context.getBean(WorkflowClient.class);
      WorkflowExecution first = awaitMetricsWorkflow(client);

      // A second start (another worker, a restart) finds it running and changes nothing.
      MetricsWorkflow again =
          client.newWorkflowStub(
              MetricsWorkflow.class,
              WorkflowOptions.newBuilder()
                  .setWorkflowId(TargetWorkflowIds.metrics("dripline-metrics-it"))
                  .setTaskQueue("dripline-metrics-it")
                  .setWorkflowIdConflictPolicy(
                      WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING)
                  .build());
      WorkflowExecution second = WorkflowClient.start(again::run, new MetricsInput(10_000));

      assertThat(second.getRunId()).isEqualTo(first.getRunId());
      client
          .newUntypedWorkflowStub(TargetWorkflowIds.metrics("dripline-metrics-it"))
          .terminate("test done");
    }
  }

  private static WorkflowExecution awaitMetricsWorkflow(WorkflowClient client)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + 20_000;
    while (true) {
      try {
        WorkflowExecution execution =
            client
                .newUntypedWorkflowStub(TargetWorkflowIds.metrics("dripline-metrics-it"))
                .describe()
                .getExecution();
        return execution;
      } catch (WorkflowNotFoundException e) {
        if (System.currentTimeMillis() > deadline) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }

  private static List<String> published(Database database) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement select =
                  connection.prepareStatement(
                      "select name from backfill_definitions"
                          + " where published_at > now() - interval '1 minute'");
              ResultSet rs = select.executeQuery()) {
            List<String> names = new ArrayList<>();
            while (rs.next()) {
              names.add(rs.getString(1));
            }
            return names;
          }
        });
  }
}
