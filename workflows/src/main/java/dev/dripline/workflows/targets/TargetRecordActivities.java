package dev.dripline.workflows.targets;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/**
 * Short PostgreSQL operations on one target's record, which the target workflow runs as local
 * activities. Every write is a compare-and-set on the state the workflow expects, so an operator
 * action that changed the record meanwhile wins and a repeated call changes nothing twice. Activity
 * types keep the {@code Target} prefix of every target activity.
 */
@ActivityInterface(namePrefix = "Target")
public interface TargetRecordActivities {

  /** The record and its backlog, or {@link TargetSnapshot#notFound}. */
  @ActivityMethod
  TargetSnapshot load(TargetRef target);

  /**
   * Moves a pending_backfill target to backfilling if its backoff is over (T3), global and group
   * capacity allow (T2) and it is its turn (T1): capacity goes to the eligible targets in the order
   * they became eligible, so the one that has waited longest gets the next free slot. Decided in
   * one transaction that serialises capacity decisions; a target capacity would not serve is
   * answered without taking part in that serialisation. A lost race changes nothing: streak,
   * firstFailedAt, nextAttemptAt and the target's place in line stay as they were. Winning starts a
   * new planning attempt.
   */
  @ActivityMethod
  CapacityResult acquireCapacity(TargetRef target);

  /**
   * Records a failed planning attempt (T3): streak + 1, firstFailedAt set if empty, lastError,
   * lastAttemptAt; back to pending_backfill with {@code nextAttemptAt = now + backoff} (jittered
   * with the given draw), or needs_resync when permanent. Counts a planning failure.
   */
  @ActivityMethod
  TargetSnapshot recordPlanningFailure(PlanningFailure failure);

  /**
   * Looks at a backfilling target's run (T4, T5, T8): forward progress (a batch completed) resets
   * the streak; a completed run primes the target; a failed run — or a failed retry of it — raises
   * the streak by one and to at least the failing threshold, once per failure, and returns the
   * target to pending_backfill with backoff, to retry that run; a run stopped or deleted by an
   * operator returns it to pending_backfill without touching the streak.
   */
  @ActivityMethod
  TargetSnapshot observeRun(RunObservation observation);

  /**
   * Operator replan (T7), as the API does it: the target's runs end stopped (a pending one at once
   * in its record, a running one through its workflow); returns the run it cancelled, if any.
   */
  @ActivityMethod
  ReplanResult replan(TargetRef target);
}
