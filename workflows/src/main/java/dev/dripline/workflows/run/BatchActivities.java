package dev.dripline.workflows.run;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/** Processes one batch with the backfill definition's code. */
@ActivityInterface(namePrefix = "Batch")
public interface BatchActivities {

  /**
   * Marks the batch running, processes its key range and marks it completed. Safe to repeat: a
   * batch already completed is reported as such without running again. Failures are retried by the
   * engine; a declared permanent failure is an {@code ApplicationFailure} of type {@link
   * DriplineFailure#BATCH_PERMANENT}.
   */
  @ActivityMethod
  BatchResult processBatch(BatchWork work);
}
