package dev.dripline.workflows.metrics;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/** Computes the PostgreSQL-derived gauges of spec §5 and stores them as one snapshot. */
@ActivityInterface(namePrefix = "Metrics")
public interface MetricsActivities {
  /**
   * @return the number of series written
   */
  @ActivityMethod
  int snapshot();
}
