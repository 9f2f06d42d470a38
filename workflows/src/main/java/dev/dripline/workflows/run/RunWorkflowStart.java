package dev.dripline.workflows.run;

import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.SearchAttributes;

/**
 * How a run's workflow is started from a client — by the API, a target's stop or retry, the
 * reconciler: its id ({@link RunWorkflowIds}), task queue and search attributes, the same from
 * every starter. An id may be used again once its execution has closed: a run's workflow is started
 * again for a retry of an ended run, or to stop a run whose execution is gone.
 */
public final class RunWorkflowStart {
  private RunWorkflowStart() {}

  /**
   * Options for run {@code runId}'s workflow; callers add a summary and, where they want it, a
   * conflict policy.
   *
   * @param status the run's status as the starter knows it (the workflow publishes its own)
   * @param target the target the run belongs to, or {@code null}
   */
  public static WorkflowOptions.Builder options(
      long runId, String taskQueue, String backfill, RunStatus status, String target) {
    return WorkflowOptions.newBuilder()
        .setWorkflowId(RunWorkflowIds.forRun(runId))
        .setTaskQueue(taskQueue)
        .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE)
        .setTypedSearchAttributes(attributes(backfill, status, target));
  }

  /** The search attributes a run's workflow starts with; {@code target} may be {@code null}. */
  public static SearchAttributes attributes(String backfill, RunStatus status, String target) {
    SearchAttributes.Builder attributes =
        SearchAttributes.newBuilder()
            .set(RunSearchAttributes.BACKFILL, backfill)
            .set(RunSearchAttributes.RUN_STATUS, status.wire());
    if (target != null) {
      attributes.set(RunSearchAttributes.TARGET, target);
    }
    return attributes.build();
  }
}
