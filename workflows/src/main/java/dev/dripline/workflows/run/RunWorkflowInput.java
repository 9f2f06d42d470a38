package dev.dripline.workflows.run;

/**
 * Input of {@link BackfillRunWorkflow#run}.
 *
 * @param runId the run's id in PostgreSQL
 * @param carried state handed over by continue-as-new; {@code null} for a fresh execution
 */
public record RunWorkflowInput(long runId, RunCarryOver carried) {
  public static RunWorkflowInput fresh(long runId) {
    return new RunWorkflowInput(runId, null);
  }
}
