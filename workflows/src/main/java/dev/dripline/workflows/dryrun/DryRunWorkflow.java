package dev.dripline.workflows.dryrun;

import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/**
 * One dry run (K5 in docs/spec.md), workflow id {@code dripline-dry-run-<uuid>} ({@link
 * DryRunStart}): runs {@link DryRunActivities#plan} on the task queue until a worker that hosts the
 * definition has planned it, and returns its answer. It touches no run and saves nothing; its
 * execution timeout (the API's wait) bounds it, so a dry run nobody answers ends by itself.
 */
@WorkflowInterface
public interface DryRunWorkflow {
  @WorkflowMethod(name = "DryRun")
  DryRunAnswer plan(DryRunRequest request);
}
