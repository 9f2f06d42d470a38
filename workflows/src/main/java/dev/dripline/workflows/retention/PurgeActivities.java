package dev.dripline.workflows.retention;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/**
 * Removes what the retention no longer keeps, in bounded deletes (spec D5): first the batches of
 * deleted runs, then those of runs ended longer ago than the retention, then webhook and audit
 * events older than it. Every chunk commits on its own and the activity heartbeats after each, so
 * an attempt retried after its worker died goes on with what is left.
 */
@ActivityInterface(namePrefix = "Purge")
public interface PurgeActivities {
  /**
   * Purges for up to {@code request}'s budget.
   *
   * @return what was removed; {@code more} if time ran out before everything due was
   */
  @ActivityMethod
  PurgeReport purge(PurgeRequest request);
}
