package dev.dripline.workflows.dryrun;

import dev.dripline.workflows.run.RunSearchAttributes;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.SearchAttributes;
import java.time.Duration;

/**
 * How the API starts a {@link DryRunWorkflow}: its id, task queue, search attribute and timeout.
 */
public final class DryRunStart {
  /** Prefix of every dry run's workflow id; the rest is the request's own id. */
  public static final String ID_PREFIX = "dripline-dry-run-";

  private DryRunStart() {}

  /** The workflow id of dry run {@code requestId}. */
  public static String workflowId(String requestId) {
    return ID_PREFIX + requestId;
  }

  /**
   * Options for dry run {@code requestId} of {@code backfill}, found in the Web UI by {@code
   * DriplineBackfill} like the definition's runs; callers add a summary.
   *
   * @param timeout how long the API waits for the answer: the execution ends by then, answered or
   *     not
   */
  public static WorkflowOptions.Builder options(
      String requestId, String taskQueue, String backfill, Duration timeout) {
    return WorkflowOptions.newBuilder()
        .setWorkflowId(workflowId(requestId))
        .setTaskQueue(taskQueue)
        .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
        .setWorkflowExecutionTimeout(timeout)
        .setTypedSearchAttributes(
            SearchAttributes.newBuilder().set(RunSearchAttributes.BACKFILL, backfill).build());
  }
}
