package dev.dripline.workflows.targets;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/**
 * Planning a target's backfill run (T1–T5, T8): long calls that probe the definition, heartbeat,
 * and save at most one run per planning attempt. Activity types keep the {@code Target} prefix of
 * every target activity.
 */
@ActivityInterface(namePrefix = "Target")
public interface TargetPlanningActivities {

  /**
   * One planning attempt (T3, T4, T5). After a run failure it retries that run (R8: its failed
   * batches go back to pending) and makes it current again, the streak untouched. Otherwise it
   * validates the target's options against its definition, asks it for the first keys of its scope,
   * and on success creates a pending run for the target (recorded as its current run; the streak
   * resets if it came from planning failures). Idempotent by target and planning attempt: a
   * repeated call — the engine retries one whose answer was lost — returns the run the attempt
   * saved and never creates a second one. Fails with an {@code ApplicationFailure}: type {@code
   * TARGET_PLANNING_PERMANENT} when the definition can never plan it, {@code
   * TARGET_PLANNING_FAILED} when planning failed, {@code TARGET_SUPERSEDED} or {@code
   * PREVIOUS_RUN_ACTIVE} when an operator's action is in the way. Its caller records planning
   * failures ({@link TargetRecordActivities#recordPlanningFailure}); the target workflow calls
   * {@link #attemptPlanning}, which does both.
   */
  @ActivityMethod
  PlannedRun plan(TargetRef target);

  /**
   * One planning attempt as a whole, run under a Temporal retry policy (T1–T4, T8): takes capacity
   * like {@link TargetRecordActivities#acquireCapacity} — losing the race, or being retried before
   * the target's backoff ends, is no failure: the call returns a {@link PlanningAttempt#noCapacity}
   * answer, nothing written — then plans like {@link #plan}. A declared transient planning failure
   * is recorded in the same call like {@link TargetRecordActivities#recordPlanningFailure} (jitter
   * drawn here) and raised as a retryable {@code TARGET_PLANNING_FAILED} whose next-retry delay is
   * the recorded {@code nextAttemptAt − now}, so Temporal's retry waits exactly the target's
   * backoff; a permanent one records needs_resync and is raised non-retryable ({@code
   * TARGET_PLANNING_PERMANENT}). A failure of an attempt an operator superseded meanwhile (the
   * target no longer backfilling under this attempt) is not recorded: {@code TARGET_SUPERSEDED},
   * non-retryable. Idempotent by target and planning attempt, as {@link #plan}.
   */
  @ActivityMethod
  PlanningAttempt attemptPlanning(TargetRef target);
}
