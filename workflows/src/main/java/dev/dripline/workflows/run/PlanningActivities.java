package dev.dripline.workflows.run;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/** Cuts the keys in a run's scope into batches, one bounded page at a time. */
@ActivityInterface(namePrefix = "Planning")
public interface PlanningActivities {

  /**
   * Plans up to {@code maxBatches} more batches after the run's persisted cursor, saving batches
   * and cursor in one transaction so that a retried call never duplicates a batch.
   */
  @ActivityMethod
  PlanPage planNextPage(PlanRequest request);
}
