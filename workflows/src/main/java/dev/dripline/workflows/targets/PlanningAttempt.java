package dev.dripline.workflows.targets;

/**
 * What a planning attempt ({@link TargetPlanningActivities#attemptPlanning}) came to when it did
 * not fail.
 *
 * @param run the run the attempt planned, retried or adopted; {@code null} if the target got no
 *     capacity (a lost race, not yet due, or no longer pending: the record tells which)
 * @param target the record as the attempt left it
 */
public record PlanningAttempt(PlannedRun run, TargetSnapshot target) {

  /** No capacity for the target now: nothing was written (T2, T8). */
  public static PlanningAttempt noCapacity(TargetSnapshot target) {
    return new PlanningAttempt(null, target);
  }
}
