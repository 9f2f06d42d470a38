package dev.dripline.activities.run;

import dev.dripline.workflows.dryrun.DryRunActivities;
import dev.dripline.workflows.dryrun.DryRunAnswer;
import dev.dripline.workflows.dryrun.DryRunRequest;
import dev.dripline.workflows.run.DriplineFailure;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;

/**
 * Plans dry runs ({@link DryRunPlanner}) for the definitions this worker hosts. One that it does
 * not host fails the attempt, retryably: workers hosting different definitions may share the task
 * queue, and Temporal's next attempt may reach one that hosts it.
 */
@Singleton
public class DryRunActivitiesImpl implements DryRunActivities {
  private final DryRunPlanner planner;

  public DryRunActivitiesImpl(DryRunPlanner planner) {
    this.planner = planner;
  }

  @Override
  public DryRunAnswer plan(DryRunRequest request) {
    if (!planner.hosts(request.backfill())) {
      throw ApplicationFailure.newFailure(
          "no backfill definition named " + request.backfill() + " is registered in this worker",
          DriplineFailure.UNKNOWN_BACKFILL.name());
    }
    return planner.plan(request);
  }
}
