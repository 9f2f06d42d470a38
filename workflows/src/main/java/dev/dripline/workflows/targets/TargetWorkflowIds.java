package dev.dripline.workflows.targets;

/** Workflow ids of targets' controlling workflows and of the metrics workflow. */
public final class TargetWorkflowIds {
  /** The metrics workflow used where a task queue does not matter (tests, docs). */
  public static final String METRICS = metrics("dripline");

  private TargetWorkflowIds() {}

  /**
   * The one metrics workflow of a namespace and task queue, {@code dripline-metrics-<queue>}: its
   * id names the queue so that a deployment on another queue (or a test) never finds a metrics
   * workflow whose workers are gone.
   */
  public static String metrics(String taskQueue) {
    return "dripline-metrics-" + taskQueue;
  }

  public static String forTarget(String name) {
    return "dripline-target-" + name;
  }
}
