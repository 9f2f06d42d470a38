package dev.dripline.workflows.run;

/** Types of the {@code ApplicationFailure}s Dripline raises; the permanent ones are not retried. */
public enum DriplineFailure {
  /** A batch failed in a way retrying cannot fix. */
  BATCH_PERMANENT,
  /** A batch failed; the engine may retry it. */
  BATCH_FAILED,
  /** Planning failed in a way retrying cannot fix. */
  PLANNING_PERMANENT,
  /** Planning failed; the engine may retry it. */
  PLANNING_FAILED,
  /**
   * No worker that hosts the run's definition took the task within the engine's wait for one
   * ({@code dripline.engine.unknown-backfill-wait}): not retried.
   */
  UNKNOWN_BACKFILL,
  /**
   * The worker that took the task does not host the run's definition: retried, so that a worker
   * which hosts it (after a rolling deploy that adds it, or one of several deployments sharing the
   * task queue) takes a later attempt, until that wait runs out ({@link #UNKNOWN_BACKFILL}).
   */
  DEFINITION_NOT_HOSTED,
  /**
   * A batch's slot is still held by a live attempt (its lease has not run out): retried until it
   * has.
   */
  SLOT_STILL_HELD
}
