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
  /** The worker has no definition registered under the run's backfill name. */
  UNKNOWN_BACKFILL,
  /**
   * A batch's slot is still held by a live attempt (its lease has not run out): retried until it
   * has.
   */
  SLOT_STILL_HELD
}
