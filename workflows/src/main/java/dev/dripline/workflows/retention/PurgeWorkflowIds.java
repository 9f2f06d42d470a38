package dev.dripline.workflows.retention;

/** The purge schedule's id, and its workflows' (the schedule appends the start time). */
public final class PurgeWorkflowIds {
  private PurgeWorkflowIds() {}

  /** The purge schedule of the deployment on task queue {@code taskQueue}. */
  public static String schedule(String taskQueue) {
    return "dripline-purge-" + taskQueue;
  }
}
