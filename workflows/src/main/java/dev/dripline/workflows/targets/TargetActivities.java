package dev.dripline.workflows.targets;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/**
 * PostgreSQL operations on one target's record, called by the target workflow. Every write is a
 * compare-and-set on the state the workflow expects, so an operator action that changed the record
 * meanwhile wins and a repeated call changes nothing twice.
 */
@ActivityInterface(namePrefix = "Target")
public interface TargetActivities {

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
   * One planning attempt (T3, T4, T5). After a run failure it retries that run (R8: its failed
   * batches go back to pending) and makes it current again, the streak untouched. Otherwise it
   * validates the target's options against its definition, asks it for the first keys of its scope,
   * and on success creates a pending run for the target (recorded as its current run; the streak
   * resets if it came from planning failures). Idempotent by target and planning attempt: a
   * repeated call — the engine retries one whose answer was lost — returns the run the attempt
   * saved and never creates a second one. Fails with an {@code ApplicationFailure}: type {@code
   * TARGET_PLANNING_PERMANENT} when the definition can never plan it, {@code
   * TARGET_PLANNING_FAILED} when planning failed, {@code TARGET_SUPERSEDED} or {@code
   * PREVIOUS_RUN_ACTIVE} when an operator's action is in the way. The workflow records planning
   * failures with {@link #recordPlanningFailure}.
   */
  @ActivityMethod
  PlannedRun plan(TargetRef target);

  /**
   * One planning attempt as a whole, run under a Temporal retry policy (T1–T4, T8): takes capacity
   * like {@link #acquireCapacity} — losing the race, or being retried before the target's backoff
   * ends, is no failure: the call returns a {@link PlanningAttempt#noCapacity} answer, nothing
   * written — then plans like {@link #plan}. A declared transient planning failure is recorded in
   * the same call like {@link #recordPlanningFailure} (jitter drawn here) and raised as a retryable
   * {@code TARGET_PLANNING_FAILED} whose next-retry delay is the recorded {@code nextAttemptAt −
   * now}, so Temporal's retry waits exactly the target's backoff; a permanent one records
   * needs_resync and is raised non-retryable ({@code TARGET_PLANNING_PERMANENT}). A failure of an
   * attempt an operator superseded meanwhile (the target no longer backfilling under this attempt)
   * is not recorded: {@code TARGET_SUPERSEDED}, non-retryable. Idempotent by target and planning
   * attempt, as {@link #plan}.
   */
  @ActivityMethod
  PlanningAttempt attemptPlanning(TargetRef target);

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
   * Applies up to {@code max} queued live batches of a primed target in arrival order through its
   * definition (T5). A permanent failure moves the target to needs_resync (streak at least 3).
   */
  @ActivityMethod
  LiveDrain applyLiveBatches(LiveDrainRequest request);

  /**
   * Operator replan (T7), as the API does it: the target's runs end stopped (a pending one at once
   * in its record, a running one through its workflow); returns the run it cancelled, if any.
   */
  @ActivityMethod
  ReplanResult replan(TargetRef target);
}
