package dev.dripline.worker;

import dev.dripline.runtime.config.TargetConfig;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.workflows.metrics.MetricsInput;
import dev.dripline.workflows.metrics.MetricsWorkflow;
import dev.dripline.workflows.targets.TargetWorkflowIds;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.WorkflowIdConflictPolicy;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import jakarta.inject.Singleton;

/**
 * Makes sure the deployment's one metrics workflow ({@link TargetWorkflowIds#metrics}) is running:
 * a running execution is left alone ({@code USE_EXISTING}), and one that ended — terminated,
 * failed, timed out — is replaced by a new execution ({@code ALLOW_DUPLICATE}). Idempotent, so any
 * number of workers may call it at any time: each worker at start-up, and {@link
 * WorkflowReconciler} on every pass.
 */
@Singleton
public class MetricsWorkflowStarter {
  private final WorkflowClient client;
  private final TemporalConfig temporal;
  private final TargetConfig targets;

  public MetricsWorkflowStarter(
      WorkflowClient client, TemporalConfig temporal, TargetConfig targets) {
    this.client = client;
    this.temporal = temporal;
    this.targets = targets;
  }

  /** The metrics workflow's id on this deployment's task queue. */
  public String workflowId() {
    return TargetWorkflowIds.metrics(temporal.taskQueue());
  }

  /**
   * Starts the metrics workflow unless it is running.
   *
   * @return the running execution (the existing one, or the one just started)
   */
  public WorkflowExecution ensureRunning() {
    MetricsWorkflow metrics =
        client.newWorkflowStub(
            MetricsWorkflow.class,
            WorkflowOptions.newBuilder()
                .setWorkflowId(workflowId())
                .setTaskQueue(temporal.taskQueue())
                .setWorkflowIdConflictPolicy(
                    WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING)
                .setWorkflowIdReusePolicy(
                    WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE)
                .build());
    return WorkflowClient.start(
        metrics::run, new MetricsInput(targets.metricsInterval().toMillis()));
  }
}
