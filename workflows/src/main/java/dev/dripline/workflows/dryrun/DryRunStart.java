package dev.dripline.workflows.dryrun;

import dev.dripline.workflows.run.RunSearchAttributes;
import io.temporal.api.enums.v1.RetryState;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.SearchAttributes;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.TimeoutFailure;
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

  /**
   * Whether {@code failure} of a dry run's workflow means no worker answered in time: the execution
   * timed out, or its activity's attempts ran out of it (each on a worker that does not host the
   * definition, or lost). Those are the only ways it fails: a definition's failure is an answer.
   */
  public static boolean timedOut(WorkflowFailedException failure) {
    return failure.getCause() instanceof TimeoutFailure
        || (failure.getCause() instanceof ActivityFailure activity
            && (activity.getRetryState() == RetryState.RETRY_STATE_TIMEOUT
                || activity.getCause() instanceof TimeoutFailure));
  }
}
