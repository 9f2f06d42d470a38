package dev.dripline.workflows.dryrun;

import io.temporal.common.VersioningBehavior;
import io.temporal.workflow.WorkflowVersioningBehavior;

/**
 * The dry run a versioned worker registers: pinned to the version that started it. An unversioned
 * worker registers {@link DryRunWorkflowImpl}, which declares no behavior, because the server
 * refuses a workflow task that declares one from a worker without a deployment version.
 */
public class PinnedDryRunWorkflowImpl extends DryRunWorkflowImpl {
  @Override
  @WorkflowVersioningBehavior(VersioningBehavior.PINNED)
  public DryRunAnswer plan(DryRunRequest request) {
    return super.plan(request);
  }
}
