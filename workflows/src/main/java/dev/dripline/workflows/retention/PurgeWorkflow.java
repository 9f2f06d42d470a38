package dev.dripline.workflows.retention;

import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/**
 * The purge of a deployment (spec D5), started by the Temporal Schedule {@link
 * PurgeWorkflowIds#schedule} every interval, and at once by the API after it deleted a run: calls
 * {@link PurgeActivities#purge} until nothing due is left.
 */
@WorkflowInterface
public interface PurgeWorkflow {
  @WorkflowMethod(name = "Purge")
  PurgeReport run();
}
