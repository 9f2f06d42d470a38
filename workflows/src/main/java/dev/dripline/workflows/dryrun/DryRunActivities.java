package dev.dripline.workflows.dryrun;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/** Plans a dry run on a worker that hosts its definition; saves nothing. */
@ActivityInterface(namePrefix = "DryRun")
public interface DryRunActivities {
  /**
   * Plans {@code request} as planning would plan the run, with the same checks of the keys the
   * definition lists. A definition that fails to plan is the answer's {@link DryRunAnswer#error()},
   * not a failure of the activity.
   *
   * @throws io.temporal.failure.ApplicationFailure retryable, of type {@code UNKNOWN_BACKFILL}, on
   *     a worker that does not host the definition: another worker on the task queue may
   */
  @ActivityMethod
  DryRunAnswer plan(DryRunRequest request);
}
