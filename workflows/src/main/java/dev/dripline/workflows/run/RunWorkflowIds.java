package dev.dripline.workflows.run;

/** Workflow ids and task-queue naming shared by the app, the worker and the CLI documentation. */
public final class RunWorkflowIds {
  private static final String PREFIX = "dripline-run-";

  private RunWorkflowIds() {}

  public static String forRun(long runId) {
    return PREFIX + runId;
  }
}
