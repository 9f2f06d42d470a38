package dev.dripline.workflows.metrics;

import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/**
 * The one periodic metrics computation of a deployment, workflow id {@code dripline-metrics-<task
 * queue>}: every interval it runs {@link MetricsActivities#snapshot}, which computes the gauges
 * derived from PostgreSQL and stores them, so that every process's {@code /prometheus} reports the
 * same figures. Continues as new to keep its history bounded. Workers start it and, when it has
 * ended, start it again (their reconciler).
 */
@WorkflowInterface
public interface MetricsWorkflow {
  @WorkflowMethod(name = "Metrics")
  void run(MetricsInput input);
}
