package dev.dripline.target;

/** Workflow ids of targets' controlling workflows and of the metrics workflow. */
public final class TargetWorkflowIds {
  /** The one metrics workflow of a namespace and task queue. */
  public static final String METRICS = "dripline-metrics";

  private TargetWorkflowIds() {}

  public static String forTarget(String name) {
    return "dripline-target-" + name;
  }
}
