package dev.dripline.workflows.run;

/** Workflow ids and task-queue naming shared by the app, the worker and the CLI documentation. */
public final class RunWorkflowIds {
  private static final String PREFIX = "dripline-run-";

  private RunWorkflowIds() {}

  public static String forRun(long runId) {
    return PREFIX + runId;
  }

  /** The run id in a run's workflow id ({@link #forRun}), or 0 if it is not one. */
  public static long runIdOf(String workflowId) {
    if (workflowId == null || !workflowId.startsWith(PREFIX)) {
      return 0;
    }
    try {
      return Long.parseLong(workflowId.substring(PREFIX.length()));
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
